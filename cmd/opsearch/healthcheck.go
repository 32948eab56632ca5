package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// runHealthcheck asks a running HTTP server for GET /health and fails
// unless it answers 200. It exists for container health checks: the
// distroless image has no curl or wget.
func runHealthcheck(ctx context.Context, e env, args []string) error {
	fs := newFlagSet("healthcheck")
	def := "http://127.0.0.1:" + envOr(e, "PORT", "8080") + "/health"
	url := fs.String("url", def, "health endpoint to check (default from env PORT)")
	timeout := fs.Duration("timeout", 3*time.Second, "give up after this long")
	if err := noArgs(e, fs, args); err != nil {
		return err
	}
	if *timeout <= 0 {
		return fmt.Errorf("--timeout must be positive, not %v", *timeout)
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, *url, nil)
	if err != nil {
		return fmt.Errorf("bad --url: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("%s did not answer within %s", *url, *timeout)
		}
		return fmt.Errorf("unhealthy: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("unhealthy: %s answered %s: %s", *url, resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}

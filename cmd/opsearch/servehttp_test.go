package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opsearch/opsearch/store"
	"github.com/opsearch/opsearch/sync"
)

// TestServeHTTPIndexDefault: serve --http keeps one shared index unless
// told otherwise, but keeps the indexes per user an earlier version left
// in the data dir, and says so.
func TestServeHTTPIndexDefault(t *testing.T) {
	const base = "http://127.0.0.1:1"
	for _, tc := range []struct {
		name       string
		args       []string
		perUser    bool // a store per user in the data dir
		wantShared bool
		wantWarn   bool
	}{
		{"fresh data dir", nil, false, true, false},
		{"indexes per user kept", nil, true, false, true},
		{"--shared-index over indexes per user", []string{"--shared-index"}, true, true, false},
		{"--per-user-index", []string{"--per-user-index"}, false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := t.TempDir()
			if tc.perUser {
				inst, err := store.InstanceName(base)
				if err != nil {
					t.Fatal(err)
				}
				s, err := store.Open(filepath.Join(data, inst, "7"), store.Options{})
				if err != nil {
					t.Fatal(err)
				}
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
			}
			t.Setenv("OPENPROJECT_API_KEY", "")
			t.Setenv("OPSEARCH_CRAWL_API_KEY", "")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var out, errb syncBuffer
			done := make(chan int, 1)
			args := append([]string{"serve", "--base-url", base, "--http", "127.0.0.1:0", "--data-dir", data}, tc.args...)
			go func() { done <- run(ctx, args, &out, &errb) }()
			const started = "opsearch serving MCP over HTTP"
			for !strings.Contains(errb.String(), started) {
				select {
				case code := <-done:
					t.Fatalf("serve exited with %d before listening: %s", code, errb.String())
				case <-time.After(10 * time.Millisecond):
				}
			}
			cancel()
			if code := <-done; code != 0 {
				t.Errorf("serve exited with %d: %s", code, errb.String())
			}
			logs := errb.String()
			if shared := strings.Contains(logs, "shared_index=true"); shared != tc.wantShared {
				t.Errorf("shared index %v, want %v:\n%s", shared, tc.wantShared, logs)
			}
			if warned := strings.Contains(logs, "keeping the indexes per user"); warned != tc.wantWarn {
				t.Errorf("warned of kept indexes %v, want %v:\n%s", warned, tc.wantWarn, logs)
			}
		})
	}
}

// TestLocalCommandsOnSharedStore: search and status, pointed at a team
// server's data dir, which holds only the shared index, say so rather
// than that there is no data.
func TestLocalCommandsOnSharedStore(t *testing.T) {
	const base = "http://127.0.0.1:1"
	data := t.TempDir()
	u, err := sync.OpenShared(t.Context(), data, base, sync.UserOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := u.Close(); err != nil {
		t.Fatal(err)
	}
	t.Setenv("OPENPROJECT_API_KEY", "")
	for _, args := range [][]string{
		{"status", "--data-dir", data},
		{"status", "--data-dir", data, "--base-url", base},
		{"search", "--data-dir", data, "deploy"},
	} {
		var out, errb syncBuffer
		code := run(t.Context(), args, &out, &errb)
		if code == 0 || !strings.Contains(errb.String(), "only the shared index of 127.0.0.1_1") || !strings.Contains(errb.String(), "search it through that server") {
			t.Errorf("opsearch %s: exit %d, stderr %q; want an error naming the shared index", strings.Join(args, " "), code, errb.String())
		}
	}
}

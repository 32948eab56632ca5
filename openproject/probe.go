package openproject

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Probe tells whether the OpenProject at baseURL answers, without a key:
// it asks for the API root, which answers 200 (public instances) or 401
// (the rest) when the server is up. A network failure is ErrNetwork, a
// 5xx or an answer that is not OpenProject's ErrServer. hc nil uses a
// client with NewTransport's bounds; ctx bounds the wait.
func Probe(ctx context.Context, hc *http.Client, baseURL string) error {
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("probe OpenProject: base URL %q must be an absolute http(s) URL", baseURL)
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	u.Path = strings.TrimSuffix(strings.TrimRight(u.Path, "/"), "/api/v3") + "/api/v3"
	if hc == nil {
		hc = &http.Client{Transport: NewTransport(0)}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return fmt.Errorf("probe OpenProject: %w", err)
	}
	req.Header.Set("Accept", "application/hal+json")
	req.Header.Set("User-Agent", DefaultUserAgent)
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("probe OpenProject: %w: %v", ErrNetwork, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	switch {
	case resp.StatusCode >= 500:
		return fmt.Errorf("probe OpenProject: %w: HTTP %d", ErrServer, resp.StatusCode)
	case resp.StatusCode == http.StatusOK, resp.StatusCode == http.StatusUnauthorized, resp.StatusCode == http.StatusForbidden:
		return nil
	}
	return fmt.Errorf("probe OpenProject: %w: HTTP %d from %s is not the API root", ErrServer, resp.StatusCode, u.Redacted())
}

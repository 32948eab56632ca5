package mcp_test

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/opsearch/opsearch/openproject/optest"
)

// TestHTTPStatusPage: /status shows the operators what the server knows,
// only to whoever brings the operator token, with no user, key or query
// on it; headless Chromium renders it (and a screenshot is kept).
func TestHTTPStatusPage(t *testing.T) {
	if testing.Short() {
		t.Skip("runs in the full suite (go test ./...); drives a browser: 17 s under -race -short on a slow 2 vCPU machine")
	}
	const token = "operator-token-1234"
	e := newHTTPEnv(t, httpEnvOpts{adminToken: token})
	e.syncUsers(t.Context())
	cs, err := e.connectStreamable(t.Context(), "/mcp", map[string]string{"X-OpenProject-Api-Key": optest.AliceKey})
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		var out searchOut
		if err := httpCall(t.Context(), cs, "openproject_search", map[string]any{"query": "Nightingale"}, &out); err != nil {
			t.Fatal(err)
		}
	}
	_ = cs.Close()
	get := func(hdr map[string]string, query string) (int, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, e.ts.URL+"/status"+query, nil)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, c := range []struct {
		name  string
		hdr   map[string]string
		query string
	}{
		{"none", nil, ""},
		{"wrong", map[string]string{"Authorization": "Bearer nope"}, ""},
		{"a user's key", map[string]string{"Authorization": "Bearer " + optest.AliceKey}, ""},
	} {
		if code, body := get(c.hdr, c.query); code != http.StatusUnauthorized || !strings.Contains(body, `id="denied"`) || strings.Contains(body, "active-users") {
			t.Errorf("%s: %d %.200s; want 401 and nothing shown", c.name, code, body)
		}
	}
	code, page := get(map[string]string{"Authorization": "Bearer " + token}, "")
	if code != http.StatusOK {
		t.Fatalf("with the token: %d %s", code, page)
	}
	for _, want := range []string{`id="status">ok<`, `id="active-users">2<`, "1.2 MB", "last 5 searches: median"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	// Each user's first sync counts per kind.
	if !regexp.MustCompile(`<td>work_package</td><td>[1-9]\d*</td><td>2</td>`).MatchString(page) {
		t.Errorf("the sync table does not show two successful work package syncs with documents:\n%s", page)
	}
	for _, secret := range []string{optest.AliceKey, optest.BobKey, token, "alice", "Nightingale"} {
		if strings.Contains(page, secret) {
			t.Errorf("the status page shows %q", secret)
		}
	}

	chromium, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("no chromium for the browser test (.ci/run installs Debian's chromium)")
		}
		t.Skip("no chromium on the PATH (Debian: apt-get install chromium); the browser half of the test skips")
	}
	browse := func(t *testing.T, query string, extra ...string) string {
		t.Helper()
		args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
			"--disable-background-networking", "--disable-component-update", "--disable-sync",
			"--user-data-dir=" + t.TempDir()}, extra...)
		out, err := exec.CommandContext(t.Context(), chromium, append(args, e.ts.URL+"/status"+query)...).Output()
		if err != nil {
			t.Fatalf("chromium: %v", err)
		}
		return string(out)
	}
	if dom := browse(t, "", "--dump-dom"); !strings.Contains(dom, `id="denied"`) || strings.Contains(dom, "active-users") {
		t.Errorf("chromium without the token shows: %.300s", dom)
	}
	dom := browse(t, "?token="+token, "--dump-dom")
	for _, want := range []string{`id="active-users">2<`, `<svg id="chart"`, "work_package"} {
		if !strings.Contains(dom, want) {
			t.Errorf("chromium's page lacks %q", want)
		}
	}
	shot := filepath.Join(t.TempDir(), "status.png")
	browse(t, "?token="+token, "--screenshot="+shot, "--window-size=1000,900")
	if fi, err := os.Stat(shot); err != nil || fi.Size() < 1000 {
		t.Errorf("no screenshot: %v", err)
	} else {
		// Kept for whoever runs the test: the rendered page.
		keep := filepath.Join(os.TempDir(), "opsearch-status.png")
		if b, err := os.ReadFile(shot); err == nil && os.WriteFile(keep, b, 0o600) == nil {
			t.Logf("screenshot of /status (%d bytes): %s", fi.Size(), keep)
		}
	}
	// The token in the address never reaches the log.
	if strings.Contains(e.logs.String(), token) {
		t.Error("the log holds the operator token")
	}
}

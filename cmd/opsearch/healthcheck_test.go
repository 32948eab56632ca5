package main

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

func TestRun_Healthcheck(t *testing.T) {
	var healthy atomic.Bool
	healthy.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/health" || r.Method != http.MethodGet {
			http.NotFound(w, r)
			return
		}
		if !healthy.Load() {
			http.Error(w, `{"status":"starting"}`, http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte(`{"status":"ok"}`))
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))

	check := func(args ...string) (int, string) {
		var out, errb bytes.Buffer
		code := run(context.Background(), append([]string{"healthcheck"}, args...), &out, &errb)
		if out.Len() != 0 {
			t.Errorf("healthcheck wrote to stdout: %q", out.String())
		}
		return code, errb.String()
	}

	t.Setenv("PORT", port)
	if code, stderr := check(); code != 0 {
		t.Errorf("healthy server via PORT: exit %d (%s)", code, stderr)
	}
	if code, stderr := check("--url", srv.URL+"/health"); code != 0 {
		t.Errorf("healthy server via --url: exit %d (%s)", code, stderr)
	}
	healthy.Store(false)
	if code, stderr := check(); code != 1 || !strings.Contains(stderr, "503") {
		t.Errorf("unhealthy server: exit %d, stderr %q", code, stderr)
	}
	if code, stderr := check("--url", srv.URL+"/nope"); code != 1 || !strings.Contains(stderr, "404") {
		t.Errorf("wrong path: exit %d, stderr %q", code, stderr)
	}
	// Nothing listening.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, free, _ := net.SplitHostPort(ln.Addr().String())
	ln.Close()
	t.Setenv("PORT", free)
	if code, stderr := check(); code != 1 || !strings.Contains(stderr, "unhealthy") {
		t.Errorf("no server: exit %d, stderr %q", code, stderr)
	}
	if code, _ := check("--timeout", "0s"); code != 1 {
		t.Errorf("--timeout 0: exit %d, want 1", code)
	}
}

package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/opsearch/opsearch/openproject/optest"
	"github.com/opsearch/opsearch/store"
)

// These tests guard issue 11's hygiene items: what the HTTP server tells
// its users and its log, over the real listener and the go-sdk client.

// TestHTTPSyncStatusHidesDataDir: openproject_sync_status tells a user
// whose data is indexed and how fresh it is, never where the server keeps
// it: the directory is the operator's business, and any authenticated
// user may call the tool.
func TestHTTPSyncStatusHidesDataDir(t *testing.T) {
	dataDir := t.TempDir()
	e := newHTTPEnv(t, httpEnvOpts{dataDir: dataDir})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := e.connectStreamable(ctx, "/mcp", map[string]string{"X-OpenProject-Api-Key": optest.AliceKey})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	var st map[string]any
	if err := httpCall(ctx, cs, "openproject_sync_status", nil, &st); err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(st)
	if _, ok := st["dataDir"]; ok {
		t.Errorf("sync status has a dataDir: %s", raw)
	}
	if strings.Contains(string(raw), dataDir) {
		t.Errorf("sync status names the data directory %s: %s", dataDir, raw)
	}
	if st["user"] == nil {
		t.Errorf("sync status no longer says whose data it is: %s", raw)
	}
	code, out := e.rest("/api/tools/openproject_sync_status", map[string]string{"X-OpenProject-Api-Key": optest.AliceKey}, "{}")
	raw, _ = json.Marshal(out)
	if code != 200 || strings.Contains(string(raw), dataDir) {
		t.Errorf("REST sync status: HTTP %d, %s", code, raw)
	}
}

// TestHTTPUserLockedIsUnavailable: while another opsearch process (a CLI
// `opsearch sync`) holds a user's files, the server answers that user
// 503 with Retry-After and the reason, naming the directory: the state
// is temporary and OpenProject is not at fault, so not 502.
func TestHTTPUserLockedIsUnavailable(t *testing.T) {
	dataDir := t.TempDir()
	e := newHTTPEnv(t, httpEnvOpts{dataDir: dataDir, lockTimeout: 50 * time.Millisecond})
	var alice int64
	for _, u := range e.data.Users {
		if u.Login == "alice" {
			alice = u.ID
		}
	}
	dir, err := store.UserDir(dataDir, e.base, alice)
	if err != nil {
		t.Fatal(err)
	}
	// The other process: it holds the store for the whole test.
	st, err := store.Open(dir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	for _, tc := range []struct{ name, path, body string }{
		{"rest", "/api/tools/openproject_search", `{"query":"budget"}`},
		{"mcp", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, e.ts.URL+tc.path, strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("X-OpenProject-Api-Key", optest.AliceKey)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var out struct {
				Error string `json:"error"`
			}
			_ = json.NewDecoder(resp.Body).Decode(&out)
			if resp.StatusCode != http.StatusServiceUnavailable {
				t.Errorf("HTTP %d (%s), want 503", resp.StatusCode, out.Error)
			}
			if resp.Header.Get("Retry-After") == "" {
				t.Error("no Retry-After")
			}
			if !strings.Contains(out.Error, dir) || !strings.Contains(out.Error, "another opsearch process") {
				t.Errorf("error %q does not say which directory is in use by whom", out.Error)
			}
		})
	}
}

package mcp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/opsearch/opsearch/openproject/optest"
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

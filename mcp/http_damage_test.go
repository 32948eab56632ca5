package mcp_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/opsearch/opsearch/openproject/optest"
	"github.com/opsearch/opsearch/store"
)

// TestHTTPDamagedStore: on the team server, one user's damaged store.db
// neither crashes the process (bbolt panics in a goroutine of its own on
// such a file, which took every user's session down) nor touches another
// user: it is set aside when the user returns, and crawled again.
func TestHTTPDamagedStore(t *testing.T) {
	if testing.Short() {
		t.Skip(skipShort)
	}
	dataDir := t.TempDir()
	e := newHTTPEnv(t, httpEnvOpts{idle: 150 * time.Millisecond, dataDir: dataDir})
	e.syncUsers(t.Context())
	for deadline := time.Now().Add(10 * time.Second); e.mgr.ActiveUsers() > 0; {
		if time.Now().After(deadline) {
			t.Fatal("idle users were not stopped")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Zero the middle of alice's store while nobody holds it.
	paths, _ := filepath.Glob(filepath.Join(dataDir, "*", "*", store.FileName))
	var alicePath string
	for _, p := range paths {
		if filepath.Base(filepath.Dir(p)) == "2" { // alice is user 2 in every generated set
			alicePath = p
		}
	}
	fi, err := os.Stat(alicePath)
	if err != nil {
		t.Fatalf("alice's store among %v: %v", paths, err)
	}
	f, err := os.OpenFile(alicePath, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(make([]byte, fi.Size()/2), fi.Size()/4); err != nil {
		t.Fatal(err)
	}
	f.Close()

	search := func(key, q string) (int, int) {
		code, out := e.rest("/api/tools/openproject_search", map[string]string{"X-OpenProject-Api-Key": key}, `{"query":"`+q+`"}`)
		data, _ := out["data"].(map[string]any)
		res, _ := data["results"].([]any)
		return code, len(res)
	}
	if code, n := search(optest.BobKey, "Nightingale bob"); code != 200 || n == 0 {
		t.Fatalf("bob's search beside alice's damaged store: %d, %d results", code, n)
	}
	// alice is answered (an index being crawled again), never a crash.
	if code, _ := search(optest.AliceKey, "Nightingale"); code != 200 {
		t.Fatalf("alice's search with a damaged store: %d", code)
	}
	if aside, _ := filepath.Glob(alicePath + ".damaged-*"); len(aside) != 1 {
		t.Errorf("the damaged store was not set aside: %v", aside)
	}
	found := false
	for i := 0; i < 600 && !found; i++ {
		_, n := search(optest.AliceKey, "Nightingale")
		found = n > 0
		if !found {
			time.Sleep(50 * time.Millisecond)
		}
	}
	if !found {
		t.Error("alice's items did not come back after the re-crawl")
	}
}

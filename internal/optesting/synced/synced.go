// Package synced gives a test one user's view of a fake OpenProject,
// synced over HTTP into a bbolt store and a bleve index of its own: the
// setup of every test that searches what a real sync wrote.
//
// Like its parent optesting, only _test.go files may import it. It lives
// apart from optesting because it imports package sync, whose own tests
// import optesting and could not import a package that imports sync.
// It must not know what the data set holds, how the fake answers or what
// the test then asks of the store and index.
package synced

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/opsearch/opsearch/indexer"
	"github.com/opsearch/opsearch/internal/optesting"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/optest"
	"github.com/opsearch/opsearch/store"
	"github.com/opsearch/opsearch/sync"
)

// Env is a running fake with one user's data synced from it.
type Env struct {
	Server *optest.Server
	// URL is the fake's base URL (see optesting.Start).
	URL    string
	Client *openproject.Client
	Store  *store.Store
	Index  *indexer.Bleve
	// Worker syncs the user's view into Store and Index.
	Worker *sync.Worker
}

// Start serves d and syncs what the user with key sees into a fresh
// store and index (see Open), failing the test if the sync fails.
func Start(t testing.TB, d *optest.Dataset, key string) *Env {
	t.Helper()
	e := Open(t, d, openproject.Config{APIKey: key})
	if _, err := e.Worker.Sync(context.Background()); err != nil {
		t.Fatalf("sync: %v", err)
	}
	return e
}

// Open serves d with optesting.Start, makes a client with cfg (its
// BaseURL set to the fake's), and opens a store and, in its "index"
// subdirectory, a bleve index in t.TempDir(), both closed when the test
// ends, with a worker over them that has not synced yet.
func Open(t testing.TB, d *optest.Dataset, cfg openproject.Config) *Env {
	t.Helper()
	srv, url := optesting.Start(t, d, optest.Options{})
	cfg.BaseURL = url
	c, err := openproject.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	st, err := store.Open(dir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	idx, err := indexer.Open(filepath.Join(dir, "index"), indexer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { idx.Close() })
	w := sync.NewWorker(c, st, idx, sync.Options{})
	return &Env{Server: srv, URL: url, Client: c, Store: st, Index: idx, Worker: w}
}

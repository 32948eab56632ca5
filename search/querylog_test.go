package search_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/opsearch/opsearch/internal/optesting/synced"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
	"github.com/opsearch/opsearch/search"
)

func TestQueryLog(t *testing.T) {
	d := opgen.Generate(opgen.GenOptions{Seed: 2, WorkPackages: 40, WikiPages: 3, Meetings: 3})
	s := synced.Start(t, d, optest.AdminKey)
	st, idx := s.Store, s.Index
	var buf bytes.Buffer
	eng := search.New(st, idx, search.Options{QueryLog: search.NewQueryLog(&buf)})
	ctx := search.WithTool(context.Background(), "openproject_search")
	resp, err := eng.Search(ctx, search.Query{Text: "login page", PageSize: 3})
	if err != nil {
		t.Fatal(err)
	}
	var line search.LoggedQuery
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatalf("log line %q: %v", buf.String(), err)
	}
	if line.Tool != "openproject_search" || line.Query != "login page" || len(line.Results) != len(resp.Results) || line.Time.IsZero() {
		t.Errorf("logged %+v for %d results", line, len(resp.Results))
	}

	dir := t.TempDir()
	l, err := search.OpenQueryLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	eng = search.New(st, idx, search.Options{QueryLog: l})
	if _, err := eng.Search(ctx, search.Query{Text: "login"}); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, search.QueryLogFile))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 || fi.Size() == 0 {
		t.Errorf("query log: mode %v, size %d; want 0600 and not empty", fi.Mode().Perm(), fi.Size())
	}
}

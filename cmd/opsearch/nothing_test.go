package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/opsearch/opsearch/internal/optesting"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
)

// TestSearch_NothingToSearch: `opsearch search` with a query of
// punctuation only fails, saying there is nothing to search for, instead
// of printing whatever the index lists first.
func TestSearch_NothingToSearch(t *testing.T) {
	d := opgen.Generate(opgen.GenOptions{Seed: 4, WorkPackages: 30, Comments: 30, WikiPages: 3, Meetings: 2})
	_, url := optesting.Start(t, d, optest.Options{})
	t.Setenv("OPENPROJECT_BASE_URL", url)
	t.Setenv("OPENPROJECT_API_KEY", optest.AliceKey)
	t.Setenv("OPSEARCH_DATA_DIR", t.TempDir())
	ctx := context.Background()
	var out, errb bytes.Buffer
	if code := run(ctx, []string{"sync"}, &out, &errb); code != 0 {
		t.Fatalf("sync: exit %d: %s", code, errb.String())
	}
	for _, args := range [][]string{{"search", ":"}, {"search", "#"}, {"search", "#", "--json"}, {"search", "::", "--exact"}} {
		out.Reset()
		errb.Reset()
		code := run(ctx, args, &out, &errb)
		if code == 0 {
			t.Errorf("opsearch %s: exit 0, printed %.300s", strings.Join(args, " "), out.String())
			continue
		}
		if msg := errb.String(); !strings.Contains(msg, "nothing to search for") || !strings.Contains(msg, "letters or digits") {
			t.Errorf("opsearch %s: %q does not say what is wrong", strings.Join(args, " "), msg)
		}
	}
}

package search_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
	"github.com/opsearch/opsearch/search"
)

// TestE2E_NothingToSearch: a query of punctuation or symbols only holds
// no word to look for; it fails with ErrNothingToSearch, saying so,
// instead of answering whatever the index lists first. An empty query
// (a filter-only listing) and queries with a word among the symbols
// still search.
func TestE2E_NothingToSearch(t *testing.T) {
	e := newEnv(t, opgen.Generate(opgen.GenOptions{Seed: 3, WorkPackages: 40, Comments: 40, WikiPages: 5, Meetings: 3}), optest.AdminKey)
	for _, q := range []string{":", "#", " # ", "::", "#-*", "?!", "…", "🎉", "\"\""} {
		for _, exact := range []bool{false, true} {
			resp, err := e.engine.Search(context.Background(), search.Query{Text: q, Exact: exact})
			if !errors.Is(err, search.ErrNothingToSearch) {
				t.Errorf("%q (exact %v): err = %v, %d results; want ErrNothingToSearch", q, exact, err, len(resp.Results))
				continue
			}
			if msg := err.Error(); !strings.Contains(msg, "nothing to search for") || !strings.Contains(msg, "letters or digits") {
				t.Errorf("%q: message %q does not say what is wrong", q, msg)
			}
		}
	}
	for _, q := range []string{"#1", "C#", "budget:", "ü"} {
		if _, err := e.engine.Search(context.Background(), search.Query{Text: q}); err != nil {
			t.Errorf("%q: %v", q, err)
		}
	}
	if _, err := e.engine.Search(context.Background(), search.Query{Kinds: []kind.Kind{kind.WikiPage}}); err != nil {
		t.Errorf("filter-only listing: %v", err)
	}
}

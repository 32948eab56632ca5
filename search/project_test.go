package search_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
	"github.com/opsearch/opsearch/search"
)

// TestQueryProject: Query.Project restricts by id or identifier (any
// case), exactly as ProjectIDs does; one the store does not hold is an
// error that names it, never an empty answer.
func TestQueryProject(t *testing.T) {
	if testing.Short() {
		t.Skip(skipShort)
	}
	d := opgen.Generate(opgen.GenOptions{Seed: 4, WorkPackages: 60})
	e := newEnv(t, d, optest.AdminKey)
	p := d.Projects[0]
	want := e.search(t, search.Query{Text: "the", ProjectIDs: []int64{p.ID}, PageSize: 50})
	if want.Total == 0 {
		t.Fatalf("test data: nothing in project %d", p.ID)
	}
	for _, ref := range []string{strconv.FormatInt(p.ID, 10), p.Identifier, strings.ToUpper(p.Identifier), " " + p.Identifier + " "} {
		got := e.search(t, search.Query{Text: "the", Project: ref, PageSize: 50})
		if got.Total != want.Total {
			t.Errorf("Project %q: %d results, by id %d", ref, got.Total, want.Total)
		}
	}
	for _, ref := range []string{"no-such-project", "999999"} {
		_, err := e.engine.Search(t.Context(), search.Query{Text: "the", Project: ref})
		if !errors.Is(err, search.ErrUnknownProject) || !strings.Contains(err.Error(), ref) {
			t.Errorf("Project %q: err = %v, want ErrUnknownProject naming it", ref, err)
		}
	}
}

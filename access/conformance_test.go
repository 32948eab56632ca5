package access_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/opsearch/opsearch/access"
	"github.com/opsearch/opsearch/internal/optesting"
	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
	"github.com/opsearch/opsearch/search"
)

// conformanceQueries draws queries from the data set as people would
// type them: titles and parts of titles, words of comments (internal
// ones too, which must find nothing for those who may not read them),
// agenda items, wiki text, with filters and pages.
func conformanceQueries(d *optest.Dataset, n int) []search.Query {
	r := rand.New(rand.NewPCG(7, 11))
	words := func(s string, k int) string {
		f := strings.Fields(s)
		if len(f) <= k {
			return s
		}
		i := r.IntN(len(f) - k + 1)
		return strings.Join(f[i:i+k], " ")
	}
	var texts []string
	for _, wp := range d.WorkPackages {
		texts = append(texts, wp.Subject)
	}
	for _, a := range d.Activities {
		if a.Comment != "" {
			texts = append(texts, openproject.PlainText(a.Comment))
		}
	}
	for _, w := range d.WikiPages {
		texts = append(texts, w.Title, w.Text)
	}
	for _, m := range d.Meetings {
		texts = append(texts, m.Title)
	}
	var internal []string
	for _, a := range d.Activities {
		if a.Internal && a.Comment != "" {
			internal = append(internal, openproject.PlainText(a.Comment))
		}
	}
	var qs []search.Query
	for len(qs) < n {
		var q search.Query
		switch i := len(qs); {
		case i%5 == 0 && len(internal) > 0:
			q.Text = words(internal[r.IntN(len(internal))], 1+r.IntN(4))
		default:
			q.Text = words(texts[r.IntN(len(texts))], 1+r.IntN(5))
		}
		switch len(qs) % 7 {
		case 1:
			q.Kinds = []kind.Kind{kind.WorkPackage}
		case 2:
			q.Exact = true
		case 3:
			q.Page, q.PageSize = 2, 5
		case 4:
			q.ProjectIDs = []int64{1, 2, 3}
		case 5:
			q.Kinds = []kind.Kind{kind.Meeting, kind.WikiPage}
		}
		if strings.TrimSpace(q.Text) == "" || q.Validate() != nil {
			continue
		}
		qs = append(qs, q)
	}
	// A listing by filters alone, and a query no document holds.
	qs = append(qs, search.Query{ProjectIDs: []int64{3}, PageSize: 100}, search.Query{Text: "zzqxv nonexistentword"})
	return qs
}

// answer is what conformance compares of a response: everything but
// the freshness, whose times and owners differ by design, and timing.
// firstDiff describes where two answers part.
func firstDiff(got, want search.Response) string {
	if got.Total != want.Total || len(got.Results) != len(want.Results) {
		return fmt.Sprintf("total %d (%d results), own %d (%d)", got.Total, len(got.Results), want.Total, len(want.Results))
	}
	for i := range got.Results {
		g, _ := json.Marshal(got.Results[i])
		w, _ := json.Marshal(want.Results[i])
		if string(g) != string(w) {
			return fmt.Sprintf("result %d:\nshared %s\nown    %s", i, g, w)
		}
	}
	return "elsewhere"
}

func answer(r search.Response) string {
	r.Index, r.TookMS = search.Freshness{}, 0
	b, _ := json.Marshal(r)
	return string(b)
}

// TestSharedSearchEqualsPerUser is the shared index's acceptance: for
// every user of the mixed-permissions set and a few hundred queries each,
// the engine over the shared store, restricted to the user's view,
// answers exactly what the engine over the user's own store and index
// answers: the same results in the same order, the same totals, and the
// same snippets, matched comments and agenda items, field for field.
func TestSharedSearchEqualsPerUser(t *testing.T) {
	if testing.Short() {
		t.Skip("syncs twelve stores and runs two thousand searches")
	}
	d := opgen.Generate(mixed)
	_, base := optesting.Start(t, d, optest.Options{})
	shared := sharedSynced(t, base, keys...)
	held, err := access.HoldingsOf(t.Context(), shared.Store)
	if err != nil {
		t.Fatal(err)
	}
	// Statistics count deleted documents until segments merge, so two
	// indexes of the same documents score alike only once compacted
	// (eval does the same for reproducible figures).
	if err := shared.Index.Compact(t.Context()); err != nil {
		t.Fatal(err)
	}
	queries := conformanceQueries(d, 300)
	for _, key := range keys {
		t.Run(key, func(t *testing.T) {
			own := synced(t, base, key)
			if err := own.Index.Compact(t.Context()); err != nil {
				t.Fatal(err)
			}
			c := client(t, base, key)
			v, err := access.Compute(t.Context(), c, held, nil, access.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := v.Err(); err != nil {
				t.Fatal(err)
			}
			owner := &search.Owner{UserID: own.Identity.UserID, Login: own.Identity.Login, Name: own.Identity.Name}
			mine := search.New(own.Store, own.Index, search.Options{})
			ours := search.New(shared.Store, shared.Index.Restrict(v.Visibility), search.Options{Shared: owner})
			differ, found := 0, 0
			for _, q := range queries {
				want, err := mine.Search(t.Context(), q)
				if err != nil {
					t.Fatalf("own search %+v: %v", q, err)
				}
				got, err := ours.Search(t.Context(), q)
				if err != nil {
					t.Fatalf("shared search %+v: %v", q, err)
				}
				if len(want.Results) > 0 {
					found++
				}
				if a, b := answer(got), answer(want); a != b {
					differ++
					if differ <= 3 {
						t.Errorf("query %q kinds %v exact %v page %d:\n%s", q.Text, q.Kinds, q.Exact, q.Page, firstDiff(got, want))
					}
				}
				if got.Index.Owner == nil || got.Index.Owner.UserID != owner.UserID {
					t.Fatalf("the shared answer names owner %+v, want %+v", got.Index.Owner, owner)
				}
				if fmt.Sprint(got.Index.Kinds[kind.WorkPackage].Store) != fmt.Sprint(want.Index.Kinds[kind.WorkPackage].Store) {
					t.Fatalf("freshness counts %d work packages, own store %d", got.Index.Kinds[kind.WorkPackage].Store, want.Index.Kinds[kind.WorkPackage].Store)
				}
			}
			if differ > 0 {
				t.Errorf("%d of %d answers differ", differ, len(queries))
			}
			if found < len(queries)/3 {
				t.Errorf("only %d of %d queries found anything: the test proves little", found, len(queries))
			}
			t.Logf("%d queries, %d with results", len(queries), found)
		})
	}
}

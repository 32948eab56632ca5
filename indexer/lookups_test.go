package indexer

import (
	"slices"
	"testing"

	"github.com/opsearch/opsearch/kind"
)

// TestTypoVariantsFollowTheIndex checks the cache of typo lookups
// (lookups): a batch that adds a word makes it a variant at the next
// query, a restricted reader's variants are of its own documents
// whoever asked before, and a repeated lookup builds nothing.
func TestTypoVariantsFollowTheIndex(t *testing.T) {
	b := openFilled(t, benchDocs(200))
	forms := func(vis *Visibility) []string {
		t.Helper()
		res, err := b.Search(t.Context(), SearchOptions{Query: "zyxwvat", Visible: vis})
		if err != nil {
			t.Fatal(err)
		}
		if res.Plan == nil || len(res.Plan.Words) != 1 {
			t.Fatalf("zyxwvat: plan %+v, want one word", res.Plan)
		}
		var out []string
		for f := range res.Plan.Words[0].Forms {
			out = append(out, f)
		}
		slices.Sort(out)
		return out
	}
	two, three := &Visibility{Projects: []int64{2}}, &Visibility{Projects: []int64{3}}
	for _, vis := range []*Visibility{nil, two, three} {
		if f := forms(vis); slices.Contains(f, "zyxwvut") {
			t.Fatalf("before indexing it, zyxwvut is a variant (visibility %v): %q", vis, f)
		}
	}
	in := Document{ID: "work_package:90001", Kind: kind.WorkPackage, EntityID: 90001, ProjectID: 2, Title: "zyxwvut rollout"}
	if err := b.Index(t.Context(), in); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		vis  *Visibility
		want bool
	}{
		{"unrestricted", nil, true},
		{"project 3 first", three, false},
		{"project 2", two, true},
		{"project 3 again", three, false},
	} {
		if got := slices.Contains(forms(tc.vis), "zyxwvut"); got != tc.want {
			t.Errorf("%s after indexing: zyxwvut a variant = %v, want %v", tc.name, got, tc.want)
		}
	}

	r := b.currentReader()
	defer r.Close()
	l := b.lookupsOf(r)
	if l == nil || b.lookupsOf(r) != l {
		t.Fatal("an unrestricted snapshot's lookups are not kept")
	}
	first := l.typoVariants(r, fieldAll, "zyxwvat", 1)
	if len(first) != 1 || first[0].term != "zyxwvut" {
		t.Fatalf("variants of zyxwvat: %+v", first)
	}
	if n := testing.AllocsPerRun(10, func() { l.typoVariants(r, fieldAll, "zyxwvat", 1) }); n > 0 {
		t.Errorf("a repeated lookup allocates %.0f times: it is not cached", n)
	}
}

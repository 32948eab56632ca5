package indexer

import (
	"cmp"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject/opgen"
)

// TestVisibleSearchEqualsOwnIndex: a search of a shared index restricted
// to one user's documents (SearchOptions.Visible) answers exactly as an
// index holding only those documents: the same total, the same hits
// with the same scores to the last bit and the same coverage, in every
// mode (fuzzy with typos, prefixes, synonyms and ids; kinds, federation,
// paging; exact; filters only), with whole projects, kinds of a project
// (its wiki and meetings, not its work packages) and single documents
// visible. This is what lets per-user mode be the reference for the
// shared one.
func TestVisibleSearchEqualsOwnIndex(t *testing.T) {
	if testing.Short() {
		t.Skip(skipShort)
	}
	docs := benchDocs(600)
	// Some work packages, wiki pages and meetings have a file
	// attached, visible exactly where its container is.
	for _, d := range slices.Clone(docs) {
		// (The rules below share and except some with %5 and %7.)
		if d.Kind.Container() && (d.EntityID%4 == 1 || d.EntityID%5 == 1 || d.EntityID%7 == 3) {
			docs = append(docs, Document{
				ID: DocID(kind.Attachment, 10_000+int64(len(docs))), Kind: kind.Attachment, EntityID: 10_000 + int64(len(docs)),
				ProjectID: d.ProjectID, ProjectName: d.ProjectName, Title: "notes.txt",
				Body: "attached to " + d.Title + ": " + d.Body, Container: d.ID,
			})
		}
	}
	// The user sees the even projects, plus two work packages of odd
	// projects shared with them alone.
	vis := &Visibility{}
	seen := map[int64]bool{}
	var own []Document
	for _, d := range docs {
		if d.Kind == kind.Attachment {
			continue // below, by their containers
		}
		if d.ProjectID%2 == 0 {
			if !seen[d.ProjectID] {
				seen[d.ProjectID] = true
				vis.Projects = append(vis.Projects, d.ProjectID)
			}
			if d.Kind == kind.WorkPackage && len(vis.Except) < 2 && d.EntityID%5 == 1 {
				vis.Except = append(vis.Except, d.ID) // entered after the view
				continue
			}
			own = append(own, d)
		} else if d.Kind == kind.WorkPackage && len(vis.Docs) < 2 && d.EntityID%7 == 3 {
			vis.Docs = append(vis.Docs, d.ID)
			own = append(own, d)
		} else if d.ProjectID == 1 && (d.Kind == kind.WikiPage || d.Kind == kind.Meeting) {
			own = append(own, d) // project 1: its wiki and meetings only
		}
	}
	ownIDs := map[string]bool{}
	for _, d := range own {
		ownIDs[d.ID] = true
	}
	for _, d := range docs {
		if d.Kind == kind.Attachment && ownIDs[d.Container] {
			own = append(own, d)
		}
	}
	vis.Partial = []ProjectKinds{{Project: 1, Kinds: []kind.Kind{kind.WikiPage, kind.Meeting}}}
	if n := len(slices.DeleteFunc(slices.Clone(own), func(d Document) bool { return d.Kind != kind.Attachment })); n < 10 {
		t.Fatalf("test data: %d visible attachments", n)
	}
	// Attachments of shared, excepted and partly visible containers.
	for _, ids := range [][]string{vis.Docs, vis.Except} {
		if !slices.ContainsFunc(docs, func(d Document) bool { return d.Kind == kind.Attachment && slices.Contains(ids, d.Container) }) {
			t.Fatalf("test data: no attachment of %v", ids)
		}
	}
	if len(vis.Projects) < 2 || len(vis.Docs) != 2 || len(vis.Except) != 2 || len(own) == len(docs) ||
		!slices.ContainsFunc(own, func(d Document) bool { return d.ProjectID == 1 && d.Kind == kind.WikiPage }) {
		t.Fatalf("test data: %d projects, %d shared, %d of %d docs", len(vis.Projects), len(vis.Docs), len(own), len(docs))
	}
	shared, mine := openFilled(t, docs), openFilled(t, own)

	// Words of documents the user cannot see, too: they must find nothing
	// and weigh nothing.
	var hidden string
	for _, d := range docs {
		if d.ProjectID%2 == 1 && d.Kind == kind.WorkPackage && !slices.Contains(vis.Docs, d.ID) {
			hidden = d.Title
			break
		}
	}
	queries := append(slices.Clone(benchQueries), "#12", "ticket 40 rollout", "getUserProfile", "the",
		"who raised the concern that the backup failed?", "dep", "migr", hidden)
	modes := []visibleMode{
		{"fuzzy", func(q string) SearchOptions { return SearchOptions{Query: q, Size: maxSize} }},
		{"kinds and federation", func(q string) SearchOptions {
			return SearchOptions{Query: q, Size: maxSize, Kinds: []kind.Kind{kind.WorkPackage, kind.Meeting}, Federate: []kind.Kind{kind.Meeting}, FederateSize: 5}
		}},
		{"second page", func(q string) SearchOptions { return SearchOptions{Query: q, Size: 7, From: 7} }},
		{"exact", func(q string) SearchOptions { return SearchOptions{Query: q, Mode: MatchExact, Size: maxSize} }},
		{"filters only", func(string) SearchOptions {
			return SearchOptions{ProjectIDs: []int64{vis.Projects[0], 1, 3}, Size: maxSize}
		}},
	}
	// Again with queries split into common and rarer words
	// (commonSplit), which at this size happens only when asked for: the
	// split depends on the user's statistics, so it too must answer as
	// the own index does.
	for _, split := range []uint64{0, 1} {
		shared.splitPostings, mine.splitPostings = split, split
		visibleEqualsOwn(t, shared, mine, vis, own, queries, modes, split == 1)
	}
}

// visibleMode is one way TestVisibleSearchEqualsOwnIndex searches.
type visibleMode struct {
	name string
	opts func(q string) SearchOptions
}

// visibleEqualsOwn compares every query in every mode, restricted in
// shared and in the own index mine; split requires some to be split.
func visibleEqualsOwn(t *testing.T, shared, mine *Bleve, vis *Visibility, own []Document, queries []string, modes []visibleMode, split bool) {
	t.Helper()
	compared, splits := 0, 0
	for _, m := range modes {
		for _, q := range queries {
			o := m.opts(q)
			want, err := mine.Search(t.Context(), o)
			if err != nil {
				t.Fatal(err)
			}
			o.Visible = vis
			got, err := shared.Search(t.Context(), o)
			if err != nil {
				t.Fatal(err)
			}
			name := fmt.Sprintf("%s %q (split %v)", m.name, q, split)
			if got.TotalIsLowerBound {
				splits++
			}
			if got.Total != want.Total || got.TotalIsLowerBound != want.TotalIsLowerBound {
				t.Errorf("%s: total %d, own index %d", name, got.Total, want.Total)
				continue
			}
			if o.Size < maxSize {
				// A page: ties at its edges may fall either way, by
				// segment order; the ids must be the own index's set
				// when no score ties cross the edge, so compare scores.
				if !slices.EqualFunc(got.Hits, want.Hits, func(a, b Hit) bool { return a.Score == b.Score }) {
					t.Errorf("%s: page scores %v, own index %v", name, scores(got.Hits), scores(want.Hits))
				}
				continue
			}
			for _, hs := range [][]Hit{got.Hits, want.Hits, got.Federated, want.Federated} {
				slices.SortFunc(hs, func(a, b Hit) int {
					if c := cmp.Compare(b.Score, a.Score); c != 0 {
						return c
					}
					return cmp.Compare(a.ID, b.ID)
				})
			}
			for _, pair := range [][2][]Hit{{got.Hits, want.Hits}, {got.Federated, want.Federated}} {
				g, w := pair[0], pair[1]
				if len(g) != len(w) {
					t.Errorf("%s: %d hits, own index %d", name, len(g), len(w))
					continue
				}
				for i := range g {
					if g[i].ID != w[i].ID || g[i].Score != w[i].Score || g[i].Coverage != w[i].Coverage {
						t.Errorf("%s: hit %d is %s %v %v, own index %s %v %v", name, i, g[i].ID, g[i].Score, g[i].Coverage, w[i].ID, w[i].Score, w[i].Coverage)
						break
					}
				}
			}
			for _, h := range got.Hits {
				if !slices.ContainsFunc(own, func(d Document) bool { return d.ID == h.ID }) {
					t.Errorf("%s: %s is not the user's", name, h.ID)
				}
			}
			compared++
		}
	}
	if compared < len(queries)*3 {
		t.Errorf("only %d searches compared", compared)
	}
	if split != (splits > 0) {
		t.Errorf("split %v: %d searches were split", split, splits)
	}
}

func scores(hs []Hit) []float64 {
	out := make([]float64, len(hs))
	for i, h := range hs {
		out[i] = h.Score
	}
	return out
}

// BenchmarkVisibleSearch compares, on 20,000 generated work packages
// (with wiki pages and meetings), a user's searches in an index of their
// own documents (per-user mode), in the index of everyone's restricted
// to theirs (shared mode, SearchOptions.Visible), and unrestricted in
// the shared index. The user sees two thirds of the projects. Issue 14:
// shared within 1.2x of per-user.
//
//	go test ./indexer -run '^$' -bench VisibleSearch -benchtime 3x
func BenchmarkVisibleSearch(b *testing.B) {
	if testing.Short() {
		b.Skip("builds two 20,000 work package indexes")
	}
	docs := genDocs(opgen.GenOptions{Seed: 1, WorkPackages: 20_000, Comments: 60_000, WikiPages: 300, Meetings: 200})
	vis := &Visibility{}
	seen := map[int64]bool{}
	var own []Document
	for _, d := range docs {
		if d.ProjectID%3 != 0 {
			if !seen[d.ProjectID] {
				seen[d.ProjectID] = true
				vis.Projects = append(vis.Projects, d.ProjectID)
			}
			own = append(own, d)
		}
	}
	shared, mine := openFilled(b, docs), openFilled(b, own)
	for _, ix := range []*Bleve{shared, mine} {
		if err := ix.Compact(b.Context()); err != nil {
			b.Fatal(err)
		}
	}
	for _, c := range []struct {
		name string
		idx  *Bleve
		vis  *Visibility
	}{{"per-user", mine, nil}, {"shared-restricted", shared, vis}, {"shared-everything", shared, nil}} {
		b.Run(c.name, func(b *testing.B) {
			run := func(q string) {
				if _, err := c.idx.Search(b.Context(), SearchOptions{Query: q, Size: 30, Visible: c.vis}); err != nil {
					b.Fatal(err)
				}
			}
			for _, q := range benchQueries {
				run(q)
			}
			var lat []time.Duration
			for b.Loop() {
				for _, q := range benchQueries {
					start := time.Now()
					run(q)
					lat = append(lat, time.Since(start))
				}
			}
			slices.Sort(lat)
			ms := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))]) / float64(time.Millisecond) }
			b.ReportMetric(ms(0.50), "p50-ms")
			b.ReportMetric(ms(0.99), "p99-ms")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// TestVisibleViewFollowsTheIndex: the visible set and its counts are
// cached per snapshot, and a write makes a new one: a document indexed
// into a visible project is found at once, one indexed into another
// project is not, a deleted one is gone; concurrent restricted searches
// share the cache safely (run with -race).
func TestVisibleViewFollowsTheIndex(t *testing.T) {
	b := openFilled(t, benchDocs(200))
	vis := &Visibility{Projects: []int64{2}}
	total := func(q string) uint64 {
		t.Helper()
		res, err := b.Search(t.Context(), SearchOptions{Query: q, Visible: vis})
		if err != nil {
			t.Fatal(err)
		}
		return res.Total
	}
	if n := total("zyxwvut"); n != 0 {
		t.Fatalf("before: %d hits", n)
	}
	in := Document{ID: "work_package:90001", Kind: kind.WorkPackage, EntityID: 90001, ProjectID: 2, Title: "zyxwvut rollout"}
	out := Document{ID: "work_package:90002", Kind: kind.WorkPackage, EntityID: 90002, ProjectID: 3, Title: "zyxwvut rollout"}
	if err := b.Index(t.Context(), in, out); err != nil {
		t.Fatal(err)
	}
	if n := total("zyxwvut"); n != 1 {
		t.Errorf("after indexing: %d hits, want the visible project's one", n)
	}
	done := make(chan uint64)
	for range 4 {
		go func() {
			res, err := b.Search(t.Context(), SearchOptions{Query: "zyxwvut rollout", Visible: vis})
			if err != nil {
				t.Error(err)
			}
			done <- res.Total
		}()
	}
	for range 4 {
		if n := <-done; n == 0 {
			t.Error("a concurrent search found nothing")
		}
	}
	if err := b.Delete(t.Context(), in.ID); err != nil {
		t.Fatal(err)
	}
	if n := total("zyxwvut"); n != 0 {
		t.Errorf("after deleting: %d hits", n)
	}
}

// TestRestrictedShows: Shows answers for a document by id what a
// restricted search would: shown in a visible project, in a kind a
// partly visible project grants, when shared one by one; hidden when
// excepted, in another project or kind, and when the index lacks it.
func TestRestrictedShows(t *testing.T) {
	doc := func(k kind.Kind, id, project int64) Document {
		return Document{ID: DocID(k, id), Kind: k, EntityID: id, ProjectID: project, Title: fmt.Sprintf("%s %d", k, id)}
	}
	b := openFilled(t, []Document{
		doc(kind.WorkPackage, 1, 10), doc(kind.WorkPackage, 2, 10), doc(kind.WikiPage, 3, 10),
		doc(kind.WorkPackage, 4, 20), doc(kind.WikiPage, 5, 20), doc(kind.Meeting, 6, 20), doc(kind.Project, 20, 20),
		doc(kind.WorkPackage, 7, 30), doc(kind.WorkPackage, 8, 30), doc(kind.Project, 30, 30),
	})
	r := b.Restrict(&Visibility{
		Projects: []int64{10},
		Partial:  []ProjectKinds{{Project: 20, Kinds: []kind.Kind{kind.Project, kind.WikiPage}}},
		Docs:     []string{DocID(kind.WorkPackage, 7)},
		Except:   []string{DocID(kind.WorkPackage, 2)},
	})
	for _, c := range []struct {
		id   string
		want bool
	}{
		{DocID(kind.WorkPackage, 1), true},   // a visible project
		{DocID(kind.WikiPage, 3), true},      // the same
		{DocID(kind.WorkPackage, 2), false},  // excepted
		{DocID(kind.WikiPage, 5), true},      // a kind the partial project grants
		{DocID(kind.Project, 20), true},      // its project document
		{DocID(kind.WorkPackage, 4), false},  // a kind it does not grant
		{DocID(kind.Meeting, 6), false},      // the same
		{DocID(kind.WorkPackage, 7), true},   // shared one by one
		{DocID(kind.WorkPackage, 8), false},  // its neighbour is not
		{DocID(kind.Project, 30), false},     // nor its project
		{DocID(kind.WorkPackage, 99), false}, // not in the index
		{PublicDocID(1), false},              // no such twin
		{"not a document id at all", false},  // nonsense
	} {
		got, err := r.Shows(t.Context(), c.id)
		if err != nil {
			t.Fatal(err)
		}
		if got[0] != c.want {
			t.Errorf("Shows(%s) = %v, want %v", c.id, got[0], c.want)
		}
	}
}

package search_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/opsearch/opsearch/indexer"
	"github.com/opsearch/opsearch/internal/optesting/synced"
	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
	"github.com/opsearch/opsearch/search"
)

// TestE2E_ContainersCountedOnce: a phrase only a file holds finds the
// file and, just before it, its work package. Whether the total counts
// that work package once more depends on whether the query matches it by
// itself, which the index is asked (beside the container's loading):
//   - alone: the work package holds none of the phrase's words, so the
//     total is the index's matches and one more;
//   - matched: the work package's subject holds a word of the phrase, but
//     ranks behind the re-ranked head (one candidate), so it is among the
//     index's matches already and the total is theirs.
//
// Either way every page says the same total and paging walks each result
// once.
func TestE2E_ContainersCountedOnce(t *testing.T) {
	if testing.Short() {
		t.Skip(skipShort)
	}
	d := opgen.Generate(opgen.GenOptions{Seed: 7, WorkPackages: 120, WikiPages: 5, Meetings: 5})
	// Two files with text, each attached to a work package of its own
	// that holds no other file.
	files := map[int64]int{}
	for _, a := range d.Attachments {
		if a.ContainerKind() == kind.WorkPackage {
			files[a.Container.ID]++
		}
	}
	var picked []int
	for i, a := range d.Attachments {
		if len(picked) < 2 && a.ContainerKind() == kind.WorkPackage && files[a.Container.ID] == 1 && opgen.AttachmentKind(a).Extractable() {
			picked = append(picked, i)
		}
	}
	if len(picked) < 2 {
		t.Fatal("the data set has no two work packages with one file of text each")
	}
	alone, matched := d.Attachments[picked[0]], d.Attachments[picked[1]]
	for i := range d.WorkPackages {
		if d.WorkPackages[i].ID == matched.Container.ID {
			word := strings.Fields(opgen.AttachmentPhrase(matched.ID))[0]
			d.WorkPackages[i].Subject += " " + word
		}
	}
	s := synced.Start(t, d, optest.AdminKey)

	for _, tc := range []struct {
		name       string
		file       optest.Attachment
		candidates int
		extra      int // what the container adds to the index's matches
	}{
		{"alone", alone, 0, 1},
		{"matched", matched, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := opgen.AttachmentPhrase(tc.file.ID)
			container := indexer.DocID(kind.WorkPackage, tc.file.Container.ID)
			idx, err := s.Index.Search(t.Context(), indexer.SearchOptions{Query: q, Size: 1000})
			if err != nil {
				t.Fatal(err)
			}
			at := slices.IndexFunc(idx.Hits, func(h indexer.Hit) bool { return h.ID == container })
			switch {
			case tc.extra == 1 && at >= 0:
				t.Fatalf("the query matches %s by itself (at %d)", container, at)
			case tc.extra == 0 && at < 1:
				t.Fatalf("%s is at %d of the index's hits, want it matched and behind the first", container, at)
			}
			eng := search.New(s.Store, s.Index, search.Options{Candidates: tc.candidates})
			first, err := eng.Search(t.Context(), search.Query{Text: q, PageSize: 1})
			if err != nil {
				t.Fatal(err)
			}
			if want := int(idx.Total) + tc.extra; first.Total != want {
				t.Errorf("total %d, want the index's %d matches and %d", first.Total, idx.Total, tc.extra)
			}
			var got []string
			for page := 1; page <= first.Total+1; page++ {
				resp, err := eng.Search(t.Context(), search.Query{Text: q, Page: page, PageSize: 1})
				if err != nil {
					t.Fatal(err)
				}
				if resp.Total != first.Total {
					t.Errorf("page %d says total %d, the first %d", page, resp.Total, first.Total)
				}
				for _, r := range resp.Results {
					got = append(got, fmt.Sprintf("%s:%d", r.Kind, r.ID))
				}
			}
			if len(got) != first.Total {
				t.Errorf("paging walked %d results, the total is %d", len(got), first.Total)
			}
			seen := map[string]bool{}
			for _, id := range got {
				if seen[id] {
					t.Errorf("%s appears twice while paging", id)
				}
				seen[id] = true
			}
			file := fmt.Sprintf("%s:%d", kind.Attachment, tc.file.ID)
			if i := slices.Index(got, file); i < 1 || got[i-1] != container {
				t.Errorf("%s not just before %s: %v", container, file, got[:min(len(got), 5)])
			}
		})
	}
}

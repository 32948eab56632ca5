package indexer

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/opsearch/opsearch/kind"
)

// splitCorpus: "report" is in nearly every document, "zeppelin" in six:
// the target holds both ("report" in its text, not its title), five
// shorter ones hold "zeppelin" alone and outscore it on that word.
func splitCorpus() []Document {
	wp := func(id int64, title string) Document {
		return Document{ID: DocID(kind.WorkPackage, id), Kind: kind.WorkPackage, EntityID: id, ProjectID: 1, Title: title}
	}
	target := wp(1, "Zeppelin")
	target.Body = "report"
	docs := []Document{target}
	for i := range int64(5) {
		docs = append(docs, wp(2+i, "Zeppelin"))
	}
	for i := range int64(200) {
		docs = append(docs, wp(100+i, fmt.Sprintf("Weekly report %s", []string{"alpha", "bravo", "charlie", "delta"}[i%4])))
	}
	return docs
}

// TestCommonSplit: a query of a rare and a common word, split
// (commonSplit), finds only documents holding the rare word, ranks the
// one that also holds the common word first (its coordination factor
// counts it), and says its total is a lower bound; a page the rare word
// cannot fill is answered by the whole query.
func TestCommonSplit(t *testing.T) {
	b := openFilled(t, splitCorpus())
	b.splitPostings = 1
	res, err := b.Search(t.Context(), SearchOptions{Query: "zeppelin report", Size: 3})
	if err != nil {
		t.Fatal(err)
	}
	if res.Plan.split == nil || !res.TotalIsLowerBound || res.Total != 6 {
		t.Fatalf("split %v, total %d (lower bound %v), want a split of the 6 documents holding zeppelin", res.Plan.split != nil, res.Total, res.TotalIsLowerBound)
	}
	if len(res.Hits) != 3 || res.Hits[0].ID != "work_package:1" {
		t.Fatalf("hits %v, want work_package:1 first of 3", hitIDs(res.Hits))
	}
	for _, h := range res.Hits {
		if !slices.Contains(h.MatchedWords, "zeppelin") {
			t.Errorf("%s holds no zeppelin: %v", h.ID, h.MatchedWords)
		}
	}

	// The whole query ranks the same page the same way, and on the same
	// scale: a hit holding no common word scores exactly as in it (the
	// split's query norm is the whole query's), the one holding it less
	// by the common word's own tf-idf.
	b.splitPostings = math.MaxUint64
	whole, err := b.Search(t.Context(), SearchOptions{Query: "zeppelin report", Size: 3})
	if err != nil {
		t.Fatal(err)
	}
	if whole.Plan.split != nil || whole.TotalIsLowerBound || whole.Total <= 200 || whole.Hits[0].ID != "work_package:1" {
		t.Errorf("whole query: split %v, total %d, first %s", whole.Plan.split != nil, whole.Total, whole.Hits[0].ID)
	}
	for i, h := range res.Hits {
		w := whole.Hits[i]
		if h.ID != w.ID || (h.ID == "work_package:1") != (h.Score < w.Score) || h.ID != "work_package:1" && h.Score != w.Score {
			t.Errorf("hit %d: split %s %v, whole query %s %v", i, h.ID, h.Score, w.ID, w.Score)
		}
	}

	// Ten hits: zeppelin fills six, so the documents holding only
	// report are candidates too.
	b.splitPostings = 1
	res, err = b.Search(t.Context(), SearchOptions{Query: "zeppelin report", Size: 10})
	if err != nil {
		t.Fatal(err)
	}
	if res.TotalIsLowerBound || res.Total <= 200 || len(res.Hits) != 10 || res.Hits[0].ID != "work_package:1" {
		t.Errorf("page past the rare word: total %d (lower bound %v), %d hits, first %v", res.Total, res.TotalIsLowerBound, len(res.Hits), hitIDs(res.Hits))
	}
}

func hitIDs(hs []Hit) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.ID
	}
	return out
}

// TestSplitCommonChoice: which queries are split, and at which share of
// the documents a word counts as common.
func TestSplitCommonChoice(t *testing.T) {
	const docs = 1000
	type word struct {
		postings uint64 // 0: an id
		weight   float64
	}
	tests := []struct {
		name        string
		words       []word
		minPostings uint64
		// want lists the words left to find candidates; nil: no split.
		want []int
	}{
		{"rare and common", []word{{10, 5}, {600, 0.5}}, 1, []int{0}},
		{"no common word", []word{{10, 5}, {20, 4}}, 1, nil},
		{"only common words", []word{{600, 0.5}, {700, 0.4}}, 1, nil},
		{"common words too few postings", []word{{10, 5}, {600, 0.5}}, 601, nil},
		// 150 postings: common at 10%, and then the common words hold
		// most of the information; at 20% it is rare and 800 alone is
		// common.
		{"next share", []word{{10, 2}, {150, 3}, {800, 0.3}}, 1, []int{0, 1}},
		{"common words hold too much", []word{{10, 2}, {600, 1}, {700, 1}}, 1, nil},
		{"an id is never common", []word{{0, 6}, {600, 0.5}}, 1, []int{0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &Plan{docs: docs}
			var clauses []wordClauses
			for i, w := range tt.words {
				p.Words = append(p.Words, PlanWord{Text: fmt.Sprint(i), Weight: w.weight, postings: w.postings, ident: w.postings == 0})
				clauses = append(clauses, wordClauses{group: term(fmt.Sprint(i), fieldAll, 1), postings: w.postings, forms: []string{fmt.Sprint(i)}})
			}
			sp := p.splitCommon(clauses, nil, tt.minPostings)
			if (sp == nil) != (tt.want == nil) {
				t.Fatalf("split %v, want %v", sp != nil, tt.want)
			}
			if sp == nil {
				for _, w := range p.Words {
					if w.common {
						t.Errorf("word %s marked common without a split", w.Text)
					}
				}
				return
			}
			var got []int
			for _, g := range sp.rare.groups {
				got = append(got, atoiTerm(t, g))
			}
			if !slices.Equal(got, tt.want) || len(sp.rare.present)+len(got) != len(tt.words) || sp.rare.coordGroups != len(tt.words) {
				t.Errorf("finding words %v with %d counted by presence of %d, want %v", got, len(sp.rare.present), sp.rare.coordGroups, tt.want)
			}
			for i, w := range p.Words {
				if w.common == slices.Contains(tt.want, i) {
					t.Errorf("word %d: common %v", i, w.common)
				}
			}
		})
	}
}

func atoiTerm(t *testing.T, q query.Query) int {
	t.Helper()
	tq, ok := q.(*query.TermQuery)
	if !ok {
		t.Fatalf("group %T, want a term query", q)
	}
	var n int
	if _, err := fmt.Sscan(strings.TrimSpace(tq.Term), &n); err != nil {
		t.Fatal(err)
	}
	return n
}

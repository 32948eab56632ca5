package scorer

import (
	"math"
	"sort"
)

// Target names one relevant item of a labelled query. Type is one of
// work_package, wiki_page, meeting, project.
type Target struct {
	Type string `json:"type"`
	ID   int64  `json:"id"`
}

// LabelledQuery is one line of an evaluation set (JSONL):
// {"id","query","kind","expect":[{"type","id"}]}. Kind groups queries for
// per-kind metrics (typo, comment_fact, negative, ...). An empty Expect
// means nothing relevant exists: the right answer is no result above the
// score gate.
type LabelledQuery struct {
	ID     string   `json:"id"`
	Query  string   `json:"query"`
	Kind   string   `json:"kind"`
	Expect []Target `json:"expect"`
}

// Negative reports whether nothing relevant exists for q.
func (q LabelledQuery) Negative() bool { return len(q.Expect) == 0 }

// FirstRelevant returns the 1-based rank of the first relevant item in ranked, or 0
// when none is there.
func FirstRelevant(ranked []Target, expect []Target) int {
	for i, t := range ranked {
		for _, e := range expect {
			if t == e {
				return i + 1
			}
		}
	}
	return 0
}

// RecallAt is the share of relevant items found in the top k.
func RecallAt(ranked []Target, expect []Target, k int) float64 {
	if len(expect) == 0 {
		return 0
	}
	found := 0
	for _, e := range expect {
		for i, t := range ranked {
			if i >= k {
				break
			}
			if t == e {
				found++
				break
			}
		}
	}
	return float64(found) / float64(len(expect))
}

// ReciprocalRankAt is 1/rank of the first relevant item within the top k,
// 0 when none is there.
func ReciprocalRankAt(ranked []Target, expect []Target, k int) float64 {
	r := FirstRelevant(ranked, expect)
	if r == 0 || r > k {
		return 0
	}
	return 1 / float64(r)
}

// NDCGAt is nDCG@k with binary gains and the log2(i+1) discount; the ideal
// ranking puts every relevant item first.
func NDCGAt(ranked []Target, expect []Target, k int) float64 {
	if len(expect) == 0 {
		return 0
	}
	rel := make(map[Target]bool, len(expect))
	for _, e := range expect {
		rel[e] = true
	}
	dcg := 0.0
	for i, t := range ranked {
		if i >= k {
			break
		}
		if rel[t] {
			dcg += 1 / math.Log2(float64(i+2))
			delete(rel, t) // a duplicate in the ranking gains nothing
		}
	}
	idcg := 0.0
	for i := 0; i < min(k, len(expect)); i++ {
		idcg += 1 / math.Log2(float64(i+2))
	}
	return dcg / idcg
}

// Metrics aggregates per-query figures over a set of positive queries.
type Metrics struct {
	Queries  int     `json:"queries"`
	Recall1  float64 `json:"recall@1"`
	Recall5  float64 `json:"recall@5"`
	Recall10 float64 `json:"recall@10"`
	MRR10    float64 `json:"mrr@10"`
	NDCG10   float64 `json:"ndcg@10"`
	// Negatives counts queries with nothing relevant; NegativeClean is the
	// share of them answered with no result at all.
	Negatives     int     `json:"negatives,omitempty"`
	NegativeClean float64 `json:"negative_clean,omitempty"`
}

// Accumulator sums per-query metrics; Metrics averages them.
type Accumulator struct {
	n, neg, negClean       int
	r1, r5, r10, mrr, ndcg float64
}

// Add records one query's ranking.
func (a *Accumulator) Add(q LabelledQuery, ranked []Target) {
	if q.Negative() {
		a.neg++
		if len(ranked) == 0 {
			a.negClean++
		}
		return
	}
	a.n++
	a.r1 += RecallAt(ranked, q.Expect, 1)
	a.r5 += RecallAt(ranked, q.Expect, 5)
	a.r10 += RecallAt(ranked, q.Expect, 10)
	a.mrr += ReciprocalRankAt(ranked, q.Expect, 10)
	a.ndcg += NDCGAt(ranked, q.Expect, 10)
}

// Metrics returns the means, rounded to 4 decimals so golden files are
// stable across platforms.
func (a *Accumulator) Metrics() Metrics {
	m := Metrics{Queries: a.n, Negatives: a.neg}
	if a.n > 0 {
		n := float64(a.n)
		m.Recall1, m.Recall5, m.Recall10 = round4(a.r1/n), round4(a.r5/n), round4(a.r10/n)
		m.MRR10, m.NDCG10 = round4(a.mrr/n), round4(a.ndcg/n)
	}
	if a.neg > 0 {
		m.NegativeClean = round4(float64(a.negClean) / float64(a.neg))
	}
	return m
}

func round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }

// SortedKinds returns the keys of a per-kind map in order, for stable
// reports.
func SortedKinds[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

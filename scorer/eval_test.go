package scorer

import (
	"math"
	"testing"
)

func TestEvalMetrics(t *testing.T) {
	a, b, c, d := Target{"work_package", 1}, Target{"wiki_page", 2}, Target{"meeting", 3}, Target{"project", 4}
	tests := []struct {
		name             string
		ranked, expect   []Target
		r1, r5, rr, ndcg float64
	}{
		{"first", []Target{a, b}, []Target{a}, 1, 1, 1, 1},
		{"third", []Target{b, c, a}, []Target{a}, 0, 1, 1.0 / 3, 0.5},
		{"missing", []Target{b, c}, []Target{a}, 0, 0, 0, 0},
		{"two relevant, one found second", []Target{c, a}, []Target{a, d}, 0, 0.5, 0.5, (1 / math.Log2(3)) / (1 + 1/math.Log2(3))},
		{"beyond 10", []Target{b, b, b, b, b, b, b, b, b, b, a}, []Target{a}, 0, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			near := func(got, want float64) bool { return math.Abs(got-want) < 1e-9 }
			if got := RecallAt(tt.ranked, tt.expect, 1); !near(got, tt.r1) {
				t.Errorf("recall@1 = %v, want %v", got, tt.r1)
			}
			if got := RecallAt(tt.ranked, tt.expect, 5); !near(got, tt.r5) {
				t.Errorf("recall@5 = %v, want %v", got, tt.r5)
			}
			if got := ReciprocalRankAt(tt.ranked, tt.expect, 10); !near(got, tt.rr) {
				t.Errorf("rr@10 = %v, want %v", got, tt.rr)
			}
			if got := NDCGAt(tt.ranked, tt.expect, 10); !near(got, tt.ndcg) {
				t.Errorf("ndcg@10 = %v, want %v", got, tt.ndcg)
			}
		})
	}
}

func TestAccumulator(t *testing.T) {
	a := Target{"work_package", 1}
	var acc Accumulator
	acc.Add(LabelledQuery{Expect: []Target{a}}, []Target{a})
	acc.Add(LabelledQuery{Expect: []Target{a}}, nil)
	acc.Add(LabelledQuery{}, nil)
	acc.Add(LabelledQuery{}, []Target{a})
	m := acc.Metrics()
	if m.Queries != 2 || m.Recall10 != 0.5 || m.MRR10 != 0.5 || m.Negatives != 2 || m.NegativeClean != 0.5 {
		t.Errorf("metrics = %+v", m)
	}
}

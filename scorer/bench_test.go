package scorer

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// benchVocabulary mixes project words, capitalised words (which take the
// normalisation slow path) and non-ASCII ones.
var benchVocabulary = strings.Fields(`the a of and to in for with on was we
	budget approval review deployment certificate infrastructure meeting agenda
	decision hiring staffing onboarding design team vendor payment terms proxy
	expired retrospective quarterly finance board sprint backlog release notes
	Customer Server Database Migration Müller Ørsted Straße Café résumé
	performance latency regression rollback monitoring alerting incident`)

// benchText returns about n bytes of sentence-like text, deterministically.
func benchText(rng *rand.Rand, n int) string {
	var b strings.Builder
	for b.Len() < n {
		w := benchVocabulary[rng.IntN(len(benchVocabulary))]
		if rng.IntN(12) == 0 {
			w = strings.ToUpper(w[:1]) + w[1:]
		}
		b.WriteString(w)
		if rng.IntN(10) == 0 {
			b.WriteString(". ")
		} else {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

func benchRecords(n int) []Record {
	rng := rand.New(rand.NewPCG(42, 7))
	recs := make([]Record, n)
	for i := range recs {
		recs[i] = Record{ID: fmt.Sprintf("work_package:%d", i+1), Fields: []Field{
			{Name: "subject", Weight: 3, Values: []string{benchText(rng, 40)}},
			{Name: "description", Weight: 1, Values: []string{benchText(rng, 3000)}},
			{Name: "comments", Weight: 1, Values: []string{benchText(rng, 200), benchText(rng, 300)}},
		}}
	}
	return recs
}

// BenchmarkRank50 ranks 50 records, each with a 3 KB body, against a
// three-word query with a typo: the sidecar's re-ranking of index
// candidates.
func BenchmarkRank50(b *testing.B) {
	recs := benchRecords(50)
	b.ReportAllocs()
	for b.Loop() {
		Rank(recs, "budget aproval deploymnt", Options{})
	}
}

// BenchmarkScoreField scores a three-token query against one 3 KB text.
func BenchmarkScoreField(b *testing.B) {
	text := benchText(rand.New(rand.NewPCG(1, 1)), 3000)
	q := QueryTokens("budget aproval deploymnt")
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		ScoreField(q, text)
	}
}

func BenchmarkBoundedLevenshtein(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		BoundedLevenshtein("deploymnt", "deployment", 2)
		BoundedLevenshtein("müller", "muller", 1)
	}
}

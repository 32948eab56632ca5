package indexer

import (
	"bytes"
	"testing"

	porterstemmer "github.com/blevesearch/go-porterstemmer"
)

// TestStemOfMatchesPorter checks the cached, allocation-free stemming
// against bleve's porter filter on every word of the benchmark corpus, so
// query stems keep meeting indexed stems.
func TestStemOfMatchesPorter(t *testing.T) {
	m, err := newMapping()
	if err != nil {
		t.Fatal(err)
	}
	ex := m.AnalyzerNamed(analyzerExact)
	words := []string{"happy", "running", "migrations", "ponies", "caresses", "müller", "straße", "agreed", "a", "is", "2025", "généralement"}
	for _, d := range benchDocs(500) {
		for _, s := range append([]string{d.Title, d.Body}, d.Comments...) {
			for _, tk := range ex.Analyze([]byte(s)) {
				words = append(words, string(tk.Term))
			}
		}
	}
	for range 2 { // uncached, then cached
		for _, w := range words {
			want := porterstemmer.StemWithoutLowerCasing(bytes.Runes([]byte(w)))
			got := stemOf([]byte(w))
			if got == nil {
				got = []byte(w)
			}
			if string(got) != string(want) {
				t.Fatalf("stem %q: got %q, want %q", w, got, string(want))
			}
		}
	}
}

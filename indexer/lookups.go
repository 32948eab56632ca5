package indexer

import (
	"sync"
	"weak"

	"github.com/blevesearch/bleve/v2/index/scorch"
	index "github.com/blevesearch/bleve_index_api"
)

// lookups keeps the typo variants a query's planning found in one
// snapshot, as one reader sees it. Planning looks up the variants of
// every word the index does not hold as typed, and a lookup at two edits
// builds a Levenshtein automaton that vellum sizes for the longest
// possible (300 KB to 1 MB for a word of 7 to 13 letters) in 0.2 to 0.6
// ms at 10,000 work packages, more than the rest of a query's planning.
// People and agents repeat such words ("any ticket about", "what became
// of ... eventually", "hey", "basically"), and a snapshot's dictionary
// never changes: its answers hold until a batch or merge replaces it.
// A restricted reader's are its view's (visibleView), so one user's
// variants, whose counts are of their documents, are never another's.
//
// A restricted reader's view also keeps here how many visible documents
// hold each term it counted (visibleReader.count).
type lookups struct {
	mu       sync.Mutex
	variants map[variantKey][]variant
	df       map[string]uint64
}

// maxCounts bounds the counts one snapshot's lookups keep; past it they
// start over.
const maxCounts = 1 << 16

// count returns the count kept for key, if any.
func (l *lookups) count(key string) (uint64, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, ok := l.df[key]
	return n, ok
}

// keepCount keeps n as key's count.
func (l *lookups) keepCount(key string, n uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.df == nil || len(l.df) >= maxCounts {
		l.df = map[string]uint64{}
	}
	l.df[key] = n
}

// variantKey is what fuzzyVariants answers for.
type variantKey struct {
	field, term string
	edits       int
}

// maxLookups bounds the answers one snapshot's lookups keep; past it
// they start over.
const maxLookups = 1 << 12

// typoVariants returns fuzzyVariants(r, field, t, n), from l when it has
// the answer. l may be nil (no cache). The slice is shared: callers must
// not change it.
func (l *lookups) typoVariants(r index.IndexReader, field, t string, n int) []variant {
	if l == nil {
		return fuzzyVariants(r, field, t, n)
	}
	k := variantKey{field: field, term: t, edits: n}
	l.mu.Lock()
	vs, ok := l.variants[k]
	l.mu.Unlock()
	if ok {
		return vs
	}
	vs = fuzzyVariants(r, field, t, n)
	l.mu.Lock()
	if l.variants == nil || len(l.variants) >= maxLookups {
		l.variants = map[variantKey][]variant{}
	}
	l.variants[k] = vs
	l.mu.Unlock()
	return vs
}

// snapshotLookups holds the lookups of the newest unrestricted snapshot
// a query was planned on; planning on another snapshot starts them over.
type snapshotLookups struct {
	mu   sync.Mutex
	snap weak.Pointer[scorch.IndexSnapshot] // snapshotID
	l    *lookups
}

// lookupsOf returns the lookups planning on r may share: its view's for
// a restricted reader, the snapshot's for an unrestricted one, and nil
// for any other reader (no identity to share by).
func (b *Bleve) lookupsOf(r index.IndexReader) *lookups {
	switch r := r.(type) {
	case *visibleReader:
		return &r.view.lookups
	case *scorch.IndexSnapshot:
		id, _ := snapshotID(r)
		s := &b.lookups
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.snap != id {
			s.snap, s.l = id, &lookups{}
		}
		return s.l
	}
	return nil
}

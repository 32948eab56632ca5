package indexer

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"weak"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	bsearch "github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/opsearch/opsearch/kind"
)

// Visibility restricts a search to the documents one user may see in an
// index shared by several users: every document of Projects, and the
// documents Docs names (ids as in Document.ID: a work package shared with
// the user alone). A search so restricted answers as an index holding
// only those documents would: the same hits, totals and pages, and the
// same scores, because every statistic a score or the coverage plan
// uses (how many documents there are, how many hold a term) is counted
// over the visible documents only. Filtering a shared index's answer
// afterwards would rank by everyone's statistics and page wrongly.
//
// The index caches what a Visibility shows by its address, so a value
// must not change once it was searched with: a changed visibility is a
// new value.
type Visibility struct {
	Projects []int64
	// Partial names projects of which the user sees some kinds only (a
	// role without view_wiki_pages there): their documents of those
	// kinds.
	Partial []ProjectKinds
	Docs    []string
	// Except hides documents the rest would show: those that entered a
	// project after the user's visibility was last derived, until it is
	// derived again (a project all of whose work packages are shared
	// with the user one by one looks, by its counts, like one whose
	// work packages the user may all see).
	Except []string
}

// ProjectKinds is the kinds of one project's documents a user sees.
type ProjectKinds struct {
	Project int64
	Kinds   []kind.Kind
}

// visibleReader is an index snapshot seen through a Visibility: its
// document count and term counts are those of the visible documents,
// and its postings skip the others. Dictionaries still list every term
// of the index; a term only invisible documents hold counts zero, and
// the query builders skip such terms as if they did not exist.
type visibleReader struct {
	index.IndexReader
	view *visibleView
	// always is the number of documents every index holds whoever reads
	// it: the thesaurus's synonym groups, which bleve stores as documents
	// and counts in DocCount.
	always uint64
}

// visibleView is what every restricted search of one snapshot by one
// Visibility shares: the bitmap of its visible document numbers, and
// what was looked up through it (the visible counts of the terms
// searched so far, typo variants). All are valid for that snapshot only
// (document numbers change with every new segment).
type visibleView struct {
	vis     *roaring.Bitmap
	lookups lookups
}

// visibleViews holds the views of the newest snapshot a restricted search
// read, one per Visibility (by identity: a caller keeps one value per
// user and replaces it when the user's visibility changes). A search of
// a newer snapshot drops them all.
type visibleViews struct {
	mu    sync.Mutex
	snap  weak.Pointer[scorch.IndexSnapshot] // snapshotID
	views map[*Visibility]*visibleView
}

// maxViews bounds the views kept for one snapshot.
const maxViews = 256

// view returns r's view through v, building it on first use.
func (vs *visibleViews) view(ctx context.Context, r index.IndexReader, v *Visibility) (*visibleView, error) {
	id, ok := snapshotID(r)
	if !ok {
		// Not a scorch snapshot: no identity to cache by.
		bm, err := visibleDocs(ctx, r, v)
		if err != nil {
			return nil, err
		}
		return &visibleView{vis: bm}, nil
	}
	vs.mu.Lock()
	if vs.snap != id {
		vs.snap, vs.views = id, nil
	}
	w := vs.views[v]
	vs.mu.Unlock()
	if w != nil {
		return w, nil
	}
	bm, err := visibleDocs(ctx, r, v)
	if err != nil {
		return nil, err
	}
	w = &visibleView{vis: bm}
	vs.mu.Lock()
	defer vs.mu.Unlock()
	if vs.snap == id {
		if vs.views == nil || len(vs.views) >= maxViews {
			vs.views = map[*Visibility]*visibleView{}
		}
		if prev := vs.views[v]; prev != nil {
			return prev, nil // built meanwhile by another search
		}
		vs.views[v] = w
	}
	return w, nil
}

// newVisibleReader restricts r to what v shows.
func (b *Bleve) newVisibleReader(ctx context.Context, r index.IndexReader, v *Visibility) (*visibleReader, error) {
	w, err := b.views.view(ctx, r, v)
	if err != nil {
		return nil, err
	}
	return &visibleReader{IndexReader: r, view: w, always: uint64(len(b.opts.Thesaurus))}, nil
}

// visibleDocs is the bitmap of r's document numbers that v shows.
func visibleDocs(ctx context.Context, r index.IndexReader, v *Visibility) (*roaring.Bitmap, error) {
	bm := roaring.New()
	for _, p := range v.Projects {
		docs, err := termDocs(ctx, r, fieldProjectID, strconv.FormatInt(p, 10))
		if err != nil {
			return nil, fmt.Errorf("read project %d: %w", p, err)
		}
		bm.Or(docs)
	}
	if len(v.Partial) > 0 {
		byKind := map[kind.Kind]*roaring.Bitmap{}
		for _, pk := range v.Partial {
			proj, err := termDocs(ctx, r, fieldProjectID, strconv.FormatInt(pk.Project, 10))
			if err != nil {
				return nil, fmt.Errorf("read project %d: %w", pk.Project, err)
			}
			for _, k := range pk.Kinds {
				if byKind[k] == nil {
					if byKind[k], err = termDocs(ctx, r, fieldKind, string(k)); err != nil {
						return nil, fmt.Errorf("read kind %s: %w", k, err)
					}
					// The attachments of containers of kind k.
					att, err := termDocs(ctx, r, fieldContainerKind, string(k))
					if err != nil {
						return nil, fmt.Errorf("read attachments of kind %s: %w", k, err)
					}
					byKind[k].Or(att)
				}
				bm.Or(roaring.And(proj, byKind[k]))
			}
		}
	}
	for _, id := range v.Docs {
		docs, err := withAttachments(ctx, r, id)
		if err != nil {
			return nil, err
		}
		bm.Or(docs)
	}
	for _, id := range v.Except {
		iid, err := r.InternalID(id)
		if err != nil {
			return nil, fmt.Errorf("look up %s: %w", id, err)
		}
		if len(iid) == 8 {
			bm.Remove(internalNum(iid))
		}
	}
	// A hidden document hides its attachments, unless the user still sees
	// the other form of its work package: Except names the whole work
	// package where its public twin shows instead, and the reverse.
	for _, id := range v.Except {
		base := strings.TrimSuffix(id, publicSuffix)
		shown := false
		for _, form := range []string{base, base + publicSuffix} {
			iid, err := r.InternalID(form)
			if err != nil {
				return nil, fmt.Errorf("look up %s: %w", form, err)
			}
			shown = shown || (len(iid) == 8 && bm.Contains(internalNum(iid)))
		}
		if shown {
			continue
		}
		att, err := termDocs(ctx, r, fieldContainer, base)
		if err != nil {
			return nil, fmt.Errorf("read attachments of %s: %w", base, err)
		}
		bm.AndNot(att)
	}
	return bm, nil
}

// withAttachments is the bitmap of document id and the attachments it
// contains: what shows or hides a document shows or hides its files.
func withAttachments(ctx context.Context, r index.IndexReader, id string) (*roaring.Bitmap, error) {
	// A public twin's attachments are its work package's.
	bm, err := termDocs(ctx, r, fieldContainer, strings.TrimSuffix(id, publicSuffix))
	if err != nil {
		return nil, fmt.Errorf("read attachments of %s: %w", id, err)
	}
	iid, err := r.InternalID(id)
	if err != nil {
		return nil, fmt.Errorf("look up %s: %w", id, err)
	}
	if len(iid) == 8 {
		bm.Add(internalNum(iid))
	}
	return bm, nil
}

// termDocs is the bitmap of r's documents whose field holds term.
func termDocs(ctx context.Context, r index.IndexReader, field, term string) (*roaring.Bitmap, error) {
	tfr, err := r.TermFieldReader(ctx, []byte(term), field, false, false, false)
	if err != nil {
		return nil, err
	}
	defer func() { _ = tfr.Close() }()
	bm := roaring.New()
	var d index.TermFieldDoc
	for {
		m, err := tfr.Next(&d)
		if err != nil {
			return nil, err
		}
		if m == nil {
			return bm, nil
		}
		bm.Add(internalNum(m.ID))
	}
}

// internalNum is a scorch document number (its internal ids are the
// number, big-endian in 8 bytes). Numbers beyond 32 bits do not occur
// below four billion documents.
func internalNum(id index.IndexInternalID) uint32 { return uint32(id.Value()) }

// DocCount is the number of visible documents, as an index of those
// alone would count them.
func (v *visibleReader) DocCount() (uint64, error) {
	return v.view.vis.GetCardinality() + v.always, nil
}

// TermFieldReader reads the visible postings of term, and counts them.
func (v *visibleReader) TermFieldReader(ctx context.Context, term []byte, field string, freq, norm, vectors bool) (index.TermFieldReader, error) {
	inner, err := v.IndexReader.TermFieldReader(ctx, term, field, freq, norm, vectors)
	if err != nil {
		return nil, err
	}
	n, err := v.count(ctx, field, term)
	if err != nil {
		_ = inner.Close()
		return nil, err
	}
	return &visibleTermReader{TermFieldReader: inner, vis: v.view.vis, n: n}, nil
}

// count is how many visible documents hold term in field.
func (v *visibleReader) count(ctx context.Context, field string, term []byte) (uint64, error) {
	key := field + "\x00" + string(term)
	w := v.view
	if n, ok := w.lookups.count(key); ok {
		return n, nil
	}
	var n uint64
	tfr, err := v.IndexReader.TermFieldReader(ctx, term, field, false, false, false)
	if err != nil {
		return 0, err
	}
	defer func() { _ = tfr.Close() }()
	var d index.TermFieldDoc
	for {
		m, err := tfr.Next(&d)
		if err != nil {
			return 0, err
		}
		if m == nil {
			break
		}
		if w.vis.Contains(internalNum(m.ID)) {
			n++
		}
	}
	w.lookups.keepCount(key, n)
	return n, nil
}

// The fuzzy dictionary and the thesaurus pass through: the query builders
// look terms up in them and count each through the reader.
var (
	_ index.IndexReaderFuzzy = (*visibleReader)(nil)
	_ index.ThesaurusReader  = (*visibleReader)(nil)
)

func (v *visibleReader) fuzzy() (index.IndexReaderFuzzy, error) {
	if fr, ok := v.IndexReader.(index.IndexReaderFuzzy); ok {
		return fr, nil
	}
	return nil, errNoFuzzy
}

func (v *visibleReader) thesaurus() (index.ThesaurusReader, error) {
	if tr, ok := v.IndexReader.(index.ThesaurusReader); ok {
		return tr, nil
	}
	return nil, errNoThesaurus
}

func (v *visibleReader) FieldDictFuzzy(field, term string, fuzziness int, prefix string) (index.FieldDict, error) {
	fr, err := v.fuzzy()
	if err != nil {
		return nil, err
	}
	return fr.FieldDictFuzzy(field, term, fuzziness, prefix)
}

func (v *visibleReader) FieldDictFuzzyAutomaton(field, term string, fuzziness int, prefix string) (index.FieldDict, index.FuzzyAutomaton, error) {
	fr, err := v.fuzzy()
	if err != nil {
		return nil, nil, err
	}
	return fr.FieldDictFuzzyAutomaton(field, term, fuzziness, prefix)
}

func (v *visibleReader) ThesaurusTermReader(ctx context.Context, name string, term []byte) (index.ThesaurusTermReader, error) {
	tr, err := v.thesaurus()
	if err != nil {
		return nil, err
	}
	return tr.ThesaurusTermReader(ctx, name, term)
}

func (v *visibleReader) ThesaurusKeys(name string) (index.ThesaurusKeys, error) {
	tr, err := v.thesaurus()
	if err != nil {
		return nil, err
	}
	return tr.ThesaurusKeys(name)
}

func (v *visibleReader) ThesaurusKeysFuzzy(name, term string, fuzziness int, prefix string) (index.ThesaurusKeys, error) {
	tr, err := v.thesaurus()
	if err != nil {
		return nil, err
	}
	return tr.ThesaurusKeysFuzzy(name, term, fuzziness, prefix)
}

func (v *visibleReader) ThesaurusKeysRegexp(name, regex string) (index.ThesaurusKeys, error) {
	tr, err := v.thesaurus()
	if err != nil {
		return nil, err
	}
	return tr.ThesaurusKeysRegexp(name, regex)
}

func (v *visibleReader) ThesaurusKeysPrefix(name string, prefix []byte) (index.ThesaurusKeys, error) {
	tr, err := v.thesaurus()
	if err != nil {
		return nil, err
	}
	return tr.ThesaurusKeysPrefix(name, prefix)
}

type visibleTermReader struct {
	index.TermFieldReader
	vis *roaring.Bitmap
	n   uint64
}

func (t *visibleTermReader) Count() uint64 { return t.n }

func (t *visibleTermReader) Next(pre *index.TermFieldDoc) (*index.TermFieldDoc, error) {
	for {
		d, err := t.TermFieldReader.Next(pre)
		if err != nil || d == nil || t.vis.Contains(internalNum(d.ID)) {
			return d, err
		}
	}
}

func (t *visibleTermReader) Advance(id index.IndexInternalID, pre *index.TermFieldDoc) (*index.TermFieldDoc, error) {
	d, err := t.TermFieldReader.Advance(id, pre)
	if err != nil || d == nil || t.vis.Contains(internalNum(d.ID)) {
		return d, err
	}
	return t.Next(pre)
}

// visibleQuery runs its child on the snapshot the search reads, seen
// through vis: every searcher below it, scoring included, sees only the
// visible documents.
type visibleQuery struct {
	child query.Query
	vis   *Visibility
	b     *Bleve // for the views of its snapshots
}

func (q *visibleQuery) Searcher(ctx context.Context, r index.IndexReader, m mapping.IndexMapping, opts bsearch.SearcherOptions) (bsearch.Searcher, error) {
	vr, err := q.b.newVisibleReader(ctx, r, q.vis)
	if err != nil {
		return nil, err
	}
	if _, ok := q.child.(*rankQuery); !ok {
		// bleve looks up the synonyms of a request's term queries by
		// walking the query tree, which stops at a type it does not
		// know, such as this one; rankQuery does so for itself.
		if sm, ok := m.(mapping.SynonymMapping); ok && sm.SynonymCount() > 0 {
			fts, _ := ctx.Value(bsearch.FieldTermSynonymMapKey).(bsearch.FieldTermSynonymMap)
			fts, err := query.ExtractSynonyms(ctx, sm, vr, q.child, fts)
			if err != nil {
				return nil, fmt.Errorf("look up synonyms: %w", err)
			}
			if fts != nil {
				ctx = context.WithValue(ctx, bsearch.FieldTermSynonymMapKey, fts)
			}
		}
	}
	return q.child.Searcher(ctx, vr, m, opts)
}

// visibleTop is expandPrefix's choice under a Visibility: of terms, whose
// dictionary counts n bound their visible counts from above, the k with
// the most visible documents (none without), most first, ties by term.
// It counts terms in descending order of n and stops once the k-th best
// visible count reaches the next bound.
func visibleTop(r index.IndexReader, field string, terms []string, n []uint64, k int) []string {
	order := make([]int, len(terms))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(n[b], n[a]) })
	type tc struct {
		t string
		n uint64
	}
	var best []tc
	for _, i := range order {
		// A term whose bound ties the k-th best may still tie its count
		// and win on the text, as in an index of the visible documents.
		if len(best) >= k && best[k-1].n > n[i] {
			break
		}
		if c := termDF(r, field, terms[i]); c > 0 {
			best = append(best, tc{terms[i], c})
			slices.SortFunc(best, func(a, b tc) int {
				if c := cmp.Compare(b.n, a.n); c != 0 {
					return c
				}
				return strings.Compare(a.t, b.t)
			})
		}
	}
	out := make([]string, 0, min(len(best), k))
	for _, b := range best[:min(len(best), k)] {
		out = append(out, b.t)
	}
	return out
}

var (
	errNoFuzzy     = errors.New("index reader has no fuzzy dictionary")
	errNoThesaurus = errors.New("index reader has no thesaurus")
)

// Restricted is a shared index as one user sees it (see Visibility): its
// searches are restricted to the user's documents and its counts are of
// those, so no answer built from it tells of another user's documents,
// not even by a number. Make a new one when the user's visibility
// changes.
type Restricted struct {
	b   *Bleve
	vis *Visibility
}

// Restrict returns b as seen through vis.
func (b *Bleve) Restrict(vis *Visibility) Restricted { return Restricted{b: b, vis: vis} }

// Search searches the user's documents (opts.Visible is replaced).
func (r Restricted) Search(ctx context.Context, opts SearchOptions) (Result, error) {
	opts.Visible = r.vis
	return r.b.Search(ctx, opts)
}

// withView runs fn with a reader of the index's current snapshot and the
// user's view of it (what the user's searches see); what names the
// operation in errors.
func (r Restricted) withView(ctx context.Context, what string, fn func(raw index.IndexReader, view *visibleView) error) error {
	r.b.mu.RLock()
	defer r.b.mu.RUnlock()
	if r.b.idx == nil {
		return ErrClosed
	}
	adv, err := r.b.idx.Advanced()
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	raw, err := adv.Reader()
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer func() { _ = raw.Close() }()
	view, err := r.b.views.view(ctx, raw, r.vis)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return fn(raw, view)
}

// Count returns the number of the user's documents per kind. A user sees
// one document of each work package, its public twin or the whole one.
func (r Restricted) Count(ctx context.Context) (map[kind.Kind]uint64, error) {
	out := make(map[kind.Kind]uint64, len(Kinds()))
	err := r.withView(ctx, "count visible documents", func(raw index.IndexReader, view *visibleView) error {
		for _, k := range Kinds() {
			docs, err := termDocs(ctx, raw, fieldKind, string(k))
			if err != nil {
				return fmt.Errorf("count visible %s: %w", k, err)
			}
			out[k] = docs.AndCardinality(view.vis)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Shows reports, for each document id, whether the user sees it: the
// index holds it and the visibility shows it, exactly as a search
// restricted to the user would find it. A reader of one item by id (an
// MCP resource) asks this before showing what the shared store holds of
// it. Unknown ids are not shown.
func (r Restricted) Shows(ctx context.Context, ids ...string) ([]bool, error) {
	out := make([]bool, len(ids))
	err := r.withView(ctx, "read visible documents", func(raw index.IndexReader, view *visibleView) error {
		for i, id := range ids {
			iid, err := raw.InternalID(id)
			if err != nil {
				return fmt.Errorf("look up %s: %w", id, err)
			}
			out[i] = len(iid) == 8 && view.vis.Contains(internalNum(iid))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

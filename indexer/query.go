package indexer

import (
	"cmp"
	"context"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis"
	unicodetok "github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
	"github.com/blevesearch/bleve/v2/search/query"
	index "github.com/blevesearch/bleve_index_api"
)

// Query tuning. The typo thresholds are Meilisearch's defaults (no typo
// under 5 characters, 1 from 5, 2 from 9); bleve cannot go beyond 2.
const (
	oneTypoMinLen = 5
	twoTypoMinLen = 9
	minPrefixLen  = 3
	defaultSize   = 20
	maxSize       = 1000
	phraseBoost   = 2.0
	idExactBoost  = 10.0
	// fuzzyPrefix is the number of leading runes a fuzzy candidate must
	// share with the query term. 1 mirrors Meilisearch (a typo on the first
	// letter counts double) and cuts the terms a fuzzy automaton visits.
	fuzzyPrefix = 1
	// highlight turns on bleve's fragment highlighting of title, body,
	// comments and agenda (Hit.Fragments). Off: measured at 100k work
	// packages it cost ~3 ms per query (a third of p50), and the scorer
	// builds snippets from the store anyway. No text field is stored (it
	// cost a fifth of the index size): turning highlighting on means
	// setting Store on those fields and bumping MappingVersion.
	highlight = false
)

// field is a searchable field and its weight.
type field struct {
	name  string
	boost float64
	fuzzy bool // typo-tolerant (stemFields only)
	// fuzzyIfMissing limits typo tolerance to words the field does not
	// hold as typed (Typesense's typo_tokens_threshold idea). Comments are
	// the largest field: expanding typos there for every word cost ~1 ms of
	// p50 at 100k work packages, yet a typo is only worth looking for when
	// the word as typed is unknown.
	fuzzyIfMissing bool
	// noPositions marks fields indexed without term vectors, where a
	// phrase query cannot run.
	noPositions bool
}

// Prose fields (words as written and stemmed): the query's stem matches
// them exactly or, by term length, within one or two typos.
var stemFields = [...]field{
	{name: fieldTitle, boost: 3, fuzzy: true}, {name: fieldAgenda, boost: 1.5, fuzzy: true},
	{name: fieldBody, boost: 1, fuzzy: true}, {name: fieldComments, boost: 1, fuzzy: true, fuzzyIfMissing: true},
}

// Fields holding words as written, for identifiers, prefixes and exact
// mode.
var exactFields = [...]field{
	{name: fieldTitle, boost: 3}, {name: fieldPeople, boost: 2}, {name: fieldAgenda, boost: 1.5, noPositions: true},
	{name: fieldBody, boost: 1, noPositions: true}, {name: fieldComments, boost: 1, noPositions: true},
	{name: fieldLocation, boost: 1}, {name: fieldProjectName, boost: 0.5},
}

// prefixFields take the last query word as a prefix. Comments, location
// and project name are left out: a short prefix expands to many terms in
// each field, and that expansion dominated latency at 100k documents.
var prefixFields = [...]field{
	{name: fieldTitle, boost: 3}, {name: fieldPeople, boost: 2}, {name: fieldBody, boost: 1},
}

// Prefix expansion limits. bleve's PrefixQuery turns every matching term
// into a term searcher; generated and real text hold many identifiers
// sharing a prefix ("probe" → probeconfig, probe_timeout, ...), and one
// last word cost 12 ms at 100k documents. Expanding through the term
// dictionary ourselves keeps the most frequent terms only.
const (
	maxPrefixTerms = 5
	maxPrefixScan  = 256
)

// expandPrefix returns up to maxPrefixTerms terms of field starting with
// prefix, most frequent first, looking at the first maxPrefixScan terms.
func expandPrefix(idx bleve.Index, field, prefix string) []string {
	d, err := idx.FieldDictPrefix(field, []byte(prefix))
	if err != nil {
		return nil
	}
	defer func() { _ = d.Close() }()
	type tc struct {
		t string
		n uint64
	}
	var all []tc
	for range maxPrefixScan {
		e, err := d.Next()
		if err != nil || e == nil {
			break
		}
		all = append(all, tc{e.Term, e.Count})
	}
	slices.SortFunc(all, func(a, b tc) int { return cmp.Compare(b.n, a.n) })
	out := make([]string, 0, min(len(all), maxPrefixTerms))
	for _, e := range all[:min(len(all), maxPrefixTerms)] {
		out = append(out, e.t)
	}
	return out
}

// maxFuzzyTerms caps the typo variants of one query term per field, the
// closest and most frequent first. Like prefixes, bleve's FuzzyQuery makes
// a searcher per candidate; a 9-letter word at distance 2 cost 7 ms at
// 100k documents.
const maxFuzzyTerms = 5

// fuzzyTerms returns term queries for the typo variants of t in f (t
// itself excluded), within n edits and sharing its first fuzzyPrefix
// runes. A variant's boost shrinks with its distance, so exact matches rank
// first.
func fuzzyTerms(r index.IndexReader, f field, t string, n int) []query.Query {
	fr, ok := r.(index.IndexReaderFuzzy)
	if !ok {
		return nil
	}
	prefix := t
	if i := fuzzyPrefixLen(t); i < len(t) {
		prefix = t[:i]
	}
	d, err := fr.FieldDictFuzzy(f.name, t, n, prefix)
	if err != nil {
		return nil
	}
	defer func() { _ = d.Close() }()
	var all []index.DictEntry
	for range maxPrefixScan {
		e, err := d.Next()
		if err != nil || e == nil {
			break
		}
		if e.Term != t {
			all = append(all, *e)
		}
	}
	slices.SortFunc(all, func(a, b index.DictEntry) int {
		if c := cmp.Compare(a.EditDistance, b.EditDistance); c != 0 {
			return c
		}
		return cmp.Compare(b.Count, a.Count)
	})
	out := make([]query.Query, 0, min(len(all), maxFuzzyTerms))
	for _, e := range all[:min(len(all), maxFuzzyTerms)] {
		dist := float64(e.EditDistance)
		if dist == 0 {
			dist = 1 // not reported: assume one edit
		}
		out = append(out, term(e.Term, f.name, f.boost*(1-0.25*dist)))
	}
	return out
}

// existsIn reports whether any of fields holds t.
func existsIn(r index.IndexReader, fields []field, t string) bool {
	for _, f := range fields {
		if termExists(r, f.name, t) {
			return true
		}
	}
	return false
}

// termExists reports whether field holds t in any document.
func termExists(r index.IndexReader, field, t string) bool {
	tfr, err := r.TermFieldReader(context.Background(), []byte(t), field, false, false, false)
	if err != nil {
		return false
	}
	defer func() { _ = tfr.Close() }()
	return tfr.Count() > 0
}

// fuzzyPrefixLen is the byte length of t's first fuzzyPrefix runes.
func fuzzyPrefixLen(t string) int {
	i := 0
	for range fuzzyPrefix {
		if i >= len(t) {
			break
		}
		_, size := utf8.DecodeRuneInString(t[i:])
		i += size
	}
	return i
}

// idLike matches queries that look like a work package id or display id:
// "#1234", "1234", "PROJ-12".
var idLike = regexp.MustCompile(`^(#?[0-9]+|[\pL][\pL0-9]*-[0-9]+)$`)

// typos returns the edits a query word of n runes tolerates.
func typos(n int) int {
	switch {
	case n >= twoTypoMinLen:
		return 2
	case n >= oneTypoMinLen:
		return 1
	}
	return 0
}

// buildRequest turns neutral options into a bleve request.
func (b *Bleve) buildRequest(idx bleve.Index, opts SearchOptions) *bleve.SearchRequest {
	size := opts.Size
	if size <= 0 {
		size = defaultSize
	}
	size = min(size, maxSize)
	from := max(opts.From, 0)

	var text query.Query
	var should []query.Query
	if opts.Mode == MatchExact {
		text = b.exactQuery(opts.Query)
	} else {
		text, should = b.fuzzyQuery(idx, opts.Query)
	}
	filter := b.filterQuery(opts)

	bq := query.NewBooleanQuery(nil, nil, nil)
	if text == nil {
		bq.AddMust(bleve.NewMatchAllQuery())
	} else {
		bq.AddMust(text)
		if len(should) > 0 {
			bq.AddShould(should...)
		}
	}
	if filter != nil {
		bq.AddFilter(filter)
	}
	req := bleve.NewSearchRequestOptions(bq, size, from, false)
	if text == nil {
		req.SortBy([]string{"-" + fieldUpdated, "_id"})
	} else {
		// Score only (bleve's default). An "_id" tie-break made the
		// collector load the external id of every candidate, not just of
		// the page: measured at 100k work packages, Size 100, p50 4.7 →
		// 4.3 ms, p99 12.3 → 11 ms. Equal scores keep index order, which
		// is stable for a given index.
		if highlight {
			req.Highlight = bleve.NewHighlight()
			req.Highlight.Fields = []string{fieldTitle, fieldBody, fieldComments, fieldAgenda}
		}
	}
	return req
}

// analyze runs a named analyzer of the index mapping over s.
func (b *Bleve) analyze(analyzer, s string) analysis.TokenStream {
	a := b.mapping.AnalyzerNamed(analyzer)
	if a == nil {
		return nil
	}
	return a.Analyze([]byte(s))
}

// keyword returns s as the keyword analyzer indexes it.
func (b *Bleve) keyword(s string) string {
	ts := b.analyze(analyzerKeyword, s)
	if len(ts) == 0 {
		return ""
	}
	return string(ts[0].Term)
}

// queryWord is one word of the query, split as the index splits text.
type queryWord struct {
	raw   string   // as typed
	exact string   // lower-case, folded, unstemmed
	stems []string // stemmed terms; empty for a stop word
	parts []string // exact parts of an identifier ("getUserProfile"), or nil
}

func (b *Bleve) queryWords(q string) []queryWord {
	toks := unicodetok.NewUnicodeTokenizer().Tokenize([]byte(q))
	words := make([]queryWord, 0, len(toks))
	for _, t := range toks {
		w := queryWord{raw: string(t.Term)}
		ex := b.analyze(analyzerExact, w.raw)
		if len(ex) == 0 {
			continue
		}
		// The exact analyzer emits the whole word first, then its parts.
		w.exact = string(ex[0].Term)
		if spans := splitIdentifier(t.Term); len(spans) > 1 {
			for _, sp := range spans {
				w.parts = append(w.parts, b.keyword(w.raw[sp[0]:sp[1]]))
			}
		} else {
			for _, st := range b.analyze(analyzerQuery, w.raw) {
				w.stems = append(w.stems, string(st.Term))
			}
		}
		words = append(words, w)
	}
	return words
}

func term(t, field string, boost float64) query.Query {
	q := query.NewTermQuery(t)
	q.SetField(field)
	q.SetBoost(boost)
	return q
}

func disjunction(qs []query.Query, minMatch int) *query.DisjunctionQuery {
	d := query.NewDisjunctionQuery(qs)
	if minMatch > 0 {
		d.SetMin(float64(minMatch))
	}
	return d
}

// fuzzyQuery builds the fuzzy-mode text query and its optional boosts: each
// word is a disjunction over the weighted fields, and every word must match,
// except that a query of three or more words may lose its last one. Stop
// words count only when the query has nothing else.
func (b *Bleve) fuzzyQuery(idx bleve.Index, q string) (query.Query, []query.Query) {
	all := b.queryWords(q)
	if len(all) == 0 {
		return nil, nil
	}
	words := all[:0:0]
	for _, w := range all {
		if len(w.stems) > 0 || len(w.parts) > 0 {
			words = append(words, w)
		}
	}
	stopOnly := len(words) == 0
	if stopOnly {
		words = all
	}

	// One reader (snapshot) for the fuzzy expansions of all words.
	var r index.IndexReader
	if adv, err := idx.Advanced(); err == nil {
		if r, err = adv.Reader(); err == nil {
			defer func() { _ = r.Close() }()
		}
	}
	groups := make([]query.Query, 0, len(words))
	for i, w := range words {
		groups = append(groups, b.wordQuery(idx, r, w, i == len(words)-1, stopOnly))
	}
	// Conjunctions, not a disjunction with a minimum: bleve's minimum
	// still walks the union of every word's postings, whereas a
	// conjunction leapfrogs. Longer queries may lose their last word, as
	// Meilisearch's "words" rule drops words from the right.
	var text query.Query
	switch len(groups) {
	case 1:
		text = groups[0]
	case 2:
		text = query.NewConjunctionQuery(groups)
	default:
		text = disjunction([]query.Query{
			query.NewConjunctionQuery(groups),
			query.NewConjunctionQuery(groups[:len(groups)-1]),
		}, 0)
	}

	// Phrase bonus on the title only: on bodies it cost +1.7 ms p50 and
	// +6 ms p99 at 100k work packages (the phrase searcher revisits every
	// candidate's positions); the scorer adds a proximity bonus later.
	var should []query.Query
	if len(words) > 1 {
		p := query.NewMatchPhraseQuery(q)
		p.SetField(fieldTitle)
		p.SetBoost(3 * phraseBoost)
		// The words as written: with the stems as alternatives the phrase
		// searcher does twice the work.
		p.Analyzer = analyzerExact
		should = append(should, p)
	}
	// "#1234", "1234" or "PROJ-12": the entity itself ranks first.
	if raw := strings.TrimSpace(q); idLike.MatchString(raw) {
		id := b.keyword(raw)
		should = append(should, term(id, fieldIdents, idExactBoost))
		if !strings.HasPrefix(id, "#") && id[0] >= '0' && id[0] <= '9' {
			should = append(should, term("#"+id, fieldIdents, idExactBoost))
		}
	}
	return text, should
}

// wordQuery is the disjunction one query word contributes.
func (b *Bleve) wordQuery(idx bleve.Index, r index.IndexReader, w queryWord, last, stopOnly bool) query.Query {
	var qs []query.Query
	switch {
	case stopOnly:
		for _, f := range exactFields {
			qs = append(qs, term(w.exact, f.name, f.boost))
		}
	case len(w.parts) > 0:
		// An identifier: the whole identifier anywhere, or all its parts.
		for _, f := range exactFields {
			qs = append(qs, term(w.exact, f.name, f.boost))
		}
		qs = append(qs, term(w.exact, fieldIdents, 3))
		parts := make([]query.Query, 0, len(w.parts))
		for _, p := range w.parts {
			var pq []query.Query
			for _, f := range exactFields {
				pq = append(pq, term(p, f.name, f.boost))
			}
			parts = append(parts, disjunction(pq, 0))
		}
		qs = append(qs, query.NewConjunctionQuery(parts))
	default:
		n := typos(utf8.RuneCountInString(w.raw))
		for _, st := range w.stems {
			for _, f := range stemFields {
				qs = append(qs, term(st, f.name, f.boost))
				if n > 0 && f.fuzzy && (!f.fuzzyIfMissing || !termExists(r, f.name, st)) {
					qs = append(qs, fuzzyTerms(r, f, st, n)...)
				}
			}
		}
		// A typo can change the stem ("simaler" stems to "simal", two
		// edits from "similar"): a word found nowhere as typed is also
		// expanded unstemmed, against the words as written.
		if n > 0 && r != nil && !slices.Contains(w.stems, w.exact) && !existsIn(r, stemFields[:], w.exact) {
			for _, f := range stemFields {
				if f.fuzzy {
					qs = append(qs, fuzzyTerms(r, f, w.exact, n)...)
				}
			}
		}
		// Names, locations and project names are unstemmed.
		qs = append(qs, term(w.exact, fieldPeople, 2))
		if n > 0 {
			qs = append(qs, fuzzyTerms(r, field{name: fieldPeople, boost: 2, fuzzy: true}, w.exact, n)...)
		}
		qs = append(qs,
			term(w.exact, fieldLocation, 1),
			term(w.exact, fieldProjectName, 0.5),
			term(w.exact, fieldIdents, 3),
		)
	}
	if last && utf8.RuneCountInString(w.exact) >= minPrefixLen && idx != nil {
		for _, f := range prefixFields {
			for _, t := range expandPrefix(idx, f.name, w.exact) {
				qs = append(qs, term(t, f.name, f.boost*0.8))
			}
		}
	}
	return disjunction(qs, 0)
}

// exactQuery matches the query as written: a case- and accent-insensitive
// phrase in any unstemmed field, or the whole query as an identifier.
func (b *Bleve) exactQuery(q string) query.Query {
	q = strings.TrimSpace(q)
	if len(b.queryWords(q)) == 0 {
		return nil
	}
	qs := make([]query.Query, 0, len(exactFields)+1)
	for _, f := range exactFields {
		// Words as written only: the fields' own analyzer would let
		// stems stand in ("migrations" for "migration").
		if f.noPositions {
			// No term vectors: every word as written must occur; the
			// caller's scorer verifies the phrase on the entity's text.
			m := query.NewMatchQuery(q)
			m.SetField(f.name)
			m.SetBoost(f.boost)
			m.Analyzer = analyzerExact
			m.SetOperator(query.MatchQueryOperatorAnd)
			qs = append(qs, m)
			continue
		}
		p := query.NewMatchPhraseQuery(q)
		p.SetField(f.name)
		p.SetBoost(f.boost)
		p.Analyzer = analyzerExact
		qs = append(qs, p)
	}
	qs = append(qs, term(b.keyword(q), fieldIdents, 3))
	return disjunction(qs, 0)
}

// filterQuery is the conjunction of the structured restrictions, or nil.
func (b *Bleve) filterQuery(opts SearchOptions) query.Query {
	var must []query.Query
	anyOf := func(field string, vals []string) {
		if len(vals) == 0 {
			return
		}
		qs := make([]query.Query, 0, len(vals))
		for _, v := range vals {
			qs = append(qs, term(v, field, 1))
		}
		must = append(must, disjunction(qs, 0))
	}
	kinds := make([]string, 0, len(opts.Kinds))
	for _, k := range opts.Kinds {
		kinds = append(kinds, string(k))
	}
	anyOf(fieldKind, kinds)
	ids := func(vs []int64) []string {
		out := make([]string, 0, len(vs))
		for _, v := range vs {
			out = append(out, strconv.FormatInt(v, 10))
		}
		return out
	}
	anyOf(fieldProjectID, ids(opts.ProjectIDs))
	anyOf(fieldAssigneeID, ids(opts.AssigneeIDs))
	types := make([]string, 0, len(opts.Types))
	for _, t := range opts.Types {
		types = append(types, b.keyword(t))
	}
	anyOf(fieldType, types)
	if opts.Closed != nil {
		c := query.NewBoolFieldQuery(*opts.Closed)
		c.SetField(fieldClosed)
		must = append(must, c)
	}
	if !opts.UpdatedAfter.IsZero() || !opts.UpdatedBefore.IsZero() {
		inclusive := true
		r := query.NewDateRangeInclusiveQuery(opts.UpdatedAfter, opts.UpdatedBefore, &inclusive, nil)
		r.SetField(fieldUpdated)
		must = append(must, r)
	}
	switch len(must) {
	case 0:
		return nil
	case 1:
		return must[0]
	}
	return query.NewConjunctionQuery(must)
}

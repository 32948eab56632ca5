package indexer

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis"
	unicodetok "github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
	"github.com/blevesearch/bleve/v2/search/query"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/opsearch/opsearch/internal/spread"
	"github.com/opsearch/opsearch/kind"
)

// Query tuning. The typo thresholds are Meilisearch's defaults (no typo
// under 5 characters, 1 from 5, 2 from 9); bleve cannot go beyond 2.
const (
	oneTypoMinLen = 5
	twoTypoMinLen = 9
	minPrefixLen  = 3
	minStemLen    = 3
	defaultSize   = 20
	maxSize       = 1000
	phraseBoost   = 2.0
	titleBoost    = 0.3
	prefixBoost   = 0.8
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
	// minSplitPostings: a query is split into common and rarer words
	// (commonSplit) only when its common words have at least this many
	// postings; walking fewer costs a few milliseconds at most, and the
	// whole query ranks a little better.
	minSplitPostings = 20_000
)

// commonShares are the shares of the documents above which a query word
// counts as common (commonSplit), tried in turn: the smallest that
// splits the query walks the fewest postings. Such a word tells few items
// apart (a BM25 idf under 2.3 at 10%, under 1.6 at 20%), and walking its
// postings was most of a slow query's time at a million work packages.
// Measured there on 100 generated queries: from 5%, the median was 2.5
// ms lower and one query lost its item from the top ten; from 10%, every
// item stayed.
var commonShares = [...]float64{0.1, 0.2}

// field is a searchable field and its weight.
type field struct {
	name  string
	boost float64
	// noPositions marks fields indexed without term vectors, where a
	// phrase query cannot run.
	noPositions bool
}

// Fields holding words as written, for identifiers, prefixes and exact
// mode.
var exactFields = [...]field{
	{name: fieldTitle, boost: 3}, {name: fieldPeople, boost: 2}, {name: fieldAll, boost: 1, noPositions: true},
	{name: fieldLocation, boost: 1}, {name: fieldProjectName, boost: 0.5},
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
func expandPrefix(r index.IndexReader, field, prefix string) []string {
	d, err := r.FieldDictPrefix(field, []byte(prefix))
	if err != nil {
		return nil
	}
	defer func() { _ = d.Close() }()
	// The dictionary's own counts are not document frequencies: zap
	// reports 1 for many terms (measured: "deprec" counted 1, held by 32
	// documents), so the "most frequent" completions were partly chosen
	// by segment layout. Each term is counted from its postings, which
	// an unrestricted reader answers from their header.
	var terms []string
	scanDict(r, field, d, func(e *index.DictEntry) { terms = append(terms, e.Term) })
	if vr, ok := r.(*visibleReader); ok {
		bounds := make([]uint64, len(terms))
		for i, t := range terms {
			bounds[i] = termDF(vr.IndexReader, field, t)
		}
		return visibleTop(r, field, terms, bounds, maxPrefixTerms)
	}
	type tc struct {
		t string
		n uint64
	}
	all := make([]tc, 0, len(terms))
	for _, t := range terms {
		if n := termDF(r, field, t); n > 0 {
			all = append(all, tc{t, n})
		}
	}
	slices.SortFunc(all, func(a, b tc) int {
		if c := cmp.Compare(b.n, a.n); c != 0 {
			return c
		}
		return strings.Compare(a.t, b.t) // the same every time
	})
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

type variant struct {
	term string
	dist int
	df   uint64
}

// maxFuzzyLookups bounds the typo variants whose document frequency is
// looked up to rank them.
const maxFuzzyLookups = 32

// fuzzyVariants returns up to maxFuzzyTerms terms of field within n edits
// of t (t excluded) that share its first fuzzyPrefix runes, closest and
// most frequent first.
func fuzzyVariants(r index.IndexReader, field, t string, n int) []variant {
	fr, ok := r.(index.IndexReaderFuzzy)
	if !ok || n <= 0 {
		return nil
	}
	prefix := t
	if i := fuzzyPrefixLen(t); i < len(t) {
		prefix = t[:i]
	}
	d, err := fr.FieldDictFuzzy(field, t, n, prefix)
	if err != nil {
		return nil
	}
	defer func() { _ = d.Close() }()
	var all []variant
	scanDict(r, field, d, func(e *index.DictEntry) {
		if e.Term != t {
			dist := cmp.Or(int(e.EditDistance), 1) // not reported: assume one edit
			all = append(all, variant{term: e.Term, dist: dist})
		}
	})
	// Closest first; among equally close, the most frequent. The fuzzy
	// dictionary reports no counts (DictEntry.Count is 0), so document
	// frequencies are looked up, for the closest few only.
	slices.SortStableFunc(all, func(a, b variant) int { return cmp.Compare(a.dist, b.dist) })
	// A term no document holds (only deleted ones, or under a Visibility
	// only documents the user may not see) is no variant: it would take
	// a place that, in an index without those documents, a real variant
	// has.
	held := all[:0]
	for _, v := range all {
		if len(held) == maxFuzzyLookups {
			break
		}
		if v.df = termDF(r, field, v.term); v.df > 0 {
			held = append(held, v)
		}
	}
	all = held
	slices.SortStableFunc(all, func(a, b variant) int {
		if c := cmp.Compare(a.dist, b.dist); c != 0 {
			return c
		}
		if c := cmp.Compare(b.df, a.df); c != 0 {
			return c
		}
		return strings.Compare(a.term, b.term)
	})
	return all[:min(len(all), maxFuzzyTerms)]
}

// maxVisibleScan bounds the dictionary entries scanDict reads under a
// Visibility, where entries only invisible documents hold do not count.
const maxVisibleScan = 64 * maxPrefixScan

// scanDict passes keep the first maxPrefixScan entries of d. Under a
// Visibility (r a *visibleReader) it skips the entries no visible
// document holds, which an index of the visible documents alone would
// not have, so the entries kept are that index's first maxPrefixScan;
// it reads at most maxVisibleScan entries.
func scanDict(r index.IndexReader, field string, d index.FieldDict, keep func(*index.DictEntry)) {
	vr, restricted := r.(*visibleReader)
	for kept, read := 0, 0; kept < maxPrefixScan && read < maxVisibleScan; read++ {
		e, err := d.Next()
		if err != nil || e == nil {
			return
		}
		if !restricted {
			keep(e)
			kept++
			continue
		}
		if termDF(vr, field, e.Term) > 0 {
			keep(e)
			kept++
		}
	}
}

// tfidfIDF is bleve's tf-idf inverse document frequency.
func tfidfIDF(df, docs uint64) float64 {
	return 1 + math.Log(float64(docs)/float64(df+1))
}

// synonymQuality is how much a synonym counts for the word it stands
// for; bleve's synonym search weighs it the same (half the term's boost).
const synonymQuality = 0.5

// synonymsOf returns the thesaurus entries of a query term.
func synonymsOf(r index.IndexReader, t string) []string {
	tr, ok := r.(index.ThesaurusReader)
	if !ok {
		return nil
	}
	rd, err := tr.ThesaurusTermReader(context.Background(), synonymSource, []byte(t))
	if err != nil {
		return nil
	}
	defer func() { _ = rd.Close() }()
	var out []string
	for {
		s, err := rd.Next()
		if err != nil || s == "" {
			return out
		}
		out = append(out, s)
	}
}

// termDF returns the number of documents whose field holds t.
func termDF(r index.IndexReader, field, t string) uint64 {
	if vr, ok := r.(*visibleReader); ok {
		// Counted once per snapshot and visibility: opening the term's
		// postings to read a cached count cost a restricted search
		// most of its prefix expansion.
		n, err := vr.count(context.Background(), field, []byte(t))
		if err != nil {
			return 0
		}
		return n
	}
	tfr, err := r.TermFieldReader(context.Background(), []byte(t), field, false, false, false)
	if err != nil {
		return 0
	}
	defer func() { _ = tfr.Close() }()
	return tfr.Count()
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

// buildRequest turns neutral options into a bleve request, and, when
// opts.Federate names kinds, a second request for their best documents
// by the same query (nil otherwise).
func (b *Bleve) buildRequest(ctx context.Context, idx bleve.Index, opts SearchOptions) (req, federated *bleve.SearchRequest, plan *Plan, err error) {
	size := opts.Size
	if size <= 0 {
		size = defaultSize
	}
	size = min(size, maxSize)
	from := max(opts.From, 0)

	var text query.Query
	reuse := opts.Reuse.reusableFor(opts)
	switch {
	case opts.Mode == MatchExact:
		text = b.exactQuery(opts.Query)
	case reuse != nil:
		text, plan = reuse.text, reuse
	default:
		if text, plan, err = b.fuzzyQuery(ctx, idx, opts.Query, opts.Visible, opts.Without); err != nil {
			return nil, nil, nil, err
		}
		if plan != nil {
			plan.text, plan.query, plan.vis, plan.without = text, opts.Query, opts.Visible, opts.Without
		}
	}
	if text == nil {
		// Every document of any kind, newest first; not match-all, which
		// would return the thesaurus's own entries.
		filter := b.filterQuery(opts)
		bq := query.NewBooleanQuery([]query.Query{b.restrict(kindsQuery(Kinds(), 1), opts.Visible)}, nil, nil)
		if filter != nil {
			bq.AddFilter(filter)
		}
		req = bleve.NewSearchRequestOptions(bq, size, from, false)
		req.SortBy([]string{"-" + fieldUpdated, "_id"})
		return req, nil, plan, nil
	}
	if plan != nil && plan.split != nil {
		sp := plan.split
		sp.request = b.textRequest(idx, b.restrict(sp.rare, opts.Visible), opts, size, from, true)
	}
	text = b.restrict(text, opts.Visible)
	req = b.textRequest(idx, text, opts, size, from, plan != nil)
	if len(opts.Federate) > 0 {
		fo := opts
		fo.Kinds = opts.Federate
		federated = b.textRequest(idx, text, fo, max(opts.FederateSize, 1), 0, false)
	}
	return req, federated, plan, nil
}

// restrict runs q under vis, when there is one.
func (b *Bleve) restrict(q query.Query, vis *Visibility) query.Query {
	if vis == nil {
		return q
	}
	return &visibleQuery{child: q, vis: vis, b: b}
}

// textRequest is the request for a text query and the structured
// restrictions of opts.
func (b *Bleve) textRequest(idx bleve.Index, text query.Query, opts SearchOptions, size, from int, scoreOnly bool) *bleve.SearchRequest {
	if len(opts.Kinds) > 0 && fewDocs(idx, opts.Kinds) {
		// The kinds asked for are a small part of the index (the
		// meetings among 100,000 work packages): they drive the query as
		// a conjunct, so it visits their documents only, where a filter
		// would visit every document holding a query word. At no weight:
		// scores stay those of the same query without the restriction.
		text = query.NewConjunctionQuery([]query.Query{kindsQuery(opts.Kinds, 0), text})
		opts.Kinds = nil
	}
	if len(opts.IDs) > 0 {
		// The same for documents asked for by id (the containers
		// search.Engine places beside their files): as a filter, the
		// ids were checked against every document the query matched,
		// which at 100,000 work packages cost as much as the search
		// itself. As a conjunct at no weight, the query visits those
		// documents only.
		ids := query.NewDocIDQuery(opts.IDs)
		ids.SetBoost(0)
		text = query.NewConjunctionQuery([]query.Query{ids, text})
		opts.IDs = nil
	}
	q := text
	if filter := b.filterQuery(opts); filter != nil {
		bq := query.NewBooleanQuery([]query.Query{text}, nil, nil)
		bq.AddFilter(filter)
		q = bq
	}
	req := bleve.NewSearchRequestOptions(q, size, from, false)
	// Among equal scores bleve's order follows how batches landed in
	// segments, so the same data synced twice could order a tie
	// differently, and a window can end inside one. Ties are broken by
	// id, except for a fuzzy query's main request (scoreOnly): the engine
	// widens its window to the end of a tie and orders it by id
	// (search.Engine.searchIndex), and sorting by "_id" as well made
	// bleve load the id of every matching document, not only of those it
	// returns.
	if scoreOnly {
		req.SortBy([]string{"-_score"})
	} else {
		req.SortBy([]string{"-_score", "_id"})
	}
	if highlight {
		req.Highlight = bleve.NewHighlight()
		req.Highlight.Fields = []string{fieldTitle, fieldAll}
	}
	return req
}

// kindsQuery matches documents of any of kinds.
func kindsQuery(kinds []kind.Kind, boost float64) query.Query {
	qs := make([]query.Query, 0, len(kinds))
	for _, k := range kinds {
		qs = append(qs, term(string(k), fieldKind, boost))
	}
	return disjunction(qs, 0)
}

// fewDocs reports whether the documents of kinds are at most a tenth of
// the index: then reading their postings is cheaper than filtering the
// query's matches by kind.
func fewDocs(idx bleve.Index, kinds []kind.Kind) bool {
	adv, err := idx.Advanced()
	if err != nil {
		return false
	}
	r, err := adv.Reader()
	if err != nil {
		return false
	}
	defer func() { _ = r.Close() }()
	docs, err := r.DocCount()
	if err != nil {
		return false
	}
	var n uint64
	for _, k := range kinds {
		n += termDF(r, fieldKind, string(k))
	}
	return n*10 <= docs
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

// fuzzyQuery builds the fuzzy-mode text query: a rankQuery of the words'
// clauses and their title boosts, or match-none when no word is known.
//
// Retrieval is disjunctive (tf-idf over the catch-all field): a document
// holding some of the query's words is a candidate, ranked by how much of
// the query's information it holds, because people ask with words the
// item lacks ("any ticket about ...", a synonym, a name with a topic).
// Each content word contributes one clause: its stem when the index knows
// it, otherwise its closest typo variants; the last word also as a prefix.
// Words the index holds in no form contribute nothing. The disjunction's
// coordination factor (matched clauses / clauses) rewards coverage; the
// title clauses and phrase reward where the words stand.
//
// without leaves out typos, completions or synonyms (Features).
func (b *Bleve) fuzzyQuery(ctx context.Context, idx bleve.Index, q string, vis *Visibility, without Features) (query.Query, *Plan, error) {
	all := b.queryWords(q)
	if len(all) == 0 {
		return nil, nil, nil
	}
	words := all[:0:0]
	for _, w := range all {
		if len(w.stems) > 0 || len(w.parts) > 0 {
			words = append(words, w)
		}
	}
	if len(words) == 0 {
		words = all // only stop words: search for them as they are
	}

	// One reader (snapshot) for the dictionary look-ups of all words.
	var r index.IndexReader
	if adv, err := idx.Advanced(); err == nil {
		if raw, err := adv.Reader(); err == nil {
			defer func() { _ = raw.Close() }()
			r = raw
			if vis != nil {
				// The user's statistics: what a word weighs, which
				// forms and completions exist, as in an index of
				// their documents alone.
				if r, err = b.newVisibleReader(ctx, raw, vis); err != nil {
					return nil, nil, fmt.Errorf("restrict index reader: %w", err)
				}
			}
		}
	}
	plan := &Plan{}
	if r != nil {
		if n, err := r.DocCount(); err == nil {
			plan.docs = n
		}
	}
	var groups, should []query.Query
	// Each word's group and forms, for a commonSplit.
	var clauses []wordClauses
	for _, wp := range b.planWords(ctx, idx, r, words, without) {
		if wp.group != nil {
			groups = append(groups, wp.group)
			clauses = append(clauses, wordClauses{group: wp.group, postings: wp.pw.postings, forms: slices.Collect(maps.Keys(wp.pw.Forms))})
		}
		should = append(should, wp.title...)
		plan.Words = append(plan.Words, wp.pw)
	}
	// "#1234", "ticket 1234", "issue #1234" or "PROJ-12": the entity itself.
	for _, id := range idMentions(q) {
		k := b.keyword(idNumber(id))
		if k[0] >= '0' && k[0] <= '9' {
			k = "#" + k
		}
		groups = append(groups, term(k, fieldIdents, idExactBoost))
		clauses = append(clauses, wordClauses{group: groups[len(groups)-1]})
		if r == nil || termDF(r, fieldIdents, k) == 0 {
			continue // no such id here: "Ticket#2024" is just text
		}
		// The id replaces the words of its mention: "ticket 123" is about
		// one item, however many texts mention 123 or tickets.
		plan.dropWord(strings.TrimPrefix(k, "#"))
		for _, n := range idNouns(id) {
			plan.dropWord(n)
		}
		plan.Words = append(plan.Words, PlanWord{Text: id, Forms: map[string]float64{k: 1}, ident: true, df: 1})
	}
	plan.weigh()
	if len(groups) == 0 {
		return query.NewMatchNoneQuery(), plan, nil
	}
	if len(words) > 1 {
		p := query.NewMatchPhraseQuery(q)
		p.SetField(fieldTitle)
		p.SetBoost(phraseBoost)
		p.Analyzer = analyzerExact
		should = append(should, p)
	}
	plan.split = plan.splitCommon(clauses, should, cmp.Or(b.splitPostings, minSplitPostings))
	noSynonyms := without.Has(FeatureSynonyms)
	if plan.split != nil {
		plan.split.rare.noSynonyms = noSynonyms
	}
	// The words and title boosts in one searcher (rankQuery).
	return &rankQuery{groups: groups, should: should, noSynonyms: noSynonyms}, plan, nil
}

// wordPlan is what planning one query word yields: its group (nil when
// the index holds it in no form), its title boosts and its PlanWord.
type wordPlan struct {
	group query.Query
	title []query.Query
	pw    PlanWord
}

// planWords plans each of words (wordQuery), in order. Each word's
// dictionary look-ups (its forms' counts, synonyms, typo variants,
// completions) read the snapshot alone and need nothing of another
// word's, so with a reader and more than one core they are spread over
// the cores, a word at a time to whichever is free: a typo or the word
// being completed costs several times a plain word. The look-ups were a
// query's first 0.2 ms of CPU, spent on one core while the other idled.
func (b *Bleve) planWords(ctx context.Context, idx bleve.Index, r index.IndexReader, words []queryWord, without Features) []wordPlan {
	out := make([]wordPlan, len(words))
	plan := func(i int) {
		w := words[i]
		wp := wordPlan{pw: PlanWord{Text: w.raw, Forms: map[string]float64{}}}
		wp.group, wp.title = b.wordQuery(idx, r, w, i == len(words)-1, without, &wp.pw)
		if wp.group != nil {
			wp.pw.postings = formPostings(r, wp.pw)
		}
		out[i] = wp
	}
	if r == nil {
		for i := range words {
			plan(i)
		}
		return out
	}
	spread.Each(ctx, len(words), plan)
	return out
}

// wordClauses are the clauses of one query word (or id mention): its
// group, and its forms and their postings (formPostings; 0 for an id,
// never common).
type wordClauses struct {
	group    query.Query
	postings uint64
	forms    []string
}

// formPostings counts the postings of a word's forms in the catch-all
// field: an upper bound of the documents its group matches.
func formPostings(r index.IndexReader, w PlanWord) uint64 {
	if r == nil || w.ident {
		return 0
	}
	var n uint64
	for t := range w.Forms {
		n += termDF(r, fieldAll, t)
	}
	return n
}

// splitCommon chooses how to split the query into common and rarer
// words (commonSplit), or nil to run it whole. It tries the shares of
// commonShares in turn and takes the first that leaves some word rare and
// the common words less than WeakCover of the query's information; and
// only when the common words' postings are at least minPostings, many
// enough that walking them costs more than the split loses.
func (p *Plan) splitCommon(clauses []wordClauses, should []query.Query, minPostings uint64) *commonSplit {
	for _, share := range commonShares {
		limit := uint64(share * float64(p.docs))
		var rare []wordClauses
		var postings uint64
		for _, c := range clauses {
			if c.postings > limit {
				postings += c.postings
			} else {
				rare = append(rare, c)
			}
		}
		if len(rare) == 0 || len(rare) == len(clauses) || postings < minPostings {
			continue
		}
		for i := range p.Words {
			p.Words[i].common = p.Words[i].postings > limit
		}
		if p.commonWeight() >= WeakCover {
			continue
		}
		// The title boosts all stay: where the words stand is what
		// ranks a title holding a common word above a long text holding
		// it, and titles are short.
		rq := &rankQuery{should: should, coordGroups: len(clauses)}
		for _, c := range clauses {
			if c.postings > limit {
				rq.present = append(rq.present, c.forms)
				rq.left = append(rq.left, c.group)
			} else {
				rq.groups = append(rq.groups, c.group)
			}
		}
		return &commonSplit{rare: rq}
	}
	for i := range p.Words {
		p.Words[i].common = false
	}
	return nil
}

// idMentions returns the ids a query names: the whole query when it is
// one ("#123", "123", "PROJ-12"), and a number after "#", "ticket",
// "issue", "bug", "task" or "work package" anywhere in it.
func idMentions(q string) []string {
	raw := strings.TrimSpace(q)
	if idLike.MatchString(raw) {
		return []string{raw}
	}
	var out []string
	for _, m := range idMention.FindAllStringSubmatch(raw, -1) {
		out = append(out, strings.TrimLeft(m[0], " \t\n,;:.!?()[]{}'\""))
	}
	return out
}

// idNumber is the id of a mention: "ticket #123" → "#123"; a whole-query
// id ("PROJ-12", "#123", "123") as it is.
func idNumber(mention string) string {
	if m := idMention.FindStringSubmatch(mention); m != nil {
		return "#" + m[2]
	}
	return mention
}

// idNouns are the words of an id mention ("ticket 123") that name the id
// rather than a topic: they leave the query with the id.
func idNouns(q string) []string {
	var out []string
	for _, m := range idMention.FindAllStringSubmatch(q, -1) {
		if m[1] != "" {
			out = append(out, strings.Fields(m[1])...)
		}
	}
	return out
}

// idMention finds "#123", "ticket 123", "issue #123", "wp 123" in a query.
var idMention = regexp.MustCompile(`(?i)(?:^|[^\pL\pN])(?:#|(ticket|issue|bug|task|wp|work package|feature)\s*#?)([0-9]+)\b`)

// wordQuery is the clause one query word contributes to retrieval (nil
// when the index holds it in no form) and its title boosts, leaving out
// the features in without.
func (b *Bleve) wordQuery(idx bleve.Index, r index.IndexReader, w queryWord, last bool, without Features, pw *PlanWord) (query.Query, []query.Query) {
	var qs, title []query.Query
	df := func(t string) uint64 {
		if r == nil {
			return 1
		}
		return termDF(r, fieldAll, t)
	}
	switch {
	case len(w.parts) > 0:
		// An identifier: the whole identifier, or all its parts.
		qs = append(qs, term(w.exact, fieldAll, 1), term(w.exact, fieldIdents, 1))
		parts := make([]query.Query, 0, len(w.parts))
		for _, p := range w.parts {
			parts = append(parts, term(p, fieldAll, 1))
		}
		qs = append(qs, query.NewConjunctionQuery(parts))
		title = append(title, term(w.exact, fieldTitle, titleBoost))
		pw.Forms[w.exact] = 1
		pw.parts = w.parts
		pw.df = max(df(w.exact), 1)
	case len(w.stems) == 0:
		// A stop word in a query of stop words.
		qs = append(qs, term(w.exact, fieldAll, 1))
		title = append(title, term(w.exact, fieldTitle, titleBoost))
		pw.Forms[w.exact] = 1
		pw.df = df(w.exact)
	default:
		n := typos(utf8.RuneCountInString(w.raw))
		if strings.ContainsFunc(w.raw, unicode.IsDigit) || without.Has(FeatureTypos) {
			// Numbers and codes never match by edit distance: 21638 is
			// not a typo of 24638 (REQ-21638 found REQ-24638).
			n = 0
		}
		for _, st := range w.stems {
			if len(st) < minStemLen && st != w.exact {
				// Porter cuts some words to two letters ("icing" →
				// "ic", the stem of "ics"): too ambiguous to stand for
				// the word, which is matched as written instead.
				st = w.exact
			}
			if c := df(st); c > 0 {
				qs = append(qs, term(st, fieldAll, 1))
				title = append(title, term(st, fieldTitle, titleBoost))
				pw.Forms[st] = 1
				pw.df = max(pw.df, c)
			}
			// The term query expands through the thesaurus by itself
			// (bleve, at half weight); the plan counts a synonym as half
			// the word. A word known only through its synonyms is
			// searched for them.
			if without.Has(FeatureSynonyms) {
				continue
			}
			for _, syn := range synonymsOf(r, st) {
				if _, seen := pw.Forms[syn]; !seen {
					if c := df(syn); c > 0 {
						pw.Forms[syn] = synonymQuality
						pw.df = max(pw.df, c)
						if _, ok := pw.Forms[st]; !ok {
							qs = append(qs, term(syn, fieldAll, synonymQuality))
						}
					}
				}
			}
		}
		if len(qs) == 0 && n > 0 && r != nil {
			// Unknown as typed: its closest typo variants, of the stem
			// and of the word as written (a typo can change the stem).
			var vs []variant
			for i, t := range []string{w.stems[0], w.exact} {
				if i > 0 && t == w.stems[0] {
					// A typo is mostly its own stem ("offlinh"): one
					// lookup. Each builds a Levenshtein automaton, at two
					// edits tens of kilobytes, which was a third of a
					// query's allocations.
					break
				}
				// The typo rule holds for the term compared: a short
				// stem ("ice" of "icing") takes no typo.
				for _, v := range b.lookupsOf(r).typoVariants(r, fieldAll, t, min(n, typos(utf8.RuneCountInString(t)))) {
					if !slices.ContainsFunc(vs, func(x variant) bool { return x.term == v.term }) {
						vs = append(vs, v)
					}
				}
			}
			// The variants share one idf, their most frequent one's
			// (Lucene's blended rewrite): otherwise the rarest look-alike
			// of a typo, with the highest idf, would outrank the word
			// meant (tf-idf weighs a term by idf², so the boost makes up
			// the square). And each counts by how likely it is the word
			// meant, its frequency relative to the most frequent variant
			// (the noisy-channel prior of spelling correction).
			var top uint64
			for _, v := range vs {
				top = max(top, v.df)
			}
			docs, _ := r.DocCount()
			for _, v := range vs {
				quality := 1 - 0.25*float64(v.dist)
				blend := tfidfIDF(top, docs) / tfidfIDF(v.df, docs)
				boost := quality * blend * blend * float64(v.df) / float64(max(top, 1))
				qs = append(qs, term(v.term, fieldAll, boost))
				title = append(title, term(v.term, fieldTitle, titleBoost*boost))
				pw.Forms[v.term] = quality
				pw.df = max(pw.df, v.df)
			}
		}
	}
	if last && utf8.RuneCountInString(w.exact) >= minPrefixLen && r != nil && !without.Has(FeatureCompletions) {
		// The word being typed: its completions count as the word. A
		// completion that is only another form of the word ("meetings"
		// for "meeting") is left out when the word's stem is searched
		// already: every document holding it holds the stem too, so it
		// finds nothing more, and the postings of a common word's family
		// were a large part of the query's cost (at 100,000 work
		// packages "release planning" took 31 ms with them, 21 without).
		// The word as typed stays: it ranks the form asked for above its
		// relatives (dropping it too cost MRR on both evaluation sets).
		for _, t := range expandPrefix(r, fieldAll, w.exact) {
			if t != w.exact && b.sameStem(t, pw.Forms) {
				continue
			}
			if _, seen := pw.Forms[t]; !seen {
				qs = append(qs, term(t, fieldAll, prefixBoost))
				pw.Forms[t] = prefixBoost
				pw.df = max(pw.df, df(t))
			}
		}
	}
	switch len(qs) {
	case 0:
		return nil, title
	case 1:
		return qs[0], title
	}
	return disjunction(qs, 0), title
}

// sameStem reports whether t stems to a form searched at full weight.
func (b *Bleve) sameStem(t string, forms map[string]float64) bool {
	ts := b.analyze(analyzerQuery, t)
	return len(ts) == 1 && forms[string(ts[0].Term)] == 1
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
	if len(opts.IDs) > 0 {
		must = append(must, query.NewDocIDQuery(opts.IDs))
	}
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

package eval

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/opsearch/opsearch/indexer"
	"github.com/opsearch/opsearch/internal/spread"
	"github.com/opsearch/opsearch/scorer"
	"github.com/opsearch/opsearch/search"
	"github.com/opsearch/opsearch/store"
)

// K is the cut-off of the ranked lists the evaluation looks at.
const K = 10

// Variant is one ranker configuration. The zero value (apart from Name)
// is opsearch's default: index candidates re-ranked by the scorer.
type Variant struct {
	Name string `json:"name"`
	// Ranker is "scorer" (default) or "index" (the order of opsearch's own
	// bleve index, with its mapping and query, alone). The built-in
	// bleve-default variant uses RankerBleveDefault, which ignores every
	// other field (see bleve_default.go); variants files cannot choose it.
	Ranker string `json:"ranker,omitempty"`
	// Params are scorer constants; zero fields keep the defaults (see
	// scorer.Params). JSON keys are the Go field names, e.g. "PhraseBonus".
	Params scorer.Params `json:"params"`
	// Weights override field weights by "kind.field", e.g.
	// "work_package.comments": 2; 0 removes a field.
	Weights map[string]float64 `json:"weights,omitempty"`
	// IgnoreRecency breaks ties by id, as the reference does.
	IgnoreRecency bool `json:"ignoreRecency,omitempty"`
	// Candidates is how many index hits are re-ranked (0: engine default).
	Candidates int `json:"candidates,omitempty"`
	// CrossFieldWeight is search.Options.CrossFieldWeight (0: default,
	// negative: off).
	CrossFieldWeight float64 `json:"crossFieldWeight,omitempty"`
	// Without names features of retrieval to leave out, as
	// indexer.FeatureNames spells them: "typos", "completions",
	// "synonyms", "small-kinds".
	Without []string `json:"without,omitempty"`
}

// Names of the built-in variants.
const (
	VariantBleveDefault = "bleve-default"
	VariantBleve        = "bleve"
	VariantOpsearch     = "opsearch"
	VariantReference    = "reference"
)

// DefaultVariants are compared in every run: plain bleve with its
// documented defaults over the same documents (bleve-default: a throwaway
// index with the default mapping, a fuzzy match query: the engine
// opsearch is built on, used untuned), opsearch's own bleve index in its
// own order (bleve: opsearch's mapping, analyzers and query, without the
// scorer), opsearch (those candidates re-ranked by the scorer), and the
// reference server's scorer over the same candidates (its field weights,
// which have no id field, no cross-field score, and its id-only
// tie-break).
func DefaultVariants() []Variant {
	return []Variant{
		{Name: VariantBleveDefault, Ranker: RankerBleveDefault},
		{Name: VariantBleve, Ranker: "index"},
		{Name: VariantOpsearch},
		{Name: VariantReference, IgnoreRecency: true, CrossFieldWeight: -1, Weights: map[string]float64{"work_package.id": 0}},
	}
}

// FeatureVariants are opsearch without each feature of retrieval in turn
// (indexer.Features), named "without-" and the feature: beside the
// opsearch variant, what each feature brings to recall and what it costs
// in time, on the same queries.
func FeatureVariants() []Variant {
	var vs []Variant
	for _, f := range indexer.FeatureNames() {
		vs = append(vs, Variant{Name: "without-" + f, Without: []string{f}})
	}
	return vs
}

// LoadVariants reads a JSON array of variants.
func LoadVariants(path string) ([]Variant, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read variants: %w", err)
	}
	var vs []Variant
	if err := json.Unmarshal(b, &vs); err != nil {
		return nil, fmt.Errorf("decode variants %s: %w", path, err)
	}
	for i, v := range vs {
		if v.Name == "" {
			return nil, fmt.Errorf("variants %s: entry %d has no name", path, i+1)
		}
		if v.Ranker != "" && v.Ranker != "scorer" && v.Ranker != "index" {
			return nil, fmt.Errorf("variants %s: %s: ranker must be scorer or index, not %q", path, v.Name, v.Ranker)
		}
		if _, err := indexer.ParseFeatures(v.Without); err != nil {
			return nil, fmt.Errorf("variants %s: %s: without: %w", path, v.Name, err)
		}
	}
	return vs, nil
}

// LoadQueries reads a JSONL query set.
func LoadQueries(path string) ([]scorer.LabelledQuery, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open queries: %w", err)
	}
	defer f.Close()
	return ReadQueries(f)
}

// ReadQueries decodes JSONL labelled queries; blank lines are skipped.
func ReadQueries(r io.Reader) ([]scorer.LabelledQuery, error) {
	var out []scorer.LabelledQuery
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 4<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var q scorer.LabelledQuery
		if err := json.Unmarshal([]byte(line), &q); err != nil {
			return nil, fmt.Errorf("query line %d: %w", n, err)
		}
		if q.ID == "" {
			q.ID = "q" + strconv.Itoa(n)
		}
		q.Kind = cmp.Or(q.Kind, "unlabelled")
		for _, t := range q.Expect {
			switch t.Type {
			case "work_package", "wiki_page", "meeting", "project":
			default:
				return nil, fmt.Errorf("query line %d: expect type %q is not one of work_package, wiki_page, meeting, project", n, t.Type)
			}
		}
		out = append(out, q)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read queries: %w", err)
	}
	return out, nil
}

// WriteQueries encodes qs as JSONL.
func WriteQueries(w io.Writer, qs []scorer.LabelledQuery) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, q := range qs {
		if q.Expect == nil {
			q.Expect = []scorer.Target{}
		}
		if err := enc.Encode(q); err != nil {
			return fmt.Errorf("write queries: %w", err)
		}
	}
	return nil
}

// Report is the outcome of Run.
type Report struct {
	Queries  int             `json:"queries"`
	Variants []VariantReport `json:"variants"`
}

// VariantReport holds one variant's metrics.
type VariantReport struct {
	Name    string                    `json:"name"`
	Overall scorer.Metrics            `json:"overall"`
	Kinds   map[string]scorer.Metrics `json:"kinds"`
	// MedianMS and P99MS are search latencies in milliseconds.
	MedianMS float64 `json:"medianMs"`
	P99MS    float64 `json:"p99Ms"`
	// Detail is filled when Options.Detail is set.
	Detail []QueryResult `json:"detail,omitempty"`

	runs []QueryResult
}

// QueryResult is one query's outcome under one variant.
type QueryResult struct {
	ID    string `json:"id"`
	Kind  string `json:"kind"`
	Query string `json:"query"`
	// Rank is the 1-based rank of the first expected item, 0 when it is
	// not in the top K (or the query is negative).
	Rank int `json:"rank"`
	// Top are the first results as "kind:id score title".
	Top []string `json:"top"`
	// MS is how long the query took, in milliseconds (whole pipeline, as
	// the variant's median and p99 count it): which phrasings are slow.
	MS float64 `json:"ms"`

	ranked []scorer.Target
	scores []float64
}

// Options configure Run.
type Options struct {
	// Variants to compare; nil means DefaultVariants.
	Variants []Variant
	// Detail keeps per-query results in the report.
	Detail bool
}

// Run evaluates queries against st and idx with every variant. A
// bleve-default variant searches its own throwaway index, built once per
// Run from st (so from the same user's entities) before its first query,
// and only when such a variant is requested.
func Run(ctx context.Context, st *store.Store, idx search.Index, queries []scorer.LabelledQuery, opts Options) (_ *Report, err error) {
	vs := opts.Variants
	if vs == nil {
		vs = DefaultVariants()
	}
	var plain *defaultIndex
	defer func() {
		if plain != nil {
			err = errors.Join(err, plain.Close())
		}
	}()
	rep := &Report{Queries: len(queries)}
	// The engines search with a crew, as the served ones do (spread.Crew):
	// the latencies are those a user gets. The variants run one after
	// the other, so one crew serves them all.
	crew := spread.NewCrew()
	defer crew.Wait()
	for _, v := range vs {
		var find searchFunc
		if v.Ranker == RankerBleveDefault {
			if plain == nil {
				if plain, err = buildDefaultIndex(ctx, st); err != nil {
					return nil, fmt.Errorf("variant %s: %w", v.Name, err)
				}
			}
			find = plain.search
		} else if find, err = engineSearch(st, idx, v, crew); err != nil {
			return nil, fmt.Errorf("variant %s: %w", v.Name, err)
		}
		vr, err := runVariant(ctx, queries, v, find)
		if err != nil {
			return nil, fmt.Errorf("variant %s: %w", v.Name, err)
		}
		if opts.Detail {
			vr.Detail = vr.runs
		}
		rep.Variants = append(rep.Variants, vr)
	}
	return rep, nil
}

// engineOptions turns a variant into engine options.
func engineOptions(v Variant) (search.Options, error) {
	without, err := indexer.ParseFeatures(v.Without)
	if err != nil {
		return search.Options{}, fmt.Errorf("without: %w", err)
	}
	o := search.Options{Params: v.Params, Weights: v.Weights, IgnoreRecency: v.IgnoreRecency, Candidates: v.Candidates, CrossFieldWeight: v.CrossFieldWeight, Without: without}
	if v.Ranker == "index" {
		o.Ranker = search.RankIndex
	}
	return o, nil
}

// hit is one ranked result of a variant's search.
type hit struct {
	target scorer.Target
	score  float64
	title  string
	// weak marks a hit the engine itself calls a partial match (too
	// little of the query); a negative query answered with weak hits
	// only counts as answered with nothing, as the dev set's README
	// scores a product's own "no good match" threshold.
	weak bool
}

// searchFunc answers one query with at most K hits, best first.
type searchFunc func(ctx context.Context, text string) ([]hit, error)

// engineSearch searches with opsearch's engine configured by v, with
// crew.
func engineSearch(st *store.Store, idx search.Index, v Variant, crew *spread.Crew) (searchFunc, error) {
	o, err := engineOptions(v)
	if err != nil {
		return nil, err
	}
	o.Crew = crew
	eng := search.New(st, idx, o)
	return func(ctx context.Context, text string) ([]hit, error) {
		resp, err := eng.Search(ctx, search.Query{Text: text, PageSize: K})
		if err != nil {
			return nil, err
		}
		hits := make([]hit, len(resp.Results))
		for i, r := range resp.Results {
			hits[i] = hit{target: scorer.Target{Type: string(r.Kind), ID: r.ID}, score: r.Score, title: r.Title, weak: r.Match == search.MatchPartial}
		}
		return hits, nil
	}, nil
}

func runVariant(ctx context.Context, queries []scorer.LabelledQuery, v Variant, find searchFunc) (VariantReport, error) {
	overall := &scorer.Accumulator{}
	kinds := map[string]*scorer.Accumulator{}
	vr := VariantReport{Name: v.Name, Kinds: map[string]scorer.Metrics{}}
	lat := make([]time.Duration, 0, len(queries))
	for _, q := range queries {
		start := time.Now()
		hits, err := find(ctx, q.Query)
		if err != nil {
			return vr, fmt.Errorf("query %s: %w", q.ID, err)
		}
		took := time.Since(start)
		lat = append(lat, took)
		qr := QueryResult{ID: q.ID, Kind: q.Kind, Query: q.Query, Top: []string{}, MS: float64(took.Microseconds()) / 1000}
		var strong []scorer.Target
		for i, h := range hits {
			t := h.target
			qr.ranked = append(qr.ranked, t)
			qr.scores = append(qr.scores, h.score)
			if !h.weak {
				strong = append(strong, t)
			}
			if i < 3 {
				weak := ""
				if h.weak {
					weak = " (partial)"
				}
				qr.Top = append(qr.Top, fmt.Sprintf("%s:%d %.2f%s %s", t.Type, t.ID, h.score, weak, h.title))
			}
		}
		qr.Rank = scorer.FirstRelevant(qr.ranked, q.Expect)
		answered := qr.ranked
		if q.Negative() {
			answered = strong
		}
		overall.Add(q, answered)
		acc := kinds[q.Kind]
		if acc == nil {
			acc = &scorer.Accumulator{}
			kinds[q.Kind] = acc
		}
		acc.Add(q, answered)
		vr.runs = append(vr.runs, qr)
	}
	vr.Overall = overall.Metrics()
	for k, a := range kinds {
		vr.Kinds[k] = a.Metrics()
	}
	vr.MedianMS, vr.P99MS = Percentile(lat, 0.5), Percentile(lat, 0.99)
	return vr, nil
}

// Percentile returns the p-quantile of ds in milliseconds (nearest rank).
func Percentile(ds []time.Duration, p float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(float64(len(s))*p+0.999999) - 1
	i = max(0, min(len(s)-1, i))
	return float64(s[i].Microseconds()) / 1000
}

// Variant returns the report of the named variant.
func (r *Report) Variant(name string) (VariantReport, bool) {
	for _, v := range r.Variants {
		if v.Name == name {
			return v, true
		}
	}
	return VariantReport{}, false
}

// WriteTable writes the metrics as a table a person can read: one block
// per variant, a row per query kind and one overall. With timings the
// latency of each variant is shown too (leave it out for golden files).
func (r *Report) WriteTable(w io.Writer, timings bool) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "VARIANT\tKIND\tQUERIES\tR@1\tR@5\tR@10\tMRR@10\tnDCG@10\tNEG-CLEAN\t")
	for _, v := range r.Variants {
		for _, k := range scorer.SortedKinds(v.Kinds) {
			writeRow(tw, v.Name, k, v.Kinds[k])
		}
		writeRow(tw, v.Name, "OVERALL", v.Overall)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	if timings {
		for _, v := range r.Variants {
			fmt.Fprintf(w, "%s: median %.2f ms, p99 %.2f ms per query\n", v.Name, v.MedianMS, v.P99MS)
		}
	}
	return nil
}

func writeRow(w io.Writer, variant, kind string, m scorer.Metrics) {
	if m.Queries == 0 && m.Negatives > 0 {
		fmt.Fprintf(w, "%s\t%s\t%d\t-\t-\t-\t-\t-\t%.4f\t\n", variant, kind, m.Negatives, m.NegativeClean)
		return
	}
	neg := "-"
	if m.Negatives > 0 {
		neg = fmt.Sprintf("%.4f", m.NegativeClean)
	}
	fmt.Fprintf(w, "%s\t%s\t%d\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t%s\t\n", variant, kind, m.Queries+m.Negatives, m.Recall1, m.Recall5, m.Recall10, m.MRR10, m.NDCG10, neg)
}

// WriteDetail writes each variant's per-query outcome: rank of the
// expected item (or "miss") and the top results.
func (r *Report) WriteDetail(w io.Writer) error {
	for _, v := range r.Variants {
		fmt.Fprintf(w, "== %s\n", v.Name)
		for _, q := range v.runs {
			rank := strconv.Itoa(q.Rank)
			switch {
			case q.Kind == "negative" || q.Rank == 0 && len(q.ranked) == 0:
				rank = "-"
			case q.Rank == 0:
				rank = "miss"
			}
			fmt.Fprintf(w, "%-26s %-5s %q\n", q.ID, rank, q.Query)
			for _, t := range q.Top {
				fmt.Fprintf(w, "    %s\n", t)
			}
		}
	}
	return nil
}

// WriteTREC writes qrels.txt ("qid 0 docid 1" per relevant item) and one
// run file per variant, run-<name>.txt ("qid Q0 docid rank score name"),
// into dir. Document ids are "kind:id".
func (r *Report) WriteTREC(dir string, queries []scorer.LabelledQuery) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	var qrels strings.Builder
	for _, q := range queries {
		for _, t := range q.Expect {
			fmt.Fprintf(&qrels, "%s 0 %s:%d 1\n", q.ID, t.Type, t.ID)
		}
	}
	if err := os.WriteFile(dir+"/qrels.txt", []byte(qrels.String()), 0o600); err != nil {
		return fmt.Errorf("write qrels: %w", err)
	}
	for _, v := range r.Variants {
		var b strings.Builder
		for _, q := range v.runs {
			for i, t := range q.ranked {
				// trec_eval orders by score; a strictly decreasing score
				// keeps the variant's own order among ties.
				score := q.scores[i] - float64(i)*1e-6
				fmt.Fprintf(&b, "%s Q0 %s:%d %d %.6f %s\n", q.ID, t.Type, t.ID, i+1, score, v.Name)
			}
		}
		if err := os.WriteFile(dir+"/run-"+fileSafe(v.Name)+".txt", []byte(b.String()), 0o600); err != nil {
			return fmt.Errorf("write run %s: %w", v.Name, err)
		}
	}
	return nil
}

func fileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '_'
	}, s)
}

// KindCounts counts queries per kind, for summaries.
func KindCounts(qs []scorer.LabelledQuery) map[string]int {
	m := map[string]int{}
	for _, q := range qs {
		m[q.Kind]++
	}
	return m
}

// ErrNoQueries is returned when a query set is empty.
var ErrNoQueries = errors.New("the query set is empty")

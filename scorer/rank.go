package scorer

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strconv"
	"strings"
	gosync "sync"
	"time"
	"unicode/utf8"

	"github.com/opsearch/opsearch/internal/spread"
)

// Field is one searchable field of a record. Weight is its relative
// importance; Values are its texts (a multi-valued field such as a list of
// participants has several, and the best-scoring one wins). Declare a field
// even when it has no value: its weight still counts towards the maximum
// declared weight that normalises record scores.
type Field struct {
	Name   string
	Weight float64
	Values []string
}

// Record is a candidate to rank. ID identifies it in results and breaks
// ties (see Rank); Updated is its last modification time, used as a
// tie-breaker unless Options.IgnoreRecency is set (the zero time is oldest).
type Record struct {
	ID      string
	Fields  []Field
	Updated time.Time
}

// Options controls Rank. The zero value is fuzzy matching with the
// reference's parameters, no limit and recency tie-breaking.
type Options struct {
	// Exact switches to normalised substring containment of the whole
	// query, the behaviour before fuzzy search existed.
	Exact bool
	// Limit caps the number of results after sorting; <= 0 means no cap.
	Limit int
	// IgnoreRecency orders equal scores by ID only, which reproduces the
	// reference's order exactly. By default newer records win ties.
	IgnoreRecency bool
	// Params tunes the scorer; the zero value is the reference.
	Params Params
	// CrossFieldWeight, when positive, adds a cross-field score for
	// queries whose words spread over several fields of a record (a
	// participant's name and a word of the meeting's title): each query
	// token's best score over all fields, aggregated like a field score
	// (mean × coverage × BaseScale, no phrase bonus), scaled down when
	// the words are scattered over fields rather than together in one,
	// and weighted as a field of this weight. It counts for the gate and
	// the order, so coverage of the whole query comes before the weight
	// of the field: every word in a body outranks half the words in a
	// title. Queries of one token are unaffected. Zero (the reference)
	// disables it. It produces no Match: snippets and matched
	// fields still come from the individual fields.
	CrossFieldWeight float64
	// MaxWeight, when positive, normalises weighted scores in place of
	// the records' largest declared weight (maxDeclaredWeight), so a
	// subset of a candidate set scores each record as the whole set
	// would.
	MaxWeight float64
}

// Match is one field of a result that scored above zero.
type Match struct {
	Field string
	// Score is the raw field score (before weighting), rounded to two
	// decimals.
	Score float64
	// Value is the index in Field.Values of the value that scored best; the
	// offsets and snippet refer to it.
	Value int
	// Snippet is an excerpt of that value around the earliest match.
	Snippet string
	// Offsets are byte offsets of the matches in that value, ascending.
	Offsets []int
}

// Result is a ranked record.
type Result struct {
	ID string
	// Index is the record's position in the slice given to Rank.
	Index int
	// Score is the best weighted field score, in 0..1, rounded to two
	// decimals: max over fields of raw × weight / max declared weight.
	// Results are ordered by it.
	Score float64
	// Raw is the best raw field score, unrounded; the MinScore gate is
	// applied to it.
	Raw float64
	// Matches lists the fields that scored above zero, highest raw score
	// first (declaration order among equals).
	Matches []Match
	// MatchedFields names the fields of Matches, in the same order.
	MatchedFields []string
}

// Rank scores records against query and returns those that pass the gate,
// best first. It is the reference's rankRecords:
//
//   - A blank query (after trimming) returns every record with score 0 and
//     no matches, in input order.
//   - Exact containment is used when opts.Exact is set, when the trimmed
//     query has fewer than MinFuzzyQueryLength runes, or when it has no
//     tokens. Any exact hit passes the gate: a containment hit on a
//     low-weight field would otherwise fall under MinScore once weighted.
//   - In fuzzy mode a record passes when its best RAW field score reaches
//     MinScore ("is this a real match?"), while results are ordered by the
//     WEIGHTED score ("how important is where it matched?"). Gating on the
//     weighted score would make low-weight fields such as a body
//     unreachable.
//   - Ties (after rounding) go to the newer record unless
//     opts.IgnoreRecency, then to the smaller ID: IDs of the form
//     "kind:123" or "123" compare by kind, then numerically; other IDs
//     lexicographically. The sort is stable, so duplicate IDs keep their
//     input order and the output depends only on the input.
//   - opts.Limit is applied after sorting.
func Rank(records []Record, query string, opts Options) []Result {
	p := opts.Params.resolved()
	trimmed := trimQuery(query)
	if trimmed == "" {
		return inInputOrder(records, opts.Limit)
	}
	k := newRanker(trimmed, records, opts, p)
	// Records are scored independently, so they are spread over the
	// cores: one search then answers sooner on an idle machine (about 40
	// candidates take 0.8 ms on one core), and a busy one loses nothing
	// but the goroutines. Each goroutine has scratch of its own; the
	// results keep input order, as one pass would give them.
	scored := make([]Result, len(records))
	passed := make([]bool, len(records))
	_ = spread.Run(context.Background(), len(records), rankWorkers(len(records)), func(take func() (int, bool)) error {
		k.scoreEach(take, records, scored, passed)
		return nil
	})
	results := make([]Result, 0, len(records))
	for i, ok := range passed {
		if ok {
			results = append(results, scored[i])
		}
	}
	sortResults(results, records, opts.IgnoreRecency)
	if opts.Limit > 0 && len(results) > opts.Limit {
		results = results[:opts.Limit]
	}
	return results
}

// Prepared is a query prepared once for scoring records one at a time,
// on any number of goroutines: what Rank does for each record, without
// the order. A caller that loads its records concurrently scores each as
// it arrives, while its text is fresh in the cache, instead of in a
// second pass over the cores.
type Prepared struct {
	k ranker
}

// Prepare prepares query for Score. Options.MaxWeight should be set to
// the largest declared field weight of the records that will be compared
// (Rank takes it from its records); without it, weighted scores are
// normalised by 1. Limit and IgnoreRecency, which order results, do
// not apply. It returns nil for a blank query, which scores nothing.
func Prepare(query string, opts Options) *Prepared {
	trimmed := trimQuery(query)
	if trimmed == "" {
		return nil
	}
	if opts.MaxWeight <= 0 {
		opts.MaxWeight = 1
	}
	return &Prepared{k: newRanker(trimmed, nil, opts, opts.Params.resolved())}
}

// Score scores r as Rank would among records of the same largest weight,
// and reports whether it passes the gate (Params.MinScore). Result.Index
// is the caller's.
func (p *Prepared) Score(r Record) (Result, bool) {
	t, bests, done := p.k.scratch()
	defer done()
	return p.k.score(t, bests, r)
}

// rankMinPerWorker is the fewest records worth a goroutine of their own.
const rankMinPerWorker = 8

// rankWorkers is how many goroutines score n records: at most 4, each
// with at least rankMinPerWorker records (spread.Run keeps to the cores).
func rankWorkers(n int) int {
	return max(1, min(4, n/rankMinPerWorker))
}

// scoreEach scores the records take hands out, into scored and passed
// at their index, with scratch of its own: the tokenizer's buffers and,
// for the cross-field score, each query token's best score over a
// record's fields.
func (k *ranker) scoreEach(take func() (int, bool), records []Record, scored []Result, passed []bool) {
	t, bests, done := k.scratch()
	defer done()
	for ri, ok := take(); ok; ri, ok = take() {
		if res, ok := k.score(t, bests, records[ri]); ok {
			res.Index = ri
			scored[ri], passed[ri] = res, true
		}
	}
}

// scratch returns a scorer's scratch: a tokenizer from the pool and, for
// the cross-field score, room for each query token's best score over a
// record's fields (nil turns it off); done gives the tokenizer back.
func (k *ranker) scratch() (t *tokenizer, bests []float64, done func()) {
	t = scratchTokenizers.Get().(*tokenizer)
	if k.crossWeight > 0 && len(k.qs) > 1 {
		bests = make([]float64, len(k.qs))
	}
	return t, bests, func() {
		if cap(t.toks) <= maxPooledTokens {
			scratchTokenizers.Put(t)
		}
	}
}

// scratchTokenizers keeps the rankers' scratch tokenizers between
// queries. A tokenizer sizes its buffers for the longest text it met (a
// long description: tens of kilobytes), and a new one per query and
// worker made them about 100 KB of each query's garbage. A pool holds no
// state anyone can observe: whoever takes a tokenizer resets it.
var scratchTokenizers = gosync.Pool{New: func() any { return new(tokenizer) }}

// maxPooledTokens bounds the tokenizers scratchTokenizers keeps (about
// 5 MB of buffers): one sized for a rare huge text goes to the collector
// rather than stay pinned, as the store's and the client's buffers do.
const maxPooledTokens = 64 << 10

// inInputOrder is Rank's answer to a blank query: every record, up to
// limit when it is positive, in input order, with score 0 and no matches.
func inInputOrder(records []Record, limit int) []Result {
	n := len(records)
	if limit > 0 {
		n = min(n, limit)
	}
	out := make([]Result, n)
	for i := range out {
		out[i] = Result{ID: records[i].ID, Index: i}
	}
	return out
}

// ranker is what Rank prepares once for a query and uses on every record.
type ranker struct {
	p Params // resolved
	// exact is containment mode; needle is then the normalised query,
	// and qs, in fuzzy mode, the query tokens.
	exact  bool
	needle string
	qs     []tok
	// threshold is the gate on a record's best raw score.
	threshold float64
	// maxWeight normalises weighted scores (see maxDeclaredWeight).
	maxWeight float64
	// crossWeight is Options.CrossFieldWeight.
	crossWeight float64
}

// newRanker chooses the mode and the gate for the trimmed query and
// prepares the query for that mode. Exact containment is used when
// opts.Exact is set, when the query is shorter than MinFuzzyQueryLength
// runes or when it has no tokens; any exact hit passes the gate.
func newRanker(trimmed string, records []Record, opts Options, p Params) ranker {
	queryTokens := QueryTokens(trimmed)
	k := ranker{
		p:           p,
		exact:       opts.Exact || utf8.RuneCountInString(trimmed) < p.MinFuzzyQueryLength || len(queryTokens) == 0,
		threshold:   p.MinScore,
		maxWeight:   opts.MaxWeight,
		crossWeight: opts.CrossFieldWeight,
	}
	if k.maxWeight <= 0 {
		k.maxWeight = maxDeclaredWeight(records)
	}
	if k.exact {
		k.threshold = epsilon
		k.needle = Normalize(trimmed)
		return k
	}
	k.qs = make([]tok, len(queryTokens))
	for i, q := range queryTokens {
		k.qs[i] = newTok(q)
	}
	return k
}

// maxDeclaredWeight is the maximum DECLARED weight, not the best matching
// one: a hit on a low-weight field then yields a proportionally lower
// record score instead of being rescaled to 1. Without weights it is 1.
func maxDeclaredWeight(records []Record) float64 {
	maxWeight := 0.0
	for _, r := range records {
		for _, f := range r.Fields {
			maxWeight = max(maxWeight, f.Weight)
		}
	}
	return cmp.Or(maxWeight, 1)
}

// score scores one record, tokenizing its fields with t: a Match per
// field that scored above zero, the best raw and weighted scores over
// fields (and the cross-field score, with bests, len(k.qs) long, as its
// scratch; nil turns it off), and whether the best raw score passes the
// gate. Index is the caller's.
func (k *ranker) score(t *tokenizer, bests []float64, r Record) (Result, bool) {
	var matches []Match
	bestWeighted, bestRaw := 0.0, 0.0
	clear(bests)
	fieldCover := 0 // most query tokens one field value matched
	for _, f := range r.Fields {
		best, bestValue, cover := k.scoreField(t, bests, f)
		fieldCover = max(fieldCover, cover)
		if best.Score <= 0 {
			continue
		}
		matches = append(matches, Match{
			Field:   f.Name,
			Score:   round2(best.Score),
			Value:   bestValue,
			Snippet: snippet(f.Values[bestValue], best.Offsets, k.p.SnippetLength, k.p.SnippetContextBefore),
			Offsets: best.Offsets,
		})
		bestRaw = max(bestRaw, best.Score)
		bestWeighted = max(bestWeighted, best.Score*f.Weight/k.maxWeight)
	}
	if cross, ok := crossField(bests, fieldCover, &k.p); ok {
		bestRaw = max(bestRaw, cross)
		bestWeighted = max(bestWeighted, cross*k.crossWeight/k.maxWeight)
	}
	if bestRaw < k.threshold {
		return Result{}, false // with a zero MinScore even unmatched records pass, as in the reference
	}
	slices.SortStableFunc(matches, func(a, b Match) int { return CompareScores(a.Score, b.Score) })
	names := make([]string, len(matches))
	for i, m := range matches {
		names[i] = m.Field
	}
	return Result{
		ID:            r.ID,
		Score:         round2(bestWeighted),
		Raw:           bestRaw,
		Matches:       matches,
		MatchedFields: names,
	}, true
}

// scoreField returns the best score over a field's non-empty values, the
// index of the value that has it (-1 for none) and, in fuzzy mode, the
// most query tokens one value matched. Fuzzy scoring also merges each
// query token's best into bests.
func (k *ranker) scoreField(t *tokenizer, bests []float64, f Field) (best FieldScore, bestValue, cover int) {
	bestValue = -1
	for vi, v := range f.Values {
		if v == "" {
			continue
		}
		var s FieldScore
		if k.exact {
			s = scoreExact(k.needle, v)
		} else {
			s = scoreFieldTokens(k.qs, t.tokenize(v), &k.p, bests)
			cover = max(cover, len(s.Offsets))
		}
		if s.Score > best.Score {
			best, bestValue = s, vi
		}
	}
	return best, bestValue, cover
}

// sortResults orders results best first: by score, then the newer
// record unless ignoreRecency, then by ID (compareIDs). The sort is
// stable.
func sortResults(results []Result, records []Record, ignoreRecency bool) {
	slices.SortStableFunc(results, func(a, b Result) int {
		if c := CompareScores(a.Score, b.Score); c != 0 {
			return c
		}
		if !ignoreRecency {
			ta, tb := records[a.Index].Updated, records[b.Index].Updated
			if c := tb.Compare(ta); c != 0 {
				return c // newer first
			}
		}
		return compareIDs(a.ID, b.ID)
	})
}

// crossField aggregates the per-token best scores over all fields like a
// field score, scaled by (1 + fieldCover/matched)/2: words that occur
// together in one field (fieldCover, the most tokens one field value
// matched) count more than words scattered over several, down to half
// when no two share a field. ok is false when nothing matched.
func crossField(bests []float64, fieldCover int, p *Params) (float64, bool) {
	if len(bests) == 0 {
		return 0, false
	}
	total, matched := 0.0, 0
	for _, b := range bests {
		total += b
		if b > 0 {
			matched++
		}
	}
	if matched == 0 {
		return 0, false
	}
	n, m := float64(len(bests)), float64(matched)
	together := (1 + float64(min(fieldCover, matched))/m) / 2
	return min(1, total/n*m/n*p.BaseScale*together), true
}

// epsilon is JavaScript's Number.EPSILON, the reference's exact-mode gate:
// any hit at all passes.
const epsilon = 2.220446049250313e-16

// scoreExact is the exact-mode field score: 1 when the normalised needle
// occurs in the normalised text, with the offset of the first occurrence.
// The reference reports that offset in the normalised text; here it is
// mapped back to the original, like every other offset.
func scoreExact(needle, text string) FieldScore {
	if needle == "" {
		return FieldScore{}
	}
	hay := Normalize(text)
	i := strings.Index(hay, needle)
	if i < 0 {
		return FieldScore{}
	}
	if hay != text {
		_, src := normalizeWithOffsets(text)
		i = src[i]
	}
	return FieldScore{Score: 1, Offsets: []int{i}}
}

// CompareScores orders larger scores first, for sorting results: it is
// negative when a > b, positive when a < b and 0 otherwise. A NaN score
// (a NaN Field.Weight makes one) is thus equal to every score and keeps
// its place in a stable sort; cmp.Compare would order it before every
// number instead.
func CompareScores(a, b float64) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}

// compareIDs is a total order on record IDs. An ID is split at its last
// ':' into a kind and a suffix ("work_package:12" -> "work_package", "12";
// "12" -> "", "12"). Kinds compare lexicographically; within a kind, numeric
// suffixes come first in numeric order (the reference sorts by numeric id),
// then the rest lexicographically. Equal numbers with different spellings
// ("007", "7") fall back to the whole string, so the order stays total.
func compareIDs(a, b string) int { return CompareIDs(a, b) }

// CompareIDs is the total order on record ids that breaks ties (see
// compareIDs).
func CompareIDs(a, b string) int {
	ka, sa := splitID(a)
	kb, sb := splitID(b)
	if c := strings.Compare(ka, kb); c != 0 {
		return c
	}
	na, errA := strconv.ParseInt(sa, 10, 64)
	nb, errB := strconv.ParseInt(sb, 10, 64)
	switch {
	case errA == nil && errB == nil:
		if na != nb {
			if na < nb {
				return -1
			}
			return 1
		}
	case errA == nil:
		return -1
	case errB == nil:
		return 1
	}
	return strings.Compare(a, b)
}

func splitID(id string) (kind, suffix string) {
	if i := strings.LastIndexByte(id, ':'); i >= 0 {
		return id[:i], id[i+1:]
	}
	return "", id
}

// round2 rounds x to two decimals the way the reference's
// Number(x.toFixed(2)) does: from the exact binary value of x, with exact
// halves going up. math.Round(x*100)/100 is not the same, because x*100 is
// itself rounded and can cross a .5 boundary; since rounded scores decide
// ties, the difference would change orders.
//
// strconv's 'f' formatting rounds the exact binary value correctly but
// breaks exact halves to even. An exact half at the third decimal means
// x = odd/8 (0.125, 0.375, ...), since 200 = 8 × 25; those are detected
// and rounded up.
func round2(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) || x == 0 {
		return x
	}
	if x < 0 {
		return -round2(-x) // toFixed rounds the magnitude
	}
	if x8 := x * 8; x8 == math.Trunc(x8) && math.Mod(x8, 2) == 1 {
		return (math.Floor(x*100) + 1) / 100 // x*100 is exact here
	}
	if x >= 1e15 {
		return x // beyond the digits that fit the integer below; not a score
	}
	var buf [32]byte
	digits := strconv.AppendFloat(buf[:0], x, 'f', 2, 64)
	var k int64
	for _, c := range digits {
		if c != '.' {
			k = k*10 + int64(c-'0')
		}
	}
	// k and 100 are exact, and IEEE division rounds correctly, so this is
	// the double nearest to the decimal, as JavaScript's Number() gives.
	return float64(k) / 100
}

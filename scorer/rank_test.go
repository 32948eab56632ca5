package scorer

import (
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

func wp(id, subject, description string) Record {
	return Record{ID: id, Fields: []Field{
		{Name: "subject", Weight: 3, Values: []string{subject}},
		{Name: "description", Weight: 1, Values: []string{description}},
	}}
}

func ids(rs []Result) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

// Gate on the raw score, order by the weighted one: a body-only hit with
// raw 1.0 is returned at 1.0 × 1/3.
func TestRankGateOnRawOrderOnWeighted(t *testing.T) {
	recs := []Record{
		wp("1", "Unrelated", "Root cause was an expired TLS certificate."),
		wp("2", "Expired certificate", "nothing here"),
	}
	got := Rank(recs, "expired TLS certificate", Options{})
	if !reflect.DeepEqual(ids(got), []string{"2", "1"}) {
		t.Fatalf("order = %v, want [2 1]", ids(got))
	}
	body := got[1]
	if body.Score != 0.33 || body.Raw != 1 {
		t.Errorf("body-only hit: score %v raw %v, want 0.33 and 1", body.Score, body.Raw)
	}
	if !reflect.DeepEqual(body.MatchedFields, []string{"description"}) {
		t.Errorf("matched fields = %v", body.MatchedFields)
	}
	// Subject: "expired certificate" matches 2 of 3 tokens exactly.
	if want := round2(2.0 / 3 * 2.0 / 3 * BaseScale); got[0].Score != want {
		t.Errorf("subject hit score = %v, want %v", got[0].Score, want)
	}
}

func TestRankMinScoreGate(t *testing.T) {
	recs := []Record{wp("1", "Decision log", "")}
	// "hiring decision" vs "Decision log" is 0.2125 raw: under the gate.
	if got := Rank(recs, "hiring decision", Options{}); len(got) != 0 {
		t.Errorf("got %+v, want nothing under MinScore", got)
	}
	if got := Rank(recs, "hiring decision", Options{Params: Params{MinScore: 0.2}}); len(got) != 1 {
		t.Errorf("got %d results with MinScore 0.2, want 1", len(got))
	}
	// An explicit zero gate keeps even unmatched records, last.
	recs = append(recs, wp("0", "Unrelated", ""))
	got := Rank(recs, "hiring decision", Options{Params: Params{MinScore: -1}})
	if !reflect.DeepEqual(ids(got), []string{"1", "0"}) || got[1].Score != 0 || len(got[1].Matches) != 0 {
		t.Errorf("zero gate = %+v", got)
	}
}

func TestRankBlankQuery(t *testing.T) {
	recs := []Record{wp("3", "c", "c"), wp("1", "a", "a"), wp("2", "b", "b")}
	for _, q := range []string{"", "   ", "\t\n\u00a0\ufeff"} {
		got := Rank(recs, q, Options{})
		if !reflect.DeepEqual(ids(got), []string{"3", "1", "2"}) {
			t.Errorf("blank %q: %v, want input order", q, ids(got))
		}
		for i, r := range got {
			if r.Score != 0 || r.Matches != nil || r.Index != i {
				t.Errorf("blank %q: %+v, want score 0, no matches", q, r)
			}
		}
	}
	if got := Rank(recs, " ", Options{Limit: 2}); len(got) != 2 {
		t.Errorf("blank query with limit 2: %d results", len(got))
	}
}

func TestRankExactMode(t *testing.T) {
	recs := []Record{
		wp("1", "Approval of Q3 budget", "Größe Q3 budget: approved"),
		wp("2", "Budget approval", "the budget was approved"),
	}
	// A typo finds nothing in exact mode.
	if got := Rank(recs, "budget aproval", Options{Exact: true}); len(got) != 0 {
		t.Errorf("exact typo: %v, want nothing", ids(got))
	}
	got := Rank(recs, "BUDGET APPROVAL", Options{Exact: true})
	if !reflect.DeepEqual(ids(got), []string{"2"}) || got[0].Score != 1 {
		t.Fatalf("exact = %+v", got)
	}
	// A low-weight field hit passes: the exact gate is epsilon.
	got = Rank(recs, "was approved", Options{Exact: true})
	if len(got) != 1 || got[0].ID != "2" || got[0].Score != 0.33 {
		t.Fatalf("exact body hit = %+v, want 2 at 0.33", got)
	}
	// Offsets point into the original text even where folding changed
	// lengths (ß -> ss, ö -> o).
	got = Rank(recs, "q3 budget:", Options{Exact: true})
	for _, r := range got {
		if r.ID != "1" {
			continue
		}
		m := r.Matches[0]
		if m.Field != "description" || m.Offsets[0] != strings.Index(recs[0].Fields[1].Values[0], "Q3") {
			t.Errorf("exact offsets = %+v", m)
		}
	}
}

// Queries under three characters, and queries without tokens, fall back to
// exact containment.
func TestRankShortQueryFallback(t *testing.T) {
	recs := []Record{wp("1", "Q3 plan", ""), wp("2", "Q4 plan", ""), wp("3", "plan", "see §5 and §6 !!!")}
	got := Rank(recs, "q3", Options{})
	if !reflect.DeepEqual(ids(got), []string{"1"}) || got[0].Score != 1 {
		t.Errorf("short query = %+v, want only 1 at 1.0", got)
	}
	// No tokens: containment decides, and any hit passes (body, 0.33).
	got = Rank(recs, "!!!", Options{})
	if !reflect.DeepEqual(ids(got), []string{"3"}) || got[0].Score != 0.33 {
		t.Errorf("no-token query = %+v, want 3 at 0.33", got)
	}
	if got := Rank(recs, "??", Options{}); len(got) != 0 {
		t.Errorf("short query without a hit = %v", ids(got))
	}
	// Three runes with a token: fuzzy, and "5" matches exactly.
	if got := Rank(recs, "§ 5", Options{}); !reflect.DeepEqual(ids(got), []string{"3"}) {
		t.Errorf("fuzzy \"§ 5\" = %v, want [3]", ids(got))
	}
}

func TestRankLimitAfterSort(t *testing.T) {
	recs := []Record{
		wp("1", "other", "budget review notes"),
		wp("2", "budget review", ""),
		wp("3", "budget reviews", ""),
	}
	all := Rank(recs, "budget review", Options{})
	if !reflect.DeepEqual(ids(all), []string{"2", "3", "1"}) {
		t.Fatalf("order = %v", ids(all))
	}
	if got := Rank(recs, "budget review", Options{Limit: 1}); !reflect.DeepEqual(ids(got), []string{"2"}) {
		t.Errorf("limit 1 = %v, want the best, not the first", ids(got))
	}
}

func TestRankRecencyTieBreak(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	recs := []Record{wp("1", "budget", ""), wp("2", "budget", ""), wp("3", "budget", "")}
	recs[0].Updated = t0
	recs[1].Updated = t0.Add(48 * time.Hour)
	recs[2].Updated = t0.Add(24 * time.Hour)
	if got := ids(Rank(recs, "budget", Options{})); !reflect.DeepEqual(got, []string{"2", "3", "1"}) {
		t.Errorf("recency order = %v, want newest first", got)
	}
	if got := ids(Rank(recs, "budget", Options{IgnoreRecency: true})); !reflect.DeepEqual(got, []string{"1", "2", "3"}) {
		t.Errorf("id order = %v", got)
	}
	// Recency only breaks ties: a better score still wins.
	recs = append(recs, wp("4", "budget approval", ""))
	if got := Rank(recs, "budget approval", Options{}); got[0].ID != "4" {
		t.Errorf("top = %s, want the better score", got[0].ID)
	}
}

func TestCompareIDs(t *testing.T) {
	ids := []string{"", "1", "2", "10", "007", "7", "abc", "meeting:3", "wiki:1", "work_package:5", "work_package:12", "work_package:x"}
	shuffled := slices.Clone(ids)
	slices.Reverse(shuffled)
	slices.SortFunc(shuffled, compareIDs)
	if !reflect.DeepEqual(shuffled, []string{"1", "2", "007", "7", "10", "", "abc", "meeting:3", "wiki:1", "work_package:5", "work_package:12", "work_package:x"}) {
		t.Errorf("sorted ids = %q", shuffled)
	}
	// Total order: antisymmetric and transitive on a tricky set.
	set := []string{"x:10", "x:9", "x:1a", "x:9a", "10", "9", "1a"}
	for _, a := range set {
		for _, b := range set {
			if compareIDs(a, b) != -compareIDs(b, a) {
				t.Errorf("not antisymmetric: %q %q", a, b)
			}
			for _, c := range set {
				if compareIDs(a, b) < 0 && compareIDs(b, c) < 0 && compareIDs(a, c) >= 0 {
					t.Errorf("not transitive: %q < %q < %q", a, b, c)
				}
			}
		}
	}
}

func TestRankMatchesAndMultiValue(t *testing.T) {
	recs := []Record{{ID: "m:1", Fields: []Field{
		{Name: "title", Weight: 3, Values: []string{"Sprint planning"}},
		{Name: "participant", Weight: 1, Values: []string{"", "Ben Carter", "Anna Müller"}},
		{Name: "notes", Weight: 1.5, Values: []string{"Planning with Anna on budget"}},
	}}}
	got := Rank(recs, "anna muller", Options{})
	if len(got) != 1 {
		t.Fatalf("got %+v", got)
	}
	r := got[0]
	if !reflect.DeepEqual(r.MatchedFields, []string{"participant", "notes"}) {
		t.Errorf("matched fields = %v, want raw score descending", r.MatchedFields)
	}
	p := r.Matches[0]
	if p.Value != 2 || p.Score != 1 || p.Snippet != "Anna Müller" || !reflect.DeepEqual(p.Offsets, []int{0, 5}) {
		t.Errorf("participant match = %+v", p)
	}
	if r.Score != 0.33 {
		t.Errorf("score = %v, want participant 1.0 × 1/3 beating notes 0.425 × 1.5/3", r.Score)
	}
}

// Options.MaxWeight scores a record as it would score beside others with
// a heavier field: the engine ranks a subset of its candidates with the
// whole set's maximum.
func TestRankMaxWeightOption(t *testing.T) {
	recs := []Record{{ID: "1", Fields: []Field{{Name: "body", Weight: 1, Values: []string{"hiring freeze"}}}}}
	if got := Rank(recs, "hiring freeze", Options{}); len(got) != 1 || got[0].Score != 1 {
		t.Errorf("alone: %+v, want 1 (normalised by its own weight)", got)
	}
	if got := Rank(recs, "hiring freeze", Options{MaxWeight: 4}); len(got) != 1 || got[0].Score != 0.25 {
		t.Errorf("MaxWeight 4: %+v, want 0.25", got)
	}
	if got := Rank(recs, "hiring freeze", Options{MaxWeight: -1}); len(got) != 1 || got[0].Score != 1 {
		t.Errorf("negative MaxWeight: %+v, want it ignored (1)", got)
	}
}

// The maximum weight is over DECLARED fields of the whole record set, even
// empty ones.
func TestRankMaxDeclaredWeight(t *testing.T) {
	recs := []Record{{ID: "1", Fields: []Field{
		{Name: "title", Weight: 4, Values: nil},
		{Name: "body", Weight: 1, Values: []string{"hiring freeze"}},
	}}}
	if got := Rank(recs, "hiring freeze", Options{}); len(got) != 1 || got[0].Score != 0.25 {
		t.Errorf("got %+v, want 0.25", got)
	}
	// No positive weight at all: normalise by 1.
	recs = []Record{{ID: "1", Fields: []Field{{Name: "body", Weight: 0, Values: []string{"hiring freeze"}}}}}
	if got := Rank(recs, "hiring freeze", Options{}); len(got) != 1 || got[0].Score != 0 || got[0].Raw != 1 {
		t.Errorf("zero weight: %+v, want kept (raw 1) at score 0", got)
	}
}

// Same input, same output, whatever the input order (ids unique).
func TestRankDeterministic(t *testing.T) {
	recs := recallCorpus()
	for i := range recs {
		recs[i].Updated = time.Unix(int64(i%2)*1000, 0)
	}
	want := Rank(recs, "anna budget team", Options{Params: Params{MinScore: 0.1}})
	rev := slices.Clone(recs)
	slices.Reverse(rev)
	got := Rank(rev, "anna budget team", Options{Params: Params{MinScore: 0.1}})
	if !reflect.DeepEqual(ids(got), ids(want)) {
		t.Errorf("order depends on input order: %v vs %v", ids(got), ids(want))
	}
	if !reflect.DeepEqual(want, Rank(recs, "anna budget team", Options{Params: Params{MinScore: 0.1}})) {
		t.Error("two runs differ")
	}
}

func TestRound2(t *testing.T) {
	tests := []struct{ in, want float64 }{
		{0, 0},
		{1, 1},
		{1.0 / 3, 0.33},
		{0.2125, 0.21}, // 0.21249999... in binary
		{0.285, 0.28},  // 0.28499999...
		{0.995, 0.99},  // 0.99499999...
		{0.125, 0.13},  // exact half: toFixed rounds up
		{0.375, 0.38},
		{0.625, 0.63},
		{0.875, 0.88},
		{0.7083333, 0.71},
		{0.9150000000000001, 0.92},
		{-0.125, -0.13},
	}
	for _, tt := range tests {
		if got := round2(tt.in); got != tt.want {
			t.Errorf("round2(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// TestRankParallelSameAsOnePass checks that scoring a long candidate list
// on several cores ranks exactly as one pass does: same results, scores,
// matches and order, whatever the number of parts.
func TestRankParallelSameAsOnePass(t *testing.T) {
	records := benchRecords(61)
	queries := []string{"budget approvl review", "Müller", "release notes rollback", "zzz nothing"}
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	var want [][]Result
	for _, q := range queries {
		want = append(want, Rank(records, q, Options{CrossFieldWeight: 0.3}))
	}
	for _, procs := range []int{2, 3, 4} {
		runtime.GOMAXPROCS(procs)
		for i, q := range queries {
			if got := Rank(records, q, Options{CrossFieldWeight: 0.3}); !reflect.DeepEqual(got, want[i]) {
				t.Errorf("GOMAXPROCS %d, %q: parallel ranking differs from one pass", procs, q)
			}
		}
	}
}

// TestRankFieldScoresAsAlone: the ranker's tokenizers are reused from
// one field value to the next and from query to query (a pool); every
// match it reports scores as that value does scored alone, with a
// tokenizer of its own.
func TestRankFieldScoresAsAlone(t *testing.T) {
	records := benchRecords(61)
	for i := range records {
		// Capitals and accents: tokens rewritten into the arena.
		for j, f := range records[i].Fields {
			for k, v := range f.Values {
				if k%2 == 0 {
					records[i].Fields[j].Values[k] = strings.ToUpper(v[:len(v)/2]) + v[len(v)/2:] + " Müller Überblick"
				}
			}
		}
	}
	for _, q := range []string{"budget approvl review", "Müller", "release notes rollback"} {
		results := Rank(records, q, Options{})
		if len(results) == 0 {
			t.Fatalf("%q: no results", q)
		}
		qt := QueryTokens(q)
		for _, r := range results {
			rec := records[r.Index]
			for _, m := range r.Matches {
				i := slices.IndexFunc(rec.Fields, func(f Field) bool { return f.Name == m.Field })
				alone := ScoreFieldWith(qt, rec.Fields[i].Values[m.Value], Params{})
				if round2(alone.Score) != m.Score || !slices.Equal(alone.Offsets, m.Offsets) {
					t.Errorf("%q, %s %s: ranked %v at %v, alone %v at %v", q, rec.ID, m.Field, m.Score, m.Offsets, round2(alone.Score), alone.Offsets)
				}
			}
		}
	}
}

// Prepare's Score gives each record the result Rank gives it among
// others of the same largest weight, in every mode: fuzzy, exact, a
// short query (exact by length), cross-field on and off.
func TestPreparedScoresAsRank(t *testing.T) {
	recs := []Record{
		{ID: "1", Fields: []Field{{Name: "title", Weight: 3, Values: []string{"Hiring freeze for Q3"}}, {Name: "body", Weight: 1, Values: []string{"The board agreed on a hiring freeze."}}}},
		{ID: "2", Fields: []Field{{Name: "title", Weight: 3, Values: []string{"Budget review"}}, {Name: "body", Weight: 1, Values: []string{"Hiring plans wait for the budget; freeze discussed."}}}},
		{ID: "3", Fields: []Field{{Name: "title", Weight: 2, Values: []string{"Onboarding checklist"}}, {Name: "notes", Weight: 1.5, Values: []string{"", "new hires get laptops"}}}},
		{ID: "4", Fields: []Field{{Name: "title", Weight: 3, Values: []string{"Tschüss Müller"}}}},
	}
	for _, q := range []string{"hiring freeze", "hirng freze", "budget hiring", "Q3", "müller", "laptops onboarding", "nothing matches this"} {
		for _, opts := range []Options{{}, {Exact: true}, {CrossFieldWeight: 2}, {Params: Params{MinScore: -1}}} {
			opts.MaxWeight = 3
			want := map[string]Result{}
			for _, r := range Rank(recs, q, opts) {
				want[r.ID] = r
			}
			p := Prepare(q, opts)
			for _, rec := range recs {
				got, ok := p.Score(rec)
				w, passed := want[rec.ID]
				if ok != passed {
					t.Errorf("%q %+v: record %s passes %v, Rank says %v", q, opts, rec.ID, ok, passed)
					continue
				}
				if !ok {
					continue
				}
				got.Index = w.Index
				if !reflect.DeepEqual(got, w) {
					t.Errorf("%q %+v: record %s scored %+v, Rank gave %+v", q, opts, rec.ID, got, w)
				}
			}
		}
	}
	if Prepare("  ", Options{}) != nil {
		t.Error("a blank query was prepared")
	}
}

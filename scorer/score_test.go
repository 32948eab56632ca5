package scorer

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

const tolerance = 0.001

func near(a, b float64) bool { return math.Abs(a-b) <= tolerance }

func TestBoundedLevenshtein(t *testing.T) {
	long1 := strings.Repeat("abcdefghij", 8)  // 80 bytes: heap path
	long2 := long1[:40] + "X" + long1[41:]    // one substitution
	ulong1 := strings.Repeat("äöüß", 20)      // 80 runes, non-ASCII heap path
	ulong2 := ulong1[:16] + "a" + ulong1[18:] // one substitution (ä -> a)
	tests := []struct {
		a, b string
		max  int
		want int
	}{
		{"budget", "budget", 2, 0},
		{"kitten", "sitting", 3, 3},
		{"kitten", "sitting", 2, 3}, // over the bound: max+1
		{"", "abc", 3, 3},
		{"", "abc", 2, 3},
		{"abc", "", 5, 3},
		{"a", "abcdef", 2, 3}, // length difference fast path
		{"budgt", "budget", 1, 1},
		{"aproval", "approval", 2, 1},
		{"cat", "dog", 2, 3},
		{"müller", "muller", 1, 1}, // runes, not bytes
		{"мир", "мор", 1, 1},
		{"мир", "мирр", 1, 1},
		{long1, long2, 2, 1},
		{ulong1, ulong2, 2, 1},
		{"ab", "ba", -1, 1}, // negative max behaves as 0
	}
	for _, tt := range tests {
		if got := BoundedLevenshtein(tt.a, tt.b, tt.max); got != tt.want {
			t.Errorf("BoundedLevenshtein(%q, %q, %d) = %d, want %d", tt.a, tt.b, tt.max, got, tt.want)
		}
	}
}

// naiveLevenshtein is the textbook full-matrix distance over runes.
func naiveLevenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range rb {
		d[0][j+1] = j + 1
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			c := 1
			if ra[i-1] == rb[j-1] {
				c = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+c)
		}
	}
	return d[len(ra)][len(rb)]
}

func TestBoundedLevenshteinMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabets := []string{"abc", "aäoö"}
	for _, alpha := range alphabets {
		letters := []rune(alpha)
		word := func() string {
			n := rng.IntN(12)
			var b strings.Builder
			for range n {
				b.WriteRune(letters[rng.IntN(len(letters))])
			}
			return b.String()
		}
		for range 3000 {
			a, b, max := word(), word(), rng.IntN(6)
			want := min(naiveLevenshtein(a, b), max+1)
			if got := BoundedLevenshtein(a, b, max); got != want {
				t.Fatalf("BoundedLevenshtein(%q, %q, %d) = %d, want %d", a, b, max, got, want)
			}
		}
	}
}

// TestBoundedLevenshteinAllocs: up to stackLen characters the distance
// is computed on the stack, ASCII or not; the ASCII strings are read in
// place, without a copy (longer than 32 bytes, a copy would allocate).
func TestBoundedLevenshteinAllocs(t *testing.T) {
	ascii := strings.Repeat("deployment", 6)
	for _, tc := range []struct{ a, b string }{
		{ascii, ascii[1:] + "x"},
		{"müller-" + ascii[:40], "muller-" + ascii[:40]},
	} {
		if n := testing.AllocsPerRun(100, func() { BoundedLevenshtein(tc.a, tc.b, 2) }); n != 0 {
			t.Errorf("BoundedLevenshtein(%q, %q, 2) allocates %v times", tc.a, tc.b, n)
		}
	}
}

func TestScoreToken(t *testing.T) {
	tests := []struct {
		q, f string
		want float64
	}{
		{"budget", "budget", 1},
		{"bud", "budget", 0.9},
		{"bu", "budget", 0},
		{"prov", "approval", 0.75},
		{"budgt", "budget", 0.717},     // shared prefix "budg": 0.55 + 0.25 × 4/6
		{"aproval", "approval", 0.914}, // d=1, len 7: 1 - 1/7 × 0.6
		{"decide", "decision", 0.675},  // p=4
		{"deployed", "deployment", 0.70},
		{"deci", "decision", 0.9},
		{"cat", "dog", 0},
		{"cars", "carton", 0},
		{"ab", "ac", 0},
		{"ab", "ab", 1},      // short tokens still match exactly
		{"ми", "мир", 0},     // two runes are short, though four bytes
		{"мир", "мира", 0.9}, // three runes are long enough for a prefix
		{"bugdet", "budget", 1 - 2.0/6*0.6},
	}
	for _, tt := range tests {
		if got := ScoreToken(tt.q, tt.f); !near(got, tt.want) {
			t.Errorf("ScoreToken(%q, %q) = %.4f, want %.4f", tt.q, tt.f, got, tt.want)
		}
	}
}

func TestScoreField(t *testing.T) {
	tests := []struct {
		name  string
		query string
		text  string
		want  float64
	}{
		{"all tokens exact but not a phrase tops out at BaseScale", "budget approval", "approval of the budget", 0.85},
		{"verbatim phrase reaches 1.0", "budget approval", "the budget approval doc", 1.0},
		{"one of two tokens", "hiring decision", "Decision log", 0.2125},
		{"truncated word earns the phrase bonus", "certificat", "Root cause was an expired TLS certificate on the edge proxy.", 0.9*0.85 + 0.15},
		{"phrase across punctuation", "q3 budget", "Approval of Q3 — budget!", 1.0},
		{"phrase starting inside a token", "proval budget", "approval budget", (0.75+1)/2*0.85 + 0.15},
		{"no match", "quantum chromodynamics", "The finance team presented the quarterly figures.", 0},
		{"empty text", "budget", "", 0},
		{"typo", "budget aproval", "Approval of Q3 budget", (1 + (1 - 0.6/7)) / 2 * 0.85},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ScoreField(QueryTokens(tt.query), tt.text)
			if !near(got.Score, tt.want) {
				t.Errorf("ScoreField(%q, %q) = %.4f, want %.4f", tt.query, tt.text, got.Score, tt.want)
			}
			if tt.want == 0 && got.Offsets != nil {
				t.Errorf("no match but offsets %v", got.Offsets)
			}
		})
	}
}

// A field reaches 1.0 only with the phrase bonus: every token exact in a
// different order stays at BaseScale, and removing the bonus caps even a
// verbatim phrase there.
func TestScoreFieldOneOnlyWithPhraseBonus(t *testing.T) {
	q := QueryTokens("budget approval")
	if got := ScoreField(q, "approval budget").Score; got >= 1 || !near(got, BaseScale) {
		t.Errorf("reordered exact tokens = %v, want %v", got, BaseScale)
	}
	if got := ScoreField(q, "budget approval").Score; got != 1 {
		t.Errorf("verbatim = %v, want 1", got)
	}
	if got := ScoreFieldWith(q, "budget approval", Params{PhraseBonus: -1}).Score; !near(got, BaseScale) {
		t.Errorf("verbatim without bonus = %v, want %v", got, BaseScale)
	}
}

func TestScoreFieldOffsets(t *testing.T) {
	text := "Anna Müller approved the Q3 budget"
	got := ScoreField(QueryTokens("budget muller"), text)
	want := []int{strings.Index(text, "Müller"), strings.Index(text, "budget")}
	if len(got.Offsets) != 2 || got.Offsets[0] != want[0] || got.Offsets[1] != want[1] {
		t.Errorf("offsets = %v, want %v (ascending, into the original)", got.Offsets, want)
	}
	// The scan keeps the FIRST best token, and stops at an exact hit.
	got = ScoreField([]string{"budget"}, "budgets then budget then budget")
	if len(got.Offsets) != 1 || got.Offsets[0] != 13 {
		t.Errorf("offsets = %v, want [13]", got.Offsets)
	}
}

// phraseIn must agree with the reference's test on joined strings.
func TestPhraseInMatchesJoinedSubstring(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	vocab := []string{"a", "ab", "b", "ba", "abc", "c", "bc"}
	pick := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = vocab[rng.IntN(len(vocab))]
		}
		return out
	}
	toks := func(ws []string) []tok {
		out := make([]tok, len(ws))
		for i, w := range ws {
			out[i] = newTok(w)
		}
		return out
	}
	for range 20000 {
		q, f := pick(1+rng.IntN(3)), pick(rng.IntN(6))
		want := strings.Contains(strings.Join(f, " "), strings.Join(q, " "))
		if len(f) == 0 {
			want = false // the reference returns before the phrase test
		}
		if got := len(f) > 0 && phraseIn(toks(q), toks(f)); got != want {
			t.Fatalf("phraseIn(%q, %q) = %v, want %v", q, f, got, want)
		}
	}
}

func TestParams(t *testing.T) {
	d := DefaultParams()
	if d.MinScore != MinScore || d.BaseScale != BaseScale || d.PhraseBonus != PhraseBonus ||
		d.EditPenalty != EditPenalty || d.MinFuzzyTokenLength != MinFuzzyTokenLength ||
		d.MinContainsTokenLength != MinContainsTokenLength || d.MinSharedPrefix != MinSharedPrefix ||
		d.SnippetLength != SnippetLength || d.SnippetContextBefore != SnippetContextBefore {
		t.Errorf("DefaultParams() = %+v", d)
	}
	p := Params{PhraseBonus: -1, EditPenalty: 0.3, MinScore: -5}.resolved()
	if p.PhraseBonus != 0 || p.EditPenalty != 0.3 || p.MinScore != 0 || p.BaseScale != BaseScale {
		t.Errorf("resolved = %+v", p)
	}
	// A tuned edit penalty reaches the token rule.
	got := ScoreFieldWith([]string{"aproval"}, "approval", Params{EditPenalty: 0.3, PhraseBonus: -1}).Score
	if want := (1 - 0.3/7) * BaseScale; !near(got, want) {
		t.Errorf("tuned EditPenalty: %v, want %v", got, want)
	}
}

// refScoreToken is the reference's scoreToken written as plainly as
// possible (no filters, full-matrix distance), the oracle for the
// optimised rules.
func refScoreToken(q, f string, p Params) float64 {
	rq, rf := []rune(q), []rune(f)
	if q == f {
		return 1
	}
	if len(rq) < p.MinFuzzyTokenLength {
		return 0
	}
	if strings.HasPrefix(f, q) {
		return p.PrefixScore
	}
	if len(rq) >= p.MinContainsTokenLength && strings.Contains(f, q) {
		return p.ContainsScore
	}
	shared := 0
	for shared < min(len(rq), len(rf)) && rq[shared] == rf[shared] {
		shared++
	}
	if shared >= p.MinSharedPrefix {
		return p.SharedPrefixBase + p.SharedPrefixWeight*float64(shared)/float64(max(len(rq), len(rf)))
	}
	band := 1
	if len(rq) >= p.WideBandLength {
		band = 2
	}
	d := naiveLevenshtein(q, f)
	if d > band {
		return 0
	}
	return 1 - float64(d)/float64(len(rq))*p.EditPenalty
}

// refScoreField is the reference's scoreField, building the joined
// strings for the phrase test.
func refScoreField(queryTokens []string, text string, p Params) float64 {
	fs := Tokenize(text)
	if len(queryTokens) == 0 || len(fs) == 0 {
		return 0
	}
	total, matched := 0.0, 0
	for _, q := range queryTokens {
		best := 0.0
		for _, f := range fs {
			if s := refScoreToken(q, f.Text, p); s > best {
				best = s
			}
		}
		total += best
		if best > 0 {
			matched++
		}
	}
	if matched == 0 {
		return 0
	}
	n := float64(len(queryTokens))
	score := total / n * (float64(matched) / n) * p.BaseScale
	joined := make([]string, len(fs))
	for i, f := range fs {
		joined[i] = f.Text
	}
	if strings.Contains(strings.Join(joined, " "), strings.Join(queryTokens, " ")) {
		score += p.PhraseBonus
	}
	return min(1, score)
}

func TestScoreTokenMatchesOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	alphabets := [][]rune{[]rune("abcde"), []rune("aäbßø"), []rune("dekcision")}
	params := []Params{{}, {MinSharedPrefix: 2, EditPenalty: 0.4}, {MinFuzzyTokenLength: -1, MinContainsTokenLength: 2, WideBandLength: 4}}
	for _, alpha := range alphabets {
		word := func() string {
			n := rng.IntN(10)
			out := make([]rune, n)
			for i := range out {
				out[i] = alpha[rng.IntN(len(alpha))]
			}
			return string(out)
		}
		for _, raw := range params {
			p := raw.resolved()
			for range 5000 {
				q, f := word(), word()
				if rf := []rune(f); rng.IntN(4) == 0 && len(rf) > 2 {
					q = string(rf[:len(rf)-1]) // force prefixes and near misses
				}
				want := refScoreToken(q, f, p)
				if got := scoreToken(newTok(q), newTok(f), &p); got != want {
					t.Fatalf("params %+v: scoreToken(%q, %q) = %v, want %v", raw, q, f, got, want)
				}
			}
		}
	}
}

// TestFarApartOnlyWhereScoreIsZero checks scoreFieldTokens's shortcut
// against the oracle: a pair farApart passes over must score 0, and the
// shortcut must pass over pairs at all. Near misses are forced: a prefix,
// a first letter replaced (one edit, no shared prefix) and a letter added.
func TestFarApartOnlyWhereScoreIsZero(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	alphabets := [][]rune{[]rune("abcdefgh"), []rune("aäbßøxyz"), []rune("dekcision")}
	params := []Params{{}, {MinSharedPrefix: 2, EditPenalty: 0.4}, {MinFuzzyTokenLength: -1, MinContainsTokenLength: 2, WideBandLength: 4}, {MinSharedPrefix: -1}}
	skipped := 0
	for _, alpha := range alphabets {
		word := func() []rune {
			out := make([]rune, 1+rng.IntN(9))
			for i := range out {
				out[i] = alpha[rng.IntN(len(alpha))]
			}
			return out
		}
		for _, raw := range params {
			p := raw.resolved()
			for range 5000 {
				q, f := word(), word()
				switch rng.IntN(4) {
				case 0:
					f = append([]rune{}, q...)
					f[0] = alpha[rng.IntN(len(alpha))]
				case 1:
					f = append(append([]rune{}, q...), alpha[rng.IntN(len(alpha))])
				case 2:
					q = f[:max(1, len(f)-1)]
				}
				qt, ft := newTok(string(q)), newTok(string(f))
				if !farApart(qt, ft, editBand(qt, &p), &p) {
					continue
				}
				skipped++
				if want := refScoreToken(string(q), string(f), p); want != 0 {
					t.Fatalf("params %+v: farApart(%q, %q), but the oracle scores %v", raw, string(q), string(f), want)
				}
			}
		}
	}
	if skipped == 0 {
		t.Fatal("farApart passed over no pair")
	}
}

func TestScoreFieldMatchesOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	vocab := strings.Fields("budget Budget budgets aproval approval APPROVAL decision decide " +
		"deployed deployment Müller muller q3 of the tls certificate certificat Straße strasse")
	text := func(n int) string {
		ws := make([]string, n)
		for i := range ws {
			ws[i] = vocab[rng.IntN(len(vocab))]
		}
		return strings.Join(ws, []string{" ", ", ", " - ", "\n"}[rng.IntN(4)])
	}
	for range 3000 {
		q := QueryTokens(text(1 + rng.IntN(3)))
		body := text(rng.IntN(12))
		want := refScoreField(q, body, DefaultParams())
		if got := ScoreField(q, body).Score; got != want {
			t.Fatalf("ScoreField(%q, %q) = %v, want %v", q, body, got, want)
		}
	}
}

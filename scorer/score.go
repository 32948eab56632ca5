package scorer

import (
	"math/bits"
	"slices"
	"strings"
	"unicode/utf8"
)

// stackLen is the longest string (in runes) whose edit distance is
// computed without touching the heap. Tokens are words; 64 covers all but
// pathological ones (hashes, base64 blobs), which then cost an allocation.
const stackLen = 64

// BoundedLevenshtein returns the edit distance between a and b if it is at
// most max, and max+1 otherwise. It compares runes (the reference compares
// UTF-16 code units, which is the same outside the astral planes).
//
// Most comparisons during a search are non-matches, so the early exits are
// what keep scoring cheap: a length difference above max returns at once,
// and the two-row dynamic programme stops as soon as a whole row exceeds
// max. A negative max is treated as 0.
func BoundedLevenshtein(a, b string, max int) int {
	if max < 0 {
		max = 0
	}
	if a == b {
		return 0
	}
	na, asciiA := runeCount(a)
	nb, asciiB := runeCount(b)
	if asciiA && asciiB {
		return levenshtein([]byte(a), []byte(b), max)
	}
	if abs(na-nb) > max {
		return max + 1
	}
	var ra, rb [stackLen]rune
	var xa, xb []rune
	if na <= stackLen && nb <= stackLen {
		xa, xb = ra[:0], rb[:0]
	}
	for _, r := range a {
		xa = append(xa, r)
	}
	for _, r := range b {
		xb = append(xb, r)
	}
	return levenshtein(xa, xb, max)
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// levenshtein is the bounded distance over characters: the bytes of an
// ASCII string (where a byte is a rune) or decoded runes. It computes the
// same value as the reference's two-row programme, restricted to the
// diagonal band |i-j| <= max (Ukkonen): a cell outside the band is at
// least max+1 away, so only 2·max+1 cells per row are needed, and values
// are capped at max+1, which keeps the result exact up to the bound. The
// row-minimum early exit is kept.
//
// It only reads a and b, so the compiler converts an ASCII string with
// []byte(s) without copying it: the byte path allocates nothing up to
// stackLen characters.
func levenshtein[C byte | rune](a, b []C, max int) int {
	if abs(len(a)-len(b)) > max {
		return max + 1
	}
	if len(a) == 0 {
		return cap1(len(b), max)
	}
	if len(b) == 0 {
		return cap1(len(a), max)
	}
	var s1, s2 [stackLen + 2]int
	prev, cur := s1[:], s2[:]
	if len(b)+2 > len(prev) {
		prev, cur = make([]int, len(b)+2), make([]int, len(b)+2)
	}
	over := max + 1
	for j := 0; j <= len(b)+1; j++ {
		prev[j] = min(j, over)
	}
	for i := 1; i <= len(a); i++ {
		lo, hi := i-max, min(len(b), i+max)
		if lo <= 1 {
			lo = 1
			cur[0] = min(i, over)
		} else {
			cur[lo-1] = over // left of the band
		}
		rowMin := cur[lo-1]
		ca := a[i-1]
		for j := lo; j <= hi; j++ {
			v := prev[j-1]
			if ca != b[j-1] {
				v++
			}
			v = min(v, prev[j]+1, cur[j-1]+1, over)
			cur[j] = v
			rowMin = min(rowMin, v)
		}
		cur[hi+1] = over // right of the band, read by the next row
		if rowMin > max {
			return over
		}
		prev, cur = cur, prev
	}
	return cap1(prev[len(b)], max)
}

// cap1 returns d if it is within max, else max+1.
func cap1(d, max int) int {
	if d <= max {
		return d
	}
	return max + 1
}

// newTok wraps an already normalised string as a token.
func newTok(s string) tok {
	n, ascii, chars := tokInfo(s)
	return tok{text: s, runes: n, ascii: ascii, chars: chars}
}

// ScoreToken scores a normalised query token against a normalised field
// token with the reference's rules; the first rule that applies wins:
//
//  1. identical: 1
//  2. query shorter than MinFuzzyTokenLength: 0 (short tokens match only exactly)
//  3. field token starts with the query: PrefixScore (0.9)
//  4. query of at least MinContainsTokenLength, contained in the field token: ContainsScore (0.75)
//  5. shared prefix p >= MinSharedPrefix (morphological variants such as
//     decide/decision): 0.55 + 0.25 × p / max(len q, len f)
//  6. edit distance d within 1 (query under WideBandLength runes) or 2:
//     1 - d/len(q) × EditPenalty
//  7. otherwise 0
//
// Lengths are in runes.
func ScoreToken(q, f string) float64 {
	p := DefaultParams()
	return scoreToken(newTok(q), newTok(f), &p)
}

// scoreToken is ScoreToken on prepared tokens with resolved parameters. It
// sits in the innermost loop of every search and must not allocate.
func scoreToken(q, f tok, p *Params) float64 {
	if q.text == f.text {
		return 1
	}
	if q.runes < p.MinFuzzyTokenLength {
		return 0
	}
	// Distinct characters of q missing from f (a lossy count, see
	// tok.chars). While it is non-zero, f can neither start with nor
	// contain q, which skips two substring searches on most pairs.
	qMissing := bits.OnesCount64(q.chars &^ f.chars)
	if qMissing == 0 {
		if strings.HasPrefix(f.text, q.text) {
			return p.PrefixScore
		}
		if q.runes >= p.MinContainsTokenLength && len(f.text) > len(q.text) && strings.Contains(f.text, q.text) {
			return p.ContainsScore
		}
	}
	// Morphological variants ("decide"/"decision") are 3-4 edits apart; no
	// edit band wide enough to accept them is narrow enough to reject
	// unrelated words, but a long shared prefix is a good signal.
	if p.MinSharedPrefix <= 0 || (len(f.text) > 0 && len(q.text) > 0 && q.text[0] == f.text[0]) {
		if shared := sharedPrefix(q, f); shared >= p.MinSharedPrefix {
			return p.SharedPrefixBase + p.SharedPrefixWeight*float64(shared)/float64(max(q.runes, f.runes))
		}
	}
	band := editBand(q, p)
	// Cheap rejections before the distance computation, which is where
	// most of a search's time would otherwise go. A length difference
	// needs that many edits; so does every character of one token that
	// is missing from the other (each edit removes at most one character
	// of q and supplies at most one of f, so the count of missing distinct
	// characters on either side bounds the distance from below).
	if abs(q.runes-f.runes) > band || qMissing > band || bits.OnesCount64(f.chars&^q.chars) > band {
		return 0
	}
	var d int
	if q.ascii && f.ascii {
		d = levenshtein([]byte(q.text), []byte(f.text), band)
	} else {
		d = BoundedLevenshtein(q.text, f.text, band)
	}
	if d > band {
		return 0
	}
	return 1 - float64(d)/float64(q.runes)*p.EditPenalty
}

// editBand is how many edits scoreToken accepts between q and a field
// token: two from WideBandLength on, one below.
func editBand(q tok, p *Params) int {
	if q.runes >= p.WideBandLength {
		return 2
	}
	return 1
}

// farApart reports, by scoreToken's cheapest tests alone, that it scores
// q against f 0: q holds more characters f lacks than band edits can
// supply (so f neither equals, starts with nor contains q, nor is within
// band edits of it), and the tokens start differently (so they share no
// prefix). It is small enough to inline: most pairs of a candidate's
// words are unrelated, and this saves them the call.
func farApart(q, f tok, band int, p *Params) bool {
	return bits.OnesCount64(q.chars&^f.chars) > band && p.MinSharedPrefix > 0 &&
		len(q.text) > 0 && len(f.text) > 0 && q.text[0] != f.text[0]
}

// sharedPrefix returns the length in runes of the common prefix of a and b.
func sharedPrefix(a, b tok) int {
	if a.ascii && b.ascii {
		n := min(len(a.text), len(b.text))
		i := 0
		for i < n && a.text[i] == b.text[i] {
			i++
		}
		return i
	}
	n := 0
	as, bs := a.text, b.text
	for len(as) > 0 && len(bs) > 0 {
		ra, sa := utf8.DecodeRuneInString(as)
		rb, sb := utf8.DecodeRuneInString(bs)
		if ra != rb {
			break
		}
		as, bs = as[sa:], bs[sb:]
		n++
	}
	return n
}

// FieldScore is the score of one field text against a query: Score in
// 0..1, and Offsets, the ascending byte offsets in the original text of
// each query token's best match.
type FieldScore struct {
	Score   float64
	Offsets []int
}

// ScoreField scores normalised query tokens (from QueryTokens) against a
// field's text with the default parameters:
//
//	score = mean(best per query token) × coverage × BaseScale
//	        + PhraseBonus if the query occurs verbatim, clamped to 1
//
// Coverage is the fraction of query tokens that matched anything; it stops
// a two-word query from ranking a document that only matched the common
// word. A field reaches 1.0 only through the phrase bonus.
func ScoreField(queryTokens []string, text string) FieldScore {
	return ScoreFieldWith(queryTokens, text, Params{})
}

// ScoreFieldWith is ScoreField with tunable parameters.
func ScoreFieldWith(queryTokens []string, text string, params Params) FieldScore {
	p := params.resolved()
	qs := make([]tok, len(queryTokens))
	for i, q := range queryTokens {
		qs[i] = newTok(q)
	}
	var t tokenizer
	return scoreFieldTokens(qs, t.tokenize(text), &p, nil)
}

// scoreFieldTokens is the field score on prepared query and field tokens.
// The field is tokenised once by the caller; here every query token scans
// the field tokens, stopping early on an exact hit. When bests is not nil
// (len(qs) long), each query token's best score is merged into it, for the
// cross-field score.
func scoreFieldTokens(qs, fs []tok, p *Params, bests []float64) FieldScore {
	if len(qs) == 0 || len(fs) == 0 {
		return FieldScore{}
	}
	total := 0.0
	matched := 0
	var offsets []int
	for qi, q := range qs {
		best, bestAt := 0.0, -1
		band := editBand(q, p)
		for _, f := range fs {
			if farApart(q, f, band, p) {
				continue
			}
			if s := scoreToken(q, f, p); s > best {
				best, bestAt = s, f.start
				if best >= 1 {
					break
				}
			}
		}
		if bests != nil {
			bests[qi] = max(bests[qi], best)
		}
		total += best
		if best > 0 {
			matched++
			if offsets == nil {
				offsets = make([]int, 0, len(qs))
			}
			offsets = append(offsets, bestAt)
		}
	}
	if matched == 0 {
		return FieldScore{}
	}
	n := float64(len(qs))
	coverage := float64(matched) / n
	score := total / n * coverage * p.BaseScale
	if phraseIn(qs, fs) {
		score += p.PhraseBonus
	}
	slices.Sort(offsets)
	return FieldScore{Score: min(1, score), Offsets: offsets}
}

// phraseIn reports whether the query tokens joined by single spaces are a
// substring of the field tokens joined by single spaces, as the reference
// tests, without building either string. Tokens contain no spaces, so such
// a substring starts inside one field token (as a suffix), covers whole
// tokens in between and ends inside another (as a prefix). That is why a
// truncated last word still earns the bonus ("certificat" in
// "tls certificate").
func phraseIn(qs, fs []tok) bool {
	k := len(qs)
	if k == 1 {
		for _, f := range fs {
			if strings.Contains(f.text, qs[0].text) {
				return true
			}
		}
		return false
	}
	for i := 0; i+k <= len(fs); i++ {
		if !strings.HasSuffix(fs[i].text, qs[0].text) {
			continue
		}
		ok := true
		for j := 1; j < k-1; j++ {
			if fs[i+j].text != qs[j].text {
				ok = false
				break
			}
		}
		if ok && strings.HasPrefix(fs[i+k-1].text, qs[k-1].text) {
			return true
		}
	}
	return false
}

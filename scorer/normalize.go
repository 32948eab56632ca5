package scorer

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/opsearch/opsearch/fold"
)

// Normalize folds s for matching: compatibility decomposition, removal of
// the combining marks U+0300..U+036F, then lowercasing. "Müller" becomes
// "muller", "RÉSUMÉ" becomes "resume" and "ﬁ" becomes "fi". It is
// fold.String, the fold the index and the fake use too.
func Normalize(s string) string { return fold.String(s) }

// appendNormalized appends the normalised form of s to dst.
func appendNormalized(dst []byte, s string) []byte { return fold.Append(dst, s) }

// normalizeWithOffsets normalises s like Normalize and also returns, for
// every byte of the result (plus one past the end), the byte offset in s of
// the rune that produced it. Exact mode uses it to report match offsets in
// the original text.
func normalizeWithOffsets(s string) (string, []int) {
	out := make([]byte, 0, len(s))
	src := make([]int, 0, len(s)+1)
	for i := 0; i < len(s); {
		_, size := utf8.DecodeRuneInString(s[i:])
		before := len(out)
		out = appendNormalized(out, s[i:i+size])
		for range len(out) - before {
			src = append(src, i)
		}
		i += size
	}
	src = append(src, len(s))
	return string(out), src
}

// Token is one word of a text: its normalised form and the byte range
// [Start, End) it occupies in the ORIGINAL string. Normalisation can change
// length (the "ﬁ" ligature becomes "fi"), which is why tokens are found on
// the original text and normalised one by one.
type Token struct {
	Text       string
	Start, End int
}

// tok is the scorer's internal token: the normalised text with the facts
// the rules need precomputed once per token instead of once per
// comparison.
type tok struct {
	text       string
	start, end int
	runes      int  // length of text in runes (the reference counts UTF-16 units)
	ascii      bool // text is pure ASCII, so bytes are runes
	// chars has bit r&63 set for every rune r of text. It is a lossy set
	// (different runes can share a bit), which still yields a valid lower
	// bound on the edit distance; see scoreToken.
	chars uint64
}

// tokInfo computes a token's rune length, ASCII flag and character set.
func tokInfo(s string) (runes int, ascii bool, chars uint64) {
	ascii = true
	for _, r := range s {
		runes++
		if r >= utf8.RuneSelf {
			ascii = false
		}
		chars |= 1 << (uint(r) & 63)
	}
	return runes, ascii, chars
}

// ASCII character classes for the tokenizer's fast path.
const (
	asciiWord  = 1 << iota // letter or digit
	asciiUpper             // A-Z, which normalisation rewrites
)

// asciiClass classifies the ASCII bytes; it is computed once and only read.
var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for c := '0'; c <= '9'; c++ {
		t[c] = asciiWord
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = asciiWord
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = asciiWord | asciiUpper
	}
	return t
}()

// isWordStart reports whether the non-ASCII rune r can start a token: a
// Unicode letter or number, the reference's [\p{L}\p{N}].
func isWordStart(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsNumber(r)
}

// isWordPart reports whether the non-ASCII rune r continues a token.
// Besides letters and numbers it accepts combining marks, which the
// reference treats as separators: text in decomposed form ("cafe\u0301s")
// or in scripts whose vowel signs are marks (Devanagari) would otherwise
// fall apart into fragments.
func isWordPart(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r)
}

// tokenizer holds reusable buffers so that ranking many fields allocates
// little: the token slice and the byte arena that receives the normalised
// text of tokens whose original spelling is not already normal.
type tokenizer struct {
	toks  []tok
	arena []byte
	// arenaAt records, per token, the [start, end) of its text in the
	// arena ({-1, -1} when the token reuses the original string).
	arenaAt [][2]int
}

// tokenize splits s into tokens. The returned slice aliases t.toks and is
// valid until the next call.
func (t *tokenizer) tokenize(s string) []tok {
	if want := len(s)/6 + 1; cap(t.toks) < want {
		// English averages about six bytes per word and separator; sizing
		// up front avoids regrowing the slice on a long description.
		t.toks = make([]tok, 0, want)
		t.arenaAt = make([][2]int, 0, want)
	}
	t.toks = t.toks[:0]
	t.arena = t.arena[:0]
	t.arenaAt = t.arenaAt[:0]
	i := 0
	for i < len(s) {
		if c := s[i]; c < utf8.RuneSelf {
			if asciiClass[c]&asciiWord == 0 {
				i++
				continue
			}
		} else if r, size := utf8.DecodeRuneInString(s[i:]); !isWordStart(r) {
			i += size
			continue
		}
		start := i
		clean := true // lowercase ASCII only: the original bytes are the token
		var chars uint64
		for i < len(s) {
			c := s[i]
			if c < utf8.RuneSelf {
				cls := asciiClass[c]
				if cls&asciiWord == 0 {
					break
				}
				if cls&asciiUpper != 0 {
					clean = false
				}
				chars |= 1 << (c & 63)
				i++
				continue
			}
			r, size := utf8.DecodeRuneInString(s[i:])
			if !isWordPart(r) {
				break
			}
			clean = false
			i += size
		}
		end := i
		if clean {
			t.toks = append(t.toks, tok{text: s[start:end], start: start, end: end, runes: end - start, ascii: true, chars: chars})
			t.arenaAt = append(t.arenaAt, [2]int{-1, -1})
			continue
		}
		a := len(t.arena)
		t.arena = appendTokenNormalized(t.arena, s[start:end])
		if len(t.arena) == a {
			continue // folded to nothing (only stripped marks): no token, as in the reference
		}
		t.toks = append(t.toks, tok{start: start, end: end})
		t.arenaAt = append(t.arenaAt, [2]int{a, len(t.arena)})
	}
	if len(t.arena) > 0 {
		// One allocation for all rewritten tokens of this text.
		all := string(t.arena)
		for k, span := range t.arenaAt {
			if span[0] < 0 {
				continue
			}
			text := all[span[0]:span[1]]
			t.toks[k].text = text
			t.toks[k].runes, t.toks[k].ascii, t.toks[k].chars = tokInfo(text)
		}
	}
	return t.toks
}

// appendTokenNormalized normalises one token. Spaces are dropped: a few
// compatibility decompositions of letters contain one (U+037A), and a token
// must not, or the token-wise phrase test would stop matching the
// reference's joined-string test.
func appendTokenNormalized(dst []byte, s string) []byte {
	from := len(dst)
	dst = appendNormalized(dst, s)
	out := dst[:from]
	for _, c := range dst[from:] {
		if c != ' ' {
			out = append(out, c)
		}
	}
	return out
}

// runeCount returns the rune length of s and whether s is pure ASCII.
func runeCount(s string) (int, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return utf8.RuneCountInString(s), false
		}
	}
	return len(s), true
}

// Tokenize splits s into maximal runs of letters and numbers (combining
// marks continue a run) and normalises each one. Offsets index the original
// string, so they stay valid for snippets and highlighting.
// "Approval of Q3 budget!" gives approval, of, q3, budget.
func Tokenize(s string) []Token {
	var t tokenizer
	toks := t.tokenize(s)
	out := make([]Token, len(toks))
	for i, k := range toks {
		out[i] = Token{Text: k.text, Start: k.start, End: k.end}
	}
	return out
}

// stopwords are the reference's 65 English function words. Queries from
// language models are phrased as questions, and since the field score
// multiplies by coverage, leaving "what did we" in the query would push
// every score towards zero. Field text is never filtered.
var stopwords = map[string]struct{}{
	"a": {}, "about": {}, "an": {}, "and": {}, "are": {}, "as": {}, "at": {}, "be": {},
	"but": {}, "by": {}, "can": {}, "could": {}, "did": {}, "do": {}, "does": {},
	"for": {}, "from": {}, "had": {}, "has": {}, "have": {}, "he": {}, "her": {},
	"his": {}, "how": {}, "i": {}, "if": {}, "in": {}, "is": {}, "it": {}, "its": {},
	"me": {}, "my": {}, "of": {}, "on": {}, "or": {}, "our": {}, "she": {},
	"should": {}, "so": {}, "than": {}, "that": {}, "the": {}, "their": {},
	"them": {}, "then": {}, "there": {}, "these": {}, "they": {}, "this": {},
	"to": {}, "us": {}, "was": {}, "we": {}, "were": {}, "what": {}, "when": {},
	"where": {}, "which": {}, "who": {}, "why": {}, "will": {}, "with": {},
	"would": {}, "you": {}, "your": {},
}

// IsStopword reports whether the normalised token w is one of the query
// stopwords.
func IsStopword(w string) bool {
	_, ok := stopwords[w]
	return ok
}

// QueryTokens tokenises a query and removes stopwords, unless that would
// leave nothing: "the who" keeps both words so that it still searches for
// something.
func QueryTokens(q string) []string {
	var t tokenizer
	toks := t.tokenize(q)
	all := make([]string, 0, len(toks))
	kept := make([]string, 0, len(toks))
	for _, k := range toks {
		all = append(all, k.text)
		if !IsStopword(k.text) {
			kept = append(kept, k.text)
		}
	}
	if len(kept) == 0 {
		return all
	}
	return kept
}

// trimQuery trims like JavaScript's String.prototype.trim, which the
// reference applies before deciding blank / short / fuzzy: Unicode white
// space plus the byte order mark.
func trimQuery(q string) string {
	return strings.TrimFunc(q, func(r rune) bool { return unicode.IsSpace(r) || r == '\uFEFF' })
}

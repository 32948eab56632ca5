package scorer

import (
	"strings"
	"unicode/utf8"
)

// Snippet returns an excerpt of text of at most maxLen characters (runes;
// maxLen <= 0 means SnippetLength) around the earliest of offsets, which
// are byte offsets into text as produced by ScoreField:
//
//   - empty text gives "";
//   - text of at most maxLen characters is returned whole, trimmed, with no
//     ellipsis;
//   - otherwise the window starts SnippetContextBefore characters before the
//     earliest offset (clamped so that it stays inside the text), is
//     trimmed, and gets "..." in front unless it starts the text and "..."
//     behind unless it ends it;
//   - with no offsets the text is cut from the head.
//
// The window is measured in runes and cut at rune boundaries, so a UTF-8
// sequence is never split (the reference counts UTF-16 units).
func Snippet(text string, offsets []int, maxLen int) string {
	if maxLen <= 0 {
		maxLen = SnippetLength
	}
	return snippet(text, offsets, maxLen, SnippetContextBefore)
}

func snippet(text string, offsets []int, maxLen, before int) string {
	if text == "" {
		return ""
	}
	if len(text) <= maxLen {
		return strings.TrimSpace(text) // no more runes than bytes
	}
	n := utf8.RuneCountInString(text)
	if n <= maxLen {
		return strings.TrimSpace(text)
	}
	start := 0 // in runes
	if len(offsets) > 0 {
		earliest := offsets[0]
		for _, o := range offsets[1:] {
			earliest = min(earliest, o)
		}
		at := runeIndex(text, earliest)
		start = max(0, min(at-before, n-maxLen))
	}
	end := min(n, start+maxLen)
	bs, be := byteRange(text, start, end)
	out := strings.TrimSpace(text[bs:be])
	switch {
	case start > 0 && end < n:
		return "..." + out + "..." // one concatenation, one allocation
	case start > 0:
		return "..." + out
	case end < n:
		return out + "..."
	}
	return out
}

// runeIndex converts a byte offset into text to the index of the rune
// containing it, clamping offsets outside the text.
func runeIndex(text string, off int) int {
	if off <= 0 {
		return 0
	}
	if off >= len(text) {
		return utf8.RuneCountInString(text)
	}
	for off > 0 && !utf8.RuneStart(text[off]) {
		off-- // inside a multibyte sequence: use the rune that holds it
	}
	return utf8.RuneCountInString(text[:off])
}

// byteRange converts the rune range [from, to) of text to byte offsets.
func byteRange(text string, from, to int) (int, int) {
	bs, be := len(text), len(text)
	r := 0
	for i := range text {
		if r == from {
			bs = i
		}
		if r == to {
			be = i
			break
		}
		r++
	}
	return bs, be
}

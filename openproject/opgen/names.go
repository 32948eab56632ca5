package opgen

import (
	"strings"
	"unicode"

	"github.com/opsearch/opsearch/fold"
)

// asciiPart is r folded (package fold, the one fold the index and the
// scorer use) and reduced to ASCII letters and digits: "ł" → "l",
// "ß" → "ss", "α" → "".
func asciiPart(r rune) string {
	var buf [16]byte
	f := fold.AppendRune(buf[:0], r)
	out := f[:0]
	for _, c := range f {
		if 'a' <= c && c <= 'z' || '0' <= c && c <= '9' {
			out = append(out, c)
		}
	}
	return string(out)
}

// asciiFold lower-cases s and replaces letters with diacritics by their
// ASCII base; anything else outside [a-z0-9] becomes sep (dropped when sep
// is 0), with runs collapsed and no sep at either end.
func asciiFold(s string, sep byte) string {
	var b strings.Builder
	b.Grow(len(s))
	pending := false
	for _, r := range s {
		r = unicode.ToLower(r)
		var part string
		switch {
		case 'a' <= r && r <= 'z', '0' <= r && r <= '9':
			part = string(r)
		default:
			part = asciiPart(r)
		}
		if part == "" {
			pending = sep != 0 && b.Len() > 0
			continue
		}
		if pending {
			b.WriteByte(sep)
			pending = false
		}
		b.WriteString(part)
	}
	return b.String()
}

// loginFold turns a name into a login part: "Łukasz" -> "lukasz",
// "O'Brien" -> "obrien".
func loginFold(s string) string { return asciiFold(s, 0) }

// slugify turns a title into a URL slug the way OpenProject does:
// "Architecture Decision Record 7: Event Sourcing" ->
// "architecture-decision-record-7-event-sourcing".
func slugify(s string) string { return asciiFold(s, '-') }

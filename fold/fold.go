package fold

//go:generate go run gen_table.go -o table.go

import (
	"sort"
	"unicode"
	"unicode/utf8"
)

// entry is one row of table.
type entry struct {
	r rune
	s string
}

// Hangul syllable decomposition constants (Unicode §3.12).
const (
	hangulSBase  = 0xAC00
	hangulLBase  = 0x1100
	hangulVBase  = 0x1161
	hangulTBase  = 0x11A7
	hangulVCount = 21
	hangulTCount = 28
	hangulNCount = hangulVCount * hangulTCount
	hangulSCount = 19 * hangulNCount
)

// IsMark reports whether r is one of the combining marks the fold removes.
func IsMark(r rune) bool { return r >= 0x0300 && r <= 0x036F }

func lookup(r rune) (string, bool) {
	i := sort.Search(len(table), func(i int) bool { return table[i].r >= r })
	if i < len(table) && table[i].r == r {
		return table[i].s, true
	}
	return "", false
}

// AppendRune appends the folded form of r to dst.
func AppendRune(dst []byte, r rune) []byte {
	if r < utf8.RuneSelf {
		if 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		}
		return append(dst, byte(r))
	}
	if IsMark(r) {
		return dst
	}
	if r >= hangulSBase && r < hangulSBase+hangulSCount {
		s := r - hangulSBase
		dst = utf8.AppendRune(dst, hangulLBase+s/hangulNCount)
		dst = utf8.AppendRune(dst, hangulVBase+(s%hangulNCount)/hangulTCount)
		if t := s % hangulTCount; t != 0 {
			dst = utf8.AppendRune(dst, hangulTBase+t)
		}
		return dst
	}
	if f, ok := lookup(r); ok {
		return append(dst, f...)
	}
	l := unicode.ToLower(r)
	if l != r {
		// A lowercase letter may itself decompose.
		if f, ok := lookup(l); ok {
			return append(dst, f...)
		}
	}
	return utf8.AppendRune(dst, l)
}

// Append appends the folded form of s to dst.
func Append(dst []byte, s string) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			dst = append(dst, c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		dst = AppendRune(dst, r)
		i += size
	}
	return dst
}

// String folds s. Lowercase ASCII is returned as it is, without
// allocating.
func String(s string) string {
	i := 0
	for i < len(s) {
		c := s[i]
		if c >= utf8.RuneSelf || ('A' <= c && c <= 'Z') {
			break
		}
		i++
	}
	if i == len(s) {
		return s
	}
	buf := make([]byte, 0, len(s)+8)
	buf = append(buf, s[:i]...)
	return string(Append(buf, s[i:]))
}

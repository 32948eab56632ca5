package opgen

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// writer expands templates into text. Each goroutine has its own.
type writer struct {
	g      *generator
	r      *rand.Rand
	b      strings.Builder
	p      *projInfo
	people []int // user indices for {u}, {uf} and {@}
	wpID   int   // {wp} refers to work packages with smaller ids
	num    []byte
}

func newWriter(g *generator, r *rand.Rand) *writer {
	return &writer{g: g, r: r, num: make([]byte, 0, 24)}
}

// setProject makes texts speak about p; wpID bounds {wp} references (the
// id of the work package being written, or one past the last).
func (w *writer) setProject(p *projInfo, wpID int) {
	w.p = p
	w.people = p.members
	w.wpID = wpID
}

// text expands one template into a new string.
func (w *writer) text(t string) string {
	w.b.Reset()
	w.b.Grow(2 * len(t))
	w.expand(t)
	return w.b.String()
}

func (w *writer) pick(list []string) string { return list[w.r.IntN(len(list))] }

// pickSkewed favours the start of a list (roughly a Zipf law), so that
// some words are common and the tail is rare, as in real text.
func (w *writer) pickSkewed(list []string) string {
	return list[w.r.IntN(w.r.IntN(len(list))+1)]
}

// dom is the domain a word comes from: mostly the project's own.
func (w *writer) dom() *domain {
	if w.r.IntN(7) == 0 {
		return domains[w.r.IntN(len(domains))]
	}
	return w.p.dom
}

func (w *writer) int(n int) {
	w.num = strconv.AppendInt(w.num[:0], int64(n), 10)
	w.b.Write(w.num)
}

func (w *writer) int2(n int) { // two digits
	w.b.WriteByte(byte('0' + n/10%10))
	w.b.WriteByte(byte('0' + n%10))
}

// writeCap writes s with its first letter upper-cased.
func (w *writer) writeCap(s string) {
	r, n := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError || unicode.IsUpper(r) {
		w.b.WriteString(s)
		return
	}
	w.b.WriteRune(unicode.ToUpper(r))
	w.b.WriteString(s[n:])
}

// writeUpperASCII writes an identifier root in upper case (ERR_ codes).
func (w *writer) writeUpperASCII(s string) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		w.b.WriteByte(c)
	}
}

// expand writes template t (syntax in words.go).
func (w *writer) expand(t string) {
	for len(t) > 0 {
		i := strings.IndexByte(t, '{')
		if i < 0 {
			w.b.WriteString(t)
			return
		}
		w.b.WriteString(t[:i])
		t = t[i:]
		end, alt := matchBrace(t)
		body := t[1:end]
		t = t[end+1:]
		if alt {
			w.expand(w.alternative(body))
		} else {
			w.slot(body)
		}
	}
}

// matchBrace returns the index of the brace closing t[0] and whether the
// braces hold alternatives.
func matchBrace(t string) (end int, alt bool) {
	depth := 0
	for i := 0; i < len(t); i++ {
		switch t[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return i, alt
			}
		case '|':
			if depth == 1 {
				alt = true
			}
		}
	}
	panic("opgen: unbalanced template " + strconv.Quote(t))
}

// alternative picks one of the top-level |-separated parts of body.
func (w *writer) alternative(body string) string {
	n, depth := 1, 0
	for i := 0; i < len(body); i++ {
		switch body[i] {
		case '{':
			depth++
		case '}':
			depth--
		case '|':
			if depth == 0 {
				n++
			}
		}
	}
	k, start := w.r.IntN(n), 0
	depth = 0
	for i := 0; i < len(body); i++ {
		switch body[i] {
		case '{':
			depth++
		case '}':
			depth--
		case '|':
			if depth == 0 {
				if k == 0 {
					return body[start:i]
				}
				k--
				start = i + 1
			}
		}
	}
	return body[start:]
}

// sentencesN writes a paragraph of n sentences.
func (w *writer) paragraph(n int) {
	for k := range n {
		if k > 0 {
			w.b.WriteByte(' ')
		}
		w.expand(w.pick(sentences))
	}
}

func (w *writer) list(items []string, n int, prefix string) {
	for range n {
		w.b.WriteString(prefix)
		w.expand(w.pick(items))
		w.b.WriteByte('\n')
	}
}

func (w *writer) checklist(items []string, n int, done bool) {
	for range n {
		if done || w.r.IntN(3) == 0 {
			w.b.WriteString("- [x] ")
		} else {
			w.b.WriteString("- [ ] ")
		}
		w.expand(w.pick(items))
		w.b.WriteByte('\n')
	}
}

// blankLine ends the text so far with exactly one empty line, to start a
// new markdown block.
func (w *writer) blankLine() {
	s := w.b.String()
	switch {
	case strings.HasSuffix(s, "\n\n"):
	case strings.HasSuffix(s, "\n"):
		w.b.WriteByte('\n')
	default:
		w.b.WriteString("\n\n")
	}
}

package mcp

import "unicode/utf8"

// Text caps. Tool answers go into a model's context window, so every text
// that can be long is cut, and a flag says so (the caller can fetch the
// full item with a get tool).
const (
	// capDetail bounds descriptions and wiki text in single-item answers.
	capDetail = 8000
	// capComment bounds each comment or agenda note.
	capComment = 2000
	// capRow bounds text in list rows.
	capRow = 300
)

// capText cuts s to at most n runes at a rune boundary and reports whether
// it cut.
func capText(s string, n int) (string, bool) {
	if utf8.RuneCountInString(s) <= n {
		return s, false
	}
	i, count := 0, 0
	for i < len(s) && count < n {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		count++
	}
	return s[:i] + "…", true
}

package openproject

import (
	"html"
	"regexp"
	"strings"
)

// OpenProject stores formattable text (descriptions, comments, wiki
// pages, agenda notes) as Markdown with embedded HTML: mentions picked
// from the autocompleter (<mention class="mention" data-id="5" ...>@Anna
// Müller</mention>), tables, macros, line breaks. htmlTag matches the
// tags of the elements CKEditor writes, and only those: Markdown about
// code ("Vec<String>", "a <b> c" in prose) keeps its angle brackets.
var htmlTag = regexp.MustCompile(`(?i)</?(mention|p|br|div|span|a|strong|em|b|i|u|s|del|ins|mark|code|pre|kbd|ul|ol|li|table|thead|tbody|tfoot|tr|td|th|caption|colgroup|col|h[1-6]|img|figure|figcaption|blockquote|sup|sub|hr|details|summary|macro|opce-[a-z-]+)(\s[^<>]*)?/?>`)

// blockTag names the elements that end a line of text.
var blockTag = map[string]bool{
	"p": true, "br": true, "div": true, "li": true, "tr": true, "td": true, "th": true, "table": true,
	"h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true, "pre": true,
	"blockquote": true, "figure": true, "figcaption": true, "hr": true, "ul": true, "ol": true, "caption": true,
}

// PlainText renders formattable text as the words a person reads: the
// HTML tags OpenProject embeds are dropped (a mention becomes the
// person's name as shown, "@Anna Müller"; block elements end a line) and
// character references are decoded. Markdown itself is kept: its
// punctuation does not hide words from search. Text without markup is
// returned as it is, without allocating.
func PlainText(s string) string {
	if !strings.ContainsAny(s, "<&") {
		return s
	}
	// Until none is left: removing a tag can join the halves of another
	// ("<b<i>>"). Every pass shortens the text, so this ends.
	for strings.ContainsRune(s, '<') {
		out := htmlTag.ReplaceAllStringFunc(s, func(tag string) string {
			m := htmlTag.FindStringSubmatch(tag)
			if blockTag[strings.ToLower(m[1])] {
				return "\n"
			}
			return ""
		})
		if out == s {
			break
		}
		s = out
	}
	if strings.ContainsRune(s, '&') {
		s = html.UnescapeString(s)
	}
	return s
}

package indexer

import (
	"bytes"
	"unicode"
	"unicode/utf8"

	porterstemmer "github.com/blevesearch/go-porterstemmer"

	"github.com/opsearch/opsearch/fold"
	"github.com/opsearch/opsearch/scorer"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	"github.com/blevesearch/bleve/v2/analysis/token/porter"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/single"
	unicodetok "github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/registry"
)

// Names of the token filters this package registers with bleve, and of the
// analyzers the mapping defines. They are part of the stored mapping: a
// process opening an index must have them registered (this file's init does
// it) and renaming one requires a MappingVersion bump.
const (
	filterKeepWhole = "opsearch_keep_whole"
	filterFold      = "opsearch_fold"
	filterIDSplit   = "opsearch_id_split"
	filterStemKeep  = "opsearch_stem_keep"
	filterStop      = "opsearch_stop"

	// analyzerText indexes prose: identifiers kept whole and split, lower
	// case, folded, and every word both as written and Porter-stemmed at
	// the same position. One field thus serves stemmed matching, exact
	// phrases, exact-term boosts and prefixes: half the tokens of a
	// stemmed field plus an unstemmed companion, one tokenisation instead
	// of two (measured: the companion fields halved indexing throughput).
	analyzerText = "opsearch_text"
	// analyzerQuery is what a query word goes through to find its stem:
	// analyzerText's chain with stop words removed and only the stem kept.
	// No field uses it.
	analyzerQuery = "opsearch_query"
	// analyzerExact is analyzerText without stems; exact mode and names use
	// it.
	analyzerExact = "opsearch_exact"
	// analyzerKeyword turns the whole value into one lower-case folded term.
	analyzerKeyword = "opsearch_keyword"
	// analyzerIdent is for identifiers ("#123", "PROJ-12", slugs): the whole
	// value plus its alphanumeric parts.
	analyzerIdent = "opsearch_ident"
)

// maxRunParts bounds the identifiers whose contiguous part runs are
// emitted: a run set grows quadratically with the number of parts.
const maxRunParts = 6

func init() {
	// Registration at init is how bleve resolves analysis components by
	// name when an index (and its stored mapping) is opened.
	must(registry.RegisterTokenFilter(filterKeepWhole, func(map[string]any, *registry.Cache) (analysis.TokenFilter, error) {
		return keepWholeFilter{}, nil
	}))
	must(registry.RegisterTokenFilter(filterFold, func(map[string]any, *registry.Cache) (analysis.TokenFilter, error) {
		return foldFilter{}, nil
	}))
	must(registry.RegisterTokenFilter(filterIDSplit, func(map[string]any, *registry.Cache) (analysis.TokenFilter, error) {
		return idSplitFilter{}, nil
	}))
	must(registry.RegisterTokenFilter(filterStemKeep, func(map[string]any, *registry.Cache) (analysis.TokenFilter, error) {
		return stemKeepFilter{}, nil
	}))
	must(registry.RegisterTokenFilter(filterStop, func(map[string]any, *registry.Cache) (analysis.TokenFilter, error) {
		return stopFilter{}, nil
	}))
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// addAnalyzers defines the package's analyzers in an index mapping.
func addAnalyzers(im *mapping.IndexMappingImpl) error {
	defs := []struct {
		name      string
		tokenizer string
		filters   []string
	}{
		{analyzerText, unicodetok.Name, []string{en.PossessiveName, filterKeepWhole, lowercase.Name, filterFold, filterStemKeep}},
		{analyzerQuery, unicodetok.Name, []string{en.PossessiveName, filterKeepWhole, lowercase.Name, filterFold, filterStop, porter.Name}},
		{analyzerExact, unicodetok.Name, []string{filterKeepWhole, lowercase.Name, filterFold}},
		{analyzerKeyword, single.Name, []string{lowercase.Name, filterFold}},
		{analyzerIdent, single.Name, []string{filterIDSplit, lowercase.Name, filterFold}},
	}
	for _, d := range defs {
		err := im.AddCustomAnalyzer(d.name, map[string]any{
			"type":          custom.Name,
			"tokenizer":     d.tokenizer,
			"token_filters": d.filters,
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// splitIdentifier splits a word at '_', '.', ':' and camelCase boundaries:
// "getUserProfile" → get, User, Profile; "HTTPServer" → HTTP, Server;
// "ERR_TLS_CERT" → ERR, TLS, CERT. Letter-digit boundaries do not split
// ("Q3", "v2"). It returns byte offsets into w; a plain word yields one part.
func splitIdentifier(w []byte) [][2]int {
	var parts [][2]int
	start := -1
	var prev, prev2 rune // previous two runes of the current part
	for i := 0; i < len(w); {
		r, n := utf8.DecodeRune(w[i:])
		if r == '_' || r == '.' || r == ':' {
			if start >= 0 {
				parts = append(parts, [2]int{start, i})
			}
			start, prev, prev2 = -1, 0, 0
			i += n
			continue
		}
		if start < 0 {
			start = i
		} else if unicode.IsUpper(r) && unicode.IsLower(prev) {
			// fooBar: split before B.
			parts = append(parts, [2]int{start, i})
			start = i
		} else if unicode.IsLower(r) && unicode.IsUpper(prev) && unicode.IsUpper(prev2) {
			// HTTPServer: split before S (the last upper of a run).
			p := i - utf8.RuneLen(prev)
			parts = append(parts, [2]int{start, p})
			start = p
		}
		prev2, prev = prev, r
		i += n
	}
	if start >= 0 {
		parts = append(parts, [2]int{start, len(w)})
	}
	return parts
}

// keepWholeFilter keeps camelCase, snake_case and dotted identifiers whole
// and adds their parts, so "getUserProfile" is found by getuserprofile,
// "user", "profile" and "userprofile" alike. Splitting alone loses the whole
// word (Gitea #36228). The whole token takes the first part's position and
// the parts consecutive positions (later tokens shift), so phrase queries
// across parts ("cert expired") and across the whole work; runs of parts
// ("userprofile") sit at their first part's position.
type keepWholeFilter struct{}

func (keepWholeFilter) Filter(in analysis.TokenStream) analysis.TokenStream {
	var out analysis.TokenStream // allocated at the first identifier
	shift := 0
	for i, t := range in {
		t.Position += shift
		if !mayBeIdentifier(t.Term) {
			if out != nil {
				out = append(out, t)
			}
			continue
		}
		parts := splitIdentifier(t.Term)
		if out == nil {
			out = make(analysis.TokenStream, 0, len(in)+8)
			out = append(out, in[:i]...)
		}
		out = append(out, t)
		if len(parts) < 2 {
			continue
		}
		pos := t.Position
		sub := func(a, b, p int) *analysis.Token {
			term := make([]byte, 0, parts[b][1]-parts[a][0])
			for k := a; k <= b; k++ {
				term = append(term, t.Term[parts[k][0]:parts[k][1]]...)
			}
			return &analysis.Token{
				Term: term, Position: p, Type: t.Type,
				Start: t.Start + parts[a][0], End: t.Start + parts[b][1],
			}
		}
		for k := range parts {
			out = append(out, sub(k, k, pos+k))
		}
		if len(parts) <= maxRunParts {
			for a := range parts {
				for b := a + 1; b < len(parts); b++ {
					if a == 0 && b == len(parts)-1 {
						continue // the whole identifier without separators
					}
					out = append(out, sub(a, b, pos+a))
				}
			}
		}
		if whole := sub(0, len(parts)-1, pos); string(whole.Term) != string(t.Term) {
			// "ERR_TLS" is also findable as "errtls".
			out = append(out, whole)
		}
		shift += len(parts) - 1
	}
	if out == nil {
		return in
	}
	return out
}

// mayBeIdentifier reports whether splitIdentifier could split w: it holds
// a separator or an upper-case letter after its first rune. Most words do
// not, and this check does not allocate.
func mayBeIdentifier(w []byte) bool {
	for i, c := range w {
		switch {
		case c == '_' || c == '.' || c == ':':
			return true
		case c >= utf8.RuneSelf:
			return true // let splitIdentifier decide
		case i > 0 && c >= 'A' && c <= 'Z':
			return true
		}
	}
	return false
}

// foldFilter folds terms with fold, the one fold the scorer and the fake
// use too ("müller" → "muller", "straße" → "strasse", "αθήνα" → "αθηνα",
// "йошкар" → "иошкар"), on the term only, so token offsets keep pointing
// at the original text and highlighting stays aligned.
type foldFilter struct{}

func (foldFilter) Filter(in analysis.TokenStream) analysis.TokenStream {
	for _, t := range in {
		if !isASCII(t.Term) {
			t.Term = fold.Append(t.Term[:0:0], string(t.Term))
		}
	}
	return in
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// idSplitFilter expands an identifier ("#1234", "PROJ-12",
// "website-relaunch") into the whole value and its alphanumeric parts, so
// both "#1234" and "1234", or "proj-12" and "proj", match.
type idSplitFilter struct{}

func (idSplitFilter) Filter(in analysis.TokenStream) analysis.TokenStream {
	out := make(analysis.TokenStream, 0, len(in)*3)
	for _, t := range in {
		out = append(out, t)
		start := -1
		n := 0
		flush := func(end int) {
			if start < 0 {
				return
			}
			if start > 0 || end < len(t.Term) {
				out = append(out, &analysis.Token{
					Term: append([]byte(nil), t.Term[start:end]...), Position: t.Position + n, Type: t.Type,
					Start: t.Start + start, End: t.Start + end,
				})
				n++
			}
			start = -1
		}
		for i := 0; i < len(t.Term); {
			r, size := utf8.DecodeRune(t.Term[i:])
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				if start < 0 {
					start = i
				}
			} else {
				flush(i)
			}
			i += size
		}
		flush(len(t.Term))
	}
	return out
}

// stemKeepFilter emits each token as written and, when it differs, its
// Porter stem at the same position (Lucene's keyword_repeat + stemmer). The
// stem is computed exactly as bleve's porter filter does, so query words
// stemmed by analyzerQuery meet the indexed stems.
type stemKeepFilter struct{}

func (stemKeepFilter) Filter(in analysis.TokenStream) analysis.TokenStream {
	var out analysis.TokenStream // allocated at the first stem that differs
	for i, t := range in {
		stem := stemOf(t.Term)
		if stem == nil {
			if out != nil {
				out = append(out, t)
			}
			continue
		}
		if out == nil {
			out = make(analysis.TokenStream, 0, len(in)+len(in)/2)
			out = append(out, in[:i]...)
		}
		out = append(out, t, &analysis.Token{Term: stem, Position: t.Position, Start: t.Start, End: t.End, Type: t.Type})
	}
	if out == nil {
		return in
	}
	return out
}

// stemOf returns the Porter stem of term, or nil when it equals term.
// Terms up to 64 bytes are stemmed on stack buffers, allocating only a stem
// that differs: bleve's porter filter allocated twice per token, a fifth
// of the analysis time. (A term → stem cache measured slower than
// stemming: its lookups miss the CPU caches.)
func stemOf(term []byte) []byte {
	switch {
	case len(term) <= 2:
		return nil // Porter leaves these alone
	case len(term) <= 64:
		return porterStem(term)
	}
	stem := analysis.BuildTermFromRunes(porterstemmer.StemWithoutLowerCasing(bytes.Runes(term)))
	if bytes.Equal(stem, term) {
		return nil
	}
	return stem
}

// porterStem stems term as bleve's porter filter does, or returns nil when
// the stem is term itself. The stemmer rewrites its rune slice in place, so
// the stem is compared with term, not with the runes.
func porterStem(term []byte) []byte {
	var runes [64]rune
	rs := runes[:0]
	for _, r := range string(term) {
		rs = append(rs, r)
	}
	st := porterstemmer.StemWithoutLowerCasing(rs)
	var enc [256]byte
	stem := enc[:0]
	for _, r := range st {
		stem = utf8.AppendRune(stem, r)
	}
	if bytes.Equal(stem, term) {
		return nil
	}
	return bytes.Clone(stem)
}

// stopFilter drops a query's function words: the scorer's list
// (scorer.IsStopword), so that the words the index searches for are the
// words the scorer weighs. bleve's English list (Snowball's 174 words)
// also dropped words that carry meaning in project text: "down" (a site
// down), "off" and "up" (sign off, follow up), "before", "after",
// "other" (other business), "again". At 100,000 work packages one list
// took recall@10 on the generated set from 0.974 to 0.990; on the dev
// set one question of 362 moved from first to second.
type stopFilter struct{}

func (stopFilter) Filter(in analysis.TokenStream) analysis.TokenStream {
	out := in[:0]
	for _, t := range in {
		if !scorer.IsStopword(string(t.Term)) {
			out = append(out, t)
		}
	}
	return out
}

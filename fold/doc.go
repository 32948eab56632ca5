// Package fold owns the one character fold of opsearch: the index, the
// scorer and the fake OpenProject compare text through it, so "Müller",
// "muller", "Αθήνα", "αθηνα", "Йошкар" and "иошкар" meet wherever they are
// compared. It is the reference server's normalisation (compatibility
// decomposition, the combining marks U+0300..U+036F removed, lowercase)
// plus folds of letters without a decomposition (ß->ss, ø->o, ł->l, æ->ae,
// œ->oe, ð->d, þ->th, đ->d, ħ->h, ı->i, ...).
//
// The decompositions come from table.go, generated from
// golang.org/x/text/unicode/norm by gen_table.go (go generate ./fold), for
// the Latin, Greek, Cyrillic, punctuation, letterlike, number form,
// ligature and fullwidth blocks; Hangul syllables are decomposed
// arithmetically; every other rune is only lowercased. Only the
// generator imports golang.org/x/text.
//
// It owns the fold and nothing around it: String, Append and AppendRune
// map text to folded text rune by rune, with no state. It must not know
// who compares or why: tokens, stopwords, scores and analyzers belong to
// its callers (scorer, indexer, the fake's generator). It imports only
// the standard library.
package fold

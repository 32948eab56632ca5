// Package scorer re-ranks search candidates with the fuzzy scorer of the
// reference TypeScript server (openproject-mcp, src/search), ported to Go
// as pure functions: no I/O and no mutable package state, so every
// function is safe for concurrent use and the same input always gives the
// same output.
//
// It owns the ranking rules (token, field and record scores, the gate,
// the tie-break order, snippets), their tunable constants (Params) and
// the relevance measures of the offline evaluation (RecallAt,
// ReciprocalRankAt, NDCGAt over LabelledQuery). It must not know where
// records come from or go: no store, index, OpenProject model or HTTP.
// A record is an ID, weighted fields of text and a time; an ID is an
// opaque string whose "kind:123" form only sets the tie-break order. It
// imports nothing of opsearch but fold, the character fold every
// component shares.
//
// The pipeline is:
//
//   - Normalize folds text (compatibility decomposition, diacritics
//     stripped, lowercase); Tokenize splits it into words with byte offsets
//     into the original; QueryTokens also drops English stopwords.
//   - ScoreToken compares one query token with one field token (exact,
//     prefix, containment, shared prefix, bounded edit distance).
//   - ScoreField aggregates a query against a field text: mean of the best
//     token scores × coverage × BaseScale, plus PhraseBonus for a verbatim
//     phrase.
//   - Rank scores records made of weighted fields, gates on the raw field
//     score, orders by the weighted one and attaches snippets.
//
// The reference's recall acceptance table passes unchanged (see
// recall_test.go). Where this package deliberately differs from the
// reference:
//
//   - Unicode: NFKD comes from package fold (a table generated from
//     golang.org/x/text, which only the generator imports) covering the Latin,
//     Greek, Cyrillic, punctuation, letterlike, number-form, ligature and
//     fullwidth blocks plus arithmetic Hangul decomposition; the index and
//     the fake fold the same way. Runes outside those blocks are only
//     lowercased. Letters without a decomposition are folded too (ß->ss,
//     ø->o, ł->l, æ->ae, œ->oe, ð->d, þ->th, đ->d, ...), and final ς->σ.
//   - Combining marks continue a token instead of splitting it, so
//     decomposed input ("cafe\u0301s") stays one word.
//   - Lengths are runes where the reference counts UTF-16 code units (the
//     same outside the astral planes); offsets are byte offsets into the
//     original string; snippets are measured in runes and never split a
//     UTF-8 sequence.
//   - Exact-mode offsets point into the original text (the reference
//     reports them in the normalised text).
//   - Equal scores go to the newer record (Record.Updated) before the ID;
//     Options.IgnoreRecency restores the reference's ID-only order. IDs
//     compare numerically within a kind ("work_package:5" before
//     "work_package:12").
//   - A blank query honours Options.Limit (the reference returns every
//     record and leaves slicing to its callers).
//   - The constants are tunable through Params for offline evaluation.
package scorer

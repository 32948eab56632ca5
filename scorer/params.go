package scorer

// Defaults of the reference scorer (openproject-mcp src/search, shipped
// versions). They are exported so that callers and the offline evaluation
// harness can name the baseline they are varying.
const (
	// MinScore is the default gate on a record's best raw field score.
	MinScore = 0.35
	// BaseScale multiplies mean(best) × coverage. It reserves the top
	// PhraseBonus of the range for verbatim phrases: without it a scattered
	// all-token match would already score 1.0 and the bonus could never
	// lift a verbatim phrase above it.
	BaseScale = 0.85
	// PhraseBonus is added when the query's tokens occur, in order and
	// adjacent, in the field.
	PhraseBonus = 0.15
	// EditPenalty scales the normalised edit distance of a typo match.
	EditPenalty = 0.6
	// MinFuzzyTokenLength: query tokens shorter than this match only
	// exactly; otherwise "cat" would be a typo of every three-letter word.
	MinFuzzyTokenLength = 3
	// MinContainsTokenLength: query tokens shorter than this are not
	// eligible for the containment rule.
	MinContainsTokenLength = 4
	// MinSharedPrefix is the shortest shared prefix that counts as a
	// morphological variant (decide/decision, deploy/deployment).
	MinSharedPrefix = 4
	// SnippetLength is the snippet window, in characters (runes).
	SnippetLength = 160
	// SnippetContextBefore is how many characters the snippet shows before
	// the earliest match.
	SnippetContextBefore = 40

	// PrefixScore is the score of a field token that starts with the query
	// token (rule 3).
	PrefixScore = 0.9
	// ContainsScore is the score of a field token that contains the query
	// token (rule 4).
	ContainsScore = 0.75
	// SharedPrefixBase and SharedPrefixWeight give the shared-prefix rule
	// (rule 5): SharedPrefixBase + SharedPrefixWeight × p / max(len q, len f).
	SharedPrefixBase   = 0.55
	SharedPrefixWeight = 0.25
	// WideBandLength is the query-token length from which two edits are
	// tolerated instead of one (rule 6).
	WideBandLength = 6
	// MinFuzzyQueryLength: a trimmed query shorter than this (in runes) is
	// matched by exact containment, because edit distance means nothing on
	// one or two characters.
	MinFuzzyQueryLength = 3
)

// Params holds the scorer's tunable constants. The zero value of every
// field means "use the default constant of the same name", so Params{} is
// the reference configuration and a variant only names what it changes.
// Because zero means default, a negative value stands for an explicit zero
// (for example PhraseBonus: -1 disables the phrase bonus, MinScore: -1
// gates at 0 like the reference's minScore: 0).
type Params struct {
	MinScore               float64
	BaseScale              float64
	PhraseBonus            float64
	EditPenalty            float64
	MinFuzzyTokenLength    int
	MinContainsTokenLength int
	MinSharedPrefix        int
	SnippetLength          int
	SnippetContextBefore   int
	PrefixScore            float64
	ContainsScore          float64
	SharedPrefixBase       float64
	SharedPrefixWeight     float64
	WideBandLength         int
	MinFuzzyQueryLength    int
}

// DefaultParams returns the reference configuration with every field
// filled in, which is what Params{} resolves to.
func DefaultParams() Params {
	return Params{}.resolved()
}

// resolved replaces zero fields by their defaults and negative fields by
// zero, so the scoring code can use the values as they are.
func (p Params) resolved() Params {
	p.MinScore = pick(p.MinScore, MinScore)
	p.BaseScale = pick(p.BaseScale, BaseScale)
	p.PhraseBonus = pick(p.PhraseBonus, PhraseBonus)
	p.EditPenalty = pick(p.EditPenalty, EditPenalty)
	p.MinFuzzyTokenLength = pick(p.MinFuzzyTokenLength, MinFuzzyTokenLength)
	p.MinContainsTokenLength = pick(p.MinContainsTokenLength, MinContainsTokenLength)
	p.MinSharedPrefix = pick(p.MinSharedPrefix, MinSharedPrefix)
	p.SnippetLength = pick(p.SnippetLength, SnippetLength)
	p.SnippetContextBefore = pick(p.SnippetContextBefore, SnippetContextBefore)
	p.PrefixScore = pick(p.PrefixScore, PrefixScore)
	p.ContainsScore = pick(p.ContainsScore, ContainsScore)
	p.SharedPrefixBase = pick(p.SharedPrefixBase, SharedPrefixBase)
	p.SharedPrefixWeight = pick(p.SharedPrefixWeight, SharedPrefixWeight)
	p.WideBandLength = pick(p.WideBandLength, WideBandLength)
	p.MinFuzzyQueryLength = pick(p.MinFuzzyQueryLength, MinFuzzyQueryLength)
	return p
}

// pick resolves one Params field: zero is def, a negative value is an
// explicit zero, anything else (NaN included) is kept.
func pick[T int | float64](v, def T) T {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}

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
	p.MinScore = pickFloat(p.MinScore, MinScore)
	p.BaseScale = pickFloat(p.BaseScale, BaseScale)
	p.PhraseBonus = pickFloat(p.PhraseBonus, PhraseBonus)
	p.EditPenalty = pickFloat(p.EditPenalty, EditPenalty)
	p.MinFuzzyTokenLength = pickInt(p.MinFuzzyTokenLength, MinFuzzyTokenLength)
	p.MinContainsTokenLength = pickInt(p.MinContainsTokenLength, MinContainsTokenLength)
	p.MinSharedPrefix = pickInt(p.MinSharedPrefix, MinSharedPrefix)
	p.SnippetLength = pickInt(p.SnippetLength, SnippetLength)
	p.SnippetContextBefore = pickInt(p.SnippetContextBefore, SnippetContextBefore)
	p.PrefixScore = pickFloat(p.PrefixScore, PrefixScore)
	p.ContainsScore = pickFloat(p.ContainsScore, ContainsScore)
	p.SharedPrefixBase = pickFloat(p.SharedPrefixBase, SharedPrefixBase)
	p.SharedPrefixWeight = pickFloat(p.SharedPrefixWeight, SharedPrefixWeight)
	p.WideBandLength = pickInt(p.WideBandLength, WideBandLength)
	p.MinFuzzyQueryLength = pickInt(p.MinFuzzyQueryLength, MinFuzzyQueryLength)
	return p
}

func pickFloat(v, def float64) float64 {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}

func pickInt(v, def int) int {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}

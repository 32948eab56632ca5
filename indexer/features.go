package indexer

import (
	"fmt"
	"strings"
)

// Features are the parts of fuzzy retrieval a search can leave out
// (SearchOptions.Without), so that what each brings to relevance and
// costs in time can be measured on a labelled set (opsearch eval's
// variants). The zero value leaves nothing out: every search but such a
// measurement runs with all of them.
type Features uint8

const (
	// FeatureTypos: a word the index lacks is searched for its closest
	// typo variants.
	FeatureTypos Features = 1 << iota
	// FeatureCompletions: the query's last word also matches the terms it
	// begins (it may be half typed).
	FeatureCompletions
	// FeatureSynonyms: a word also matches its thesaurus synonyms.
	FeatureSynonyms
	// FeatureSmallKinds: the kinds with few documents add their own best
	// to the candidates (the search engine's federated request).
	FeatureSmallKinds

	lastFeature = FeatureSmallKinds
)

// name is a single feature's name.
func (fs Features) name() string {
	switch fs {
	case FeatureTypos:
		return "typos"
	case FeatureCompletions:
		return "completions"
	case FeatureSynonyms:
		return "synonyms"
	case FeatureSmallKinds:
		return "small-kinds"
	}
	return ""
}

// FeatureNames lists every feature's name, in order.
func FeatureNames() []string {
	var out []string
	for f := Features(1); f <= lastFeature; f <<= 1 {
		out = append(out, f.name())
	}
	return out
}

// ParseFeatures returns the features named (as FeatureNames spells
// them), or an error naming the first unknown one.
func ParseFeatures(names []string) (Features, error) {
	var fs Features
next:
	for _, name := range names {
		for f := Features(1); f <= lastFeature; f <<= 1 {
			if f.name() == strings.TrimSpace(name) {
				fs |= f
				continue next
			}
		}
		return 0, fmt.Errorf("unknown feature %q: the features are %s", name, strings.Join(FeatureNames(), ", "))
	}
	return fs, nil
}

// Has reports whether fs holds every feature of f.
func (fs Features) Has(f Features) bool { return fs&f == f }

// String names the features of fs, comma-separated.
func (fs Features) String() string {
	var names []string
	for f := Features(1); f <= lastFeature; f <<= 1 {
		if fs.Has(f) {
			names = append(names, f.name())
		}
	}
	return strings.Join(names, ",")
}

package indexer

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode"

	"github.com/blevesearch/bleve/v2"
)

// builtinThesaurus is the built-in synonym groups (thesaurus.txt).
//
//go:embed thesaurus.txt
var builtinThesaurus []byte

// Names of the synonym source and collection in the index mapping: bleve
// keeps the thesaurus inside the index, and term queries on the catch-all
// field expand through it.
const (
	synonymSource     = "opsearch_synonyms"
	synonymCollection = "opsearch"
	synonymDocPrefix  = "synonyms:"
)

// Thesaurus is a set of synonym groups: every word of a group stands for
// the others.
type Thesaurus [][]string

// BuiltinThesaurus returns the built-in groups (project-management
// vocabulary: bug/defect/issue/ticket, meeting/session/call/sync, ...).
func BuiltinThesaurus() Thesaurus {
	t, err := ParseThesaurus(bytes.NewReader(builtinThesaurus))
	if err != nil {
		panic("built-in thesaurus: " + err.Error()) // a build defect, caught by tests
	}
	return t
}

// maxThesaurusGroups bounds a thesaurus file: each group is a document in
// every user's index.
const maxThesaurusGroups = 10000

// ParseThesaurus reads synonym groups: one group per line, single words
// separated by commas; blank lines and lines starting with # are ignored.
// A word with spaces, a group of fewer than two words, or a line over 4 KiB
// is an error naming the line.
func ParseThesaurus(r io.Reader) (Thesaurus, error) {
	var out Thesaurus
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), 4096)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var group []string
		for _, w := range strings.Split(line, ",") {
			w = strings.ToLower(strings.TrimSpace(w))
			if w == "" {
				continue
			}
			if strings.IndexFunc(w, unicode.IsSpace) >= 0 {
				return nil, fmt.Errorf("thesaurus line %d: %q is not a single word", n, w)
			}
			group = append(group, w)
		}
		if len(group) < 2 {
			return nil, fmt.Errorf("thesaurus line %d: a group needs at least two words separated by commas", n)
		}
		if len(out) == maxThesaurusGroups {
			return nil, fmt.Errorf("thesaurus line %d: more than %d groups", n, maxThesaurusGroups)
		}
		out = append(out, group)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read thesaurus: %w", err)
	}
	return out, nil
}

// LoadThesaurus reads a synonyms file (see ParseThesaurus).
func LoadThesaurus(path string) (Thesaurus, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open synonyms: %w", err)
	}
	defer f.Close()
	t, err := ParseThesaurus(f)
	if err != nil {
		return nil, fmt.Errorf("synonyms %s: %w", path, err)
	}
	return t, nil
}

// digest identifies a thesaurus, so an index built with other synonyms is
// rebuilt.
func (t Thesaurus) digest() string {
	h := sha256.New()
	for _, g := range t {
		fmt.Fprintln(h, strings.Join(g, ","))
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// addSynonyms writes the thesaurus into a new index.
func addSynonyms(idx bleve.Index, t Thesaurus) error {
	if len(t) == 0 {
		return nil
	}
	batch := idx.NewBatch()
	for i, g := range t {
		id := synonymDocPrefix + strconv.Itoa(i)
		if err := batch.IndexSynonym(id, synonymCollection, &bleve.SynonymDefinition{Synonyms: g}); err != nil {
			return fmt.Errorf("index synonyms %v: %w", g, err)
		}
	}
	if err := idx.Batch(batch); err != nil {
		return fmt.Errorf("index synonyms: %w", err)
	}
	return nil
}

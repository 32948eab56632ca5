package eval

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/opsearch/opsearch/indexer"
)

// FuzzReadQueries checks the queries.jsonl reader: any input gives queries
// or an error, never a panic; every query read has an id, a kind and only
// known target types; and writing the queries with WriteQueries and
// reading them back gives the same queries.
func FuzzReadQueries(f *testing.F) {
	for _, s := range []string{
		`{"id":"q1","query":"budget review","kind":"exact","expect":[{"type":"work_package","id":12}]}` + "\n",
		"\n\n" + `{"query":"kickoff meeting","expect":[{"type":"meeting","id":3},{"type":"wiki_page","id":4}]}` + "\r\n" + `{"query":"nothing here","expect":[]}`,
		`{"query":"x","expect":[{"type":"user","id":1}]}`, `{"query":1}`, `[]`, "{\"query\":\"\\u2028 <b>\xff\"}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		qs, err := ReadQueries(strings.NewReader(in))
		if err != nil {
			return
		}
		for _, q := range qs {
			if q.ID == "" || q.Kind == "" {
				t.Fatalf("query %+v has no id or kind", q)
			}
		}
		var buf bytes.Buffer
		if err := WriteQueries(&buf, qs); err != nil {
			t.Fatalf("WriteQueries: %v", err)
		}
		back, err := ReadQueries(&buf)
		if err != nil {
			t.Fatalf("reading back what WriteQueries wrote: %v\n%s", err, buf.String())
		}
		if len(back) != len(qs) {
			t.Fatalf("read back %d queries, wrote %d", len(back), len(qs))
		}
		for i := range qs {
			a, b := qs[i], back[i]
			if a.ID != b.ID || a.Query != b.Query || a.Kind != b.Kind || !slices.Equal(a.Expect, b.Expect) {
				t.Fatalf("round trip changed query %d: %+v became %+v", i, a, b)
			}
		}
	})
}

// FuzzLoadVariants checks the variants file reader: any content gives
// variants or an error, never a panic, and every variant accepted has a
// name, a ranker of "", scorer or index, and features to leave out that
// exist. Loading is deterministic.
func FuzzLoadVariants(f *testing.F) {
	for _, s := range []string{
		`[{"name":"opsearch"},{"name":"bleve","ranker":"index"}]`,
		`[{"name":"heavy-comments","weights":{"work_package.comments":2},"crossFieldWeight":-1,"candidates":60}]`,
		`[{"name":"x","ranker":"bm25"}]`, `[{}]`, `{}`, `[{"name":"p","params":{}}]`, ``,
		`[{"name":"w","without":["typos","small-kinds"]}]`, `[{"name":"w","without":["stemming"]}]`,
	} {
		f.Add(s)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, content string) {
		path := filepath.Join(dir, "variants.json")
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		vs, err := LoadVariants(path)
		if err != nil {
			return
		}
		for _, v := range vs {
			if v.Name == "" || (v.Ranker != "" && v.Ranker != "scorer" && v.Ranker != "index") {
				t.Fatalf("LoadVariants accepted %+v", v)
			}
			if _, err := indexer.ParseFeatures(v.Without); err != nil {
				t.Fatalf("LoadVariants accepted %+v: %v", v, err)
			}
		}
		again, err := LoadVariants(path)
		if err != nil || !reflect.DeepEqual(vs, again) {
			t.Fatalf("LoadVariants is not deterministic: %+v then %+v (%v)", vs, again, err)
		}
	})
}

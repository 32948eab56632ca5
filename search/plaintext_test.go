package search_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/opsearch/opsearch/eval/querygen"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
	"github.com/opsearch/opsearch/search"
)

// markup is what must never reach a reader: an HTML tag as OpenProject
// embeds them in formattable text.
var markup = regexp.MustCompile(`</?(mention|p|br|div|span|a|strong|em|table|tr|td)[\s>/]`)

// TestSnippetsArePlainText: no snippet of the generated data set holds
// HTML markup (the generator writes mentions the way OpenProject stores
// them), and a mentioned person is found by name.
func TestSnippetsArePlainText(t *testing.T) {
	if testing.Short() {
		t.Skip(skipShort)
	}
	d := opgen.Generate(opgen.GenOptions{Seed: 4, WorkPackages: 300, WikiPages: 20, Meetings: 10})
	raw := 0
	for _, wp := range d.WorkPackages {
		if strings.Contains(wp.Description, "<mention") {
			raw++
		}
	}
	for _, a := range d.Activities {
		if strings.Contains(a.Comment, "<mention") {
			raw++
		}
	}
	if raw == 0 {
		t.Fatal("the generated data holds no mention markup: the test proves nothing")
	}
	e := newEnv(t, d, optest.AdminKey)
	queries := []string{"mention", "class", "data", "user", "the", "ask", "review", "deploy", "meeting"}
	for _, q := range querygen.Generate(d, querygen.Options{Seed: 4, PerKind: 5}) {
		queries = append(queries, q.Query)
	}
	for _, u := range d.Users {
		queries = append(queries, u.Name)
	}
	checked := 0
	for _, q := range queries {
		resp := e.search(t, search.Query{Text: q, PageSize: 50})
		for _, r := range resp.Results {
			texts := []string{r.Snippet}
			if r.MatchedComment != nil {
				texts = append(texts, r.MatchedComment.Snippet)
			}
			for _, a := range r.MatchedAgendaItems {
				texts = append(texts, a.Snippet)
			}
			for _, s := range texts {
				checked++
				if markup.MatchString(s) {
					t.Fatalf("%q: %s %d has markup in a snippet: %q", q, r.Kind, r.ID, s)
				}
			}
		}
	}
	if checked < 500 {
		t.Errorf("only %d snippets checked", checked)
	}
	t.Logf("%d mentions in the data, %d snippets checked", raw, checked)
}

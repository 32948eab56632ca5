package indexer

import (
	"maps"
	"testing"

	"github.com/blevesearch/bleve/v2/document"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/opsearch/opsearch/kind"
)

// TestCatchAllOneValue checks that the catch-all field, indexed as one
// value joined from a document's texts, holds exactly the terms, counts
// and length those texts give analysed one by one: the joins add no
// token and merge none across texts, so scores are unchanged.
func TestCatchAllOneValue(t *testing.T) {
	m, err := newMapping()
	if err != nil {
		t.Fatal(err)
	}
	analyzer := m.AnalyzerNamed(analyzerText)
	tests := []struct {
		name string
		doc  Document
	}{
		{"work package", Document{
			ID: "work_package:7", Kind: kind.WorkPackage, Type: "Bug",
			Title: "Login fails on Safari", Body: "Cookies are off.\nThen the page_loader hangs",
			Comments: []string{"I see it too", "fixed in build 12", "getUserProfile returns 500"},
			Author:   "Ann Lee", Assignee: "Bo Chen",
		}},
		{"texts ending and starting in word characters", Document{
			ID: "work_package:8", Kind: kind.WorkPackage, Type: "Task",
			Title: "alpha", Body: "beta", Comments: []string{"gamma", "delta's"},
		}},
		{"meeting", Document{
			ID: "meeting:3", Kind: kind.Meeting, Title: "Weekly sync", Location: "Room 4",
			Agenda:       []AgendaText{{Title: "Release plan", Notes: "cut on Friday", Outcomes: []string{"ship it"}}},
			Participants: []string{"Ann Lee", "Cy Dorn"},
		}},
		{"empty texts", Document{ID: "project:1", Kind: kind.Project, Title: "Ops"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bd := toBleveDoc(tt.doc)
			doc := document.NewDocument(tt.doc.ID)
			if err := m.MapDocument(doc, bd); err != nil {
				t.Fatal(err)
			}
			var got index.TokenFrequencies
			gotLen, values := 0, 0
			for _, f := range doc.Fields {
				if f.Name() != fieldAll {
					continue
				}
				values++
				f.Analyze()
				got, gotLen = f.AnalyzedTokenFrequencies(), f.AnalyzedLength()
			}
			if values != 1 {
				t.Fatalf("catch-all indexed as %d values, want 1", values)
			}

			// Each text analysed alone, as an array of values was.
			parts := []string{kindNoun(tt.doc), bd.Title, bd.Body, bd.Location}
			parts = append(parts, bd.Comments...)
			parts = append(parts, bd.Agenda...)
			parts = append(parts, bd.People...)
			want := map[string]int{}
			wantLen := 0
			for _, p := range parts {
				for _, tok := range analyzer.Analyze([]byte(p)) {
					want[string(tok.Term)]++
					wantLen++
				}
			}
			gotFreq := map[string]int{}
			for term, tf := range got {
				gotFreq[term] = tf.Frequency()
			}
			if !maps.Equal(gotFreq, want) || gotLen != wantLen {
				t.Errorf("catch-all terms %v (length %d), want %v (length %d)", gotFreq, gotLen, want, wantLen)
			}
		})
	}
}

package indexer

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/opsearch/opsearch/openproject"
)

// TestWithoutFeatures: each query below finds its document through one
// feature of retrieval only, so with that feature left out it finds
// nothing, while the others still find theirs.
func TestWithoutFeatures(t *testing.T) {
	b := openFilled(t, []Document{
		FromWorkPackage(openproject.WorkPackage{ID: 1, Subject: "Defect in the export"}, nil),
		FromWorkPackage(openproject.WorkPackage{ID: 2, Subject: "Quarterly budget review"}, nil),
		FromWikiPage(openproject.WikiPage{ID: 3, Title: "Onboarding checklist"}),
		FromWorkPackage(openproject.WorkPackage{ID: 4, Subject: "Crash bug on login"}, nil),
	})
	queries := []struct {
		q, want string
		by      Features
	}{
		{"bug", "work_package:1", FeatureSynonyms},    // bug ~ defect
		{"budgte", "work_package:2", FeatureTypos},    // a typo of budget
		{"checkl", "wiki_page:3", FeatureCompletions}, // half typed
	}
	for _, without := range []Features{0, FeatureTypos, FeatureCompletions, FeatureSynonyms} {
		t.Run("without="+without.String(), func(t *testing.T) {
			for _, q := range queries {
				res, err := b.Search(context.Background(), SearchOptions{Query: q.q, Without: without})
				if err != nil {
					t.Fatal(err)
				}
				found := slices.ContainsFunc(res.Hits, func(h Hit) bool { return h.ID == q.want })
				if want := !without.Has(q.by); found != want {
					t.Errorf("%q (by %s): found %s %v, want %v (hits %v)", q.q, q.by, q.want, found, want, res.Hits)
				}
			}
		})
	}
}

// TestWithoutReusesNoOtherPlan: a plan made with every feature is not
// reused for a search without one, nor the other way round.
func TestWithoutReusesNoOtherPlan(t *testing.T) {
	b := openFilled(t, []Document{FromWorkPackage(openproject.WorkPackage{ID: 1, Subject: "Defect in the export"}, nil)})
	res, err := b.Search(context.Background(), SearchOptions{Query: "bug"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Plan.reusableFor(SearchOptions{Query: "bug"}) == nil {
		t.Fatal("a plan is not reusable for its own options")
	}
	if res.Plan.reusableFor(SearchOptions{Query: "bug", Without: FeatureSynonyms}) != nil {
		t.Error("a plan with synonyms was reused for a search without them")
	}
	again, err := b.Search(context.Background(), SearchOptions{Query: "bug", Without: FeatureSynonyms, Reuse: res.Plan})
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Hits) != 0 {
		t.Errorf("without synonyms, reusing the plan made with them: %v", again.Hits)
	}
}

func TestParseFeatures(t *testing.T) {
	all, err := ParseFeatures(FeatureNames())
	if err != nil {
		t.Fatal(err)
	}
	if want := FeatureTypos | FeatureCompletions | FeatureSynonyms | FeatureSmallKinds; all != want {
		t.Errorf("every name parses to %b, want %b", all, want)
	}
	if got := all.String(); got != strings.Join(FeatureNames(), ",") {
		t.Errorf("String %q", got)
	}
	if fs, err := ParseFeatures(nil); fs != 0 || err != nil {
		t.Errorf("no names: %v %v", fs, err)
	}
	_, err = ParseFeatures([]string{"typos", "stemming"})
	if err == nil || !strings.Contains(err.Error(), `"stemming"`) || !strings.Contains(err.Error(), "small-kinds") {
		t.Errorf("unknown name: %v, want an error naming it and the features", err)
	}
}

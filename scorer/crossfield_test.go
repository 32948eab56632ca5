package scorer

import "testing"

// TestRankCrossField checks that a record holding every query word across
// its fields outranks one whose title holds only some of them, and that
// the option is off by default (the reference's behaviour).
func TestRankCrossField(t *testing.T) {
	recs := []Record{
		{ID: "meeting:1", Fields: []Field{
			{Name: "title", Weight: 3, Values: []string{"Schedule review with Max Gunnarsdottir"}},
			{Name: "participant", Weight: 1},
		}},
		{ID: "meeting:2", Fields: []Field{
			{Name: "title", Weight: 3, Values: []string{"Technical steering"}},
			{Name: "participant", Weight: 1, Values: []string{"Max Gunnarsdottir", "Ann Lee"}},
		}},
	}
	const q = "Max Gunnarsdottir technical"
	if got := Rank(recs, q, Options{}); len(got) == 0 || got[0].ID != "meeting:1" {
		t.Fatalf("reference order changed: %+v", got)
	}
	got := Rank(recs, q, Options{CrossFieldWeight: 2})
	if len(got) != 2 || got[0].ID != "meeting:2" {
		t.Fatalf("cross-field: got %+v, want meeting:2 first", got)
	}
	if got[0].MatchedFields[0] == "" || len(got[0].Matches) != 2 {
		t.Errorf("cross-field score must not add a match: %+v", got[0].Matches)
	}
	// One-word queries are unaffected.
	a, b := Rank(recs, "technical", Options{}), Rank(recs, "technical", Options{CrossFieldWeight: 2})
	if len(a) != len(b) || a[0].Score != b[0].Score {
		t.Errorf("one-word query changed: %+v vs %+v", a, b)
	}
}

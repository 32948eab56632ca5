package opgen

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"
)

// TestGenerateTimeEntriesLeaveTheRestAlone pins the encoding of data sets
// without what was added since (time entries, versions and the work
// packages' links to them, custom fields, relations) to the hashes taken before:
// golden files and relevance evaluations depend on those bytes.
func TestGenerateTimeEntriesLeaveTheRestAlone(t *testing.T) {
	tests := []struct {
		o    GenOptions
		hash string
	}{
		{genSmall, "f1ba4e6464f03429344e22cc2d0c091fa09a030a823e253fb3cff7fcfdcc0bc4"},
		// The data set of the mcp package's live tests.
		{GenOptions{Seed: 7, Projects: 4, Users: 4, WorkPackages: 80, Comments: 240, WikiPages: 6, Meetings: 8},
			"c324e52c438b924d8f0eaee2c228c4d15562e91c9a22852fd853ec433f86f516"},
		{GenOptions{Seed: 3, MixedPermissions: true, WorkPackages: 200},
			"a8eb354393d28f873d6d2779f516d99ec07a91d9199883c276fff1f66019becf"},
	}
	for _, tc := range tests {
		d := Generate(tc.o)
		if len(d.TimeEntries) == 0 {
			t.Errorf("seed %d: no time entries", tc.o.Seed)
		}
		d.TimeEntries, d.Versions, d.CustomFields, d.CustomValues, d.Relations = nil, nil, nil, nil, nil
		for i := range d.WorkPackages {
			d.WorkPackages[i].Version = nil
		}
		sum := sha256.Sum256(genJSON(t, d))
		if got := hex.EncodeToString(sum[:]); got != tc.hash {
			t.Errorf("seed %d: data set without time entries hashes to %s, want %s", tc.o.Seed, got, tc.hash)
		}
	}
}

func TestGenerateTimeEntries(t *testing.T) {
	d := Generate(genSmall)
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	members := map[int64]map[int64]bool{}
	for _, p := range d.Projects {
		members[p.ID] = map[int64]bool{}
		for _, u := range p.Members {
			members[p.ID][u] = true
		}
	}
	wpCreated := map[int64]time.Time{}
	for _, wp := range d.WorkPackages {
		wpCreated[wp.ID] = wp.CreatedAt
	}
	perDay := map[string]float64{}
	withEntries := map[int64]bool{}
	for i, te := range d.TimeEntries {
		if te.ID != int64(i+1) {
			t.Fatalf("time entry %d has id %d", i, te.ID)
		}
		if te.Hours <= 0 || te.Hours > 8 || te.Hours*4 != float64(int(te.Hours*4)) {
			t.Errorf("time entry %d: %v hours, want quarter hours up to 8", te.ID, te.Hours)
		}
		if te.WorkPackage == nil || te.Activity == nil || te.User.Title == "" {
			t.Fatalf("time entry %d: missing links %+v", te.ID, te)
		}
		if !members[te.Project.ID][te.User.ID] {
			t.Errorf("time entry %d: user %d is no member of project %d", te.ID, te.User.ID, te.Project.ID)
		}
		day, _ := time.Parse(time.DateOnly, te.SpentOn)
		if wd := day.Weekday(); wd == time.Saturday || wd == time.Sunday {
			t.Errorf("time entry %d: spent on a %s", te.ID, wd)
		}
		if te.SpentOn < wpCreated[te.WorkPackage.ID].Format(time.DateOnly) {
			t.Errorf("time entry %d: spent on %s, before its work package was created", te.ID, te.SpentOn)
		}
		key := te.User.Href + te.SpentOn
		perDay[key] += te.Hours
		if perDay[key] > maxGeneratedDayHours {
			t.Errorf("user %d logged %v hours on %s", te.User.ID, perDay[key], te.SpentOn)
		}
		withEntries[te.WorkPackage.ID] = true
	}
	if n := len(withEntries); n < len(d.WorkPackages)/4 || n > len(d.WorkPackages)*3/4 {
		t.Errorf("%d of %d work packages have time entries, want about half", n, len(d.WorkPackages))
	}
}

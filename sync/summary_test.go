package sync

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/opsearch/opsearch/kind"
)

// TestSummaryJSON: a summary spells its kinds in the singular, and one
// from an earlier opsearch (over the control socket), whose keys were the
// plural, decodes to the same report.
func TestSummaryJSON(t *testing.T) {
	rep := Report{Started: time.Date(2025, 3, 1, 8, 0, 0, 0, time.UTC), Duration: 1500 * time.Millisecond, Requests: 9,
		Kinds: map[kind.Kind]*KindReport{
			kind.WorkPackage: {Fetched: 3, Updated: 2},
			kind.Meeting:     {Err: errors.New("list meetings: 500")},
		}}
	raw, err := json.Marshal(rep.Summary())
	if err != nil {
		t.Fatal(err)
	}
	want := `{"started":"2025-03-01T08:00:00Z","durationMs":1500,"requests":9,"kinds":{"meeting":{"fetched":0,"updated":0,"deleted":0,"error":"list meetings: 500"},"work_package":{"fetched":3,"updated":2,"deleted":0}}}`
	if string(raw) != want {
		t.Errorf("summary JSON:\n got %s\nwant %s", raw, want)
	}
	old := `{"started":"2025-03-01T08:00:00Z","durationMs":1500,"requests":9,"kinds":{"meetings":{"error":"list meetings: 500"},"work_packages":{"fetched":3,"updated":2}}}`
	var s Summary
	if err := json.Unmarshal([]byte(old), &s); err != nil {
		t.Fatal(err)
	}
	got := s.Report()
	if got.Kinds[kind.WorkPackage] == nil || got.Kinds[kind.WorkPackage].Fetched != 3 || got.Kinds[kind.Meeting] == nil ||
		got.Kinds[kind.Meeting].Err == nil || got.Kinds[kind.Meeting].Err.Error() != "list meetings: 500" || len(got.Kinds) != 2 {
		t.Errorf("report from an earlier summary: %+v", got.Kinds)
	}
	if !reflect.DeepEqual(got.Summary(), rep.Summary()) {
		t.Errorf("round trip: %+v, want %+v", got.Summary(), rep.Summary())
	}
	// The limiter's figures travel too, and are left out when unset.
	rep.Concurrency, rep.PeakConcurrency, rep.Backoffs = 8, 12, 1
	raw, err = json.Marshal(rep.Summary())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"requests":9,"concurrency":8,"peakConcurrency":12,"backoffs":1,`) {
		t.Errorf("summary JSON lacks the concurrency: %s", raw)
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	if r := s.Report(); r.Concurrency != 8 || r.PeakConcurrency != 12 || r.Backoffs != 1 {
		t.Errorf("concurrency after a round trip: %d, %d, %d", r.Concurrency, r.PeakConcurrency, r.Backoffs)
	}
}

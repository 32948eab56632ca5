package sync

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
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
	// So do each kind's requests and time, and the index's merge.
	rep.Merge = 2500 * time.Millisecond
	rep.Kinds[kind.WorkPackage].Duration, rep.Kinds[kind.WorkPackage].Requests = 1200*time.Millisecond, 7
	rep.Kinds[kind.WorkPackage].Latency = RequestLatency{Mean: 25875 * time.Microsecond, Median: 21250 * time.Microsecond, P90: 24 * time.Millisecond, P99: 71500 * time.Microsecond}
	raw, err = json.Marshal(rep.Summary())
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range []string{`"mergeMs":2500,`, `"work_package":{"fetched":3,"updated":2,"deleted":0,"durationMs":1200,"requests":7,"latencyMs":{"mean":25.875,"median":21.25,"p90":24,"p99":71.5}}`} {
		if !strings.Contains(string(raw), part) {
			t.Errorf("summary JSON lacks %s: %s", part, raw)
		}
	}
	s = Summary{}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	if r := s.Report(); r.Merge != rep.Merge || r.Kinds[kind.WorkPackage].Duration != 1200*time.Millisecond || r.Kinds[kind.WorkPackage].Requests != 7 ||
		r.Kinds[kind.WorkPackage].Latency != rep.Kinds[kind.WorkPackage].Latency {
		t.Errorf("after a round trip: merge %v, work packages %+v", r.Merge, r.Kinds[kind.WorkPackage])
	}
}

// TestReportSplitsTheSyncByKind: a sync's report gives each kind the
// requests the server saw for it and the time it took, the kinds'
// requests add up to the sync's, and the index's merge after a first
// crawl is timed apart.
func TestReportSplitsTheSyncByKind(t *testing.T) {
	gen := smallGen
	gen.WorkPackages = 1500 // alice sees enough documents for the index to merge after
	e := newE2E(t, opgen.Generate(gen), optest.Options{}, Options{})
	u := e.open(t, nil)
	for _, first := range []bool{true, false} {
		e.srv.ResetRequests()
		rep := syncUser(t, u)
		// The server's requests by the kind whose run makes them. The
		// meeting run asks first for the client's capabilities, which
		// probe the meeting list and the wiki list (GET /wiki_pages).
		want := map[kind.Kind]int{}
		for key, n := range e.srv.Requests() {
			_, path, _ := strings.Cut(key, " ")
			switch {
			case strings.HasSuffix(path, "/attachments") || strings.HasPrefix(path, "/api/v3/attachments/"):
				want[kind.Attachment] += n
			case strings.HasPrefix(path, "/api/v3/work_packages") || path == "/api/v3/statuses":
				want[kind.WorkPackage] += n
			case strings.HasPrefix(path, "/api/v3/meetings") || path == "/api/v3/wiki_pages":
				want[kind.Meeting] += n
			case strings.HasPrefix(path, "/api/v3/wiki_pages/"):
				want[kind.WikiPage] += n
			case strings.HasPrefix(path, "/api/v3/projects"):
				want[kind.Project] += n
			default:
				t.Errorf("request %s (%d) belongs to no kind", key, n)
			}
		}
		var sum int
		for k, kr := range rep.Kinds {
			if kr.Requests != want[k] {
				t.Errorf("first sync %v, %s: report counts %d requests, the server saw %d", first, k, kr.Requests, want[k])
			}
			if kr.Duration <= 0 || kr.Duration > rep.Duration {
				t.Errorf("first sync %v, %s: took %v of the sync's %v", first, k, kr.Duration, rep.Duration)
			}
			sum += kr.Requests
		}
		if sum != rep.Requests || sum != e.srv.TotalRequests() {
			t.Errorf("first sync %v: the kinds' requests %d, the sync's %d, the server's %d", first, sum, rep.Requests, e.srv.TotalRequests())
		}
		// A first crawl's writes are the whole index: it is merged
		// after them. An unchanged sync writes nothing to merge.
		if merged := rep.Merge > 0; merged != first {
			t.Errorf("first sync %v: merge took %v", first, rep.Merge)
		}
	}
}

package optest

import (
	"slices"
	"testing"
)

// TestFaults_ErrorStatuses: ErrorRate draws only from ErrorStatuses when
// set, and from the 500/502/503 mix otherwise.
func TestFaults_ErrorStatuses(t *testing.T) {
	tests := []struct {
		name     string
		statuses []int
		want     []int // every failing status is one of these
	}{
		{name: "default mix", want: []int{500, 502, 503}},
		{name: "500 only", statuses: []int{500}, want: []int{500}},
		{name: "504 only", statuses: []int{504}, want: []int{504}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, base := srvStart(t, Options{})
			s.SetFaults(Faults{ErrorRate: 0.5, ErrorStatuses: tt.statuses, Seed: 3})
			seen := map[int]int{}
			for range 60 {
				r := srvGet(t, base, "/api/v3/statuses")
				if r.status == 200 {
					continue
				}
				if !slices.Contains(tt.want, r.status) {
					t.Fatalf("status %d, want one of %v", r.status, tt.want)
				}
				wantError(t, r, r.status, "InternalServerError", msgInternal)
				seen[r.status]++
			}
			// 60 draws at 0.5 leave every status of a three-way mix
			// practically certain to appear; the seed makes it exact.
			for _, st := range tt.want {
				if seen[st] == 0 {
					t.Errorf("status %d never drawn: %v", st, seen)
				}
			}
		})
	}
}

// TestFaults_NotFound: NotFoundNext and NotFoundRate answer 404 NotFound
// for resources that exist, only under PathPrefix, and NotFoundRate is
// deterministic for a seed.
func TestFaults_NotFound(t *testing.T) {
	s, base := srvStart(t, Options{})

	t.Run("next", func(t *testing.T) {
		s.SetFaults(Faults{PathPrefix: "/api/v3/wiki_pages/", NotFoundNext: 2})
		if r := srvGet(t, base, "/api/v3/statuses"); r.status != 200 {
			t.Errorf("other path = %d", r.status)
		}
		for range 2 {
			wantError(t, srvGet(t, base, "/api/v3/wiki_pages/1"), 404, "NotFound", msgNotFound)
		}
		if r := srvGet(t, base, "/api/v3/wiki_pages/1"); r.status != 200 {
			t.Errorf("after the faults = %d", r.status)
		}
		if f := s.Faults(); f.NotFoundNext != 0 {
			t.Errorf("NotFoundNext left = %d", f.NotFoundNext)
		}
	})

	t.Run("rate", func(t *testing.T) {
		run := func() []int {
			s.SetFaults(Faults{PathPrefix: "/api/v3/wiki_pages/", NotFoundRate: 0.3, Seed: 9})
			var got []int
			for range 40 {
				got = append(got, srvGet(t, base, "/api/v3/wiki_pages/1").status)
			}
			return got
		}
		a, b := run(), run()
		if !slices.Equal(a, b) {
			t.Errorf("runs differ: %v vs %v", a, b)
		}
		missing := 0
		for _, st := range a {
			switch st {
			case 404:
				missing++
			case 200:
			default:
				t.Fatalf("status %d", st)
			}
		}
		if missing == 0 || missing == len(a) {
			t.Errorf("404s = %d of %d", missing, len(a))
		}
		if r := srvGet(t, base, "/api/v3/statuses"); r.status != 200 {
			t.Errorf("other path = %d", r.status)
		}
	})
	s.SetFaults(Faults{})
}

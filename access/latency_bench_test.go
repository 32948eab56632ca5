package access_test

import (
	"fmt"
	"os"
	"runtime/pprof"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/opsearch/opsearch/access"
	"github.com/opsearch/opsearch/internal/optesting"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
	"github.com/opsearch/opsearch/search"
)

// BenchmarkSharedSearchLatency compares whole-pipeline search latency
// (index, hydration, ranking) in per-user mode (the user's own store and
// index) and in shared mode (the store an administrator and every user
// of the mixed set crawled, restricted to the user's view), on the same
// queries, for two users:
//
//   - alice, who sees part of the corpus: her own index is smaller than
//     the shared one, whose other documents her searches step over;
//   - the administrator, who sees all of it: the same corpus size in
//     both modes, so the difference is what the restriction costs.
//
// Issue 14: shared within 1.2x of per-user. The work package count is
// OPSEARCH_COST_WPS (default 2,000).
//
//	go test ./access -run '^$' -bench SharedSearchLatency -benchtime 3x
//
// OPSEARCH_LATENCY_PROFILE=FILE writes a CPU profile of each case's
// searches alone to FILE.<case>.
func BenchmarkSharedSearchLatency(b *testing.B) {
	if testing.Short() {
		b.Skip("crawls nine stores")
	}
	wps := envInt(b, "OPSEARCH_COST_WPS", 2000)
	d := opgen.Generate(opgen.GenOptions{Seed: 11, WorkPackages: wps, Comments: wps * 3 / 2, WikiPages: 60, Meetings: 40, MixedPermissions: true})
	_, base := optesting.Start(b, d, optest.Options{})
	shared := sharedSynced(b, base, append([]string{optest.AdminKey}, keys...)...)
	if err := shared.Index.Compact(b.Context()); err != nil {
		b.Fatal(err)
	}
	held, err := access.HoldingsOf(b.Context(), shared.Store)
	if err != nil {
		b.Fatal(err)
	}
	type mode struct {
		name string
		eng  *search.Engine
	}
	var modes []mode
	for _, u := range []struct{ name, key string }{{"alice", optest.AliceKey}, {"admin", optest.AdminKey}} {
		own := synced(b, base, u.key)
		if err := own.Index.Compact(b.Context()); err != nil {
			b.Fatal(err)
		}
		v, err := access.Compute(b.Context(), client(b, base, u.key), held, nil, access.Options{})
		if err != nil {
			b.Fatal(err)
		}
		owner := &search.Owner{UserID: own.Identity.UserID}
		modes = append(modes,
			mode{u.name + "/per-user", search.New(own.Store, own.Index, search.Options{})},
			mode{u.name + "/shared", search.New(shared.Store, shared.Index.Restrict(v.Visibility), search.Options{Shared: owner})})
	}
	queries := conformanceQueries(d, 300)
	for _, c := range modes {
		b.Run(c.name, func(b *testing.B) {
			for _, q := range queries { // warm
				if _, err := c.eng.Search(b.Context(), q); err != nil {
					b.Fatal(err)
				}
			}
			var lat []time.Duration
			if f := os.Getenv("OPSEARCH_LATENCY_PROFILE"); f != "" {
				// The crawls dwarf the searches in -cpuprofile.
				out, err := os.Create(f + "." + strings.ReplaceAll(c.name, "/", "-"))
				if err != nil {
					b.Fatal(err)
				}
				defer func() { _ = out.Close() }()
				if err := pprof.StartCPUProfile(out); err != nil {
					b.Fatal(err)
				}
				defer pprof.StopCPUProfile()
			}
			for b.Loop() {
				for _, q := range queries {
					start := time.Now()
					if _, err := c.eng.Search(b.Context(), q); err != nil {
						b.Fatal(err)
					}
					lat = append(lat, time.Since(start))
				}
			}
			b.ReportMetric(percentileMS(lat, 0.50), "p50-ms")
			b.ReportMetric(percentileMS(lat, 0.99), "p99-ms")
			b.ReportMetric(0, "ns/op")
		})
	}
	// Interleaved, query by query, so that the machine's drifting load
	// falls on every mode alike: the ratios to report.
	b.Run("interleaved", func(b *testing.B) {
		lat := make([][]time.Duration, len(modes))
		for b.Loop() {
			for _, q := range queries {
				for i, c := range modes {
					start := time.Now()
					if _, err := c.eng.Search(b.Context(), q); err != nil {
						b.Fatal(err)
					}
					lat[i] = append(lat[i], time.Since(start))
				}
			}
		}
		for i := 0; i+1 < len(modes); i += 2 {
			user := strings.Split(modes[i].name, "/")[0]
			for _, p := range []float64{0.50, 0.99} {
				own, shared := percentileMS(lat[i], p), percentileMS(lat[i+1], p)
				b.ReportMetric(own, fmt.Sprintf("%s-per-user-p%02.0f-ms", user, p*100))
				b.ReportMetric(shared, fmt.Sprintf("%s-shared-p%02.0f-ms", user, p*100))
				b.ReportMetric(shared/own, fmt.Sprintf("%s-ratio-p%02.0f", user, p*100))
			}
		}
		b.ReportMetric(0, "ns/op")
	})
}

// percentileMS is the p-th percentile of lat in milliseconds (lat is
// sorted in place).
func percentileMS(lat []time.Duration, p float64) float64 {
	slices.Sort(lat)
	return float64(lat[int(p*float64(len(lat)-1))]) / float64(time.Millisecond)
}

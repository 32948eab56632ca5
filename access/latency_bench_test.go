package access_test

import (
	"os"
	"runtime/pprof"
	"slices"
	"testing"
	"time"

	"github.com/opsearch/opsearch/access"
	"github.com/opsearch/opsearch/internal/optesting"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
	"github.com/opsearch/opsearch/search"
)

// BenchmarkSharedSearchLatency compares whole-pipeline search latency
// (index, hydration, ranking) of one user in per-user mode (their own
// store and index) and in shared mode (the store every user of the
// mixed set crawled, restricted to the user's view), on the same
// queries. Issue 14: shared within 1.2x of per-user. The work package
// count is OPSEARCH_COST_WPS (default 2,000).
//
//	go test ./access -run '^$' -bench SharedSearchLatency -benchtime 3x
//
// OPSEARCH_LATENCY_PROFILE=FILE writes a CPU profile of each mode's
// searches alone to FILE.per-user and FILE.shared.
func BenchmarkSharedSearchLatency(b *testing.B) {
	if testing.Short() {
		b.Skip("crawls seven stores")
	}
	wps := envInt(b, "OPSEARCH_COST_WPS", 2000)
	d := opgen.Generate(opgen.GenOptions{Seed: 11, WorkPackages: wps, Comments: wps * 3 / 2, WikiPages: 60, Meetings: 40, MixedPermissions: true})
	_, base := optesting.Start(b, d, optest.Options{})
	shared := sharedSynced(b, base, keys...)
	own := synced(b, base, optest.AliceKey)
	if err := shared.Index.Compact(b.Context()); err != nil {
		b.Fatal(err)
	}
	if err := own.Index.Compact(b.Context()); err != nil {
		b.Fatal(err)
	}
	held, err := access.HoldingsOf(b.Context(), shared.Store)
	if err != nil {
		b.Fatal(err)
	}
	v, err := access.Compute(b.Context(), client(b, base, optest.AliceKey), held, nil, access.Options{})
	if err != nil {
		b.Fatal(err)
	}
	owner := &search.Owner{UserID: own.Identity.UserID}
	queries := conformanceQueries(d, 300)
	for _, c := range []struct {
		name string
		eng  *search.Engine
	}{
		{"per-user", search.New(own.Store, own.Index, search.Options{})},
		{"shared", search.New(shared.Store, shared.Index.Restrict(v.Visibility), search.Options{Shared: owner})},
	} {
		b.Run(c.name, func(b *testing.B) {
			for _, q := range queries { // warm
				if _, err := c.eng.Search(b.Context(), q); err != nil {
					b.Fatal(err)
				}
			}
			var lat []time.Duration
			if f := os.Getenv("OPSEARCH_LATENCY_PROFILE"); f != "" {
				// The crawls dwarf the searches in -cpuprofile.
				out, err := os.Create(f + "." + c.name)
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
			slices.Sort(lat)
			ms := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))]) / float64(time.Millisecond) }
			b.ReportMetric(ms(0.50), "p50-ms")
			b.ReportMetric(ms(0.99), "p99-ms")
			b.ReportMetric(0, "ns/op")
		})
	}
}

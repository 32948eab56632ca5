package search_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/opsearch/opsearch/internal/optesting/synced"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
	"github.com/opsearch/opsearch/search"
)

// engineQueries are realistic fuzzy queries: typos, several words,
// truncated last words, a question.
var engineQueries = []string{
	"tls certficate", "load balncer", "backup job failed", "ingress controler", "node pool",
	"persistent volum", "dns zone", "firewall rul", "vpn tunel", "container imag",
	"helm chart upgrade", "terraform modul", "disk quota exceded", "log retention", "on-call rotaton",
	"reverse proxy", "kernel patch", "readiness probe", "memory limit", "grafana dashbord",
	"deployment pipline", "navigation bar", "landing page", "cookie baner", "date picker",
	"form validaton", "dark mode", "rest endpoint", "rate limiter", "access token expired",
	"database migrat", "connection pool", "invoice", "payment reminder", "subscription upgrade",
	"onboarding checklist", "interview scorecard", "privacy policy", "vulnerability scan", "push notificaton",
	"what did we decide about the release",
}

// BenchmarkEngineSearch measures the whole query pipeline (index
// candidates, store hydration, scorer re-ranking, freshness) on an index
// built by a real sync from the fake: go test ./search -run '^$' -bench EngineSearch -benchtime 3x
func BenchmarkEngineSearch(b *testing.B) {
	if testing.Short() {
		b.Skip("builds a 10,000 work package index")
	}
	ctx := context.Background()
	d := opgen.Generate(opgen.GenOptions{Seed: 1, WorkPackages: 10000, Comments: 30000, WikiPages: 300, Meetings: 200})
	s := synced.Start(b, d, optest.AdminKey)
	eng := search.New(s.Store, s.Index, search.Options{})
	var lat []time.Duration
	b.ResetTimer()
	for b.Loop() {
		for _, q := range engineQueries {
			start := time.Now()
			if _, err := eng.Search(ctx, search.Query{Text: q, PageSize: 10}); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(start))
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
	b.ReportMetric(ms(lat[len(lat)*99/100]), "p99-ms")
	b.ReportMetric(0, "ns/op")
}

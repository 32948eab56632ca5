package search_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/opsearch/opsearch/indexer"
	"github.com/opsearch/opsearch/internal/optesting"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
	"github.com/opsearch/opsearch/search"
	"github.com/opsearch/opsearch/store"
	"github.com/opsearch/opsearch/sync"
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
	_, url := optesting.Start(b, d, optest.Options{})
	c, err := openproject.New(openproject.Config{BaseURL: url, APIKey: optest.AdminKey})
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	st, err := store.Open(dir, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	idx, err := indexer.Open(filepath.Join(dir, "index"), indexer.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer idx.Close()
	if _, err := sync.NewWorker(c, st, idx, sync.Options{}).Sync(ctx); err != nil {
		b.Fatal(err)
	}
	eng := search.New(st, idx, search.Options{})
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

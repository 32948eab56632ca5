package indexer

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/optest"
)

// benchDocs generates the benchmark corpus: n work packages with 3n
// comments, 300 wiki pages, 200 meetings and the projects.
func benchDocs(n int) []Document {
	ds := optest.Generate(optest.GenOptions{Seed: 1, WorkPackages: n, Comments: 3 * n, WikiPages: 300, Meetings: 200})
	acts := make(map[int64][]openproject.Activity, len(ds.WorkPackages))
	for _, a := range ds.Activities {
		acts[a.WorkPackageID] = append(acts[a.WorkPackageID], a)
	}
	docs := make([]Document, 0, len(ds.WorkPackages)+len(ds.WikiPages)+len(ds.Meetings)+len(ds.Projects))
	for _, wp := range ds.WorkPackages {
		docs = append(docs, FromWorkPackage(wp, acts[wp.ID]))
	}
	for _, p := range ds.WikiPages {
		docs = append(docs, FromWikiPage(p))
	}
	for _, m := range ds.Meetings {
		docs = append(docs, FromMeeting(m))
	}
	for _, p := range ds.Projects {
		docs = append(docs, FromProject(p.Project))
	}
	return docs
}

// benchQueries are realistic fuzzy queries: typos, several words, and
// truncated last words.
var benchQueries = []string{
	"tls certficate", "load balncer", "backup job failed", "ingress controler", "node pool",
	"persistent volum", "dns zone", "firewall rul", "vpn tunel", "container imag",
	"helm chart upgrade", "terraform modul", "cron job", "disk quota exceded", "log retention",
	"on-call rotaton", "maintenance windo", "reverse proxy", "kernel patch", "artifact regsitry",
	"readiness probe", "memory limit", "time series databse", "cert-manager", "edge-proxy",
	"grafana dashbord", "deployment pipline", "navigation bar", "landing page", "cookie baner",
	"date picker", "modal dialog", "form validaton", "dark mode", "rest endpoint",
	"graphql schema", "rate limiter", "access token expired", "job queue", "database migrat",
	"connection pool", "invoice", "credit note", "payment reminder", "subscription upgrade",
	"onboarding checklist", "interview scorecard", "privacy policy", "data pipeline", "vulnerability scan",
	"two-factor authentication", "push notificaton", "crash report", "what did we decide about the release",
}

func dirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

func BenchmarkIndex10k(b *testing.B) {
	docs := benchDocs(10_000)
	ctx := context.Background()
	var total time.Duration
	var size int64
	for b.Loop() {
		dir := filepath.Join(b.TempDir(), "index")
		idx, err := Open(dir, Options{})
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if err := idx.Rebuild(ctx, func(add func(...Document) error) error {
			for d := docs; len(d) > 0; d = d[min(len(d), batchSize):] {
				if err := add(d[:min(len(d), batchSize)]...); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		total += time.Since(start)
		size = dirSize(dir)
		idx.Close()
	}
	b.ReportMetric(float64(len(docs))*float64(b.N)/total.Seconds(), "docs/s")
	b.ReportMetric(float64(size)/(1<<20), "MiB")
}

// benchIndex opens the cached benchmark index for n work packages, building
// it on first use; the cache lives under os.TempDir() keyed by size and
// MappingVersion so repeated runs skip the build.
func benchIndex(b *testing.B, n int) *Bleve {
	b.Helper()
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("opsearch-bench-%d-v%d", n, MappingVersion))
	idx, err := Open(dir, Options{})
	if err != nil {
		b.Fatal(err)
	}
	if needs, why := idx.NeedsRebuild(); needs {
		b.Logf("building %s (%s)", dir, why)
		docs := benchDocs(n)
		start := time.Now()
		if err := idx.Rebuild(context.Background(), func(add func(...Document) error) error { return add(docs...) }); err != nil {
			b.Fatal(err)
		}
		b.Logf("built %d docs in %v (%.0f docs/s)", len(docs), time.Since(start), float64(len(docs))/time.Since(start).Seconds())
	}
	return idx
}

func BenchmarkSearch(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("%dk", n/1000), func(b *testing.B) {
			if n > 10_000 && testing.Short() {
				b.Skip("100k index in -short mode")
			}
			idx := benchIndex(b, n)
			defer idx.Close()
			ctx := context.Background()
			run := func(q string) {
				if _, err := idx.Search(ctx, SearchOptions{Query: q, Size: 10}); err != nil {
					b.Fatal(err)
				}
			}
			for _, q := range benchQueries { // warm-up
				run(q)
			}
			var lat []time.Duration
			b.ResetTimer()
			for b.Loop() {
				// Each iteration runs every query 3 times.
				for range 3 {
					for _, q := range benchQueries {
						start := time.Now()
						run(q)
						lat = append(lat, time.Since(start))
					}
				}
			}
			b.StopTimer()
			slices.Sort(lat)
			ms := func(p float64) float64 {
				return float64(lat[int(p*float64(len(lat)-1))]) / float64(time.Millisecond)
			}
			b.ReportMetric(ms(0.50), "p50-ms")
			b.ReportMetric(ms(0.99), "p99-ms")
			b.ReportMetric(ms(1), "max-ms")
			b.ReportMetric(float64(dirSize(idx.Dir()))/(1<<20), "MiB")
		})
	}
}

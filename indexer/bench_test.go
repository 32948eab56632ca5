package indexer

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/opgen"
)

// benchDocs generates the benchmark corpus: n work packages with 3n
// comments, 300 wiki pages, 200 meetings and the projects.
func benchDocs(n int) []Document {
	return genDocs(opgen.GenOptions{Seed: 1, WorkPackages: n, Comments: 3 * n, WikiPages: 300, Meetings: 200})
}

// genDocs generates a corpus and turns it into documents.
func genDocs(o opgen.GenOptions) []Document {
	ds := opgen.Generate(o)
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

// peakMem samples the Go heap while a benchmark runs and reports its
// high-water marks: HeapInuse (live spans) and HeapSys (obtained from the
// OS), plus the process's resident high-water mark (VmHWM), which also
// counts the mmapped index segments and the benchmark's own corpus.
type peakMem struct {
	stop            chan struct{}
	done            chan struct{}
	heapInuse, heap uint64
}

func startPeakMem() *peakMem {
	runtime.GC()
	p := &peakMem{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			p.sample()
			select {
			case <-p.stop:
				p.sample()
				return
			case <-t.C:
			}
		}
	}()
	return p
}

func (p *peakMem) sample() {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	p.heapInuse = max(p.heapInuse, ms.HeapInuse)
	p.heap = max(p.heap, ms.HeapSys)
}

// report stops sampling and reports the peaks in MiB.
func (p *peakMem) report(b *testing.B) {
	close(p.stop)
	<-p.done
	b.ReportMetric(float64(p.heapInuse)/(1<<20), "peak-heapinuse-MiB")
	b.ReportMetric(float64(p.heap)/(1<<20), "peak-heapsys-MiB")
	if kb := vmHWM(); kb > 0 {
		b.ReportMetric(float64(kb)/1024, "vmhwm-MiB")
	}
}

// cpuTime is the CPU time (user + system) this process has used so far.
// Reported per document it is robust against other processes competing
// for the cores, which wall-clock docs/s is not.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// vmHWM is the process's peak resident set in KiB, or 0 where
// /proc/self/status is not available.
func vmHWM() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// BenchmarkIndex10k measures what a sync does: documents indexed through
// the normal Index path, in calls of batchSize documents, into a
// fresh index. docs/s is the indexing target (>= 3,000 on 2 cores).
func BenchmarkIndex10k(b *testing.B) {
	docs := benchDocs(10_000)
	ctx := context.Background()
	var total time.Duration
	var size int64
	var cpu time.Duration
	pm := startPeakMem()
	for b.Loop() {
		dir := filepath.Join(b.TempDir(), "index")
		idx, err := Open(dir, Options{})
		if err != nil {
			b.Fatal(err)
		}
		start, cpu0 := time.Now(), cpuTime()
		for d := docs; len(d) > 0; d = d[min(len(d), batchSize):] {
			if err := idx.Index(ctx, d[:min(len(d), batchSize)]...); err != nil {
				b.Fatal(err)
			}
		}
		total += time.Since(start)
		cpu += cpuTime() - cpu0
		size = dirSize(dir)
		idx.Close()
	}
	pm.report(b)
	b.ReportMetric(float64(len(docs))*float64(b.N)/total.Seconds(), "docs/s")
	b.ReportMetric(float64(size)/(1<<20), "MiB")
	b.ReportMetric(cpu.Seconds()*1000*1000/(float64(len(docs))*float64(b.N)), "cpu-ms/kdoc")
}

// BenchmarkRebuild10k measures a full Rebuild (concurrent batches, the
// final merge to one segment and the swap) fed in slices of batchSize.
func BenchmarkRebuild10k(b *testing.B) {
	docs := benchDocs(10_000)
	ctx := context.Background()
	var total time.Duration
	var size int64
	var cpu time.Duration
	pm := startPeakMem()
	for b.Loop() {
		dir := filepath.Join(b.TempDir(), "index")
		idx, err := Open(dir, Options{})
		if err != nil {
			b.Fatal(err)
		}
		start, cpu0 := time.Now(), cpuTime()
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
		cpu += cpuTime() - cpu0
		size = dirSize(dir)
		idx.Close()
	}
	pm.report(b)
	b.ReportMetric(float64(len(docs))*float64(b.N)/total.Seconds(), "docs/s")
	b.ReportMetric(float64(size)/(1<<20), "MiB")
	b.ReportMetric(cpu.Seconds()*1000*1000/(float64(len(docs))*float64(b.N)), "cpu-ms/kdoc")
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
		for _, size := range []int{10, 100} {
			b.Run(fmt.Sprintf("%dk/size=%d", n/1000, size), func(b *testing.B) {
				if n > 10_000 && testing.Short() {
					b.Skip("100k index in -short mode")
				}
				idx := benchIndex(b, n)
				defer idx.Close()
				ctx := context.Background()
				run := func(q string) {
					if _, err := idx.Search(ctx, SearchOptions{Query: q, Size: size}); err != nil {
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
}

// BenchmarkAnalyzeText runs the prose analyzer over the 10k corpus's
// titles, bodies and comments (one op = the whole corpus): the part of
// indexing this package's own code controls.
func BenchmarkAnalyzeText(b *testing.B) {
	var texts [][]byte
	for _, d := range benchDocs(10_000) {
		texts = append(texts, []byte(d.Title), []byte(d.Body))
		for _, c := range d.Comments {
			texts = append(texts, []byte(c))
		}
	}
	m, err := newMapping()
	if err != nil {
		b.Fatal(err)
	}
	a := m.AnalyzerNamed(analyzerText)
	var tokens int
	for b.Loop() {
		tokens = 0
		for _, t := range texts {
			tokens += len(a.Analyze(t))
		}
	}
	b.ReportMetric(float64(tokens), "tokens")
}

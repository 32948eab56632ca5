package eval

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/opsearch/opsearch/eval/querygen"
	"github.com/opsearch/opsearch/indexer"
	"github.com/opsearch/opsearch/internal/spread"
	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
	"github.com/opsearch/opsearch/scorer"
	"github.com/opsearch/opsearch/search"
	"github.com/opsearch/opsearch/store"
	"github.com/opsearch/opsearch/sync"
)

// BenchOptions configure Bench.
type BenchOptions struct {
	// WorkPackages is the generated data set's size (default 10,000; three
	// comments each, the generator's default wiki pages and meetings).
	WorkPackages int
	// Latency is added by the fake server to every request (default
	// 20 ms; negative means none).
	Latency time.Duration
	// Queries is how many labelled work package queries run both ways
	// (default 100), drawn evenly from the generator's kinds.
	Queries int
	// Seed selects data and queries (default 1).
	Seed int64
	// Dir holds the store and index; "" uses a temporary directory that
	// is removed afterwards.
	Dir string
	// Logger receives progress; nil discards.
	Logger *slog.Logger
}

// BenchReport is what Bench measured.
type BenchReport struct {
	WorkPackages int     `json:"workPackages"`
	Comments     int     `json:"comments"`
	LatencyMS    float64 `json:"latencyMs"`
	Machine      string  `json:"machine"`

	Sync BenchSync `json:"sync"`
	// Queries is the number of labelled queries run each way.
	Queries   int         `json:"queries"`
	Opsearch  BenchSearch `json:"opsearch"`
	Reference BenchSearch `json:"reference"`
	// MedianSpeedup is the reference's median latency over opsearch's;
	// P99Speedup likewise.
	MedianSpeedup float64 `json:"medianSpeedup"`
	P99Speedup    float64 `json:"p99Speedup"`
	// RecallGain is opsearch's recall@10 minus the reference's.
	RecallGain float64 `json:"recallGain"`
}

// BenchSync describes the initial and an unchanged re-sync.
type BenchSync struct {
	InitialMS float64 `json:"initialMs"`
	Requests  int     `json:"requests"`
	// Concurrency is the per-item request concurrency the sync settled
	// on (sync.Report.Concurrency), PeakConcurrency the highest it
	// reached and Backoffs how often it was halved.
	Concurrency     int `json:"concurrency"`
	PeakConcurrency int `json:"peakConcurrency"`
	Backoffs        int `json:"backoffs"`
	// FloorMS is the API-bound floor: requests × latency ÷ concurrency.
	FloorMS float64 `json:"floorMs"`
	// Kinds splits the initial sync by kind, in the order they ran, each
	// against its own floor; MergeMS is the index's merge after them.
	Kinds   []BenchKindSync `json:"kinds"`
	MergeMS float64         `json:"mergeMs"`
	// ResyncMS and ResyncRequests are an immediate second sync with no
	// changes on the server.
	ResyncMS       float64 `json:"resyncMs"`
	ResyncRequests int     `json:"resyncRequests"`
	// Documents is the number of documents indexed; IndexDocsPerSec is
	// the throughput of rebuilding the index from the store (no API).
	Documents       int     `json:"documents"`
	IndexDocsPerSec float64 `json:"indexDocsPerSec"`
	// PeakRSSMB is the process's peak resident memory (VmHWM).
	PeakRSSMB float64 `json:"peakRssMb"`
	// IndexMB and StoreMB are the sizes on disk.
	IndexMB float64 `json:"indexMb"`
	StoreMB float64 `json:"storeMb"`
	// Probe is a bare client's requests to the fake before the sync.
	Probe BenchProbe `json:"probe"`
}

// BenchProbe is what a bare client gets from the fake on this machine:
// activity requests, as many at a time as the sync may run, each body
// read whole and not decoded. The sync's floor (requests × latency ÷
// concurrency) counts only the fake's latency; how far above it the
// probe ends is what the fake and the machine's scheduling add to every
// request before the sync does any work of its own (on a 2 vCPU virtual
// machine, 1.08-1.13× at 20 ms), so the sync's own share is the rest.
type BenchProbe struct {
	Requests    int     `json:"requests"`
	Concurrency int     `json:"concurrency"`
	MS          float64 `json:"ms"`
	FloorMS     float64 `json:"floorMs"`
	// MeanRequestMS and MedianRequestMS are from sending a request to
	// its body's last byte.
	MeanRequestMS   float64 `json:"meanRequestMs"`
	MedianRequestMS float64 `json:"medianRequestMs"`
}

// BenchKindSync is one kind's share of the initial sync.
type BenchKindSync struct {
	Kind     kind.Kind `json:"kind"`
	MS       float64   `json:"ms"`
	Requests int       `json:"requests"`
	// FloorMS is the kind's own floor: its requests × latency ÷ the
	// sync's concurrency.
	FloorMS float64 `json:"floorMs"`
	// MeanRequestMS and MedianRequestMS are how long the kind's requests
	// took on average and at the median (sync.KindReport.Latency),
	// against the fake's latency.
	MeanRequestMS   float64 `json:"meanRequestMs,omitempty"`
	MedianRequestMS float64 `json:"medianRequestMs,omitempty"`
}

// BenchSearch is one search method's figures over the query set.
type BenchSearch struct {
	Recall10 float64 `json:"recall@10"`
	MRR10    float64 `json:"mrr@10"`
	MedianMS float64 `json:"medianMs"`
	P99MS    float64 `json:"p99Ms"`
	// RequestsPerQuery counts API requests per query.
	RequestsPerQuery float64 `json:"requestsPerQuery"`
}

// countingTransport counts the HTTP requests a client makes.
type countingTransport struct {
	next http.RoundTripper
	n    atomic.Int64
}

func (t *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	t.n.Add(1)
	return t.next.RoundTrip(r)
}

// Bench starts the fake server in-process with the chosen size and
// latency, syncs it into a fresh store and index, and runs the same
// labelled work package queries through opsearch's index and through the
// reference's live search (ReferenceSearch).
func Bench(ctx context.Context, o BenchOptions) (*BenchReport, error) {
	if o.WorkPackages <= 0 {
		o.WorkPackages = 10000
	}
	benchDefaults(&o.Latency, &o.Queries, &o.Seed)
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	dir := o.Dir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "opsearch-bench-")
		if err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}

	d := opgen.Generate(opgen.GenOptions{Seed: o.Seed, WorkPackages: o.WorkPackages})
	rep := &BenchReport{
		WorkPackages: len(d.WorkPackages), LatencyMS: ms(o.Latency),
		Machine: machine(),
	}
	for _, a := range d.Activities {
		if a.IsComment() {
			rep.Comments++
		}
	}
	fake, err := optest.Listen("127.0.0.1:0", d, optest.Options{Latency: o.Latency})
	if err != nil {
		return nil, fmt.Errorf("bench: listen: %w", err)
	}
	defer fake.Close()

	if rep.Sync.Probe, err = probe(ctx, fake.URL, d, sync.DefaultMaxConcurrency, probeRounds, o.Latency); err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	ct := &countingTransport{next: &http.Transport{MaxIdleConnsPerHost: 64}}
	client, err := openproject.New(openproject.Config{
		BaseURL: fake.URL, APIKey: optest.AdminKey, HTTPClient: &http.Client{Transport: ct},
	})
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	st, err := store.Open(dir, store.Options{})
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	defer st.Close()
	idx, err := indexer.Open(filepath.Join(dir, "index"), indexer.Options{})
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	defer idx.Close()

	w := sync.NewWorker(client, st, idx, sync.Options{})
	log.Info("initial sync", "work_packages", rep.WorkPackages, "latency", o.Latency)
	start := time.Now()
	sr, err := w.Sync(ctx)
	if err != nil {
		return nil, fmt.Errorf("bench: initial sync: %w", err)
	}
	if err := sr.Err(); err != nil {
		return nil, fmt.Errorf("bench: initial sync: %w", err)
	}
	rep.Sync.InitialMS = ms(time.Since(start))
	rep.Sync.Requests = sr.Requests
	rep.Sync.Concurrency, rep.Sync.PeakConcurrency, rep.Sync.Backoffs = sr.Concurrency, sr.PeakConcurrency, sr.Backoffs
	rep.Sync.FloorMS = float64(sr.Requests) * ms(o.Latency) / float64(rep.Sync.Concurrency)
	for _, k := range kind.All() {
		if kr := sr.Kinds[k]; kr != nil {
			rep.Sync.Kinds = append(rep.Sync.Kinds, BenchKindSync{Kind: k, MS: ms(kr.Duration), Requests: kr.Requests,
				FloorMS:       float64(kr.Requests) * ms(o.Latency) / float64(rep.Sync.Concurrency),
				MeanRequestMS: ms(kr.Latency.Mean), MedianRequestMS: ms(kr.Latency.Median)})
		}
	}
	rep.Sync.MergeMS = ms(sr.Merge)

	start = time.Now()
	sr, err = w.Sync(ctx)
	if err != nil {
		return nil, fmt.Errorf("bench: re-sync: %w", err)
	}
	rep.Sync.ResyncMS, rep.Sync.ResyncRequests = ms(time.Since(start)), sr.Requests

	if err := measureRebuild(ctx, st, dir, &rep.Sync); err != nil {
		return nil, err
	}
	rep.Sync.IndexMB = dirMB(filepath.Join(dir, "index"))
	rep.Sync.StoreMB = dirMB(dir) - rep.Sync.IndexMB

	queries := benchQueries(d, o.Seed, o.Queries)
	rep.Queries = len(queries)
	log.Info("running queries", "queries", len(queries))

	eng := search.New(st, idx, search.Options{Crew: spread.NewCrew()})
	var opAcc, refAcc scorer.Accumulator
	var opLat, refLat []time.Duration
	var opReq, refReq int64
	ref := &ReferenceSearch{Client: client}
	// Each side runs its queries as a block, after a collection, as two
	// servers would each run on their own. Interleaved, each opsearch
	// query ran right after the reference's 52 requests, among their
	// garbage and the fake's work for them: the median measured 3.97 ms
	// that way, 2.61 and 3.06 ms in blocks (10,000 work packages, one run
	// each).
	runtime.GC()
	for _, q := range queries {
		before := ct.n.Load()
		t0 := time.Now()
		resp, err := eng.Search(ctx, search.Query{Text: q.Query, PageSize: K})
		if err != nil {
			return nil, fmt.Errorf("bench: opsearch %s: %w", q.ID, err)
		}
		opLat = append(opLat, time.Since(t0))
		opReq += ct.n.Load() - before
		ranked := make([]scorer.Target, 0, len(resp.Results))
		for _, r := range resp.Results {
			ranked = append(ranked, scorer.Target{Type: string(r.Kind), ID: r.ID})
		}
		opAcc.Add(q, ranked)
	}
	runtime.GC()
	for _, q := range queries {
		before := ct.n.Load()
		t0 := time.Now()
		hits, err := ref.Search(ctx, q.Query, K)
		if err != nil {
			return nil, fmt.Errorf("bench: reference %s: %w", q.ID, err)
		}
		refLat = append(refLat, time.Since(t0))
		refReq += ct.n.Load() - before
		ranked := make([]scorer.Target, 0, len(hits))
		for _, h := range hits {
			ranked = append(ranked, scorer.Target{Type: "work_package", ID: h.ID})
		}
		refAcc.Add(q, ranked)
	}
	rep.Opsearch = benchSearch(opAcc.Metrics(), opLat, opReq, len(queries))
	rep.Reference = benchSearch(refAcc.Metrics(), refLat, refReq, len(queries))
	if rep.Opsearch.MedianMS > 0 {
		rep.MedianSpeedup = rep.Reference.MedianMS / rep.Opsearch.MedianMS
	}
	if rep.Opsearch.P99MS > 0 {
		rep.P99Speedup = rep.Reference.P99MS / rep.Opsearch.P99MS
	}
	rep.RecallGain = rep.Opsearch.Recall10 - rep.Reference.Recall10
	rep.Sync.PeakRSSMB = peakRSSMB()
	return rep, nil
}

func benchSearch(m scorer.Metrics, lat []time.Duration, requests int64, n int) BenchSearch {
	return BenchSearch{
		Recall10: m.Recall10, MRR10: m.MRR10,
		MedianMS: Percentile(lat, 0.5), P99MS: Percentile(lat, 0.99),
		RequestsPerQuery: float64(requests) / float64(max(n, 1)),
	}
}

// probeRounds is how many requests each of the probe's slots makes: a
// second's worth at 20 ms.
const probeRounds = 50

// probe runs conc×rounds activity requests against the fake at baseURL,
// conc at a time, over d's work packages, with a plain HTTP client that
// reads each (gzipped) body and decodes nothing (BenchProbe).
func probe(ctx context.Context, baseURL string, d *optest.Dataset, conc, rounds int, latency time.Duration) (BenchProbe, error) {
	n := conc * rounds
	if len(d.WorkPackages) == 0 {
		return BenchProbe{}, nil
	}
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conc}}
	defer hc.CloseIdleConnections()
	lat := make([]time.Duration, n)
	var next atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	start := time.Now()
	for range conc {
		g.Go(func() error {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				id := d.WorkPackages[i%len(d.WorkPackages)].ID
				req, err := http.NewRequestWithContext(gctx, http.MethodGet, fmt.Sprintf("%s/api/v3/work_packages/%d/activities", baseURL, id), nil)
				if err != nil {
					return fmt.Errorf("probe: %w", err)
				}
				req.SetBasicAuth("apikey", optest.AdminKey)
				req.Header.Set("Accept-Encoding", "gzip") // as the client asks; not decompressed here
				began := time.Now()
				resp, err := hc.Do(req)
				if err != nil {
					return fmt.Errorf("probe: %w", err)
				}
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if err != nil {
					return fmt.Errorf("probe: read work package %d's activities: %w", id, err)
				}
				if resp.StatusCode != http.StatusOK {
					return fmt.Errorf("probe: work package %d's activities: %s", id, resp.Status)
				}
				lat[i] = time.Since(began)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return BenchProbe{}, err
	}
	took := time.Since(start)
	var sum time.Duration
	for _, l := range lat {
		sum += l
	}
	return BenchProbe{
		Requests: n, Concurrency: conc, MS: ms(took), FloorMS: float64(n) * ms(latency) / float64(conc),
		MeanRequestMS: ms(sum / time.Duration(n)), MedianRequestMS: Percentile(lat, 0.5),
	}, nil
}

// benchQueries draws n labelled queries that target work packages (the
// only kind the reference's live search covers), round-robin over kinds.
func benchQueries(d *optest.Dataset, seed int64, n int) []scorer.LabelledQuery {
	all := querygen.Generate(d, querygen.Options{Seed: seed, PerKind: n})
	byKind := map[string][]scorer.LabelledQuery{}
	var kinds []string
	for _, q := range all {
		if len(q.Expect) == 0 || q.Expect[0].Type != "work_package" {
			continue
		}
		if _, ok := byKind[q.Kind]; !ok {
			kinds = append(kinds, q.Kind)
		}
		byKind[q.Kind] = append(byKind[q.Kind], q)
	}
	var out []scorer.LabelledQuery
	for i := 0; len(out) < n; i++ {
		added := false
		for _, k := range kinds {
			if i < len(byKind[k]) && len(out) < n {
				out = append(out, byKind[k][i])
				added = true
			}
		}
		if !added {
			break
		}
	}
	return out
}

// measureRebuild rebuilds a second index from the store (no API) to
// measure indexing throughput, then removes it.
func measureRebuild(ctx context.Context, st *store.Store, dir string, s *BenchSync) error {
	rdir := filepath.Join(dir, "rebuild-index")
	idx, err := indexer.Open(rdir, indexer.Options{})
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	defer os.RemoveAll(rdir)
	defer idx.Close()
	var docs int
	start := time.Now()
	if err := sync.RebuildIndex(ctx, st, idx, func(done, _ int) { docs = done }); err != nil {
		return fmt.Errorf("bench: rebuild: %w", err)
	}
	took := time.Since(start)
	s.Documents = docs
	if took > 0 {
		s.IndexDocsPerSec = float64(docs) / took.Seconds()
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// dirMB is the total size of the files under dir, in MiB.
func dirMB(dir string) float64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, e fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if info, err := e.Info(); err == nil && info.Mode().IsRegular() {
			n += info.Size()
		}
		return nil
	})
	return float64(n) / (1 << 20)
}

// peakRSSMB reads VmHWM from /proc/self/status (Linux); 0 elsewhere.
func peakRSSMB() float64 {
	v, _ := procField("/proc/self/status", "VmHWM:")
	kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
	if err != nil {
		return 0
	}
	return kb / 1024
}

// cpuModel names the CPU from /proc/cpuinfo (Linux), or "unknown CPU".
func cpuModel() string {
	v, err := procField("/proc/cpuinfo", "model name")
	if err != nil || v == "" {
		return "unknown CPU"
	}
	return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
}

func procField(path, prefix string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, prefix) {
			return strings.TrimPrefix(line, prefix), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", errors.New(prefix + " not found")
}

// WriteText prints the report as a table a person can read.
func (r *BenchReport) WriteText(w io.Writer) {
	fmt.Fprintf(w, "data: %d work packages, %d comments; fake server latency %.0f ms per request\n", r.WorkPackages, r.Comments, r.LatencyMS)
	fmt.Fprintf(w, "machine: %s\n\n", r.Machine)
	s := r.Sync
	if p := s.Probe; p.Requests > 0 {
		fmt.Fprintf(w, "bare client       %10.0f ms  (%d activity requests, %d at a time, before the sync, bodies read and not decoded:\n", p.MS, p.Requests, p.Concurrency)
		fmt.Fprintf(w, "                                %.1f ms on average, %.1f ms at the median; %.2f× their floor: what the fake and this machine allow)\n",
			p.MeanRequestMS, p.MedianRequestMS, p.MS/max(p.FloorMS, 1))
	}
	fmt.Fprintf(w, "initial sync      %10.0f ms  (%d requests; API-bound floor %d × %.0f ms ÷ %d = %.0f ms, %.2f× the floor;\n",
		s.InitialMS, s.Requests, s.Requests, r.LatencyMS, s.Concurrency, s.FloorMS, s.InitialMS/max(s.FloorMS, 1))
	fmt.Fprintf(w, "                                concurrency chosen %d, at most %d, %d backoffs)\n", s.Concurrency, s.PeakConcurrency, s.Backoffs)
	for _, k := range s.Kinds {
		fmt.Fprintf(w, "  %-15s %10.0f ms  (%d requests of %.1f ms on average, %.1f ms at the median; floor %.0f ms, %.2f× it)\n",
			k.Kind, k.MS, k.Requests, k.MeanRequestMS, k.MedianRequestMS, k.FloorMS, k.MS/max(k.FloorMS, 1))
	}
	if s.MergeMS > 0 {
		fmt.Fprintf(w, "  %-15s %10.0f ms  (the index's merge after the writes)\n", "merge", s.MergeMS)
	}
	fmt.Fprintf(w, "unchanged re-sync %10.0f ms  (%d requests)\n", s.ResyncMS, s.ResyncRequests)
	fmt.Fprintf(w, "indexing          %10.0f docs/s (rebuild of %d documents from the store)\n", s.IndexDocsPerSec, s.Documents)
	fmt.Fprintf(w, "peak memory       %10.1f MiB (VmHWM)\n", s.PeakRSSMB)
	fmt.Fprintf(w, "on disk           %10.1f MiB index + %.1f MiB store\n\n", s.IndexMB, s.StoreMB)
	fmt.Fprintf(w, "%d labelled work package queries      %12s %12s %10s\n", r.Queries, "opsearch", "reference", "ratio")
	row := func(name string, a, b float64, ratio string) {
		fmt.Fprintf(w, "  %-36s %12.4f %12.4f %10s\n", name, a, b, ratio)
	}
	row("recall@10", r.Opsearch.Recall10, r.Reference.Recall10, fmt.Sprintf("%+.4f", r.RecallGain))
	row("MRR@10", r.Opsearch.MRR10, r.Reference.MRR10, fmt.Sprintf("%+.4f", r.Opsearch.MRR10-r.Reference.MRR10))
	row("median latency (ms)", r.Opsearch.MedianMS, r.Reference.MedianMS, fmt.Sprintf("%.0f×", r.MedianSpeedup))
	row("p99 latency (ms)", r.Opsearch.P99MS, r.Reference.P99MS, fmt.Sprintf("%.0f×", r.P99Speedup))
	row("API requests per query", r.Opsearch.RequestsPerQuery, r.Reference.RequestsPerQuery, "")
}

// benchDefaults fills the options Bench and BenchScale share: 20 ms of
// added latency (negative: none), 100 queries, seed 1.
func benchDefaults(latency *time.Duration, queries *int, seed *int64) {
	switch {
	case *latency == 0:
		*latency = 20 * time.Millisecond
	case *latency < 0:
		*latency = 0
	}
	if *queries <= 0 {
		*queries = 100
	}
	*seed = cmp.Or(*seed, 1)
}

package eval

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"time"

	"github.com/opsearch/opsearch/indexer"
	"github.com/opsearch/opsearch/internal/spread"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
	"github.com/opsearch/opsearch/scorer"
	"github.com/opsearch/opsearch/search"
	"github.com/opsearch/opsearch/store"
	"github.com/opsearch/opsearch/sync"
)

// Defaults of ScaleOptions.
const (
	// DefaultDirectAbove is the largest size synced over HTTP: a first
	// sync of more would take most of an hour at 20 ms per request, and
	// the fake holding the data set in the same process would dominate
	// the memory measured.
	DefaultDirectAbove = 200_000
	// DefaultLabelSample is how many work packages the queries of a
	// directly built point are labelled on (see ScalePoint.LabelledOn):
	// labelling checks every query against the whole corpus, which at a
	// million work packages takes longer and more memory than the build.
	DefaultLabelSample = 50_000
)

// ScaleOptions configure BenchScale.
type ScaleOptions struct {
	// Sizes are the work package counts, one point each, in order.
	Sizes []int
	// Latency is added by the fake to every request of the points synced
	// over HTTP (default 20 ms; negative means none).
	Latency time.Duration
	// Queries is how many labelled work package queries each point runs
	// (default 100).
	Queries int
	// Seed selects data and queries (default 1).
	Seed int64
	// DirectAbove: sizes above it are built straight from the generated
	// documents (written to the store, then indexed from it) instead of
	// syncing them over HTTP. Default DefaultDirectAbove; negative means
	// every size is synced.
	DirectAbove int
	// LabelSample bounds the work packages the queries of a directly
	// built point are labelled on (default DefaultLabelSample).
	LabelSample int
	// Dir holds each point's store and index in a subdirectory, kept
	// afterwards; "" uses temporary ones, removed after each point.
	Dir string
	// Reuse searches a point Dir already holds, built by an earlier run
	// with the same seed, way of building and index mapping, instead of
	// building it again: its build figures are the earlier run's
	// (ScalePoint.Reused). Query latency at a million work packages can
	// then be measured again in minutes, not a quarter of an hour.
	Reuse bool
	// Logger receives progress; nil discards.
	Logger *slog.Logger
}

// ScaleReport is what BenchScale measured, one point per size.
type ScaleReport struct {
	Machine   string       `json:"machine"`
	LatencyMS float64      `json:"latencyMs"`
	Points    []ScalePoint `json:"points"`
}

// How a point was built (ScalePoint.Built).
const (
	BuiltSync   = "sync"
	BuiltDirect = "direct"
)

// ScalePoint is one size's figures.
type ScalePoint struct {
	WorkPackages int `json:"workPackages"`
	Comments     int `json:"comments"`
	// Documents is the number of documents indexed (every kind).
	Documents int `json:"documents"`
	// Built is BuiltSync (a first sync over HTTP from the in-process fake
	// at the report's latency) or BuiltDirect (the generated entities
	// written to the store in batches, then the index rebuilt from it, as
	// sync.RebuildIndex does: no HTTP, no fake).
	Built string `json:"built"`
	// BuildMS is the time from an empty directory to a searchable index
	// (the sync, or the store writes and the rebuild); DocsPerSec is
	// Documents over it.
	BuildMS    float64 `json:"buildMs"`
	DocsPerSec float64 `json:"docsPerSec"`
	// Requests, Concurrency and FloorMS describe a synced point: the API
	// requests, the per-item concurrency the sync settled on, and the
	// API-bound floor requests × latency ÷ concurrency.
	Requests    int     `json:"requests,omitempty"`
	Concurrency int     `json:"concurrency,omitempty"`
	FloorMS     float64 `json:"floorMs,omitempty"`
	// IndexMB and StoreMB are the sizes on disk after the build.
	IndexMB float64 `json:"indexMb"`
	StoreMB float64 `json:"storeMb"`
	// Queries is the number of labelled work package queries run, and
	// LabelledOn the number of work packages they were labelled on: all
	// of them, or for a direct point above LabelSample the first
	// LabelSample. Such a query is unambiguous within the sample only, so
	// its recall is a lower bound: a work package outside the sample may
	// hold the same words.
	Queries    int `json:"queries"`
	LabelledOn int `json:"labelledOn"`
	// Recall10 and MRR10 are over the queries, through the whole search
	// pipeline (search.Engine: index candidates, store hydration,
	// re-ranking); SearchP50MS and SearchP99MS are its latencies, each
	// query timed once after one untimed round.
	Recall10    float64 `json:"recall@10"`
	MRR10       float64 `json:"mrr@10"`
	SearchP50MS float64 `json:"searchP50Ms"`
	SearchP99MS float64 `json:"searchP99Ms"`
	// BuildRSSMB is the process's peak resident memory (VmHWM) during the
	// build. It includes the generated data set, which the in-process
	// fake serves during a sync and which a direct build holds while it
	// writes the store (not while it indexes). SearchRSSMB is the peak
	// while searching, with only the store and index open. IndexRSSMB,
	// of a direct point, is the peak while the index was built from the
	// store, the data set released: what a rebuild costs.
	BuildRSSMB  float64 `json:"buildRssMb"`
	IndexRSSMB  float64 `json:"indexRssMb,omitempty"`
	SearchRSSMB float64 `json:"searchRssMb"`
	// Reused is true when the store and index were an earlier run's
	// (ScaleOptions.Reuse): every build figure above is that run's.
	Reused bool `json:"reused,omitempty"`
}

// pointFile, in a kept point's directory, records the finished build:
// the point's build figures and what the build depends on.
const pointFile = "point.json"

// builtPoint is pointFile's content.
type builtPoint struct {
	Seed           int64      `json:"seed"`
	MappingVersion int        `json:"mappingVersion"`
	Point          ScalePoint `json:"point"`
}

// BenchScale builds a store and index for each size and measures the
// build, the sizes on disk, search latency and recall, and memory.
// Points run one after another in this process; each starts from an
// empty directory and a collected heap, and the peak-memory mark is reset
// between phases (Linux), so a point's figures are its own.
func BenchScale(ctx context.Context, o ScaleOptions) (*ScaleReport, error) {
	if len(o.Sizes) == 0 {
		return nil, errors.New("bench: no sizes")
	}
	for _, n := range o.Sizes {
		if n <= 0 {
			return nil, fmt.Errorf("bench: size %d: want a positive number of work packages", n)
		}
	}
	benchDefaults(&o.Latency, &o.Queries, &o.Seed)
	if o.DirectAbove == 0 {
		o.DirectAbove = DefaultDirectAbove
	}
	if o.LabelSample <= 0 {
		o.LabelSample = DefaultLabelSample
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	rep := &ScaleReport{Machine: machine(), LatencyMS: ms(o.Latency)}
	for _, n := range o.Sizes {
		p, err := scalePoint(ctx, o, n)
		if err != nil {
			return nil, fmt.Errorf("bench: %d work packages: %w", n, err)
		}
		rep.Points = append(rep.Points, *p)
	}
	return rep, nil
}

// scalePoint measures one size.
func scalePoint(ctx context.Context, o ScaleOptions, n int) (*ScalePoint, error) {
	direct := o.DirectAbove >= 0 && n > o.DirectAbove
	p := &ScalePoint{WorkPackages: n, Built: BuiltSync}
	if direct {
		p.Built = BuiltDirect
	}
	log := o.Logger.With("work_packages", n, "built", p.Built)
	if o.Reuse && o.Dir != "" {
		if prev, ok := reusablePoint(o.Dir, n, o.Seed, p.Built); ok {
			log.Info("reusing the store and index built earlier", "dir", pointPath(o.Dir, n))
			return searchReused(ctx, o, prev, log)
		}
	}
	dir, cleanup, err := pointDir(o.Dir, n)
	if err != nil {
		return nil, err
	}
	defer cleanup()

	freeMemory()
	log.Info("generating data")
	d := opgen.Generate(opgen.GenOptions{Seed: o.Seed, WorkPackages: n})
	for _, a := range d.Activities {
		if a.IsComment() {
			p.Comments++
		}
	}
	labelled := d
	if direct && n > o.LabelSample {
		labelled = sampleDataset(d, o.LabelSample)
	}
	p.LabelledOn = len(labelled.WorkPackages)
	log.Info("labelling queries", "on", p.LabelledOn)
	queries := benchQueries(labelled, o.Seed, o.Queries)
	labelled = nil
	p.Queries = len(queries)
	freeMemory() // labelling's own peak is not the build's

	st, idx, closePoint, err := openPoint(dir)
	if err != nil {
		return nil, err
	}
	defer closePoint()

	log.Info("building")
	start := time.Now()
	var writePeak float64
	if direct {
		err = buildDirect(ctx, d, st, idx, func() {
			writePeak = peakRSSMB()
			d = nil
			freeMemory()
		})
	} else {
		err = buildSync(ctx, d, o.Latency, st, idx, p)
	}
	if err != nil {
		return nil, err
	}
	took := time.Since(start)
	p.BuildRSSMB = peakRSSMB()
	if direct {
		p.IndexRSSMB = p.BuildRSSMB
		p.BuildRSSMB = max(writePeak, p.BuildRSSMB)
	}
	p.BuildMS = ms(took)
	p.FloorMS = float64(p.Requests) * ms(o.Latency) / float64(max(p.Concurrency, 1))
	d = nil
	for _, k := range indexer.Kinds() {
		c, err := st.Count(k)
		if err != nil {
			return nil, err
		}
		p.Documents += c
	}
	p.DocsPerSec = float64(p.Documents) / max(took.Seconds(), 1e-9)
	p.IndexMB = dirMB(filepath.Join(dir, "index"))
	p.StoreMB = dirMB(dir) - p.IndexMB

	if o.Dir != "" {
		if err := writePoint(dir, o.Seed, p); err != nil {
			return nil, err
		}
	}

	freeMemory()
	log.Info("searching", "queries", len(queries))
	if err := searchPoint(ctx, st, idx, queries, p); err != nil {
		return nil, err
	}
	p.SearchRSSMB = peakRSSMB()
	return p, nil
}

// openPoint opens a point's store and index in dir; closePoint closes
// both.
func openPoint(dir string) (st *store.Store, idx *indexer.Bleve, closePoint func(), err error) {
	if st, err = store.Open(dir, store.Options{}); err != nil {
		return nil, nil, nil, err
	}
	if idx, err = indexer.Open(filepath.Join(dir, "index"), indexer.Options{}); err != nil {
		st.Close()
		return nil, nil, nil, err
	}
	return st, idx, func() { idx.Close(); st.Close() }, nil
}

// pointPath is the directory of the point of n work packages under base.
func pointPath(base string, n int) string {
	return filepath.Join(base, fmt.Sprintf("wp-%d", n))
}

// writePoint records a finished build in its directory.
func writePoint(dir string, seed int64, p *ScalePoint) error {
	b, err := json.MarshalIndent(builtPoint{Seed: seed, MappingVersion: indexer.MappingVersion, Point: *p}, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", pointFile, err)
	}
	if err := os.WriteFile(filepath.Join(dir, pointFile), b, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", pointFile, err)
	}
	return nil
}

// reusablePoint returns the build recorded under base for n work
// packages, if it was built the same way from the same seed for this
// index mapping.
func reusablePoint(base string, n int, seed int64, built string) (*ScalePoint, bool) {
	b, err := os.ReadFile(filepath.Join(pointPath(base, n), pointFile))
	if err != nil {
		return nil, false
	}
	var bp builtPoint
	if json.Unmarshal(b, &bp) != nil || bp.Seed != seed || bp.MappingVersion != indexer.MappingVersion ||
		bp.Point.WorkPackages != n || bp.Point.Built != built {
		return nil, false
	}
	return &bp.Point, true
}

// searchReused measures search on a point an earlier run built: the same
// queries (generated and labelled again from the seed), the build
// figures as recorded.
func searchReused(ctx context.Context, o ScaleOptions, prev *ScalePoint, log *slog.Logger) (*ScalePoint, error) {
	p := *prev
	p.Reused = true
	freeMemory()
	d := opgen.Generate(opgen.GenOptions{Seed: o.Seed, WorkPackages: p.WorkPackages})
	if p.Built == BuiltDirect && p.WorkPackages > o.LabelSample {
		d = sampleDataset(d, o.LabelSample)
	}
	log.Info("labelling queries", "on", len(d.WorkPackages))
	queries := benchQueries(d, o.Seed, o.Queries)
	d = nil
	p.Queries, p.LabelledOn = len(queries), o.LabelSample
	if p.Built != BuiltDirect || p.WorkPackages <= o.LabelSample {
		p.LabelledOn = p.WorkPackages
	}
	dir := pointPath(o.Dir, p.WorkPackages)
	st, idx, closePoint, err := openPoint(dir)
	if err != nil {
		return nil, err
	}
	defer closePoint()
	freeMemory()
	log.Info("searching", "queries", len(queries))
	if err := searchPoint(ctx, st, idx, queries, &p); err != nil {
		return nil, err
	}
	p.SearchRSSMB = peakRSSMB()
	return &p, nil
}

// pointDir returns the directory of the point of n work packages and a
// function that removes it if it is temporary.
func pointDir(base string, n int) (string, func(), error) {
	if base == "" {
		tmp, err := os.MkdirTemp("", "opsearch-bench-scale-")
		return tmp, func() { os.RemoveAll(tmp) }, err
	}
	dir := pointPath(base, n)
	if err := os.RemoveAll(dir); err != nil {
		return "", nil, err
	}
	return dir, func() {}, os.MkdirAll(dir, 0o700)
}

// freeMemory returns the heap to the OS and resets the peak-memory mark
// (VmHWM), so the next peak read is the coming phase's.
func freeMemory() {
	runtime.GC()
	debug.FreeOSMemory()
	// "5" resets the peak resident set size (Linux 4.0 on); elsewhere the
	// file is missing and the peak stays the process's.
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// sampleDataset is d with only its first n work packages and their
// activities: the data queries are labelled on when the whole set is too
// large to label.
func sampleDataset(d *optest.Dataset, n int) *optest.Dataset {
	s := *d
	s.WorkPackages = d.WorkPackages[:n]
	last := d.WorkPackages[n-1].ID
	s.Activities = nil
	for _, a := range d.Activities {
		if a.WorkPackageID <= last {
			s.Activities = append(s.Activities, a)
		}
	}
	return &s
}

// buildSync runs a first sync from the fake serving d at latency.
func buildSync(ctx context.Context, d *optest.Dataset, latency time.Duration, st *store.Store, idx *indexer.Bleve, p *ScalePoint) error {
	fake, err := optest.Listen("127.0.0.1:0", d, optest.Options{Latency: latency})
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	defer fake.Close()
	client, err := openproject.New(openproject.Config{
		BaseURL: fake.URL, APIKey: optest.AdminKey,
		HTTPClient: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}},
	})
	if err != nil {
		return err
	}
	rep, err := sync.NewWorker(client, st, idx, sync.Options{}).Sync(ctx)
	if err == nil {
		err = rep.Err()
	}
	if err != nil {
		return fmt.Errorf("sync: %w", err)
	}
	p.Requests, p.Concurrency = rep.Requests, rep.Concurrency
	return nil
}

// directBatch is the number of work packages written per store
// transaction by a direct build.
const directBatch = 1000

// buildDirect writes d's entities to st in batches, calls release (which
// drops d), then rebuilds idx from st: the index is built from a stream
// of documents, as sync.RebuildIndex builds it, with nothing of the data
// set in memory.
func buildDirect(ctx context.Context, d *optest.Dataset, st *store.Store, idx *indexer.Bleve, release func()) error {
	// Activities are in id (time) order; group them by work package
	// through a permutation rather than a second copy.
	order := make([]int32, len(d.Activities))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortStableFunc(order, func(a, b int32) int {
		return cmp.Compare(d.Activities[a].WorkPackageID, d.Activities[b].WorkPackageID)
	})
	if err := st.Update(ctx, func(tx *store.WriteTx) error {
		for _, p := range d.Projects {
			if err := tx.PutProject(p.Project); err != nil {
				return err
			}
		}
		for _, w := range d.WikiPages {
			if err := tx.PutWikiPage(w); err != nil {
				return err
			}
		}
		for _, m := range d.Meetings {
			if err := tx.PutMeeting(m); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("write store: %w", err)
	}
	next := 0 // into order
	var acts []openproject.Activity
	for lo := 0; lo < len(d.WorkPackages); lo += directBatch {
		wps := d.WorkPackages[lo:min(lo+directBatch, len(d.WorkPackages))]
		if err := st.Update(ctx, func(tx *store.WriteTx) error {
			for _, wp := range wps {
				acts = acts[:0]
				for ; next < len(order) && d.Activities[order[next]].WorkPackageID == wp.ID; next++ {
					acts = append(acts, d.Activities[order[next]])
				}
				if err := tx.PutWorkPackage(wp); err != nil {
					return err
				}
				if err := tx.PutActivities(wp.ID, acts); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return fmt.Errorf("write store: %w", err)
		}
	}
	d, order, acts = nil, nil, nil
	release()
	if err := sync.RebuildIndex(ctx, st, idx, nil); err != nil {
		return err
	}
	return nil
}

// searchPoint runs queries through the whole search pipeline, once
// untimed to warm the caches, then timed.
func searchPoint(ctx context.Context, st *store.Store, idx *indexer.Bleve, queries []scorer.LabelledQuery, p *ScalePoint) error {
	eng := search.New(st, idx, search.Options{Crew: spread.NewCrew()})
	run := func(q scorer.LabelledQuery) ([]scorer.Target, error) {
		resp, err := eng.Search(ctx, search.Query{Text: q.Query, PageSize: K})
		if err != nil {
			return nil, fmt.Errorf("search %s: %w", q.ID, err)
		}
		ranked := make([]scorer.Target, 0, len(resp.Results))
		for _, r := range resp.Results {
			ranked = append(ranked, scorer.Target{Type: string(r.Kind), ID: r.ID})
		}
		return ranked, nil
	}
	for _, q := range queries {
		if _, err := run(q); err != nil {
			return err
		}
	}
	var acc scorer.Accumulator
	lat := make([]time.Duration, 0, len(queries))
	for _, q := range queries {
		t0 := time.Now()
		ranked, err := run(q)
		if err != nil {
			return err
		}
		lat = append(lat, time.Since(t0))
		acc.Add(q, ranked)
	}
	m := acc.Metrics()
	p.Recall10, p.MRR10 = m.Recall10, m.MRR10
	p.SearchP50MS, p.SearchP99MS = Percentile(lat, 0.5), Percentile(lat, 0.99)
	return nil
}

// machine describes this machine for a report.
func machine() string {
	return fmt.Sprintf("%s/%s, %d CPUs, %s, %s", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), cpuModel(), runtime.Version())
}

// WriteText prints the report as a table, with a line per point on how
// it was built.
func (r *ScaleReport) WriteText(w io.Writer) {
	fmt.Fprintf(w, "machine: %s\n\n", r.Machine)
	fmt.Fprintf(w, "%12s %8s %10s %9s %9s %9s %8s %8s %9s %7s %10s %10s\n",
		"work pkgs", "built", "build s", "docs/s", "index MiB", "store MiB", "p50 ms", "p99 ms", "recall@10", "MRR@10", "build RSS", "search RSS")
	for _, p := range r.Points {
		fmt.Fprintf(w, "%12d %8s %10.1f %9.0f %9.1f %9.1f %8.2f %8.2f %9.4f %7.4f %8.0f M %8.0f M\n",
			p.WorkPackages, p.Built, p.BuildMS/1000, p.DocsPerSec, p.IndexMB, p.StoreMB,
			p.SearchP50MS, p.SearchP99MS, p.Recall10, p.MRR10, p.BuildRSSMB, p.SearchRSSMB)
	}
	fmt.Fprintln(w)
	for _, p := range r.Points {
		fmt.Fprintf(w, "%d work packages, %d comments, %d documents: ", p.WorkPackages, p.Comments, p.Documents)
		switch p.Built {
		case BuiltSync:
			fmt.Fprintf(w, "first sync over HTTP from the in-process fake at %.0f ms per request, %d requests, concurrency %d", r.LatencyMS, p.Requests, p.Concurrency)
			if p.FloorMS > 0 {
				fmt.Fprintf(w, " (API-bound floor %.1f s, %.2f× the floor)", p.FloorMS/1000, p.BuildMS/p.FloorMS)
			}
		case BuiltDirect:
			fmt.Fprintf(w, "built straight from the generated documents (store written in batches, index rebuilt from it; no HTTP, no sync; %.0f MiB peak while indexing)", p.IndexRSSMB)
		}
		if p.Reused {
			fmt.Fprint(w, "; built by an earlier run (--reuse), whose build figures these are")
		}
		fmt.Fprintf(w, "; %d queries labelled on %d work packages", p.Queries, p.LabelledOn)
		if p.LabelledOn < p.WorkPackages {
			fmt.Fprint(w, " (a sample: recall is a lower bound)")
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "\nbuild RSS includes the generated data set (served by the in-process fake during a sync, held by a direct build while it writes the store); search RSS is with only the store and index open.")
}

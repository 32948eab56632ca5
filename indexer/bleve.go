package indexer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"weak"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/index/scorch/mergeplan"
	"github.com/blevesearch/bleve/v2/mapping"
	index "github.com/blevesearch/bleve_index_api"
	"github.com/opsearch/opsearch/internal/spread"
	"github.com/opsearch/opsearch/kind"
	berrors "go.etcd.io/bbolt/errors"
)

// MappingVersion identifies the index mapping and analysis. Bump it whenever
// a field, analyzer or token filter changes: an index built with another
// version is reported by NeedsRebuild and rebuilt from the store.
// 2: no stored fields, status not indexed. 9: one catch-all field for
// retrieval (with the kind noun and the thesaurus), tf-idf. 10: formattable
// text indexed as plain text (openproject.PlainText). 11: package fold
// instead of bleve's asciifolding (Greek and Cyrillic marks too). 12:
// attachments, with their container's kind and document id.
const MappingVersion = 12

// metaFile is the small file, inside the index directory, that records the
// mapping version a complete build used. Rebuild writes it last, so a
// missing file means the index was never (completely) built.
const metaFile = "opsearch_meta.json"

// batchSize is the number of documents per bleve batch: measured 500-1000
// is the sweet spot for speed (smaller is slower, larger holds more
// analysed text in memory without getting faster), and the lower end
// holds half as much. BenchmarkIndex10k on 2 vCPUs, three runs each:
// 2,244-2,420 docs/s with a peak heap of 130-134 MiB (VmHWM 173-180
// MiB) at 500, against 2,111-2,449 docs/s and 206-225 MiB (255-268 MiB)
// at 1000. A first sync of 100,000 work packages at zero latency peaked
// at 292,532 and 296,416 KiB instead of 304,060-310,504 KiB, in the same
// time; its peak is now the final merge, not the crawl.
const batchSize = 500

// rebuildWorkers is the number of batches a Rebuild applies concurrently.
const rebuildWorkers = 2

// ErrLocked reports that another process (or another Open in this one)
// holds the index.
var ErrLocked = errors.New("index locked by another opener")

// ErrClosed reports use of a closed index.
var ErrClosed = errors.New("index closed")

// Options configure Open.
type Options struct {
	// LockTimeout is how long Open waits for another opener's lock before
	// failing with ErrLocked. Default 1s.
	LockTimeout time.Duration
	// Thesaurus is the synonym groups the index expands query words
	// with; nil means BuiltinThesaurus. An index built with other groups
	// is rebuilt (NeedsRebuild).
	Thesaurus Thesaurus
}

// Bleve is the bleve (scorch, on disk) implementation of Index. Searches,
// writes and a Rebuild may run concurrently; Rebuild swaps the new index in
// under a short write lock, so a search always sees an open index.
type Bleve struct {
	dir     string
	opts    Options
	mapping *mapping.IndexMappingImpl

	// rebuildMu serialises Rebuild calls.
	rebuildMu sync.Mutex

	mu       sync.RWMutex
	idx      bleve.Index // nil once closed
	building bleve.Index // the index a Rebuild is filling, or nil
	needs    bool
	reason   string

	// written counts the documents indexed or deleted since the index
	// was last merged into one segment (Settle).
	written atomic.Int64

	// views caches what restricted searches of the current snapshot
	// share (visibleReader).
	views visibleViews
	// lookups caches what planning looked up in the current snapshot,
	// for unrestricted readers (restricted ones keep theirs in views).
	lookups snapshotLookups

	// splitPostings replaces minSplitPostings when set: tests split
	// queries on small indexes.
	splitPostings uint64
	// partPostings replaces minPartPostings when set: tests collect
	// small requests in parts.
	partPostings uint64
}

var _ Index = (*Bleve)(nil)

type meta struct {
	MappingVersion int       `json:"mappingVersion"`
	Thesaurus      string    `json:"thesaurus,omitempty"`
	BuiltAt        time.Time `json:"builtAt"`
}

// Open opens the index in dir, creating it when missing. A damaged index
// (one bleve cannot open) is moved aside and deleted, and a fresh one is
// created; NeedsRebuild then reports why the caller should refill it. An
// index held by another opener fails with ErrLocked after opts.LockTimeout.
func Open(dir string, opts Options) (*Bleve, error) {
	if opts.LockTimeout <= 0 {
		opts.LockTimeout = time.Second
	}
	if opts.Thesaurus == nil {
		opts.Thesaurus = BuiltinThesaurus()
	}
	m, err := newMapping()
	if err != nil {
		return nil, fmt.Errorf("build mapping: %w", err)
	}
	b := &Bleve{dir: dir, opts: opts, mapping: m}

	idx, openErr := b.openDir(dir)
	switch {
	case openErr == nil:
		b.idx = idx
	case errors.Is(openErr, ErrLocked):
		return nil, openErr
	case errors.Is(openErr, fs.ErrNotExist):
		if idx, err = b.create(dir); err != nil {
			return nil, err
		}
		b.idx = idx
		b.needs, b.reason = true, "missing: new index"
		return b, nil
	default:
		// Damaged: keep nothing of it; the store has the data.
		aside := fmt.Sprintf("%s.damaged-%d", dir, time.Now().UnixNano())
		if err := os.Rename(dir, aside); err != nil {
			return nil, fmt.Errorf("move damaged index aside: %w", err)
		}
		if err := os.RemoveAll(aside); err != nil {
			return nil, fmt.Errorf("remove damaged index: %w", err)
		}
		if idx, err = b.create(dir); err != nil {
			return nil, err
		}
		b.idx = idx
		b.needs, b.reason = true, "damaged: "+openErr.Error()
		return b, nil
	}

	md, err := readMeta(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		b.needs, b.reason = true, "missing: no "+metaFile+" (index never completely built)"
	case err != nil:
		b.needs, b.reason = true, "damaged: "+err.Error()
	case md.MappingVersion != MappingVersion:
		b.needs, b.reason = true, fmt.Sprintf("mapping version %d, want %d", md.MappingVersion, MappingVersion)
	case md.Thesaurus != opts.Thesaurus.digest():
		b.needs, b.reason = true, "synonyms changed"
	}
	return b, nil
}

// openDir opens an existing index. It returns an fs.ErrNotExist error when
// dir holds no index (missing or empty directory), ErrLocked when the lock
// is held, and any other error when the index is damaged.
func (b *Bleve) openDir(dir string) (bleve.Index, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && len(entries) == 0) {
		return nil, fmt.Errorf("open index %s: %w", dir, fs.ErrNotExist)
	}
	if err != nil {
		return nil, fmt.Errorf("read index dir: %w", err)
	}
	idx, err := bleve.OpenUsing(dir, map[string]any{"bolt_timeout": b.opts.LockTimeout.String()})
	if err != nil {
		if errors.Is(err, berrors.ErrTimeout) || strings.Contains(err.Error(), berrors.ErrTimeout.Error()) {
			return nil, fmt.Errorf("open index %s: %w", dir, ErrLocked)
		}
		// Not fs.ErrNotExist even if bleve says "file not found": a
		// directory with files but no usable index is damaged.
		return nil, fmt.Errorf("open index: %s", err.Error())
	}
	// Indexes written before the meta files were private keep them
	// readable to all until tightened.
	if err := tightenMeta(dir); err != nil {
		_ = idx.Close()
		return nil, err
	}
	return idx, nil
}

// privateFile is the mode of the files opsearch writes itself: the
// README promises 0600, like the store's.
const privateFile fs.FileMode = 0o600

// bleveMetaFile is bleve's own meta file, which it creates 0666 (less
// the umask), readable to all under the usual umask 022 and writable to
// all under umask 000. bleve's segments and root bolt file are 0600.
const bleveMetaFile = "index_meta.json"

// tightenMeta makes the index's meta files private where they are not.
func tightenMeta(dir string) error {
	for _, name := range []string{bleveMetaFile, metaFile} {
		path := filepath.Join(dir, name)
		fi, err := os.Stat(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("stat index meta: %w", err)
		}
		if fi.Mode().Perm()&^privateFile != 0 {
			if err := os.Chmod(path, privateFile); err != nil {
				return fmt.Errorf("tighten index meta permissions: %w", err)
			}
		}
	}
	return nil
}

// create makes a new, empty scorch index in dir (which must not hold one).
func (b *Bleve) create(dir string) (bleve.Index, error) {
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("clear index dir: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, fmt.Errorf("create index parent: %w", err)
	}
	idx, err := bleve.NewUsing(dir, b.mapping, scorch.Name, scorch.Name,
		map[string]any{"bolt_timeout": b.opts.LockTimeout.String()})
	if err != nil {
		return nil, fmt.Errorf("create index: %w", err)
	}
	if err := tightenMeta(dir); err != nil {
		_ = idx.Close()
		return nil, err
	}
	if err := addSynonyms(idx, b.opts.Thesaurus); err != nil {
		_ = idx.Close()
		return nil, err
	}
	return idx, nil
}

func readMeta(dir string) (meta, error) {
	var m meta
	data, err := os.ReadFile(filepath.Join(dir, metaFile))
	if err != nil {
		return m, fmt.Errorf("read index meta: %w", err)
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return m, fmt.Errorf("decode index meta: %w", err)
	}
	return m, nil
}

// writeMeta records a complete build atomically (temp file + rename).
func writeMeta(dir string, m meta) error {
	data, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("encode index meta: %w", err)
	}
	tmp := filepath.Join(dir, metaFile+".tmp")
	// A leftover temp file would keep its mode through WriteFile.
	if err := os.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove stale index meta: %w", err)
	}
	if err := os.WriteFile(tmp, data, privateFile); err != nil {
		return fmt.Errorf("write index meta: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, metaFile)); err != nil {
		return fmt.Errorf("rename index meta: %w", err)
	}
	return nil
}

// NeedsRebuild reports whether the index should be rebuilt from the store,
// and why: "missing: ..." (new index or never completely built),
// "damaged: ..." (Open replaced an unreadable index), or a mapping version
// mismatch. A successful Rebuild clears it. A document count that disagrees
// with the store is the caller's to detect (see Count).
func (b *Bleve) NeedsRebuild() (bool, string) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.needs, b.reason
}

// Dir returns the index directory.
func (b *Bleve) Dir() string { return b.dir }

// Rebuild builds a new index from scratch in a sibling directory while the
// current one keeps serving, then swaps it in. fill is called once and must
// pass every document to add (in slices of any size; add batches them);
// writes made through Index and Delete during the rebuild go to both
// indexes, so none is lost by the swap. On error or cancellation the new
// index is discarded and the old one stays. The meta file (mapping version)
// is written last, after the swap.
func (b *Bleve) Rebuild(ctx context.Context, fill func(add func(docs ...Document) error) error) error {
	b.rebuildMu.Lock()
	defer b.rebuildMu.Unlock()

	tmp := fmt.Sprintf("%s.rebuild-%d", b.dir, time.Now().UnixNano())
	nidx, err := b.startBuilding(tmp)
	if err != nil {
		return err
	}
	if err := fillIndex(ctx, nidx, fill); err != nil {
		b.discardBuilding(nidx, tmp)
		return fmt.Errorf("fill index: %w", err)
	}
	if err := mergeSegments(ctx, nidx); err != nil {
		b.discardBuilding(nidx, tmp)
		return fmt.Errorf("merge index: %w", err)
	}
	return b.swap(nidx, tmp)
}

// startBuilding creates the new index in tmp and makes it b.building, so
// that writes through Index and Delete reach it from now on. It fails
// with ErrClosed, leaving nothing behind, when b is closed.
func (b *Bleve) startBuilding(tmp string) (bleve.Index, error) {
	nidx, err := b.create(tmp)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	if b.idx == nil {
		b.mu.Unlock()
		_ = nidx.Close()
		_ = os.RemoveAll(tmp)
		return nil, ErrClosed
	}
	b.building = nidx
	b.mu.Unlock()
	return nidx, nil
}

// discardBuilding ends a failed rebuild: writes stop reaching the new
// index, which is closed and deleted; the live one stays.
func (b *Bleve) discardBuilding(nidx bleve.Index, tmp string) {
	b.mu.Lock()
	b.building = nil
	b.mu.Unlock()
	_ = nidx.Close()
	_ = os.RemoveAll(tmp)
}

// fillIndex runs fill with an add that puts documents into nidx. Batches
// are mapped in add (so the caller may reuse its slices) and applied by
// two workers: a batch waits for its segment to be persisted, and
// overlapping two keeps both cores busy (measured ~1.2 → ~1.9 cores). It
// returns fill's error, else the first failed batch's, else ctx's.
func fillIndex(ctx context.Context, nidx bleve.Index, fill func(add func(docs ...Document) error) error) error {
	batches := make(chan *bleve.Batch, rebuildWorkers)
	var wg sync.WaitGroup
	var errOnce sync.Once
	var workErr error
	failed := make(chan struct{})
	fail := func(err error) {
		errOnce.Do(func() { workErr = err; close(failed) })
	}
	for range rebuildWorkers {
		wg.Go(func() {
			for batch := range batches {
				if err := nidx.Batch(batch); err != nil {
					fail(fmt.Errorf("index batch: %w", err))
				}
			}
		})
	}
	add := func(docs ...Document) error {
		for len(docs) > 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			n := min(len(docs), batchSize)
			batch, err := mapBatch(nidx, docs[:n])
			if err != nil {
				return err
			}
			select {
			case batches <- batch:
			case <-failed:
				return workErr
			case <-ctx.Done():
				return ctx.Err()
			}
			docs = docs[n:]
		}
		return nil
	}
	err := fill(add)
	close(batches)
	wg.Wait()
	if err == nil {
		err = workErr
	}
	if err == nil {
		err = ctx.Err()
	}
	return err
}

// mapBatch maps docs into a new batch of nidx.
func mapBatch(nidx bleve.Index, docs []Document) (*bleve.Batch, error) {
	batch := nidx.NewBatch()
	for _, d := range docs {
		if d.ID == "" {
			return nil, errors.New("index document: empty id")
		}
		if err := batch.Index(d.ID, toBleveDoc(d)); err != nil {
			return nil, fmt.Errorf("index document %s: %w", d.ID, err)
		}
	}
	return batch, nil
}

// MergeSegments merges a bleve index into one segment and waits for the
// replaced files to go; it is how this package settles its own indexes,
// exported for an index built beside them (eval's bleve-default), so
// both are searched in the same state. A failed merge only costs speed,
// so only cancellation is an error.
func MergeSegments(ctx context.Context, idx bleve.Index) error { return mergeSegments(ctx, idx) }

// mergeSegments merges an index into one segment (a rebuilt one before
// it serves, a live one in Compact and Settle):
// searches look every term up per segment, and at 100k work packages a
// fresh build (~14 segments) answered at p50 7 ms versus 4.7 ms merged.
// The merge costs ~7 s there, off the serving path. A failed merge only
// costs speed, so only cancellation is an error.
func mergeSegments(ctx context.Context, nidx bleve.Index) error {
	adv, err := nidx.Advanced()
	if err != nil {
		return nil
	}
	s, ok := adv.(*scorch.Scorch)
	if !ok {
		return nil
	}
	// Scorch's single-segment plan merges ten segments per task
	// (SegmentsPerMergeTask), so a force merge of more than ten left
	// several: a first sync of 100,000 work packages at 20 ms per
	// request ended with two, which the next open merged again. One
	// task takes them all here.
	plan := mergeplan.SingleSegmentMergePlanOptions
	plan.SegmentsPerMergeTask = math.MaxInt32
	if err := s.ForceMerge(ctx, &plan); err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	awaitReclaim(ctx, s)
	return nil
}

// reclaimWait bounds awaitReclaim; reclaimNudge is how long it waits
// before it wakes scorch's persister again.
const (
	reclaimWait  = 10 * time.Second
	reclaimNudge = 250 * time.Millisecond
)

// reclaimNudgeKey is an internal key no one sets: deleting it is a write
// of nothing, which wakes scorch's persister (awaitReclaim).
const reclaimNudgeKey = "opsearch.reclaim"

// awaitReclaim waits, at most reclaimWait, until scorch has removed the
// segment files a merge replaced. It removes them only once its
// persister is idle, usually milliseconds after the merge; a process that
// exits right after merging (opsearch sync after a first crawl) would
// otherwise leave the index twice its size on disk until the next open.
// The persister removes them when it goes idle, and only those of
// snapshots already released: a snapshot released after that (the
// merge's own, or a search's, on a loaded machine) kept its files until
// the next write, and a CI run waited out the whole reclaimWait with
// three replaced segments on disk. So every reclaimNudge it writes
// nothing (an internal key's deletion: a new epoch without a segment),
// and the persister, woken, removes them.
func awaitReclaim(ctx context.Context, s *scorch.Scorch) {
	deadline := time.Now().Add(reclaimWait)
	nudge := time.Now().Add(reclaimNudge)
	for time.Now().Before(deadline) {
		m := s.StatsMap()
		files, _ := m["CurOnDiskFiles"].(uint64)
		atRoot, ok := m["TotFileSegmentsAtRoot"].(uint64)
		if !ok || files <= atRoot+1 { // the segments and root.bolt
			return
		}
		if time.Now().After(nudge) {
			if err := s.DeleteInternal([]byte(reclaimNudgeKey)); err != nil {
				return // closed under us: nothing more to wait for
			}
			nudge = time.Now().Add(reclaimNudge)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// swap replaces the live index with the freshly built one in tmp. It holds
// the write lock throughout, so searches wait a few milliseconds instead of
// hitting a closed index.
func (b *Bleve) swap(nidx bleve.Index, tmp string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.building = nil
	if b.idx == nil {
		_ = nidx.Close()
		_ = os.RemoveAll(tmp)
		return ErrClosed
	}
	if err := nidx.Close(); err != nil {
		_ = os.RemoveAll(tmp)
		return fmt.Errorf("close new index: %w", err)
	}
	old := b.idx
	if err := old.Close(); err != nil {
		_ = os.RemoveAll(tmp)
		return fmt.Errorf("close old index: %w", err)
	}
	aside := fmt.Sprintf("%s.old-%d", b.dir, time.Now().UnixNano())
	reopenOld := func(cause error) error {
		if idx, err := b.openDir(b.dir); err == nil {
			b.idx = idx
		} else {
			b.idx = nil
		}
		_ = os.RemoveAll(tmp)
		return cause
	}
	if err := os.Rename(b.dir, aside); err != nil {
		return reopenOld(fmt.Errorf("move old index aside: %w", err))
	}
	if err := os.Rename(tmp, b.dir); err != nil {
		_ = os.Rename(aside, b.dir)
		return reopenOld(fmt.Errorf("move new index into place: %w", err))
	}
	idx, err := b.openDir(b.dir)
	if err != nil {
		_ = os.Rename(b.dir, tmp)
		_ = os.Rename(aside, b.dir)
		return reopenOld(fmt.Errorf("reopen new index: %w", err))
	}
	b.idx = idx
	b.written.Store(0) // merged before the swap
	_ = os.RemoveAll(aside)
	if err := writeMeta(b.dir, meta{MappingVersion: MappingVersion, Thesaurus: b.opts.Thesaurus.digest(), BuiltAt: time.Now().UTC()}); err != nil {
		b.needs, b.reason = true, "missing: "+err.Error()
		return err
	}
	b.needs, b.reason = false, ""
	return nil
}

// indexBatches indexes docs in batches of at most batchSize, one after
// the other. It returns when every batch is applied (persisted) or one
// failed; each batch is atomic, a call is not.
//
// One batch at a time leaves a core free. Two halves of a call built side
// by side once kept both cores busy, when a sync's writes stood between
// its fetches; now a page is committed while the next one's requests are
// in flight, and a commit on both cores starved those requests' goroutines
// (their responses waited for a core to be read). With 100,000 work
// packages at 20 ms per request, the work package pass took 147.4 s
// instead of 152.5 s, with 14.6 instead of 14.1 of 16 requests in flight;
// at zero latency the sync took as long as before (79.5 and 80.2 s).
func indexBatches(ctx context.Context, idx bleve.Index, docs []Document) error {
	for part := range slices.Chunk(docs, batchSize) {
		if err := indexBatch(ctx, idx, part); err != nil {
			return err
		}
	}
	return nil
}

// indexBatch indexes docs as one bleve batch.
func indexBatch(ctx context.Context, idx bleve.Index, docs []Document) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	batch := idx.NewBatch()
	for _, d := range docs {
		if d.ID == "" {
			return errors.New("index document: empty id")
		}
		if err := batch.Index(d.ID, toBleveDoc(d)); err != nil {
			return fmt.Errorf("index document %s: %w", d.ID, err)
		}
	}
	if err := idx.Batch(batch); err != nil {
		return fmt.Errorf("index batch: %w", err)
	}
	return nil
}

// Index adds or replaces documents. Slices over batchSize documents are
// split into batches of batchSize, each atomic. During a Rebuild the
// documents also go to the index being built.
func (b *Bleve) Index(ctx context.Context, docs ...Document) error {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.idx == nil {
		return ErrClosed
	}
	if err := indexBatches(ctx, b.idx, docs); err != nil {
		return err
	}
	b.written.Add(int64(len(docs)))
	if b.building != nil {
		return indexBatches(ctx, b.building, docs)
	}
	return nil
}

// Delete removes documents by id; unknown ids are ignored.
func (b *Bleve) Delete(ctx context.Context, ids ...string) error {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.idx == nil {
		return ErrClosed
	}
	for _, idx := range []bleve.Index{b.idx, b.building} {
		if idx == nil {
			continue
		}
		for rest := ids; len(rest) > 0; {
			if err := ctx.Err(); err != nil {
				return err
			}
			n := min(len(rest), batchSize)
			batch := idx.NewBatch()
			for _, id := range rest[:n] {
				batch.Delete(id)
			}
			if err := idx.Batch(batch); err != nil {
				return fmt.Errorf("delete batch: %w", err)
			}
			rest = rest[n:]
		}
	}
	b.written.Add(int64(len(ids)))
	return nil
}

// Count returns the number of documents per kind (every kind present, zero
// included).
func (b *Bleve) Count(ctx context.Context) (map[kind.Kind]uint64, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.idx == nil {
		return nil, ErrClosed
	}
	out := make(map[kind.Kind]uint64, 4)
	count := func(field, term string) (uint64, error) {
		q := bleve.NewTermQuery(term)
		q.SetField(field)
		res, err := b.idx.SearchInContext(ctx, bleve.NewSearchRequestOptions(q, 0, 0, false))
		if err != nil {
			return 0, err
		}
		return res.Total, nil
	}
	for _, k := range Kinds() {
		n, err := count(fieldKind, string(k))
		if err != nil {
			return nil, fmt.Errorf("count %s: %w", k, err)
		}
		out[k] = n
	}
	// Public twins are second documents of work packages, not more of
	// them.
	twins, err := count(fieldTwin, "public")
	if err != nil {
		return nil, fmt.Errorf("count public twins: %w", err)
	}
	out[kind.WorkPackage] -= min(twins, out[kind.WorkPackage])
	return out, nil
}

// Compact merges the index into one segment without deleted documents.
// Term statistics then count live documents only, so the same data scores
// the same however its batches landed and whenever background merges ran:
// evaluations call it for reproducible figures. Searches keep running
// meanwhile; at 100,000 work packages it takes a few seconds.
func (b *Bleve) Compact(ctx context.Context) error {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.idx == nil {
		return ErrClosed
	}
	b.written.Store(0)
	if err := mergeSegments(ctx, b.idx); err != nil {
		return fmt.Errorf("compact index: %w", err)
	}
	return nil
}

// Settle thresholds: an index is merged into one segment once the
// documents written since its last merge are at least settleMinDocs and
// at least one in settleShare of its documents.
const (
	settleMinDocs = 1000
	settleShare   = 4
)

// Settle merges the index into one segment (Compact) when the documents
// written since its last merge are a large part of it: after a first
// crawl, a big update or many deletions. A first crawl's batches leave
// ten or so segments, and a query reads each term's postings once per
// segment: on 10,000 work packages merging them took the whole search
// from 3.1 to 2.3 ms at the median. Smaller writes are left to scorch's
// own background merging, since a merge rewrites the whole index. It
// reports whether it merged. The sync worker calls it after each sync;
// it holds the read lock throughout, as Compact does, because a sync and
// a Rebuild (whose swap needs the write lock) never overlap.
func (b *Bleve) Settle(ctx context.Context) (bool, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.idx == nil {
		return false, ErrClosed
	}
	n := b.written.Load()
	if n < settleMinDocs {
		return false, nil
	}
	docs, err := b.idx.DocCount()
	if err != nil {
		return false, fmt.Errorf("settle index: %w", err)
	}
	if uint64(n)*settleShare < docs {
		return false, nil
	}
	b.written.Add(-n)
	// The write that came before (a first crawl, most often) leaves a
	// heap that is mostly garbage, which the runtime gives back to the
	// system only slowly; the merge then maps the whole index beside it.
	// Giving it back first keeps the peak to the larger of the two
	// rather than their sum (at 100,000 work packages, 438 MB resident).
	debug.FreeOSMemory()
	if err := mergeSegments(ctx, b.idx); err != nil {
		return false, fmt.Errorf("settle index: %w", err)
	}
	return true, nil
}

// Close releases the index; it is safe to call twice.
func (b *Bleve) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.idx == nil {
		return nil
	}
	err := b.idx.Close()
	b.idx = nil
	if err != nil {
		return fmt.Errorf("close index: %w", err)
	}
	return nil
}

// Search runs a query; see buildRequest for how options become a bleve
// query.
func (b *Bleve) Search(ctx context.Context, opts SearchOptions) (Result, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.idx == nil {
		return Result{}, ErrClosed
	}
	req, fed, plan, err := b.buildRequest(ctx, b.idx, opts)
	if err != nil {
		return Result{}, fmt.Errorf("search index: %w", err)
	}
	// Coverage is measured for a fuzzy query's hits, not when it only
	// checks given documents (IDs). before is the snapshot current before
	// the requests: if it is still current after them, they read it, and
	// coverage takes their hits' document numbers instead of looking each
	// up by id (two fifths of its time).
	covers := plan != nil && len(opts.IDs) == 0
	var before index.IndexReader
	if covers {
		if before = b.currentReader(); before != nil {
			defer func() { _ = before.Close() }()
		}
	}
	// The small kinds' own request does not depend on the main one, so
	// it runs beside it, on another core when there is one (spread.Go:
	// the search's crew takes it at once when it is free).
	var federated []Hit
	var ferr error
	waitFed := func() {}
	if fed != nil {
		waitFed = spread.Go(ctx, func() {
			fres, err := b.idx.SearchInContext(ctx, fed)
			if err != nil {
				ferr = err
				return
			}
			federated = hitsOf(fres)
		})
	}
	out, err := b.searchMain(ctx, req, plan, opts, before)
	waitFed()
	if err == nil {
		err = ferr
	}
	if err != nil {
		return Result{}, fmt.Errorf("search index: %w", err)
	}
	out.Plan, out.Federated = plan, federated
	if covers && len(out.Hits)+len(out.Federated) > 0 {
		adv, err := b.idx.Advanced()
		if err != nil {
			return Result{}, fmt.Errorf("open index reader: %w", err)
		}
		r, err := adv.Reader()
		if err != nil {
			return Result{}, fmt.Errorf("open index reader: %w", err)
		}
		if !sameSnapshot(before, r) {
			forgetNumbers(out.Hits)
			forgetNumbers(out.Federated)
		}
		err = coverAll(ctx, plan, r, out.Hits, out.Federated)
		_ = r.Close()
		if err != nil {
			return Result{}, fmt.Errorf("measure coverage: %w", err)
		}
	}
	// The numbers hold only in this snapshot.
	forgetNumbers(out.Hits)
	forgetNumbers(out.Federated)
	return out, nil
}

// currentReader returns a reader of the index's current snapshot, or nil
// when it cannot be had (coverage then looks up every hit's number).
func (b *Bleve) currentReader() index.IndexReader {
	adv, err := b.idx.Advanced()
	if err != nil {
		return nil
	}
	r, err := adv.Reader()
	if err != nil {
		return nil
	}
	return r
}

// sameSnapshot reports whether a and b read the same scorch snapshot. A
// snapshot stays current until a batch or merge replaces it with a new
// one, never to return: a snapshot current before and after a request
// is the one the request read.
func sameSnapshot(a, b index.IndexReader) bool {
	sa, ok := a.(*scorch.IndexSnapshot)
	sb, ok2 := b.(*scorch.IndexSnapshot)
	return ok && ok2 && sa == sb
}

// snapshotID identifies r's scorch snapshot without keeping it alive: a
// cache of what was read in the newest snapshot compares it with the
// next reader's, and a replaced snapshot, which may hold a sync's
// segments in memory, is not held for that. ok is false for a reader
// that is no snapshot (no identity).
func snapshotID(r index.IndexReader) (id weak.Pointer[scorch.IndexSnapshot], ok bool) {
	s, ok := r.(*scorch.IndexSnapshot)
	if !ok {
		return id, false
	}
	return weak.Make(s), true
}

// forgetNumbers clears the hits' document numbers.
func forgetNumbers(hits []Hit) {
	for i := range hits {
		hits[i].at = nil
	}
}

// searchMain runs the main request, split by plan when it says so, each
// request collected in parts when it walks many postings (collect).
// before is the snapshot current before it, or nil.
func (b *Bleve) searchMain(ctx context.Context, req *bleve.SearchRequest, plan *Plan, opts SearchOptions, before index.IndexReader) (Result, error) {
	if plan == nil {
		return b.collect(ctx, req, nil, 0, opts, before)
	}
	if plan.split != nil {
		out, split, err := b.searchSplit(ctx, plan, opts, before)
		if err != nil || split {
			return out, err
		}
	}
	rq, _ := plan.text.(*rankQuery)
	return b.collect(ctx, req, rq, plan.postings(false), opts, before)
}

// searchSplit runs a query split by commonSplit. It reports false when
// the rarer words find fewer documents than the page reaches: then the
// documents holding only common words belong in it, and the caller runs
// the whole query.
func (b *Bleve) searchSplit(ctx context.Context, plan *Plan, opts SearchOptions, before index.IndexReader) (Result, bool, error) {
	sp := plan.split
	out, err := b.collect(ctx, sp.request, sp.rare, plan.postings(true), opts, before)
	if err != nil {
		return Result{}, false, err
	}
	if out.Total < uint64(sp.request.From+sp.request.Size) {
		return Result{}, false, nil
	}
	out.TotalIsLowerBound = true
	return out, true, nil
}

// coverAll measures the coverage of hits and of the federated hits in
// one pass over the postings; a federated hit also among hits is
// measured once.
func coverAll(ctx context.Context, plan *Plan, r index.IndexReader, hits, federated []Hit) error {
	if len(federated) == 0 {
		return plan.cover(ctx, r, hits)
	}
	at := make(map[string]int, len(hits))
	for i, h := range hits {
		at[h.ID] = i
	}
	all := slices.Clone(hits)
	for _, h := range federated {
		if _, dup := at[h.ID]; !dup {
			all = append(all, h)
		}
	}
	if err := plan.cover(ctx, r, all); err != nil {
		return err
	}
	copy(hits, all[:len(hits)])
	rest := all[len(hits):]
	for i, h := range federated {
		if j, dup := at[h.ID]; dup {
			federated[i].Coverage, federated[i].MatchedWords = hits[j].Coverage, hits[j].MatchedWords
			continue
		}
		federated[i], rest = rest[0], rest[1:]
	}
	return nil
}

// hitsOf converts bleve's hits.
func hitsOf(res *bleve.SearchResult) []Hit {
	out := make([]Hit, 0, len(res.Hits))
	for _, h := range res.Hits {
		k, id, _ := ParseDocID(h.ID)
		hit := Hit{ID: h.ID, Kind: k, EntityID: id, Score: h.Score, Fragments: h.Fragments, at: h.IndexInternalID}
		if IsPublicTwin(h.ID) {
			hit.ID, hit.Public = DocID(k, id), true
		}
		out = append(out, hit)
	}
	return out
}

// Index field names.
const (
	fieldKind        = "kind"
	fieldProjectID   = "project_id"
	fieldClosed      = "closed"
	fieldType        = "type"
	fieldAssigneeID  = "assignee_id"
	fieldUpdated     = "updated"
	fieldTitle       = "title"
	fieldPeople      = "people"
	fieldLocation    = "location"
	fieldProjectName = "project_name"
	fieldIdents      = "identifiers"
	fieldAll         = "all"
	// fieldTwin is "public" on a work package's public twin only. Adding
	// it needed no MappingVersion bump: only shared indexes hold twins,
	// and they are created with this mapping; older indexes, which lack
	// the field, count no twins, rightly.
	fieldTwin = "twin"
	// fieldContainer and fieldContainerKind hold an attachment's
	// container's document id and kind: a visibility that shows a
	// container shows its attachments (visibleDocs).
	fieldContainer     = "container"
	fieldContainerKind = "container_kind"
)

// bleveDoc is what bleve indexes: Document flattened to the mapped fields.
// Kind and entity id come back from the document id, and highlighting is
// off (see highlight), so no field is stored. Status is not indexed: no
// query filters on it.
type bleveDoc struct {
	Kind       string    `json:"kind"`
	ProjectID  string    `json:"project_id,omitempty"`
	Closed     bool      `json:"closed"`
	Type       string    `json:"type,omitempty"`
	AssigneeID string    `json:"assignee_id,omitempty"`
	Updated    time.Time `json:"updated,omitzero"`
	Title      string    `json:"title"`
	// Body, comments and agenda texts are indexed through All only.
	Body        string   `json:"-"`
	Comments    []string `json:"-"`
	Agenda      []string `json:"-"`
	People      []string `json:"people,omitempty"`
	Location    string   `json:"location,omitempty"`
	ProjectName string   `json:"project_name,omitempty"`
	Identifiers []string `json:"identifiers,omitempty"`
	Twin        string   `json:"twin,omitempty"`
	Container   string   `json:"container,omitempty"`
	// ContainerKind is the container's kind, for visibility by kind.
	ContainerKind string `json:"container_kind,omitempty"`
	// All is every text of the document in one field (Lucene's catch-all,
	// bleve's _all): one term query per query word scores a word wherever
	// it occurs, with one document frequency and one length norm.
	All string `json:"all,omitempty"`
}

// docType is the one bleve document type.
const docType = "doc"

// BleveType tells bleve the document type. Without it bleve looks the type
// field up by Go field name and silently maps structs to the default type.
func (bleveDoc) BleveType() string { return docType }

func toBleveDoc(d Document) bleveDoc {
	bd := bleveDoc{
		Kind: string(d.Kind), Closed: d.Closed, Type: d.Type,
		Updated: d.UpdatedAt, Title: d.Title, Body: d.Body, Comments: d.Comments,
		Location: d.Location, ProjectName: d.ProjectName, Identifiers: d.Identifiers,
	}
	if d.ProjectID != 0 {
		bd.ProjectID = strconv.FormatInt(d.ProjectID, 10)
	}
	if d.PublicTwin {
		bd.Twin = "public"
	}
	if ck, _, ok := ParseDocID(d.Container); ok {
		bd.Container, bd.ContainerKind = d.Container, string(ck)
	}
	if d.AssigneeID != 0 {
		bd.AssigneeID = strconv.FormatInt(d.AssigneeID, 10)
	}
	for _, a := range d.Agenda {
		if a.Title != "" {
			bd.Agenda = append(bd.Agenda, a.Title)
		}
		if a.Notes != "" {
			bd.Agenda = append(bd.Agenda, a.Notes)
		}
		bd.Agenda = append(bd.Agenda, a.Outcomes...)
	}
	seen := map[string]bool{}
	for _, p := range append([]string{d.Author, d.Assignee}, d.Participants...) {
		if p != "" && !seen[p] {
			seen[p] = true
			bd.People = append(bd.People, p)
		}
	}
	bd.All = joinAll(kindNoun(d), bd.Title, bd.Body, bd.Location, bd.Comments, bd.Agenda, bd.People)
	return bd
}

// joinAll joins the texts of the catch-all field into one value, a line
// break between two: every word boundary, so each text yields the
// tokens it would alone, and without term vectors the field keeps no
// positions that the joins could shift (were term vectors added, a
// phrase could match across two texts). As an array of values the same
// field cost a fifth more CPU to index (BenchmarkIndex10k: 626 against
// 724-799 CPU-ms per thousand documents), since the segment builder
// analyses each value on its own and then merges their token maps.
func joinAll(noun, title, body, location string, lists ...[]string) string {
	var b strings.Builder
	add := func(s string) {
		if s == "" {
			return
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(s)
	}
	for _, s := range []string{noun, title, body, location} {
		add(s)
	}
	for _, l := range lists {
		for _, s := range l {
			add(s)
		}
	}
	return b.String()
}

// kindNoun is what a person calls a document of d's kind ("bug",
// "meeting", "wiki page"), indexed with its text so that "any bug about
// ..." or "the meeting where ..." prefers items of that kind. A work
// package is called by its type and, generically, a work package.
func kindNoun(d Document) string {
	switch d.Kind {
	case kind.WorkPackage:
		return d.Type + " work package"
	case kind.WikiPage:
		return "wiki page"
	case kind.Meeting:
		return "meeting"
	case kind.Project:
		return "project"
	case kind.Attachment:
		return "attached file"
	}
	return ""
}

// newMapping builds the index mapping. Prose fields hold words as written
// and stemmed (analyzerText), with term vectors for phrases (exact mode
// and the title phrase bonus); names, location and project name are
// unstemmed. Nothing is stored.
func newMapping() (*mapping.IndexMappingImpl, error) {
	im := bleve.NewIndexMapping()
	if err := addAnalyzers(im); err != nil {
		return nil, err
	}
	im.DefaultAnalyzer = analyzerText
	// Synonyms are written the way query words are analysed (stemmed,
	// folded), so a query stem meets its group.
	if err := im.AddSynonymSource(synonymSource, map[string]any{"collection": synonymCollection, "analyzer": analyzerQuery}); err != nil {
		return nil, fmt.Errorf("add synonym source: %w", err)
	}
	// im.ScoringModel = "bm25"
	im.StoreDynamic = false
	im.IndexDynamic = false
	im.DocValuesDynamic = false

	text := func(name, analyzer string, store, vectors bool) *mapping.FieldMapping {
		f := bleve.NewTextFieldMapping()
		f.Name = name
		f.Analyzer = analyzer
		f.Store = store
		f.IncludeTermVectors = vectors
		f.IncludeInAll = false
		f.DocValues = false
		return f
	}
	dm := bleve.NewDocumentStaticMapping()
	dm.AddFieldMappingsAt(fieldKind, text(fieldKind, analyzerKeyword, false, false))
	dm.AddFieldMappingsAt(fieldTwin, text(fieldTwin, analyzerKeyword, false, false))
	dm.AddFieldMappingsAt(fieldContainer, text(fieldContainer, analyzerKeyword, false, false))
	dm.AddFieldMappingsAt(fieldContainerKind, text(fieldContainerKind, analyzerKeyword, false, false))
	dm.AddFieldMappingsAt(fieldProjectID, text(fieldProjectID, analyzerKeyword, false, false))
	dm.AddFieldMappingsAt(fieldType, text(fieldType, analyzerKeyword, false, false))
	dm.AddFieldMappingsAt(fieldAssigneeID, text(fieldAssigneeID, analyzerKeyword, false, false))
	closed := bleve.NewBooleanFieldMapping()
	closed.Store, closed.IncludeInAll, closed.DocValues = false, false, false
	dm.AddFieldMappingsAt(fieldClosed, closed)
	updated := bleve.NewDateTimeFieldMapping()
	updated.Store, updated.IncludeInAll = false, false
	updated.DocValues = true // sort by updated
	dm.AddFieldMappingsAt(fieldUpdated, updated)

	dm.AddFieldMappingsAt(fieldTitle, text(fieldTitle, analyzerText, false, true))
	dm.AddFieldMappingsAt(fieldPeople, text(fieldPeople, analyzerExact, false, true))
	dm.AddFieldMappingsAt(fieldLocation, text(fieldLocation, analyzerExact, false, true))
	dm.AddFieldMappingsAt(fieldProjectName, text(fieldProjectName, analyzerExact, false, true))
	dm.AddFieldMappingsAt(fieldIdents, text(fieldIdents, analyzerIdent, false, false))
	// The catch-all carries no term vectors: positions cost a fifth of
	// the indexing time, and exact mode only needs the index to find
	// documents holding every word as written; the scorer then checks the
	// phrase against the stored entity (search.Engine with Exact).
	all := text(fieldAll, analyzerText, false, false)
	all.SynonymSource = synonymSource
	dm.AddFieldMappingsAt(fieldAll, all)

	im.AddDocumentMapping(docType, dm)
	im.DefaultMapping = dm
	im.DefaultType = docType
	if err := im.Validate(); err != nil {
		return nil, fmt.Errorf("validate mapping: %w", err)
	}
	return im, nil
}

// BuiltMapping reads, without opening the index in dir (so while another
// process holds it), the mapping version it was last completely built
// with, and when; found is false for an index never completely built. A
// version other than MappingVersion means this opsearch rebuilds it from
// the store when it opens it.
func BuiltMapping(dir string) (version int, builtAt time.Time, found bool, err error) {
	md, err := readMeta(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, time.Time{}, false, nil
	}
	if err != nil {
		return 0, time.Time{}, false, fmt.Errorf("read the index's build record: %w", err)
	}
	return md.MappingVersion, md.BuiltAt, true, nil
}

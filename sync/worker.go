package sync

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	gosync "sync"
	"sync/atomic"
	"time"

	"github.com/opsearch/opsearch/indexer"
	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/store"
)

// API is the part of *openproject.Client the worker uses. It is declared
// here, next to its consumer, so tests and wrappers can stand in for it.
type API interface {
	ListProjects(ctx context.Context, opts openproject.ListOptions) (openproject.Page[openproject.Project], error)
	Project(ctx context.Context, idOrIdentifier string) (openproject.Project, error)
	ListWorkPackages(ctx context.Context, opts openproject.ListOptions) (openproject.Page[openproject.WorkPackage], error)
	Activities(ctx context.Context, workPackageID int64) ([]openproject.Activity, error)
	WikiPage(ctx context.Context, id int64) (openproject.WikiPage, error)
	ListMeetings(ctx context.Context, opts openproject.ListOptions) (openproject.Page[openproject.Meeting], error)
	Meeting(ctx context.Context, id int64) (openproject.Meeting, error)
	AgendaItems(ctx context.Context, meetingID int64) ([]openproject.AgendaItem, error)
	WorkPackageAttachments(ctx context.Context, id int64) ([]openproject.Attachment, error)
	WikiPageAttachments(ctx context.Context, id int64) ([]openproject.Attachment, error)
	MeetingAttachments(ctx context.Context, id int64) ([]openproject.Attachment, error)
	AttachmentContent(ctx context.Context, id int64, max int64) ([]byte, string, error)
	Capabilities(ctx context.Context) (openproject.Capabilities, error)
}

// Index is the part of indexer.Index the worker writes to.
type Index interface {
	Index(ctx context.Context, docs ...indexer.Document) error
	Delete(ctx context.Context, ids ...string) error
	Settle(ctx context.Context) (bool, error)
}

var (
	_ API   = (*openproject.Client)(nil)
	_ Index = (indexer.Index)(nil)
)

// Busy reports whether interactive work is waiting for the CPU.
type Busy interface{ Busy() bool }

// ErrSyncRunning is returned by Sync when another sync of the same worker
// is in progress, or the user's index is being rebuilt from the store (a
// commit during the rebuild could leave a stale copy in the new index). A
// second sync right behind the first would find nothing new, so callers
// skip instead of queueing.
var ErrSyncRunning = errors.New("sync already running")

// ErrTooManyDeletions is the error of a kind whose sync would have deleted
// more than Options.MaxDeleteShare of it. Nothing is deleted: a listing
// that suddenly lacks most entities is more likely a fault (a permission
// change, a proxy answering empty pages) than a mass deletion, and wiping
// the index on a fault is the worst outcome. The kind's LastError says so
// until the deletions fall under the limit or the limit is raised.
var ErrTooManyDeletions = errors.New("too many deletions")

// HeapLimit is the soft limit on the Go heap a process that runs one
// user's syncs sets (runtime/debug.SetMemoryLimit), unless the operator
// set GOMEMLIMIT. A sync's live heap is bounded by its batches (a page
// of work packages and the index batches analysing it, 40-120 MB at
// 100,000 work packages), but the collector, left at GOGC=100, lets the
// heap grow to twice what was live: at 100,000 work packages the
// process's anonymous memory stood at 220-260 MB through the crawl.
// Under a 150 MiB limit it stood at 135-145 MB and the sync took no
// longer (2 min 17 s against 2 min 25 s; the collector's share of the
// CPU went from 6 to 10 %). The limit leaves a third more room than
// that, for documents longer than generated ones; it is soft, so a
// larger live heap slows the sync rather than failing it. A server for
// many users sizes its own memory and sets none.
const HeapLimit = 192 << 20

// Defaults of Options. DefaultConcurrency is where the adaptive
// concurrency starts when Options.Concurrency is left zero.
const (
	DefaultPageSize           = 1000
	DefaultConcurrency        = 4
	DefaultMaxConcurrency     = 16
	DefaultCursorMargin       = 2 * time.Minute
	DefaultWikiMissRun        = 10
	DefaultWikiDeepMissRun    = 1000
	DefaultWikiRecheck        = 10
	DefaultFullListingEvery   = time.Hour
	DefaultWikiFullProbeEvery = 24 * time.Hour
	DefaultMaxDeleteShare     = 0.1
)

// Options configure a Worker. Zero values select the defaults.
type Options struct {
	// PageSize is requested for every list; the server caps it silently
	// (1000 by default) and paging follows the size it echoes.
	PageSize int
	// Concurrency, when set, fixes the number of parallel per-item
	// requests (activities, agenda items, wiki probes) within one sync.
	// Left zero, the number adapts (see limiter): it starts at
	// DefaultConcurrency, grows by one while the server's latency holds
	// and halves on 429, 5xx and timeouts, up to MaxConcurrency. Either
	// way every Retry-After pauses all of them.
	Concurrency int
	// MaxConcurrency caps the adaptive concurrency (default
	// DefaultMaxConcurrency, 16). Against the fake at 20 ms per request
	// on two cores shared with another build, a first sync of 10,000
	// work packages took 59.8 s at a fixed 8, 48.2 s at 12 and 44.9 s at
	// 16 (one series), and 32 gained nothing over 16 (41.0 s against
	// 40.7 s): by then CPU (the fake's rendering, decoding, the store and
	// the index) bounds the sync, not the API's latency. And a real
	// OpenProject serves one user's sidecar with a handful of Puma
	// threads, where more than 16 in flight would queue rather than go
	// faster. Ignored when Concurrency is set.
	MaxConcurrency int
	// CursorMargin is subtracted from the work package cursor, so changes
	// committed on the server with a timestamp slightly older than the
	// newest one seen (clock skew, long transactions) are not missed.
	CursorMargin time.Duration
	// WikiMissRun is the number of consecutive missing ids past the
	// highest known wiki page after which an incremental sync stops
	// probing. Ids are global, so pages in projects the user cannot see
	// also count as misses: a page created after more than WikiMissRun
	// invisible ones is found by the next full probe (daily), not at once.
	// The default, 10, trades that window for a cheaper sync (each miss is
	// a request, every sync).
	WikiMissRun int
	// WikiDeepMissRun is the miss run of a full wiki probe (the first sync,
	// then every WikiFullProbeEvery). It must span the largest id gap the
	// instance has; generated and real instances have gaps of several
	// hundred ids.
	WikiDeepMissRun int
	// WikiRecheck is how many known wiki pages each incremental sync
	// re-fetches, round-robin: wiki pages have no updatedAt on most
	// servers, so re-reading is the only way to see edits and deletions.
	// With the default, 10, an edit to one of N known pages shows within
	// N/10 syncs (30 syncs, an hour at the default schedule, for 300
	// pages), and the daily full probe re-reads them all anyway.
	WikiRecheck int
	// FullListingEvery is how often an id-only listing of all work
	// packages is diffed against the store to find deletions that a count
	// comparison cannot see (one deleted and one created).
	FullListingEvery time.Duration
	// WikiFullProbeEvery is how often the wiki is probed from id 1 with
	// WikiDeepMissRun, which also finds pages that became visible.
	WikiFullProbeEvery time.Duration
	// Busy, if set, says when searches are waiting for the machine's
	// cores (mcp.SearchSlots). While it does, at most BusyConcurrency
	// per-item requests run at once, whatever the adaptive limit: a
	// crawl then gives way to the people and agents searching instead of
	// competing with them for the CPU its responses take to decode and
	// index, and takes back its pace once they are served.
	Busy Busy
	// BusyConcurrency is the bound while Busy says so (default 1).
	BusyConcurrency int
	// MaxDeleteShare is the largest share of a kind's stored entities one
	// sync may delete (default 0.1, i.e. 10 %); a sync that would delete
	// more deletes nothing of that kind and fails it with
	// ErrTooManyDeletions. Deleting a single entity is always allowed, so
	// a kind with fewer than 1/MaxDeleteShare entities can still lose one.
	// 1 or more disables the check.
	MaxDeleteShare float64
	// Attachments configure the attachment sync.
	Attachments AttachmentOptions
	// Logger receives progress and errors; nil discards.
	Logger *slog.Logger
	// Now is the clock for sync state timestamps and schedule decisions;
	// nil means time.Now.
	Now func() time.Time
	// Progress, if set, is called as items of a kind are processed. total
	// is -1 when unknown (wiki probing).
	Progress func(k kind.Kind, done, total int)
	// Shared, if set, makes the worker one of several that crawl into a
	// store shared by every user of an instance (see Shared).
	Shared *Shared
	// Lease, if set, makes each Sync hold this lease of the store for
	// its whole run: replicas sharing a store in PostgreSQL then never
	// crawl the same thing at once (see SyncLease).
	Lease *SyncLease
}

// Shared configures a worker that crawls, with one user's key, into a
// store and index shared by every user of the instance; package access
// decides what each user sees of them. Content any user's crawl brought
// is not fetched again while unchanged.
//
// Such a crawl deletes nothing: an item missing from this user's
// listings, or answering 404 to this user's key, may be one that another
// user sees. What a user no longer sees leaves their view (access);
// deletion from the shared store is not done yet, so an item deleted
// upstream stays stored, invisible to everyone, until the store is
// rebuilt.
type Shared struct {
	// Owner is the user whose key the worker uses; the store keeps the
	// user's sync state under this id.
	Owner int64
	// Commits serialises the commits of every worker of the shared store
	// (the pending-index marker is one per store); nil: the worker's own.
	Commits *gosync.Mutex
	// ReadsInternal reports whether the user reads the internal comments
	// of a project, as their latest view knows (package access), and
	// whether it knows (nil: nowhere known).
	//
	// What a user who does not read them fetched says nothing of internal
	// comments, so the store records which work packages' activities a
	// reader fetched (store.WriteTx.SetFetchedByReader). A crawl by a
	// non-reader keeps the internal comments stored before; a reader, or
	// a user whose status is unknown, fetches again the activities of
	// listed work packages no reader fetched. A crawl that finds an
	// internal comment in a project knows its user reads them there.
	ReadsInternal func(project int64) (reads, known bool)
	// ReadsWiki reports whether the user reads project p's wiki, as their
	// latest view knows (nil: every wiki). A full wiki probe counts a
	// page another user found as a page only where the user reads it,
	// so its run past the pages is as long as the user's own probe's.
	//
	// A finished full probe is recorded with the wikis its user reads:
	// while the probes of the last WikiFullProbeEvery read, between them,
	// every wiki a user reads, that user's full probe asks only the ids
	// above those probes' pages that no user found (see coveredProbe).
	ReadsWiki func(project int64) (reads, known bool)
	// Admin says the user is an administrator, who reads every wiki:
	// their full probe, once finished, covers every user's.
	Admin bool
	// Indexing, if set, is told every batch of documents the worker is
	// about to index or delete (by id), before the index holds the
	// change, under the commit lock every worker of the store shares:
	// what decides each user's view (access.View.Apply) sees each batch
	// before any search can.
	Indexing func(docs []indexer.Document, deleted []string)
}

func (o Options) withDefaults() Options {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.PageSize, DefaultPageSize)
	def(&o.MaxConcurrency, DefaultMaxConcurrency)
	def(&o.BusyConcurrency, 2)
	def(&o.WikiMissRun, DefaultWikiMissRun)
	def(&o.WikiDeepMissRun, DefaultWikiDeepMissRun)
	def(&o.WikiRecheck, DefaultWikiRecheck)
	if o.WikiDeepMissRun < o.WikiMissRun {
		o.WikiDeepMissRun = o.WikiMissRun
	}
	if o.CursorMargin <= 0 {
		o.CursorMargin = DefaultCursorMargin
	}
	if o.FullListingEvery <= 0 {
		o.FullListingEvery = DefaultFullListingEvery
	}
	if o.WikiFullProbeEvery <= 0 {
		o.WikiFullProbeEvery = DefaultWikiFullProbeEvery
	}
	if o.MaxDeleteShare <= 0 {
		o.MaxDeleteShare = DefaultMaxDeleteShare
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// UnchangedSyncBaseRequests is what a sync costs when nothing changed,
// apart from the wiki: one projects page, one work package page (the
// cursor window), one work package count and one meetings page.
const UnchangedSyncBaseRequests = 4

// UnchangedSyncRequests is the upper bound of API requests of a sync in
// which nothing changed, independent of the corpus size: the base
// requests, WikiRecheck known wiki pages and WikiMissRun probes past the
// highest wiki id (24 with the defaults). It assumes at most PageSize projects and meetings and
// at most PageSize work packages changed within CursorMargin of the
// newest; it excludes the first Capabilities probe of a client (2
// requests, cached afterwards) and the periodic id-only work package
// listing and full wiki probe.
func (o Options) UnchangedSyncRequests() int {
	o = o.withDefaults()
	return UnchangedSyncBaseRequests + o.WikiRecheck + o.WikiMissRun
}

// Worker syncs one user's OpenProject data into their store and index.
// Its methods are safe for concurrent use; syncs never overlap.
type Worker struct {
	api  API
	st   *store.Store
	idx  Index
	opts Options
	log  *slog.Logger

	// lim paces the per-item requests of every sync; its limit carries
	// over from one sync to the next.
	lim *limiter

	running gosync.Mutex
	// leased is set while a Sync holds Options.Lease: its writes check
	// the lease; a refresh outside a sync writes without it.
	leased atomic.Bool
	// commits is commitMu, or the lock every worker of a shared store
	// holds (Shared.Commits).
	commits *gosync.Mutex

	// readersMu guards what a sync of a shared store learned about
	// internal comments: the projects where an answer showed this user
	// one (readers), and the work packages whose activities it stored
	// without knowing yet that its user reads them (unflagged, by
	// project), which the end of the work package pass marks.
	readersMu gosync.Mutex
	readers   map[int64]bool
	unflagged map[int64][]int64
	// commitMu serialises commits. A sync holds running for minutes, so a
	// refresh after a write (RefreshWorkPackage) does not wait for it;
	// instead every commit, the sync's and the refresh's, runs alone, which
	// keeps the pending-index marker of one from being cleared by another
	// and lets a commit re-check the store right before it writes.
	commitMu gosync.Mutex
}

// NewWorker returns a Worker. api must be authenticated as the store's user.
func NewWorker(api API, st *store.Store, idx Index, opts Options) *Worker {
	opts = opts.withDefaults()
	lim := newLimiter(DefaultConcurrency, 1, opts.MaxConcurrency)
	if opts.Concurrency > 0 {
		lim = newLimiter(opts.Concurrency, opts.Concurrency, opts.Concurrency)
	}
	lim.busy, lim.busyLimit = opts.Busy, opts.BusyConcurrency
	w := &Worker{api: api, st: st, idx: idx, opts: opts, lim: lim, log: opts.Logger.With("subsystem", "sync")}
	w.commits = &w.commitMu
	if opts.Shared != nil && opts.Shared.Commits != nil {
		w.commits = opts.Shared.Commits
	}
	return w
}

// mayDelete reports whether what the worker's user no longer lists is
// gone: in a user's own store, or for an administrator, who sees
// everything; in a shared store it may be another user's.
func (w *Worker) mayDelete() bool { return !w.shared() || w.opts.Shared.Admin }

// owner is the user whose sync state the worker keeps: 0 in a user's own
// store, Shared.Owner in a shared one.
func (w *Worker) owner() int64 {
	if w.opts.Shared == nil {
		return 0
	}
	return w.opts.Shared.Owner
}

// shared reports whether the worker crawls into a shared store.
func (w *Worker) shared() bool { return w.opts.Shared != nil }

// Report summarises one sync.
type Report struct {
	Started  time.Time
	Duration time.Duration
	// Requests counts the HTTP requests the worker made, as the server
	// saw them: each retry of the client counts.
	Requests int
	// Concurrency is the limit on parallel per-item requests at the end
	// of the sync, the one it settled on; PeakConcurrency is the highest
	// it reached, and Backoffs counts the times it was halved (429, 5xx,
	// timeouts). With Options.Concurrency set, both are that number.
	Concurrency, PeakConcurrency, Backoffs int
	Kinds                                  map[kind.Kind]*KindReport
	// Merge is the time the index took to merge into one segment after
	// the writes (a first crawl, a large update); zero when it did not.
	Merge time.Duration
}

// KindReport is what one sync did to one kind.
type KindReport struct {
	// Fetched counts entities received from the server.
	Fetched int
	// Updated counts entities written (new or changed); Deleted counts
	// entities removed.
	Updated, Deleted int
	// Retry counts the entities whose own fetch failed this run; they are
	// marked in the kind's SyncState.Retry and fetched again next sync.
	Retry int
	// Err is the error that ended this kind's run, if any.
	Err error
	// Unsupported is set when the server cannot provide the kind.
	Unsupported bool
	// Duration is how long the kind's run took, and Requests the HTTP
	// requests it made: the kinds run one after the other, so a kind's share
	// of the sync's time can be set against its own API-bound floor
	// (Requests × latency ÷ concurrency).
	Duration time.Duration
	Requests int
	// Latency is how long those requests took.
	Latency RequestLatency
}

// wrote reports whether the sync wrote or deleted anything.
func (r Report) wrote() bool {
	for _, kr := range r.Kinds {
		if kr != nil && kr.Updated+kr.Deleted > 0 {
			return true
		}
	}
	return false
}

// Err returns the errors of all kinds joined, nil when every kind ran.
func (r Report) Err() error {
	var errs []error
	for _, k := range kind.All() {
		if kr := r.Kinds[k]; kr != nil && kr.Err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", k, kr.Err))
		}
	}
	return errors.Join(errs...)
}

// run is the state of one sync.
type run struct {
	api    API
	report *Report
	calls  atomic.Int64
	// latency counts the latencies of the running kind's requests.
	latency atomic.Pointer[latencyHist]
	// wikiRead holds the projects of the wiki pages this run fetched:
	// wikis its user reads (recordProbe).
	wikiRead map[int64]bool
}

// Sync runs one sync of every kind: projects, work packages with their
// activities, wiki pages, meetings. A failing kind is recorded in its
// SyncState and the report, and the remaining kinds still run; nothing
// stored is deleted because of a failure. The returned error joins the
// kinds' errors (and wraps ctx.Err() when cancelled); the report is valid
// either way. It returns ErrSyncRunning if a sync is already in progress.
func (w *Worker) Sync(ctx context.Context) (rep Report, err error) {
	if !w.running.TryLock() {
		return Report{}, ErrSyncRunning
	}
	defer w.running.Unlock()

	rep = Report{Started: w.opts.Now(), Kinds: map[kind.Kind]*KindReport{}}
	if l := w.opts.Lease; l != nil {
		held, err := w.st.AcquireLease(ctx, l.Name, l.Holder, l.ttl())
		if err != nil {
			return rep, fmt.Errorf("take the sync lease: %w", err)
		}
		if !held {
			return rep, ErrLeaseHeld
		}
		var release func()
		ctx, release = w.keepLease(ctx, *l)
		w.leased.Store(true)
		defer func() {
			w.leased.Store(false)
			// Say why the sync stopped: the lease, not a cancellation.
			if c := context.Cause(ctx); err != nil && errors.Is(c, store.ErrLeaseLost) && !errors.Is(err, store.ErrLeaseLost) {
				err = fmt.Errorf("%w (%w)", c, err)
			}
			release()
		}()
	}
	r := &run{report: &rep, api: w.api}
	// Every HTTP exchange counts, as the server sees it: the client's
	// retries, and its own lookups behind a call (the capability probe,
	// the statuses it reads once), each cost the API's latency.
	ctx = openproject.WithAttemptObserver(ctx, func(a openproject.Attempt) {
		r.calls.Add(1)
		if h := r.latency.Load(); h != nil {
			h.add(a.Latency)
		}
	})
	w.lim.begin()
	defer func() {
		rep.Duration = w.opts.Now().Sub(rep.Started)
		rep.Requests = int(r.calls.Load())
		ls := w.lim.stats()
		rep.Concurrency, rep.PeakConcurrency, rep.Backoffs = ls.limit, ls.peak, ls.backoffs
	}()

	if err := recoverPending(ctx, w.st, w.idx, w.log); err != nil {
		return rep, fmt.Errorf("recover index: %w", err)
	}
	steps := map[kind.Kind]func(context.Context, *run, *store.SyncState, *KindReport) error{
		kind.Project:     w.syncProjects,
		kind.WorkPackage: w.syncWorkPackages,
		kind.WikiPage:    w.syncWiki,
		kind.Meeting:     w.syncMeetings,
		kind.Attachment:  w.syncAttachments,
	}
	for _, k := range syncedKinds() {
		s := struct {
			kind kind.Kind
			fn   func(context.Context, *run, *store.SyncState, *KindReport) error
		}{k, steps[k]}
		kr := &KindReport{}
		rep.Kinds[s.kind] = kr
		began, calls, lat := w.opts.Now(), r.calls.Load(), new(latencyHist)
		r.latency.Store(lat)
		kr.Err = w.runKind(ctx, r, s.kind, kr, s.fn)
		kr.Duration, kr.Requests, kr.Latency = w.opts.Now().Sub(began), int(r.calls.Load()-calls), lat.stats()
		if kr.Err != nil && ctx.Err() == nil {
			w.log.Warn("sync kind failed", "kind", s.kind, "error", kr.Err)
		}
		if ctx.Err() != nil {
			break
		}
	}
	// A first crawl leaves the index in many segments, each searched on
	// its own; merging them is the index's call (Settle), made once the
	// writes are done, whether or not every kind succeeded.
	if ctx.Err() == nil {
		// A sync that wrote read much of the store through its memory
		// map (the attachment pass reads the record of every container
		// whose files come without its title, as the API sends them),
		// and those pages stay resident until bbolt next remaps the
		// file. The merge maps every segment of the index beside them:
		// at 100,000 work packages 41 MB of store pages were in a
		// sync's peak memory when the store's last growth came early.
		// Searches map back the pages they read.
		if rep.wrote() {
			if err := w.st.ReleaseMapped(); err != nil {
				w.log.Warn("release the store's mapped pages", "error", err)
			}
		}
		start := w.opts.Now()
		if merged, serr := w.idx.Settle(ctx); serr != nil {
			w.log.Warn("settle index", "error", serr)
		} else if merged {
			rep.Merge = w.opts.Now().Sub(start)
			w.log.Info("index merged after sync", "took", rep.Merge.Round(time.Millisecond))
		}
	}
	err = rep.Err()
	if ctx.Err() != nil {
		err = fmt.Errorf("sync: %w", context.Cause(ctx))
	}
	return rep, err
}

// syncedKinds are the kinds a Sync runs, in order: a sync has ended once
// the last of them has (storedOutcome reads that from the store).
// Activities come with their work packages.
func syncedKinds() []kind.Kind {
	return []kind.Kind{kind.Project, kind.WorkPackage, kind.WikiPage, kind.Meeting, kind.Attachment}
}

// runKind wraps one kind's sync with its bookkeeping: LastStarted before,
// LastFinished, LastSuccess, LastError and ItemsSeen after.
func (w *Worker) runKind(ctx context.Context, r *run, k kind.Kind, kr *KindReport, fn func(context.Context, *run, *store.SyncState, *KindReport) error) error {
	st, err := w.st.SyncStateOf(w.owner(), k)
	if err != nil {
		return fmt.Errorf("read sync state: %w", err)
	}
	st.Kind, st.Owner = k, w.owner()
	st.LastStarted = w.opts.Now()
	if err := w.saveState(ctx, st); err != nil {
		return err
	}
	wasComplete := st.Complete
	runErr := fn(ctx, r, &st, kr)
	// The final state is written even when ctx is cancelled, so the status
	// shows the interrupted run; it carries no cursor beyond what fn
	// already committed.
	st.LastFinished = w.opts.Now()
	st.ItemsSeen = kr.Fetched
	st.Unsupported = kr.Unsupported
	// Complete follows the store's definition: fn sets it when a full
	// crawl has finished, and a failed run leaves it as it was, because
	// the data a complete kind holds is still complete as of LastSuccess
	// (LastError tells how fresh). Until the first crawl is complete, an
	// item still marked for retry may be missing altogether, so it keeps
	// the kind incomplete; afterwards a retry mark means stale, not gone.
	if runErr != nil {
		st.LastError = runErr.Error()
	} else {
		st.LastError = ""
		st.LastSuccess = st.LastFinished
		if !wasComplete && len(st.Retry) > 0 {
			st.Complete = false
		}
	}
	if err := w.saveState(context.WithoutCancel(ctx), st); err != nil && runErr == nil {
		runErr = err
	}
	return runErr
}

func (w *Worker) saveState(ctx context.Context, st store.SyncState) error {
	if err := w.update(ctx, func(tx *store.WriteTx) error { return tx.SetSyncState(st) }); err != nil {
		return fmt.Errorf("save sync state: %w", err)
	}
	return nil
}

// pendingKey is the store meta key of the document ids whose index
// entries may lag the store.
const pendingKey = "sync.pending_index"

// commit writes one batch so that a crash at any point converges:
//
//  1. one store transaction writes the entities and records the ids of
//     the documents they touch as pending;
//  2. the index is updated from exactly what was stored;
//  3. a second transaction clears the pending ids and stores st (the
//     cursor and other progress), if given.
//
// If the process dies after 1, the next Sync re-indexes the pending ids
// from the store (recoverPending) before it compares anything with the
// store, so de-duplication against the store never hides a document the
// index lacks, and the cursor never moves before the index has the data.
func (w *Worker) commit(ctx context.Context, write func(*store.WriteTx) error, docs []indexer.Document, dels []string, st *store.SyncState) error {
	w.commits.Lock()
	defer w.commits.Unlock()
	return w.commitLocked(ctx, write, docs, dels, st)
}

// putAll is a commit's write that stores every one of items with put,
// a store.WriteTx method such as (*store.WriteTx).PutMeeting.
func putAll[T any](items []T, put func(*store.WriteTx, T) error) func(*store.WriteTx) error {
	return func(tx *store.WriteTx) error {
		for _, x := range items {
			if err := put(tx, x); err != nil {
				return err
			}
		}
		return nil
	}
}

// commitLocked is commit for a caller that holds commitMu.
func (w *Worker) commitLocked(ctx context.Context, write func(*store.WriteTx) error, docs []indexer.Document, dels []string, st *store.SyncState) error {
	touches := len(docs) > 0 || len(dels) > 0
	// earlier holds ids left pending by a failed commit of this sync;
	// they stay pending (for the next Sync's recovery) while this commit
	// only vouches for its own documents.
	var earlier []byte
	if touches {
		pending := make([]string, 0, len(docs)+len(dels))
		for _, d := range docs {
			pending = append(pending, d.ID)
		}
		pending = append(pending, dels...)
		if w.opts.Shared != nil && w.opts.Shared.Indexing != nil {
			w.opts.Shared.Indexing(docs, dels)
		}
		if err := w.update(ctx, func(tx *store.WriteTx) error {
			if write != nil {
				if err := write(tx); err != nil {
					return err
				}
			}
			prev, _, err := tx.Meta(pendingKey)
			if err != nil {
				return err
			}
			all := pending
			if len(prev) > 0 {
				earlier = prev
				var old []string
				if err := json.Unmarshal(prev, &old); err != nil {
					return fmt.Errorf("decode pending ids: %w", err)
				}
				all = append(old, pending...)
			}
			raw, err := json.Marshal(all)
			if err != nil {
				return fmt.Errorf("encode pending ids: %w", err)
			}
			return tx.SetMeta(pendingKey, raw)
		}); err != nil {
			return fmt.Errorf("write store: %w", err)
		}
		if err := w.index(ctx, docs); err != nil {
			return fmt.Errorf("index documents: %w", err)
		}
		if len(dels) > 0 {
			if err := w.idx.Delete(ctx, dels...); err != nil {
				return fmt.Errorf("delete documents: %w", err)
			}
		}
	} else if write != nil {
		if err := w.update(ctx, write); err != nil {
			return fmt.Errorf("write store: %w", err)
		}
	}
	if err := w.update(ctx, func(tx *store.WriteTx) error {
		if touches {
			if err := tx.SetMeta(pendingKey, earlier); err != nil {
				return err
			}
		}
		if st != nil {
			return tx.SetSyncState(*st)
		}
		return nil
	}); err != nil {
		return fmt.Errorf("write sync state: %w", err)
	}
	return nil
}

// index adds docs to the index: at once, or, while searches wait for the
// cores (Options.Busy), in slices with a pause after each (see yield), so
// a page's batch does not take every core from them for its whole length.
func (w *Worker) index(ctx context.Context, docs []indexer.Document) error {
	for len(docs) > 0 {
		n := len(docs)
		if w.lim.busyNow() {
			n = min(n, busyBatch)
		}
		start := time.Now()
		if err := w.idx.Index(ctx, docs[:n]...); err != nil {
			return err
		}
		docs = docs[n:]
		if len(docs) > 0 {
			if err := w.lim.yield(ctx, time.Since(start)); err != nil {
				return err
			}
		}
	}
	return nil
}

// deleteEntities removes confirmed deletions of kind from store and index
// in one commit, logging each, unless they would take the kind's
// deletions in this run (kr.Deleted) past MaxDeleteShare of what it held
// when the run started: then it deletes nothing and returns an error
// wrapping ErrTooManyDeletions.
func (w *Worker) deleteEntities(ctx context.Context, k kind.Kind, ids []int64, kr *KindReport) error {
	if len(ids) == 0 {
		return nil
	}
	n, err := w.st.Count(k)
	if err != nil {
		return fmt.Errorf("count stored %s: %w", k, err)
	}
	held := n + kr.Deleted
	if after := kr.Deleted + len(ids); w.opts.MaxDeleteShare < 1 && after > 1 &&
		float64(after) > w.opts.MaxDeleteShare*float64(held) {
		w.log.Warn("refusing mass deletion", "kind", k, "delete", after, "stored", held, "max_share", w.opts.MaxDeleteShare)
		return fmt.Errorf("delete %s: %w: %d of %d would go, more than %.4g%%; nothing was deleted (raise the sync's maximum delete share if the deletions are real)",
			k, ErrTooManyDeletions, after, held, w.opts.MaxDeleteShare*100)
	}
	if !slices.Contains(indexer.Kinds(), k) {
		return fmt.Errorf("delete %s: no document kind", k)
	}
	dels := make([]string, 0, len(ids))
	for _, id := range ids {
		dels = append(dels, indexer.DocID(k, id))
		if k == kind.WorkPackage && w.shared() {
			dels = append(dels, indexer.PublicDocID(id)) // its twin, if it has one
		}
	}
	if err := w.commit(ctx, func(tx *store.WriteTx) error {
		for _, id := range ids {
			if err := tx.Delete(k, id); err != nil {
				return err
			}
		}
		return nil
	}, nil, dels, nil); err != nil {
		return err
	}
	// A deletion is the one change a later sync cannot undo by itself, so
	// each is on record.
	for _, id := range ids {
		w.log.Info("deleted entity", "kind", k, "id", id)
	}
	kr.Deleted += len(ids)
	return nil
}

// itemFailure reports whether err, from fetching one entity's own data,
// concerns that entity rather than the whole sync: a server error or a
// dropped connection that outlasted the client's retries, or a 404 for an
// entity a listing has just shown. Such a failure marks the entity for
// the next sync; anything else (a rejected key, a rate limit longer than
// the client waits, a cancelled context) ends the kind's run.
func itemFailure(ctx context.Context, err error) bool {
	if err == nil || ctx.Err() != nil {
		return false
	}
	for _, k := range []error{openproject.ErrServer, openproject.ErrNetwork, openproject.ErrMalformed, openproject.ErrNotFound} {
		if errors.Is(err, k) {
			return true
		}
	}
	return false
}

// addID inserts id into the sorted set ids.
func addID(ids []int64, id int64) []int64 {
	i, found := slices.BinarySearch(ids, id)
	if found {
		return ids
	}
	return slices.Insert(ids, i, id)
}

// dropID removes id from the sorted set ids.
func dropID(ids []int64, id int64) []int64 {
	if i, found := slices.BinarySearch(ids, id); found {
		return slices.Delete(ids, i, i+1)
	}
	return ids
}

// progress reports progress if a callback is set.
func (w *Worker) progress(k kind.Kind, done, total int) {
	if w.opts.Progress != nil {
		w.opts.Progress(k, done, total)
	}
}

// sameJSON reports whether a and b encode identically; it compares
// entities without update markers (projects, wiki pages on old servers)
// with their stored copies, which went through JSON themselves.
func sameJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

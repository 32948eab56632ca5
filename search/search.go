package search

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/opsearch/opsearch/indexer"
	"github.com/opsearch/opsearch/internal/spread"
	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/scorer"
	"github.com/opsearch/opsearch/store"
)

// Index is what the engine needs from the full-text index.
type Index interface {
	Search(ctx context.Context, opts indexer.SearchOptions) (indexer.Result, error)
	Count(ctx context.Context) (map[kind.Kind]uint64, error)
}

// Options tune an Engine.
type Options struct {
	// Candidates is how many index hits are re-ranked (default 30). More
	// raises recall for vague queries at the cost of latency.
	Candidates int
	// Params are the scorer's constants (zero value: the reference's).
	Params scorer.Params
	// Rebuilding reports whether the index is being rebuilt, and why.
	Rebuilding func() (bool, string)
	// BaseURL, when set, adds web links to results.
	BaseURL string
	// Ranker orders the candidates; the zero value is the scorer. The
	// alternatives exist for offline evaluation.
	Ranker Ranker
	// Weights override field weights by "kind.field", for example
	// "work_package.comments": 2 (field names as in Result.MatchedFields).
	// A weight of 0 or less removes the field. For offline evaluation.
	Weights map[string]float64
	// CrossFieldWeight weighs a match whose query words spread over
	// several fields of an item (see scorer.Options.CrossFieldWeight); 0
	// means DefaultCrossFieldWeight, a negative value turns it off (the
	// reference's behaviour).
	CrossFieldWeight float64
	// IgnoreRecency breaks score ties by id only, as the reference server
	// does, instead of newer first.
	IgnoreRecency bool
	// QueryLog, when set, records every search with its results.
	QueryLog *QueryLog
	// CacheBytes bounds the memory kept for entities decoded by earlier
	// searches (0: DefaultCacheBytes; negative: no cache).
	CacheBytes int
	// Crew, if set, runs the work a search spreads over the cores on a
	// helper that spins on another core while a search runs alone
	// (spread.Crew):
	// on a virtual machine an idle core took 90-140 us to start a new
	// goroutine. Engines that serve one process's searches share one.
	// Leave it nil where a search waits on another process that shares
	// the cores (a PostgreSQL store on the same machine): the helper
	// would spin against it.
	Crew *spread.Crew
	// Shared, when set, is the user an engine over a store every user of
	// an instance shares answers for, through an index restricted to
	// that user (indexer.Restricted): freshness reads that user's crawl
	// (store.SyncState.Owner), names them as the owner, and counts what
	// they see, never the store's totals.
	Shared *Owner
	// Without leaves features of retrieval out of every search
	// (indexer.Features), to measure what each brings (opsearch eval's
	// variants); zero everywhere else.
	Without indexer.Features
}

// DefaultCrossFieldWeight is Options.CrossFieldWeight's default: between
// a body (1) and a title (3), so an item holding every query word across
// its fields ranks above one whose title holds some of them, and below
// one whose title holds them all.
const DefaultCrossFieldWeight = 2

// Ranker selects how an Engine orders index candidates.
type Ranker int

const (
	// RankScorer re-ranks the candidates with the scorer (the default).
	RankScorer Ranker = iota
	// RankIndex keeps the index's own order and score (bleve alone, no
	// relevance gate), for comparison.
	RankIndex
)

// Engine searches one user's index. It is safe for concurrent use.
type Engine struct {
	st   *store.Store
	idx  Index
	opts Options

	// counts caches the index's per-kind document counts: they took a
	// fifth of a query's time (one count query per kind), and they only
	// change when the store does, so the cache is keyed by the store's
	// counts and sync times.
	countsMu  sync.Mutex
	counts    map[kind.Kind]uint64
	countsKey string

	// fresh caches the last Freshness by the store generation and the
	// rebuild state it was computed for: it reads the sync state of every
	// kind and counts, seven transactions per search, and it only changes
	// with them.
	freshMu  sync.Mutex
	fresh    Freshness
	freshKey *freshKey

	cache *entityCache // nil when Options.CacheBytes is negative

	// kindWeight is each kind's largest declared field weight after
	// Options.Weights: what the scorer normalises by (maxDeclaredWeight)
	// is then known from the hits' kinds, before any entity is loaded.
	kindWeight map[kind.Kind]float64
	// plain loads the whole head, then scores it in a pass of its own,
	// as before rankHead set hits aside and hydrate scored (tests compare
	// the answers).
	plain bool
}

// indexCounts returns the index's per-kind counts, recounting when key
// (a digest of the store's state) changed.
func (e *Engine) indexCounts(ctx context.Context, key string) (map[kind.Kind]uint64, error) {
	e.countsMu.Lock()
	defer e.countsMu.Unlock()
	if e.counts != nil && key == e.countsKey {
		return e.counts, nil
	}
	c, err := e.idx.Count(ctx)
	if err != nil {
		return nil, err
	}
	e.counts, e.countsKey = c, key
	return c, nil
}

// New returns an engine over st and idx.
func New(st *store.Store, idx Index, opts Options) *Engine {
	if opts.Candidates <= 0 {
		opts.Candidates = 30
	}
	switch {
	case opts.CrossFieldWeight == 0:
		opts.CrossFieldWeight = DefaultCrossFieldWeight
	case opts.CrossFieldWeight < 0:
		opts.CrossFieldWeight = 0
	}
	opts.BaseURL = strings.TrimRight(opts.BaseURL, "/")
	e := &Engine{st: st, idx: idx, opts: opts}
	e.kindWeight = e.declaredWeights()
	if opts.CacheBytes >= 0 {
		e.cache = newEntityCache(cmp.Or(opts.CacheBytes, DefaultCacheBytes))
	}
	return e
}

// WithIndex returns an engine like e over another index of the same
// store: an index restricted to another view of a shared one
// (indexer.Restricted). The entities decoded by earlier searches are
// shared, since they are the store's; counts and freshness are the new
// index's.
func (e *Engine) WithIndex(idx Index) *Engine {
	return &Engine{st: e.st, idx: idx, opts: e.opts, cache: e.cache, kindWeight: e.kindWeight}
}

// Query is a search request.
type Query struct {
	Text  string
	Kinds []kind.Kind
	// ProjectIDs restricts to these projects (and, for kind project, to
	// those projects themselves).
	ProjectIDs []int64
	// Project, if set, is one more project to restrict to, by id or
	// identifier ("website-relaunch"), resolved against the stored
	// projects: one the store does not hold is an error
	// (ErrUnknownProject), not an empty answer.
	Project string
	Closed  *bool
	// Statuses restricts to work packages whose status id or name
	// (case-insensitive) is one of these; it implies kind work_package.
	// The index has no status field, so the filter applies to the
	// candidates, of which more are examined (statusWindow).
	Statuses      []string
	Types         []string
	AssigneeIDs   []int64
	UpdatedAfter  time.Time
	UpdatedBefore time.Time
	// Exact matches the query as written (no typos, no prefixes).
	Exact bool
	// Page is 1-based; PageSize defaults to 20 and is at most 100.
	Page, PageSize int
}

// ErrUnknownProject is returned (wrapped) for a Query.Project the store
// holds no project for.
var ErrUnknownProject = errors.New("no such project in the index")

// resolveProject returns the id of the stored project ref names, by id or
// identifier (case-insensitive).
func (e *Engine) resolveProject(ctx context.Context, ref string) (int64, error) {
	ref = strings.TrimSpace(ref)
	unknown := fmt.Errorf("%w: %q (give a project's id or identifier, as openproject_list_projects shows them)", ErrUnknownProject, ref)
	if id, err := strconv.ParseInt(ref, 10, 64); err == nil {
		if _, ok, err := e.st.Project(id); err != nil {
			return 0, fmt.Errorf("read project %d: %w", id, err)
		} else if !ok {
			return 0, unknown
		}
		return id, nil
	}
	var found int64
	err := e.st.ScanProjects(ctx, store.DefaultScanBatch, func(ps []openproject.Project) error {
		for _, p := range ps {
			if strings.EqualFold(p.Identifier, ref) {
				found = p.ID
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("read projects: %w", err)
	}
	if found == 0 {
		return 0, unknown
	}
	return found, nil
}

// MaxPageSize bounds Query.PageSize.
const MaxPageSize = 100

// ErrNothingToSearch is returned (wrapped) for a query that is not empty
// but holds no word: only punctuation or symbols, such as ":" or "#".
// The index would treat it as no query at all and list items in an
// arbitrary order, which reads as results; an empty query is a listing
// by filters, and says so by being empty.
var ErrNothingToSearch = errors.New("the query has nothing to search for: it holds no letters or digits")

// Validate names the first problem with q.
func (q Query) Validate() error {
	if q.Page < 0 {
		return fmt.Errorf("page must be 1 or more, not %d", q.Page)
	}
	if q.PageSize < 0 || q.PageSize > MaxPageSize {
		return fmt.Errorf("pageSize must be between 1 and %d, not %d", MaxPageSize, q.PageSize)
	}
	for _, k := range q.Kinds {
		if !slices.Contains(indexer.Kinds(), k) {
			return fmt.Errorf("kind %q is not one of work_package, wiki_page, meeting, project", k)
		}
	}
	if !q.UpdatedAfter.IsZero() && !q.UpdatedBefore.IsZero() && q.UpdatedBefore.Before(q.UpdatedAfter) {
		return errors.New("updatedBefore is earlier than updatedAfter")
	}
	if len([]rune(q.Text)) > 500 {
		return errors.New("query is longer than 500 characters")
	}
	if t := strings.TrimSpace(q.Text); t != "" && len(scorer.Tokenize(t)) == 0 {
		return fmt.Errorf("search %q: %w", t, ErrNothingToSearch)
	}
	return nil
}

// Response is a page of results plus the index's freshness.
type Response struct {
	Query string `json:"query"`
	Mode  string `json:"matchMode"`
	// Match is MatchGood when some result holds most of the query's
	// information, MatchPartial when results exist but each holds only a
	// little of it (the best there is, not necessarily relevant), and
	// MatchNone when nothing matched.
	Match string `json:"match"`
	// Total counts results that passed the relevance gate among the
	// candidates examined.
	Total int `json:"total"`
	// TotalIsLowerBound is true when the index had more candidates than
	// were examined, so more results may exist.
	TotalIsLowerBound bool      `json:"totalIsLowerBound,omitempty"`
	Page              int       `json:"page"`
	PageSize          int       `json:"pageSize"`
	Results           []Result  `json:"results"`
	Index             Freshness `json:"index"`
	TookMS            float64   `json:"tookMs"`
}

// Result is one ranked hit.
type Result struct {
	Kind      kind.Kind   `json:"kind"`
	ID        int64       `json:"id"`
	Title     string      `json:"title"`
	Project   *ProjectRef `json:"project,omitempty"`
	Status    string      `json:"status,omitempty"`
	Type      string      `json:"type,omitempty"`
	Closed    *bool       `json:"closed,omitempty"`
	Assignee  string      `json:"assignee,omitempty"`
	UpdatedAt *time.Time  `json:"updatedAt,omitempty"`
	StartTime *time.Time  `json:"startTime,omitempty"`
	URL       string      `json:"url,omitempty"`
	// Score is the relevance in [0,1]: the share of the query's
	// information (its words weighted by rarity) the item holds, typos
	// and completions counting less than the words themselves.
	Score float64 `json:"score"`
	// Match is MatchGood or MatchPartial (Score under PartialBelow).
	Match string `json:"match"`
	// MatchedWords are the query words the item holds, as typed.
	MatchedWords  []string `json:"matchedWords"`
	MatchedFields []string `json:"matchedFields"`
	Snippet       string   `json:"snippet,omitempty"`
	// MatchedComment is the best-matching comment of a work package.
	MatchedComment *CommentMatch `json:"matchedComment,omitempty"`
	// MatchedAgendaItems are a meeting's agenda items that match.
	MatchedAgendaItems []AgendaMatch `json:"matchedAgendaItems,omitempty"`
	// Attachment is set on an attachment result: the file and the work
	// package, wiki page or meeting it is attached to.
	Attachment *AttachmentInfo `json:"attachment,omitempty"`
	// MatchedAttachment is set on a container that ranks because a file
	// attached to it matched: that file.
	MatchedAttachment *AttachmentMatch `json:"matchedAttachment,omitempty"`
}

// ProjectRef names a result's project.
type ProjectRef struct {
	ID   int64  `json:"id"`
	Name string `json:"name,omitempty"`
}

// CommentMatch is a matching comment.
type CommentMatch struct {
	ActivityID int64     `json:"activityId"`
	Author     string    `json:"author,omitempty"`
	CreatedAt  time.Time `json:"createdAt,omitzero"`
	Snippet    string    `json:"snippet"`
}

// AgendaMatch is a matching agenda item.
type AgendaMatch struct {
	ID      int64   `json:"id"`
	Title   string  `json:"title"`
	Score   float64 `json:"score"`
	Snippet string  `json:"snippet,omitempty"`
}

// Search runs q.
func (e *Engine) Search(ctx context.Context, q Query) (Response, error) {
	start := time.Now()
	if e.opts.Crew != nil {
		// The crew's helper starts now, while this goroutine validates
		// and plans, so the first spread work finds it running.
		defer e.opts.Crew.Hold()()
		ctx = spread.WithCrew(ctx, e.opts.Crew)
	}
	if err := q.Validate(); err != nil {
		return Response{}, err
	}
	if q.Project != "" {
		id, err := e.resolveProject(ctx, q.Project)
		if err != nil {
			return Response{}, err
		}
		q.ProjectIDs = append(slices.Clone(q.ProjectIDs), id)
	}
	q.Page = cmp.Or(q.Page, 1)
	q.PageSize = cmp.Or(q.PageSize, 20)
	resp := Response{Query: q.Text, Mode: "fuzzy", Page: q.Page, PageSize: q.PageSize, Results: []Result{}}
	if q.Exact {
		resp.Mode = "exact"
	}
	fresh, err := e.Freshness(ctx)
	if err != nil {
		return Response{}, err
	}
	resp.Index = fresh

	mode := indexer.MatchFuzzy
	if q.Exact {
		mode = indexer.MatchExact
	}
	window := max(e.opts.Candidates, q.Page*q.PageSize)
	kinds := q.Kinds
	if len(q.Statuses) > 0 {
		kinds = []kind.Kind{kind.WorkPackage}
		window = min(window*statusWindow, maxWindow)
	}
	var federate []kind.Kind
	if !q.Exact && len(q.Statuses) == 0 && !e.opts.Without.Has(indexer.FeatureSmallKinds) {
		federate = smallKinds(fresh, kinds)
	}
	iopts := indexer.SearchOptions{
		Query: q.Text, Mode: mode, Kinds: kinds, ProjectIDs: q.ProjectIDs, Closed: q.Closed,
		Types: q.Types, AssigneeIDs: q.AssigneeIDs, UpdatedAfter: q.UpdatedAfter, UpdatedBefore: q.UpdatedBefore,
		Size: window, Federate: federate, FederateSize: smallKindCandidates, Without: e.opts.Without,
	}
	res, err := e.searchIndex(ctx, iopts)
	if err != nil {
		return Response{}, fmt.Errorf("search index: %w", err)
	}
	// The first Candidates hits are re-ranked; the rest keep the index's
	// order behind them. The re-ranked set is the same whichever page is
	// asked for, so paging walks every result once, in one order.
	from := (q.Page - 1) * q.PageSize
	head := res.Hits[:min(len(res.Hits), e.opts.Candidates)]
	filtered := len(q.Statuses) > 0 || q.Exact
	if filtered {
		// A status filter, or exact mode's phrase check, drops hits only
		// the stored text can judge: every examined hit is loaded.
		head = res.Hits
	} else if extra := missingFrom(head, res.Federated); len(extra) > 0 && uint64(len(head)) < res.Total {
		// The head, plus those of the small kinds' own best that it
		// lacks (smallKinds); the tail leaves them out, so paging still
		// shows every result once.
		rest := res.Hits[len(head):]
		head = append(slices.Clip(head), extra...)
		res.Hits = append(head, slices.DeleteFunc(slices.Clone(rest), func(h indexer.Hit) bool {
			return slices.ContainsFunc(extra, func(x indexer.Hit) bool { return x.ID == h.ID })
		})...)
	}
	ranked, present, pruned, err := e.rankHead(ctx, head, q, !filtered)
	if err != nil {
		return Response{}, err
	}
	// The containers placed beside their files are results now, and the
	// total counts those the query does not match by themselves. Which
	// those are is asked of the index, not read off this page's window,
	// so every page says the same total; the index is asked beside the
	// containers' loading (followContainers).
	selfMatched := func(ids []string) (map[string]int, error) {
		return e.matchedAlone(ctx, iopts, res.Plan, ids)
	}
	ranked, added, alone, err := e.followContainers(ctx, ranked, q, selfMatched)
	if err != nil {
		return Response{}, err
	}
	if len(added) > 0 {
		// The tail must not show the added containers again.
		res.Total += uint64(len(added) - alone)
		tail := slices.DeleteFunc(slices.Clone(res.Hits[len(head):]), func(h indexer.Hit) bool { return added[h.ID] })
		res.Hits = append(slices.Clip(res.Hits[:len(head)]), tail...)
	}
	resp.Match = MatchNone
	for _, r := range ranked {
		if resp.Match = r.match; resp.Match == MatchGood {
			break
		}
	}
	for _, h := range pruned {
		// What was set aside never shows on this page, but it is a match
		// all the same, of the quality its coverage gives it.
		if resp.Match == MatchNone || h.Coverage >= PartialBelow {
			resp.Match = matchOf(h.Coverage)
		}
	}
	if filtered {
		// Only what was examined is known to pass.
		resp.Total = len(ranked)
		resp.TotalIsLowerBound = res.TotalIsLowerBound || res.Total > uint64(len(res.Hits))
	} else {
		resp.Total = int(res.Total) - (len(head) - present - len(pruned)) // less entities gone from the store
		resp.TotalIsLowerBound = res.TotalIsLowerBound
		// prune sets hits aside only when the page ends inside the head,
		// so the tail is reached only without them.
		if end := from + q.PageSize; end > len(ranked) && len(res.Hits) > len(head) {
			// The page reaches past the re-ranked head: the tail in
			// index order.
			tail := res.Hits[len(head):min(len(res.Hits), end-len(ranked)+len(head))]
			if skip := from - len(ranked); skip > 0 {
				tail = tail[min(skip, len(tail)):]
			}
			tc, err := e.hydrate(ctx, tail, nil)
			if err != nil {
				return Response{}, err
			}
			if from > len(ranked) {
				// The page starts in the tail: nothing of the head.
				from = len(ranked)
			}
			ranked = append(ranked, e.inOrder(tc, q)...)
		}
	}
	if from < len(ranked) {
		for _, r := range ranked[from:min(len(ranked), from+q.PageSize)] {
			resp.Results = append(resp.Results, e.result(r, q))
		}
	}
	resp.TookMS = float64(time.Since(start).Microseconds()) / 1000
	if e.opts.QueryLog != nil {
		e.opts.QueryLog.record(ctx, q, resp)
	}
	return resp, nil
}

// matchedAlone returns how many of the index's hits for iopts's query,
// run with plan, each of ids (documents, a work package's public twin
// counted as the work package) is: those the query matches by themselves.
func (e *Engine) matchedAlone(ctx context.Context, iopts indexer.SearchOptions, plan *indexer.Plan, ids []string) (map[string]int, error) {
	mo := iopts
	mo.IDs = nil
	// A work package may show to this user as its public twin.
	for _, id := range ids {
		if k, n, ok := indexer.ParseDocID(id); ok && k == kind.WorkPackage {
			mo.IDs = append(mo.IDs, id, indexer.PublicDocID(n))
		} else {
			mo.IDs = append(mo.IDs, id)
		}
	}
	mo.Size, mo.Federate, mo.Reuse = len(mo.IDs), nil, plan
	matched, err := e.idx.Search(ctx, mo)
	if err != nil {
		return nil, fmt.Errorf("search index: %w", err)
	}
	out := make(map[string]int, len(matched.Hits))
	for _, h := range matched.Hits {
		out[h.ID]++
	}
	return out, nil
}

// searchIndex runs the index query and puts hits of equal index score in
// the order the ranking breaks ties in: kind, then numeric id
// (scorer.CompareIDs). The index orders them by document id as text
// ("work_package:1000" before "work_package:95"), and its window often
// ends inside such a run, so which of them were examined, and the order
// of those past the re-ranked head, followed the text of their ids. For
// a scored query (a fuzzy one: it has a Plan) the window is widened,
// doubling up to maxWindow, until the run at its edge is complete, then
// cut back once the run is ordered. Filter-only and exact queries keep
// the index's order: the first is by recency, and exact mode re-ranks
// every hit it examines.
func (e *Engine) searchIndex(ctx context.Context, opts indexer.SearchOptions) (indexer.Result, error) {
	window := opts.Size
	// One hit past the window tells whether a run crosses its edge.
	opts.Size++
	res, err := e.idx.Search(ctx, opts)
	if err != nil || res.Plan == nil {
		if len(res.Hits) > window {
			res.Hits = res.Hits[:window]
		}
		return res, err
	}
	for len(res.Hits) == opts.Size && opts.Size < maxWindow &&
		res.Hits[len(res.Hits)-1].Score == res.Hits[window-1].Score {
		opts.Size = min(opts.Size*2, maxWindow)
		if res, err = e.idx.Search(ctx, opts); err != nil {
			return res, err
		}
	}
	slices.SortStableFunc(res.Hits, func(a, b indexer.Hit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return scorer.CompareIDs(a.ID, b.ID)
	})
	if len(res.Hits) > window {
		res.Hits = res.Hits[:window]
	}
	return res, nil
}

// smallKindCandidates is how many of its own best hits the small kinds
// add to the re-ranked candidates (smallKindHits).
const smallKindCandidates = 5

// smallKindShare is the largest share of the index a kind may hold and
// still count as small.
const smallKindShare = 0.1

// smallKinds returns the kinds of asked (all when empty) that hold a
// small share of the index (meetings, wiki pages and projects beside
// 100,000 work packages), when some other kind does not. Among many
// documents of one kind a few of another are drowned: a meeting holding
// every word of "what did Oskar say in the refinement meeting" ranked
// below a thousand work packages holding them too, and never reached the
// scorer. Federated search asks each source for its best and lets the
// ranking merge them: the small kinds add their own smallKindCandidates
// to the candidates, by the same index score, and the scorer judges them
// with the rest. The index finds those in the small kinds' documents
// alone (indexer's fewDocs), so it costs little.
func smallKinds(fresh Freshness, asked []kind.Kind) []kind.Kind {
	if len(asked) == 0 {
		asked = indexer.Kinds()
	}
	var total int
	for _, k := range indexer.Kinds() {
		total += fresh.Kinds[k].Store
	}
	var small []kind.Kind
	for _, k := range asked {
		if n := fresh.Kinds[k].Store; n > 0 && float64(n) <= smallKindShare*float64(total) {
			small = append(small, k)
		}
	}
	if len(small) == len(asked) {
		return nil // only small kinds asked for: the query is theirs
	}
	return small
}

// missingFrom returns the hits of extra that head lacks.
func missingFrom(head, extra []indexer.Hit) []indexer.Hit {
	var out []indexer.Hit
	for _, h := range extra {
		if !slices.ContainsFunc(head, func(x indexer.Hit) bool { return x.ID == h.ID }) {
			out = append(out, h)
		}
	}
	return out
}

// statusWindow multiplies the candidates examined when a status filter
// drops some of them after the index query; maxWindow is the index's
// largest page.
const (
	statusWindow = 5
	maxWindow    = 1000
)

// hasStatus reports whether wp's status id or name is one of statuses.
func hasStatus(wp *openproject.WorkPackage, statuses []string) bool {
	if wp == nil {
		return false
	}
	id := strconv.FormatInt(wp.Status.ID, 10)
	for _, s := range statuses {
		if s == id || strings.EqualFold(strings.TrimSpace(s), wp.Status.Title) {
			return true
		}
	}
	return false
}

// candidate is an index hit with its entity loaded from the store.
type candidate struct {
	hit indexer.Hit
	*loaded
	// res is the scorer's result for this query, when hydrate scored the
	// candidate as it loaded it (rank scores the others).
	res *scorer.Result
}

// hydrate loads the hits' entities in short read transactions, from the
// cache where it holds them, and scores each with prep when it is set.
// Hits whose entity vanished from the store (deleted since indexing) are
// dropped.
func (e *Engine) hydrate(ctx context.Context, hits []indexer.Hit, prep *scorer.Prepared) ([]*candidate, error) {
	// Decoding is most of hydration (zstd, then MessagePack or CBOR,
	// then markup to plain text) and each entity is decoded alone, so the candidates are
	// spread over the cores, each goroutine in a read transaction of its
	// own (a bbolt transaction is not safe for concurrent use): on an
	// idle machine one search answers sooner. Each candidate is scored
	// as it is loaded, while its text is in the core's cache, and in the
	// same spread: a second one, for the scorer alone, waited again for
	// the other core to wake. The candidates keep the hits' order.
	loaded := make([]*candidate, len(hits))
	score := func(c *candidate) *candidate {
		if prep != nil {
			if r, ok := prep.Score(c.record); ok {
				c.res = &r
			}
		}
		return c
	}
	err := spread.Run(ctx, len(hits), hydrateWorkers(len(hits)), func(take func() (int, bool)) error {
		return e.st.View(ctx, func(tx *store.ReadTx) error {
			gen := tx.Generation()
			for i, ok := take(); ok; i, ok = take() {
				h := hits[i]
				key := h.DocID()
				if l, ok := e.cache.get(gen, key); ok {
					loaded[i] = score(&candidate{hit: h, loaded: l})
					continue
				}
				c, found, err := e.load(tx, h)
				if err != nil {
					return fmt.Errorf("load %s: %w", h.ID, err)
				}
				if found {
					e.cache.put(gen, key, c.loaded)
					loaded[i] = score(c)
				}
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(loaded, func(c *candidate) bool { return c == nil }), nil
}

// hydrateMinPerWorker is the fewest hits worth a goroutine of their own.
const hydrateMinPerWorker = 8

// hydrateWorkers is how many goroutines hydrate n hits: at most 4, each
// with at least hydrateMinPerWorker hits (spread.Run keeps to the cores).
func hydrateWorkers(n int) int {
	return max(1, min(4, n/hydrateMinPerWorker))
}

// load decodes h's entity from the store and builds its scorer record.
func (e *Engine) load(tx *store.ReadTx, h indexer.Hit) (*candidate, bool, error) {
	c := &candidate{hit: h, loaded: &loaded{}}
	var found bool
	var err error
	switch h.Kind {
	case kind.WorkPackage:
		var wp openproject.WorkPackage
		wp, found, err = tx.WorkPackage(h.EntityID)
		if found && err == nil {
			c.wp = &wp
			c.acts, _, err = tx.Activities(h.EntityID)
			if h.Public {
				// The public twin: its reader may not see internal
				// comments, in the ranking or the answer.
				c.acts = slices.DeleteFunc(c.acts, func(a openproject.Activity) bool { return a.Internal })
			}
		}
	case kind.WikiPage:
		var w openproject.WikiPage
		w, found, err = tx.WikiPage(h.EntityID)
		c.wiki = &w
	case kind.Meeting:
		var m openproject.Meeting
		m, found, err = tx.Meeting(h.EntityID)
		c.meeting = &m
	case kind.Project:
		var p openproject.Project
		p, found, err = tx.Project(h.EntityID)
		c.project = &p
	case kind.Attachment:
		var a openproject.Attachment
		a, found, err = tx.Attachment(h.EntityID)
		c.att = &a
	}
	if err != nil || !found {
		return nil, false, err
	}
	c.record = e.reweight(recordOf(c), h.Kind)
	c.size = 2 * recordSize(c.record)
	return c, true, nil
}

// Field weights follow the reference server's per-domain declarations
// (titles 3, bodies 1, agenda titles 2, notes and outcomes 1.5), with
// identifiers as strong as titles.
func recordOf(c *candidate) scorer.Record {
	r := scorer.Record{ID: c.hit.ID}
	switch {
	case c.wp != nil:
		wp := c.wp
		ids := []string{"#" + strconv.FormatInt(wp.ID, 10)}
		if wp.DisplayID != "" {
			ids = append(ids, wp.DisplayID)
		}
		comments := make([]string, 0, len(c.acts))
		for _, a := range c.acts {
			if a.IsComment() {
				comments = append(comments, openproject.PlainText(a.Comment))
			}
		}
		r.Updated = wp.UpdatedAt
		r.Fields = []scorer.Field{
			{Name: "subject", Weight: 3, Values: []string{wp.Subject}},
			{Name: "id", Weight: 3, Values: ids},
			{Name: "description", Weight: 1, Values: []string{openproject.PlainText(wp.Description)}},
			{Name: "comments", Weight: 1, Values: comments},
		}
	case c.wiki != nil:
		r.Updated = c.wiki.UpdatedAt
		r.Fields = []scorer.Field{
			{Name: "title", Weight: 3, Values: []string{c.wiki.Title}},
			{Name: "text", Weight: 1, Values: []string{openproject.PlainText(c.wiki.Text)}},
		}
	case c.meeting != nil:
		m := c.meeting
		var titles, notes, outcomes, people []string
		for _, it := range m.AgendaItems {
			titles = append(titles, it.Title)
			if it.Notes != "" {
				notes = append(notes, openproject.PlainText(it.Notes))
			}
			for _, o := range it.Outcomes {
				outcomes = append(outcomes, openproject.PlainText(o.Notes))
			}
		}
		for _, p := range m.Participants {
			people = append(people, p.Title)
		}
		r.Updated = m.UpdatedAt
		r.Fields = []scorer.Field{
			{Name: "title", Weight: 3, Values: []string{m.Title}},
			{Name: "location", Weight: 1, Values: []string{m.Location}},
			{Name: "project", Weight: 0.5, Values: []string{m.Project.Title}},
			{Name: "author", Weight: 0.5, Values: []string{m.Author.Title}},
			{Name: "agenda_item", Weight: 2, Values: titles},
			{Name: "agenda_notes", Weight: 1.5, Values: notes},
			{Name: "outcome_notes", Weight: 1.5, Values: outcomes},
			{Name: "participant", Weight: 1, Values: people},
		}
	case c.project != nil:
		p := c.project
		r.Updated = p.UpdatedAt
		r.Fields = []scorer.Field{
			{Name: "name", Weight: 3, Values: []string{p.Name}},
			{Name: "identifier", Weight: 3, Values: []string{p.Identifier}},
			{Name: "description", Weight: 1, Values: []string{openproject.PlainText(p.Description)}},
		}
	case c.att != nil:
		a := c.att
		r.Updated = a.CreatedAt
		r.Fields = []scorer.Field{
			{Name: "file_name", Weight: 3, Values: []string{a.FileName}},
			{Name: "description", Weight: 1, Values: []string{openproject.PlainText(a.Description)}},
			{Name: "text", Weight: 1, Values: []string{a.Text}},
		}
	}
	return r
}

// reweight applies Options.Weights to r's fields.
func (e *Engine) reweight(r scorer.Record, k kind.Kind) scorer.Record {
	if len(e.opts.Weights) == 0 {
		return r
	}
	fields := make([]scorer.Field, 0, len(r.Fields))
	for _, f := range r.Fields {
		if w, ok := e.opts.Weights[string(k)+"."+f.Name]; ok {
			if w <= 0 {
				continue
			}
			f.Weight = w
		}
		fields = append(fields, f)
	}
	r.Fields = fields
	return r
}

type ranked struct {
	c   *candidate
	res scorer.Result
	// coverage is the share of the query's information the candidate
	// holds; words its matched query words.
	coverage float64
	words    []string
	match    string
	// evidence is the scorer's field score (words together, phrases,
	// titles), which orders items of about equal relevance.
	evidence float64
	// via is the attachment that placed a container (followContainers).
	via *AttachmentMatch
}

// Match qualities of a result and of a response.
const (
	MatchGood    = "good"
	MatchPartial = "partial"
	MatchNone    = "none"
)

// PartialBelow is the coverage under which a result is a partial match:
// it holds less than 40% of the query's information. Measured on text
// none of us wrote (../shared/devset): the best hit of every query about
// something absent covers at most 0.33 (a typo-matched word or two),
// while 317 of the 319 expected items found cover 0.4 or more (the other
// two, at 0.35 and 0.39, are still returned, marked partial). The
// threshold errs on the side of calling a match weak.
const PartialBelow = indexer.WeakCover

// rank orders cands for q, each scored relative to sc.
func (e *Engine) rank(cands []*candidate, q Query, sc scale) []ranked {
	if len(cands) == 0 {
		return nil
	}
	records := make([]scorer.Record, len(cands))
	for i, c := range cands {
		records[i] = c.record
	}
	if strings.TrimSpace(q.Text) == "" {
		// A filter-only query: the index already ordered by recency.
		out := make([]ranked, len(cands))
		for i, c := range cands {
			out[i] = ranked{c: c, res: scorer.Result{ID: c.hit.ID, Index: i}, match: MatchGood}
		}
		return out
	}
	if q.Exact {
		// The scorer verifies the phrase on the stored text (the index
		// only guarantees every word occurs in long fields).
		results := scorer.Rank(records, q.Text, scorer.Options{
			Exact: true, Params: e.opts.Params, IgnoreRecency: e.opts.IgnoreRecency,
		})
		out := make([]ranked, len(results))
		for i, r := range results {
			out[i] = ranked{c: cands[r.Index], res: r, coverage: 1, match: MatchGood}
		}
		return out
	}
	// Snippets and matched fields come from the scorer, without its gate:
	// relevance is the index's (tf-idf over the words a candidate holds)
	// and the coverage of the query's information. Candidates hydrate
	// scored are not scored again.
	byIndex := make([]scorer.Result, len(cands))
	var rest []scorer.Record
	var at []int
	for i, c := range cands {
		if c.res != nil {
			byIndex[i] = *c.res
		} else {
			rest, at = append(rest, c.record), append(at, i)
		}
	}
	if len(rest) > 0 {
		for _, r := range scorer.Rank(rest, q.Text, e.scorerOptions(sc)) {
			byIndex[at[r.Index]] = r
		}
	}
	out := make([]ranked, len(cands))
	for i, c := range cands {
		r := ranked{c: c, res: byIndex[i]}
		r.res.ID, r.res.Index = c.hit.ID, i
		r.coverage, r.words = c.hit.Coverage, c.hit.MatchedWords
		r.evidence = r.res.Score
		r.res.Score = rankScore(r.coverage, sc.rel(c.hit), r.evidence, c.hit.Kind)
		r.match = matchOf(r.coverage)
		out[i] = r
	}
	if e.opts.Ranker != RankIndex {
		slices.SortStableFunc(out, e.compare)
	}
	return out
}

// scorerOptions are the scorer's options for ranking candidates on scale
// sc: without its gate, since relevance is the index's and the coverage's
// (rank).
func (e *Engine) scorerOptions(sc scale) scorer.Options {
	p := e.opts.Params
	p.MinScore = -1
	return scorer.Options{Params: p, CrossFieldWeight: e.opts.CrossFieldWeight, MaxWeight: sc.maxWeight}
}

// prepare prepares q for scoring candidates on scale sc as they are
// loaded (hydrate); nil where rank scores otherwise: exact mode and
// filter-only queries.
func (e *Engine) prepare(q Query, sc scale) *scorer.Prepared {
	if q.Exact {
		return nil
	}
	return scorer.Prepare(q.Text, e.scorerOptions(sc))
}

// compare orders ranked candidates: by ranking score in steps of
// scoreStep, then the scorer's evidence, then newer first (unless
// Options.IgnoreRecency), then by id. Ids are unique, so the order does
// not depend on the input's.
func (e *Engine) compare(a, b ranked) int {
	if c := cmp.Compare(quantize(b.res.Score), quantize(a.res.Score)); c != 0 {
		return c
	}
	if c := cmp.Compare(b.evidence, a.evidence); c != 0 {
		return c
	}
	if !e.opts.IgnoreRecency {
		if c := b.c.record.Updated.Compare(a.c.record.Updated); c != 0 {
			return c // newer first
		}
	}
	return scorer.CompareIDs(a.c.hit.ID, b.c.hit.ID)
}

// inOrder ranks cands for their snippets and fields but keeps their order
// (the index's, past the re-ranked head).
func (e *Engine) inOrder(cands []*candidate, q Query) []ranked {
	rs := e.rank(cands, q, e.scaleOf(hitsOf(cands)))
	byID := make(map[string]ranked, len(rs))
	for _, r := range rs {
		byID[r.c.hit.ID] = r
	}
	out := make([]ranked, 0, len(cands))
	for _, c := range cands {
		if r, ok := byID[c.hit.ID]; ok {
			out = append(out, r)
		}
	}
	return out
}

// rankScore is a candidate's ranking score: its coverage (how much of
// the query's information the item holds) times the geometric mean of
// the index's relative tf-idf rel (how strongly and how concentrated it
// holds the words) and the scorer's field evidence (words together in
// one field, a phrase, a title). Coverage decides between a long meeting
// holding every word and a short work package holding the rarest one;
// the rest orders items of equal coverage. Chosen on ../shared/devset and
// the generated set against coverage alone, tf-idf alone and other
// products (README, search quality). It grows with each argument, which
// prune relies on.
func rankScore(coverage, rel, evidence float64, k kind.Kind) float64 {
	s := coverage * math.Sqrt(rel*(0.5+0.5*evidence))
	if k == kind.Attachment {
		// A file's text is weaker evidence than an item's own fields:
		// long files hold most words of a project's vocabulary, so they
		// rank a step below items holding the query as well (a file's
		// container follows it up, followContainers).
		s *= attachmentWeight
	}
	return s
}

// scale is what a query's candidates are scored relative to: the index's
// top score among them, and the largest field weight of their kinds,
// which normalises the scorer's field scores.
type scale struct{ top, maxWeight float64 }

// scaleOf returns the scale of hits.
func (e *Engine) scaleOf(hits []indexer.Hit) scale {
	var sc scale
	for _, h := range hits {
		sc.top = max(sc.top, h.Score)
		sc.maxWeight = max(sc.maxWeight, e.kindWeight[h.Kind])
	}
	return sc
}

// rel is h's index score relative to the top one.
func (sc scale) rel(h indexer.Hit) float64 {
	if sc.top <= 0 {
		return 0
	}
	return h.Score / sc.top
}

// matchOf is the match quality of a result of this coverage.
func matchOf(coverage float64) string {
	if coverage < PartialBelow {
		return MatchPartial
	}
	return MatchGood
}

// attachmentWeight scales the ranking score of attachment hits: two
// steps of scoreStep below an item of the same coverage.
const attachmentWeight = 0.8

// scoreStep is the resolution of the ranking score: items closer than
// this hold the query about equally well (a few words' difference in
// length), and the one whose fields hold it better (the scorer's
// evidence) comes first, then the newer one, then the lower id, as in
// the reference server.
const scoreStep = 0.1

func quantize(x float64) float64 { return math.Round(x / scoreStep) }

func (e *Engine) result(r ranked, q Query) Result {
	c := r.c
	out := Result{Kind: c.hit.Kind, ID: c.hit.EntityID, Score: round2(r.coverage), Match: r.match, MatchedWords: r.words, MatchedFields: r.res.MatchedFields}
	if out.MatchedWords == nil {
		out.MatchedWords = []string{}
	}
	if out.MatchedFields == nil {
		out.MatchedFields = []string{}
	}
	if len(r.res.Matches) > 0 {
		out.Snippet = r.res.Matches[0].Snippet
	}
	switch {
	case c.wp != nil:
		wp := c.wp
		closed := wp.Closed
		out.Title, out.Status, out.Type, out.Closed = wp.Subject, wp.Status.Title, wp.Type.Title, &closed
		out.Project = &ProjectRef{ID: wp.Project.ID, Name: wp.Project.Title}
		if wp.Assignee != nil {
			out.Assignee = wp.Assignee.Title
		}
		out.UpdatedAt = timePtr(wp.UpdatedAt)
		out.URL = e.link("work_packages", wp.ID)
		out.MatchedComment = matchedComment(r.res, c.acts)
	case c.wiki != nil:
		out.Title = c.wiki.Title
		out.Project = &ProjectRef{ID: c.wiki.Project.ID, Name: c.wiki.Project.Title}
		out.UpdatedAt = timePtr(c.wiki.UpdatedAt)
	case c.meeting != nil:
		m := c.meeting
		out.Title = m.Title
		out.Project = &ProjectRef{ID: m.Project.ID, Name: m.Project.Title}
		out.UpdatedAt, out.StartTime = timePtr(m.UpdatedAt), timePtr(m.StartTime)
		out.URL = e.link("meetings", m.ID)
		out.MatchedAgendaItems = matchedAgenda(m, q, e.opts.Params)
	case c.project != nil:
		out.Title = c.project.Name
		out.Project = &ProjectRef{ID: c.project.ID, Name: c.project.Name}
		out.UpdatedAt = timePtr(c.project.UpdatedAt)
		if c.project.Identifier != "" && e.opts.BaseURL != "" {
			out.URL = e.opts.BaseURL + "/projects/" + c.project.Identifier
		}
	case c.att != nil:
		a := c.att
		out.Title = a.FileName
		out.Project = &ProjectRef{ID: a.Project.ID, Name: a.Project.Title}
		out.UpdatedAt = timePtr(a.CreatedAt)
		ck := a.ContainerKind()
		out.Attachment = &AttachmentInfo{
			FileName: a.FileName, ContentType: a.ContentType, FileSize: a.FileSize,
			TextIndexed: a.Text != "", TextTruncated: a.TextTruncated, Skipped: a.Skipped,
			Container: ContainerRef{Kind: ck, ID: a.Container.ID, Title: a.Container.Title},
		}
		switch ck {
		case kind.WorkPackage:
			out.Attachment.Container.URL = e.link("work_packages", a.Container.ID)
		case kind.Meeting:
			out.Attachment.Container.URL = e.link("meetings", a.Container.ID)
		}
		out.URL = out.Attachment.Container.URL
	}
	if r.via != nil {
		out.MatchedAttachment = r.via
	}
	return out
}

// AttachmentInfo describes an attachment result: its file and its
// container.
type AttachmentInfo struct {
	FileName    string       `json:"fileName"`
	ContentType string       `json:"contentType,omitempty"`
	FileSize    int64        `json:"fileSize,omitempty"`
	Container   ContainerRef `json:"container"`
	// TextIndexed says the file's text is searched; otherwise Skipped
	// says why only its name and description are.
	TextIndexed   bool   `json:"textIndexed"`
	TextTruncated bool   `json:"textTruncated,omitempty"`
	Skipped       string `json:"skipped,omitempty"`
}

// ContainerRef names the work package, wiki page or meeting a file is
// attached to.
type ContainerRef struct {
	Kind  kind.Kind `json:"kind"`
	ID    int64     `json:"id"`
	Title string    `json:"title,omitempty"`
	URL   string    `json:"url,omitempty"`
}

// AttachmentMatch is the attachment whose text made a container a
// result (see followContainers).
type AttachmentMatch struct {
	ID       int64  `json:"id"`
	FileName string `json:"fileName"`
	Snippet  string `json:"snippet,omitempty"`
}

func (e *Engine) link(collection string, id int64) string {
	if e.opts.BaseURL == "" {
		return ""
	}
	return e.opts.BaseURL + "/" + collection + "/" + strconv.FormatInt(id, 10)
}

// matchedComment picks the comment the scorer matched best.
func matchedComment(r scorer.Result, acts []openproject.Activity) *CommentMatch {
	for _, m := range r.Matches {
		if m.Field != "comments" {
			continue
		}
		i := 0
		for _, a := range acts {
			if !a.IsComment() {
				continue
			}
			if i == m.Value {
				return &CommentMatch{ActivityID: a.ID, Author: a.User.Title, CreatedAt: a.CreatedAt, Snippet: m.Snippet}
			}
			i++
		}
	}
	return nil
}

// matchedAgenda ranks a meeting's agenda items on their own, as the
// reference does, so the caller sees which item matched.
func matchedAgenda(m *openproject.Meeting, q Query, p scorer.Params) []AgendaMatch {
	if strings.TrimSpace(q.Text) == "" || len(m.AgendaItems) == 0 {
		return nil
	}
	recs := make([]scorer.Record, len(m.AgendaItems))
	for i, it := range m.AgendaItems {
		var outcomes []string
		for _, o := range it.Outcomes {
			outcomes = append(outcomes, openproject.PlainText(o.Notes))
		}
		recs[i] = scorer.Record{ID: "agenda_item:" + strconv.FormatInt(it.ID, 10), Fields: []scorer.Field{
			{Name: "title", Weight: 2, Values: []string{it.Title}},
			{Name: "notes", Weight: 1.5, Values: []string{openproject.PlainText(it.Notes)}},
			{Name: "outcomes", Weight: 1.5, Values: outcomes},
		}}
	}
	var out []AgendaMatch
	for _, r := range scorer.Rank(recs, q.Text, scorer.Options{Exact: q.Exact, Params: p, Limit: 5}) {
		it := m.AgendaItems[r.Index]
		am := AgendaMatch{ID: it.ID, Title: it.Title, Score: r.Score}
		if len(r.Matches) > 0 {
			am.Snippet = r.Matches[0].Snippet
		}
		out = append(out, am)
	}
	return out
}

func round2(x float64) float64 { return math.Round(x*100) / 100 }

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

package mcp

import (
	"cmp"
	"context"
	"encoding/json"
	"log/slog"
	"runtime"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sync/semaphore"

	"github.com/opsearch/opsearch/extract"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/search"
	"github.com/opsearch/opsearch/sync"
)

// API is what the live and write tools need from OpenProject, and no more:
// every method is called by a tool. *openproject.Client implements it (the
// wiring in cmd/opsearch checks that at compile time).
type API interface {
	// BaseURL is the instance's web address, for links in answers.
	BaseURL() string
	// Me is the user the credential belongs to.
	Me(ctx context.Context) (openproject.User, error)
	ListProjects(ctx context.Context, opts openproject.ListOptions) (openproject.Page[openproject.Project], error)
	Project(ctx context.Context, idOrIdentifier string) (openproject.Project, error)
	ListWorkPackages(ctx context.Context, opts openproject.ListOptions) (openproject.Page[openproject.WorkPackage], error)
	ListProjectWorkPackages(ctx context.Context, project string, opts openproject.ListOptions) (openproject.Page[openproject.WorkPackage], error)
	WorkPackage(ctx context.Context, id int64) (openproject.WorkPackage, error)
	WorkPackageSchemaNames(ctx context.Context, projectID, typeID int64) (map[string]string, error)
	ListVersions(ctx context.Context, project string, opts openproject.ListOptions) (openproject.Page[openproject.Version], error)
	Version(ctx context.Context, id int64) (openproject.Version, error)
	Activities(ctx context.Context, workPackageID int64) ([]openproject.Activity, error)
	ListQueries(ctx context.Context, opts openproject.ListOptions) (openproject.Page[openproject.Query], error)
	QueryWithResults(ctx context.Context, id int64, opts openproject.ListOptions) (openproject.Query, openproject.Page[openproject.WorkPackage], error)
	Statuses(ctx context.Context) ([]openproject.Status, error)
	Types(ctx context.Context, project string) ([]openproject.Type, error)
	Priorities(ctx context.Context) ([]openproject.Priority, error)
	ListUsers(ctx context.Context, opts openproject.ListOptions) (openproject.Page[openproject.User], error)
	ListMeetings(ctx context.Context, opts openproject.ListOptions) (openproject.Page[openproject.Meeting], error)
	Meeting(ctx context.Context, id int64) (openproject.Meeting, error)
	AgendaItems(ctx context.Context, meetingID int64) ([]openproject.AgendaItem, error)
	WikiPage(ctx context.Context, id int64) (openproject.WikiPage, error)
	WikiPageAttachments(ctx context.Context, id int64) ([]openproject.Attachment, error)
	Attachment(ctx context.Context, id int64) (openproject.Attachment, error)
	AttachmentContent(ctx context.Context, id int64, max int64) ([]byte, string, error)
	ListWikiPageLinks(ctx context.Context, opts openproject.ListOptions) (openproject.Page[openproject.WikiPageLink], error)
	OpenAPISpec(ctx context.Context) (json.RawMessage, error)
	CreateWorkPackage(ctx context.Context, n openproject.NewWorkPackage) (openproject.WorkPackage, error)
	UpdateWorkPackage(ctx context.Context, id int64, p openproject.WorkPackagePatch) (openproject.WorkPackage, error)
	AddComment(ctx context.Context, workPackageID int64, text string) (openproject.Activity, error)
	ListTimeEntries(ctx context.Context, opts openproject.ListOptions) (openproject.Page[openproject.TimeEntry], error)
	CreateTimeEntry(ctx context.Context, n openproject.NewTimeEntry) (openproject.TimeEntry, error)
	Relations(ctx context.Context, workPackageID int64, opts openproject.ListOptions) (openproject.Page[openproject.Relation], error)
	CreateRelation(ctx context.Context, fromID int64, n openproject.NewRelation) (openproject.Relation, error)
}

// Searcher answers search tools from the local index.
type Searcher interface {
	Search(ctx context.Context, q search.Query) (search.Response, error)
	Freshness(ctx context.Context) (search.Freshness, error)
}

// Index is the user's local index as the tools see it. Searcher returns
// ErrIndexNotReady while the index is still being opened (the server
// answers tools/list at once, before the network is reached).
type Index interface {
	Searcher() (Searcher, error)
	// RefreshWorkPackage re-reads a work package and its activities from
	// the API and writes them to the store and index, so the caller's next
	// search sees its own write.
	RefreshWorkPackage(ctx context.Context, id int64) error
}

// Options configure a server.
type Options struct {
	// ReadOnly hides the write tools and refuses them if called anyway.
	ReadOnly bool
	// Logger receives one line per failed tool call, with a request id and
	// the structured cause; nil discards.
	Logger *slog.Logger
	// Version is reported to clients.
	Version string
	// ObserveSearch, if set, receives the duration of every search tool
	// call that reached the index (for metrics).
	ObserveSearch func(d time.Duration, tool string)
	// Upstream, if set, is what the process knows about reaching
	// OpenProject: while it is down, live and write tools fail at once
	// with since when (see failFast), and their outcomes are reported
	// back to it.
	Upstream sync.UpstreamWatch
	// LiveTimeout bounds one call of a live read tool, retries included
	// (0: DefaultLiveTimeout). Set it above the client's request timeout.
	LiveTimeout time.Duration
	// SearchSlots, if set, bounds the index searches running at once in
	// every server sharing it (NewSearchSlots); the others wait their
	// turn, first come first served. nil: no bound.
	SearchSlots *SearchSlots
	// VerifyResults checks every search result with OpenProject, with the
	// server's key, before the answer leaves (each verdict trusted for
	// DefaultVerifyTTL): what OpenProject no longer shows the user is
	// withheld, and a shared index's view of the user is computed again.
	VerifyResults bool
	// VerifyTTL is how long a result's verdict is kept (0:
	// DefaultVerifyTTL).
	VerifyTTL time.Duration
	// OpenWait bounds how long a search waits for an index that is being
	// opened (a process's first moments: a one-shot client such as MCP
	// Inspector's CLI starts the server and searches at once) before it
	// answers that the index is not ready. 0: DefaultOpenWait; negative:
	// no wait.
	OpenWait time.Duration
	// OnRejected, if set, is called when OpenProject refuses the
	// server's credential during a tool call (a revoked key or OAuth
	// token): the team server forgets it, so the client's next request
	// gets 401 and, with OAuth, signs the user in again.
	OnRejected func()
	// ConfirmWrites makes every write tool answer with a preview of what
	// it would do (nothing changed) unless called with confirm: true.
	ConfirmWrites bool
	// Extract bounds openproject_get_attachment's reading of a file not
	// indexed yet: the sync's attachment budget (zero: extract's
	// defaults).
	Extract extract.Options
}

// DefaultOpenWait is Options.OpenWait's default. Opening an index that
// exists takes milliseconds, reaching OpenProject to learn whose it is
// a round trip; a first crawl is not waited for (the index opens empty
// and the answer says the crawl is incomplete).
const DefaultOpenWait = 5 * time.Second

// SearchSlots bounds the index searches running at once, shared by every
// server of a process, and tells background work when searches are
// waiting (it is a sync.Busy).
type SearchSlots struct {
	sem *semaphore.Weighted
	n   int64
	// queued counts the searches holding or waiting for a slot.
	queued atomic.Int64
}

var _ sync.Busy = (*SearchSlots)(nil)

// NewSearchSlots returns the bound for Options.SearchSlots: as many
// searches at once as the process has cores. A search is CPU work from
// start to end (the index and the store are memory-mapped), so running
// more at once than there are cores makes none faster and every one
// slower: 32 clients sharing two cores made each search wait for all the
// others' work, and the costliest queries 16 times their own. In turn,
// each waits only for those ahead of it, and its answer's time is its own.
func NewSearchSlots() *SearchSlots { return newSearchSlots(runtime.GOMAXPROCS(0)) }

func newSearchSlots(n int) *SearchSlots {
	return &SearchSlots{sem: semaphore.NewWeighted(int64(n)), n: int64(n)}
}

// Acquire waits for a slot, first come first served; it fails only when
// ctx ends first.
func (s *SearchSlots) Acquire(ctx context.Context) error {
	s.queued.Add(1)
	if err := s.sem.Acquire(ctx, 1); err != nil {
		s.queued.Add(-1)
		return err
	}
	return nil
}

// Release frees a slot taken by Acquire.
func (s *SearchSlots) Release() {
	s.sem.Release(1)
	s.queued.Add(-1)
}

// Busy reports whether searches are waiting for a slot: every core has a
// search and more are queued behind them.
func (s *SearchSlots) Busy() bool { return s.queued.Load() > s.n }

// server bundles what the tool handlers need.
type server struct {
	api  API
	idx  Index
	opts Options
	log  *slog.Logger
	// verify is set with Options.VerifyResults.
	verify *verifier
	// rec records every tool call in the audit log, when idx keeps one.
	rec callRecorder
}

// NewServer builds the MCP server with every tool registered.
func NewServer(api API, idx Index, opts Options) *sdk.Server {
	opts.Logger = cmp.Or(opts.Logger, slog.New(slog.DiscardHandler))
	opts.Version = cmp.Or(opts.Version, "0.1.0")
	opts.LiveTimeout = cmp.Or(opts.LiveTimeout, DefaultLiveTimeout)
	opts.OpenWait = cmp.Or(opts.OpenWait, DefaultOpenWait)
	s := &server{api: api, idx: idx, opts: opts, log: opts.Logger.With("subsystem", "mcp")}
	if opts.VerifyResults {
		s.verify = newVerifier(api, opts.VerifyTTL)
	}
	if r, ok := idx.(callRecorder); ok && r.audits() {
		s.rec = r
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: "opsearch", Title: "OpenProject search (opsearch)", Version: opts.Version}, &sdk.ServerOptions{
		Instructions: instructions,
		// The SDK says "server connecting", "session connected" and
		// "disconnected" at INFO for every stateless request: three
		// lines per call. They are detail, kept at DEBUG.
		Logger:       slog.New(quieter{opts.Logger.Handler()}),
		SetCacheable: setCacheable,
	})
	srv.AddReceivingMiddleware(s.checkToolArgs)
	s.registerSearchTools(srv)
	s.registerLiveTools(srv)
	s.registerResources(srv)
	if !opts.ReadOnly {
		s.registerWriteTools(srv)
	}
	// Last, so it is outermost: it sees every call as it arrived, and
	// every answer, refusals of the middlewares above included.
	srv.AddReceivingMiddleware(s.auditCalls)
	return srv
}

// quieter is a log handler that passes records below WARN on at DEBUG.
type quieter struct{ h slog.Handler }

func (q quieter) Enabled(ctx context.Context, l slog.Level) bool { return q.h.Enabled(ctx, q.level(l)) }

func (q quieter) Handle(ctx context.Context, r slog.Record) error {
	r.Level = q.level(r.Level)
	return q.h.Handle(ctx, r)
}

func (q quieter) WithAttrs(as []slog.Attr) slog.Handler { return quieter{q.h.WithAttrs(as)} }
func (q quieter) WithGroup(name string) slog.Handler    { return quieter{q.h.WithGroup(name)} }

func (quieter) level(l slog.Level) slog.Level {
	if l < slog.LevelWarn {
		return slog.LevelDebug
	}
	return l
}

var _ slog.Handler = quieter{}

// ListTTL is the cache hint (ttlMs) of server/discover and the list
// results: what they list is fixed for the life of the process (the
// write tools are there or not by --read-only, set at start), and the
// same for every user, so any client or intermediary may keep it
// ("public") for an hour.
const ListTTL = time.Hour

// setCacheable is the ServerOptions.SetCacheable hook (2026-07-28 cache
// hints). resources/read is left as its handler says: what a resource
// holds changes with the index and is the user's own.
func setCacheable(_ context.Context, req sdk.Request, c *sdk.Cacheable) {
	if _, ok := req.(*sdk.ReadResourceRequest); ok {
		return
	}
	c.TTLMs = int(ListTTL / time.Millisecond)
	c.CacheScope = "public"
}

const instructions = `opsearch answers questions about an OpenProject instance.
Start with openproject_search: one typo-tolerant query over work packages (with their comments), wiki pages, meetings (agenda items, outcomes, participants) and projects, answered from a local index in milliseconds. Its "index" block says when each kind was synced and whether the crawl is complete; an empty result while the crawl is incomplete does not mean nothing exists.
Use get_* tools for full details of one item, list_* tools for exact filtered listings from the live API. Each search result names its item's resource uri (openproject://work_packages/{id} and the like), readable with resources/read.`

// Annotation helpers: the spec defaults destructiveHint and openWorldHint
// to true when absent, so every tool sets all four explicitly.
func ptr[T any](v T) *T { return &v }

// readOnlyLocal annotates tools that only read the local index.
func readOnlyLocal() *sdk.ToolAnnotations {
	return &sdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, DestructiveHint: ptr(false), OpenWorldHint: ptr(false)}
}

// readOnlyLive annotates tools that read the live API.
func readOnlyLive() *sdk.ToolAnnotations {
	return &sdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, DestructiveHint: ptr(false), OpenWorldHint: ptr(true)}
}

package mcp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/opsearch/opsearch/indexer"
	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/search"
	"github.com/opsearch/opsearch/sync"
)

// The search tools answer from the local index only: no API request, so
// they are fast, work while OpenProject is slow, and never fail because of
// it. Every answer carries an "index" block saying per kind when it was
// synced and whether the crawl is complete, because an empty result from an
// incomplete index must not read as "nothing exists".

// Tool names.
const (
	toolSearch             = "openproject_search"
	toolSearchWorkPackages = "openproject_search_work_packages"
	toolSearchWikiPages    = "openproject_search_wiki_pages"
	toolSearchMeetings     = "openproject_search_meetings"
	toolSyncStatus         = "openproject_sync_status"
)

// Paging limits. The index hands at most maxResultWindow ranked results to
// the engine, so pages beyond them cannot be served.
const (
	defaultPageSize = 20
	maxQueryRunes   = 500
	maxResultWindow = 1000
)

// projectResolver is implemented by searchers that can map a project
// identifier to its id without the API (UserIndex does, from the store).
type projectResolver interface {
	ResolveProject(ctx context.Context, identifier string) (id int64, found bool, err error)
}

// syncInfoSource is implemented by indexes that know whose data they hold
// and how it is synced (UserIndex).
type syncInfoSource interface {
	syncInfo() SyncInfo
}

// searchProject is a project given as a numeric id or an identifier, the
// reference server's `number | string`.
type searchProject struct {
	id    int64
	ident string
	set   bool
}

// UnmarshalJSON accepts a number, a numeric string or an identifier.
func (p *searchProject) UnmarshalJSON(b []byte) error {
	*p = searchProject{}
	if string(b) == "null" {
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err == nil {
		id, err := n.Int64()
		if err != nil {
			return argErr("projectId", "must be a whole number or a project identifier, not %s", n)
		}
		*p = searchProject{id: id, set: true}
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return argErr("projectId", "must be a number or a string")
	}
	s = strings.TrimSpace(s)
	if id, err := strconv.ParseInt(s, 10, 64); err == nil {
		*p = searchProject{id: id, set: true}
		return nil
	}
	*p = searchProject{ident: s, set: true}
	return nil
}

// MarshalJSON writes the value back (golden files show inputs).
func (p searchProject) MarshalJSON() ([]byte, error) {
	switch {
	case !p.set:
		return []byte("null"), nil
	case p.ident != "":
		return json.Marshal(p.ident)
	}
	return json.Marshal(p.id)
}

func (p searchProject) IsZero() bool { return !p.set }

// Inputs. The jsonschema tag is the parameter's description; enums and
// bounds are added in toolSchema.
type searchAllIn struct {
	Query     string        `json:"query" jsonschema:"words, a phrase, #123 or PROJ-12; typos and word forms tolerated"`
	Kinds     []string      `json:"kinds,omitempty" jsonschema:"only these kinds (default all)"`
	ProjectID searchProject `json:"projectId,omitzero" jsonschema:"only this project: numeric id or identifier"`
	MatchMode string        `json:"matchMode,omitempty" jsonschema:"fuzzy (default) tolerates typos and prefixes; exact: the words as written"`
	Offset    int           `json:"offset,omitempty" jsonschema:"page number, 1-based (default 1)"`
	PageSize  int           `json:"pageSize,omitempty" jsonschema:"results per page (default 20)"`
}

type searchWorkPackagesIn struct {
	Query     string        `json:"query" jsonschema:"words, a phrase, #123 or PROJ-12; typos and word forms tolerated"`
	ProjectID searchProject `json:"projectId,omitzero" jsonschema:"only this project: numeric id or identifier"`
	Status    string        `json:"status,omitempty" jsonschema:"open, closed, all (default), or a status id or name"`
	MatchMode string        `json:"matchMode,omitempty" jsonschema:"fuzzy (default) or exact"`
	Offset    int           `json:"offset,omitempty" jsonschema:"page number, 1-based (default 1)"`
	PageSize  int           `json:"pageSize,omitempty" jsonschema:"results per page (default 20)"`
}

type searchWikiIn struct {
	Query        string        `json:"query,omitempty" jsonschema:"words or a phrase matched against title and text; empty lists the most recently updated pages"`
	ProjectID    searchProject `json:"projectId,omitzero" jsonschema:"only this project: numeric id or identifier"`
	Limit        int           `json:"limit,omitempty" jsonschema:"maximum results (default 20)"`
	MatchMode    string        `json:"matchMode,omitempty" jsonschema:"fuzzy (default) or exact"`
	RefreshCache bool          `json:"refreshCache,omitempty" jsonschema:"ignored (compatibility): the background sync keeps the index current"`
}

type searchMeetingsIn struct {
	Query     string        `json:"query" jsonschema:"words or a phrase; typos and word forms tolerated"`
	ProjectID searchProject `json:"projectId,omitzero" jsonschema:"only this project: numeric id or identifier"`
	MatchMode string        `json:"matchMode,omitempty" jsonschema:"fuzzy (default) or exact"`
	Offset    int           `json:"offset,omitempty" jsonschema:"page number, 1-based (default 1)"`
	PageSize  int           `json:"pageSize,omitempty" jsonschema:"results per page (default 20)"`
}

type syncStatusIn struct{}

// searchAnswer is the result of every search tool.
type searchAnswer struct {
	Query     string `json:"query"`
	MatchMode string `json:"matchMode"`
	// Match is "good" when some result holds most of the query,
	// "partial" when the results are only the best there is (each holds
	// little of the query: treat as "nothing relevant found"), "none"
	// when nothing matched; absent while the index is not ready.
	Match             string         `json:"match,omitempty"`
	Results           []answerResult `json:"results"`
	Total             int            `json:"total"`
	TotalIsLowerBound bool           `json:"totalIsLowerBound,omitempty"`
	Offset            int            `json:"offset"`
	PageSize          int            `json:"pageSize"`
	// NextOffset is the offset of the next page, when there is one.
	NextOffset int         `json:"nextOffset,omitempty"`
	Index      answerIndex `json:"index"`
	Note       string      `json:"note,omitempty"`
	TookMS     float64     `json:"tookMs"`
}

// answerResult is one result of a search answer: the engine's, with the
// URI of its item's resource (resourceURI; none for an attachment, which
// openproject_get_attachment reads).
type answerResult struct {
	search.Result
	URI string `json:"uri,omitempty"`
}

// answerResults adds the resource URIs to rs.
func answerResults(rs []search.Result) []answerResult {
	out := make([]answerResult, len(rs))
	for i, r := range rs {
		out[i] = answerResult{Result: r, URI: resourceURI(r.Kind, r.ID)}
	}
	return out
}

// answerIndex is the index state as far as the searched kinds go.
type answerIndex struct {
	// User is whose index answered (id and login as OpenProject has them).
	User *search.Owner `json:"user,omitempty"`
	// Unreachable says since when OpenProject cannot be reached, if now.
	Unreachable *search.Unreachable      `json:"unreachable,omitempty"`
	Ready       bool                     `json:"ready"`
	Complete    bool                     `json:"complete"`
	Rebuilding  bool                     `json:"rebuilding,omitempty"`
	Note        string                   `json:"note,omitempty"`
	Kinds       map[kind.Kind]answerKind `json:"kinds,omitempty"`
	// Permissions, on a server whose index every user shares, says how
	// current what decides this user's share of it is.
	Permissions *search.Permissions `json:"permissions,omitempty"`
}

type answerKind struct {
	Items       int        `json:"items"`
	LastSync    *time.Time `json:"lastSync"`
	Complete    bool       `json:"complete"`
	LastError   string     `json:"lastError,omitempty"`
	Unsupported bool       `json:"unsupported,omitempty"`
	Note        string     `json:"note,omitempty"`
}

// syncStatusAnswer is the result of openproject_sync_status.
type syncStatusAnswer struct {
	Ready      bool   `json:"ready"`
	Complete   bool   `json:"complete"`
	Rebuilding bool   `json:"rebuilding,omitempty"`
	Note       string `json:"note,omitempty"`
	// Kinds holds every kind; activities are the work packages' comments
	// and change journals.
	Kinds map[kind.Kind]search.KindFreshness `json:"kinds,omitempty"`
	// Permissions is as in a search answer's index.
	Permissions *search.Permissions `json:"permissions,omitempty"`
	SyncInfo
}

func (s *server) registerSearchTools(srv *sdk.Server) {
	var kindEnum []any
	for _, k := range indexer.Kinds() {
		kindEnum = append(kindEnum, string(k))
	}
	sdk.AddTool(srv, &sdk.Tool{
		Name:  toolSearch,
		Title: "Search OpenProject",
		Description: "Search everything at once: work packages (subject, description, comments), wiki pages, meetings (agenda, outcomes, participants), projects, attached files' text (a file's hit names its container, ranked with it). " +
			"Reach for this first to find what exists, was decided or discussed; ask in plain words or a question. Typo-tolerant, ranked, from the local index; the index block says how fresh it is. " +
			"match \"partial\": the results hold little of the query (likely not relevant); each result lists its matchedWords. " +
			"list_* tools list by exact filters, get_* tools give full details.",
		InputSchema: toolSchema[searchAllIn](func(p map[string]*jsonschema.Schema) {
			p["kinds"].Items.Enum = kindEnum
		}),
		Annotations: readOnlyLocal(),
		Meta:        searchToolMeta(),
	}, func(ctx context.Context, _ *sdk.CallToolRequest, in searchAllIn) (*sdk.CallToolResult, any, error) {
		q, err := parsePaging(in.MatchMode, in.Offset, in.PageSize)
		if err != nil {
			return nil, nil, err
		}
		if q.Text, err = requireQuery(in.Query); err != nil {
			return nil, nil, err
		}
		for _, name := range in.Kinds {
			// The schema's enum already refused anything else.
			k := kind.Kind(name)
			if !slices.Contains(indexer.Kinds(), k) {
				return nil, nil, argErr("kinds", "%q is not one of work_package, wiki_page, meeting, project, attachment", name)
			}
			if !slices.Contains(q.Kinds, k) {
				q.Kinds = append(q.Kinds, k)
			}
		}
		return s.search(ctx, toolSearch, q, in.ProjectID, "")
	})

	sdk.AddTool(srv, &sdk.Tool{
		Name:  toolSearchWorkPackages,
		Title: "Search work packages",
		Description: "Search work packages by subject, description and comments; typo-tolerant, ranked, with the best-matching comment. " +
			"To find work by topic prefer this to openproject_list_work_packages (exact filters, sort order).",
		InputSchema: toolSchema[searchWorkPackagesIn](nil),
		Annotations: readOnlyLocal(),
		Meta:        searchToolMeta(),
	}, func(ctx context.Context, _ *sdk.CallToolRequest, in searchWorkPackagesIn) (*sdk.CallToolResult, any, error) {
		q, err := parsePaging(in.MatchMode, in.Offset, in.PageSize)
		if err != nil {
			return nil, nil, err
		}
		if q.Text, err = requireQuery(in.Query); err != nil {
			return nil, nil, err
		}
		q.Kinds = []kind.Kind{kind.WorkPackage}
		switch st := strings.TrimSpace(in.Status); strings.ToLower(st) {
		case "", "all", "*":
		case "open":
			q.Closed = ptr(false)
		case "closed":
			q.Closed = ptr(true)
		default:
			if utf8.RuneCountInString(st) > 100 {
				return nil, nil, argErr("status", "is longer than 100 characters")
			}
			q.Statuses = []string{st}
		}
		return s.search(ctx, toolSearchWorkPackages, q, in.ProjectID, "")
	})

	sdk.AddTool(srv, &sdk.Tool{
		Name:        toolSearchWikiPages,
		Title:       "Search wiki pages",
		Description: "Search wiki pages by title and text; typo-tolerant and ranked. Without a query, lists the most recently updated pages (of a project, if given).",
		InputSchema: toolSchema[searchWikiIn](nil),
		Annotations: readOnlyLocal(),
		Meta:        searchToolMeta(),
	}, func(ctx context.Context, _ *sdk.CallToolRequest, in searchWikiIn) (*sdk.CallToolResult, any, error) {
		if in.Limit < 0 || in.Limit > search.MaxPageSize {
			return nil, nil, argErr("limit", "must be between 1 and %d, not %d", search.MaxPageSize, in.Limit)
		}
		q, err := parsePaging(in.MatchMode, 1, in.Limit)
		if err != nil {
			return nil, nil, err
		}
		q.Text = strings.TrimSpace(in.Query)
		if utf8.RuneCountInString(q.Text) > maxQueryRunes {
			return nil, nil, argErr("query", "is longer than %d characters", maxQueryRunes)
		}
		if err := checkSearchable(q.Text); err != nil {
			return nil, nil, err
		}
		q.Kinds = []kind.Kind{kind.WikiPage}
		note := ""
		if in.RefreshCache {
			note = "refreshCache is ignored: wiki pages are searched in the local index, which the background sync keeps current (see index.kinds.wiki_page.lastSync)"
		}
		return s.search(ctx, toolSearchWikiPages, q, in.ProjectID, note)
	})

	sdk.AddTool(srv, &sdk.Tool{
		Name:  toolSearchMeetings,
		Title: "Search meetings",
		Description: "Search meetings by title, location, project, author, agenda items, notes, outcomes, participants; typo-tolerant, ranked, with matching agenda items. " +
			"Use openproject_list_meetings for upcoming or past meetings by date.",
		InputSchema: toolSchema[searchMeetingsIn](nil),
		Annotations: readOnlyLocal(),
		Meta:        searchToolMeta(),
	}, func(ctx context.Context, _ *sdk.CallToolRequest, in searchMeetingsIn) (*sdk.CallToolResult, any, error) {
		q, err := parsePaging(in.MatchMode, in.Offset, in.PageSize)
		if err != nil {
			return nil, nil, err
		}
		if q.Text, err = requireQuery(in.Query); err != nil {
			return nil, nil, err
		}
		q.Kinds = []kind.Kind{kind.Meeting}
		return s.search(ctx, toolSearchMeetings, q, in.ProjectID, "")
	})

	sdk.AddTool(srv, &sdk.Tool{
		Name:  toolSyncStatus,
		Title: "Search index status",
		Description: "What the local search index holds: per kind the item count, last sync, whether the crawl is complete and the last error; whose data it is and the sync schedule. " +
			"Call it when a search looks incomplete or stale.",
		InputSchema: toolSchema[syncStatusIn](nil),
		Annotations: readOnlyLocal(),
	}, func(ctx context.Context, _ *sdk.CallToolRequest, _ syncStatusIn) (*sdk.CallToolResult, any, error) {
		return s.syncStatus(ctx)
	})
}

// toolSchema infers T's input schema with plain (non-null) types, a
// projectId of integer or string, and the shared bounds and enums; edit,
// if set, adjusts the properties further. It returns the schema as JSON
// (schemaJSON).
func toolSchema[T any](edit func(map[string]*jsonschema.Schema)) json.RawMessage {
	sch, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[searchProject](): {Types: []string{"integer", "string"}},
	}})
	if err != nil {
		panic(fmt.Sprintf("schema of %T: %v", *new(T), err)) // a programming error, caught by any test
	}
	for name, p := range sch.Properties {
		// Slices infer as ["null","array"]; some model APIs reject unions.
		if len(p.Types) == 2 && p.Types[0] == "null" {
			p.Type, p.Types = p.Types[1], nil
		}
		switch name {
		case "query":
			p.MaxLength = ptr(maxQueryRunes)
		case "matchMode":
			p.Enum = []any{"fuzzy", "exact"}
		case "offset":
			p.Minimum = ptr(1.0)
		case "pageSize", "limit":
			p.Minimum, p.Maximum = ptr(1.0), ptr(float64(search.MaxPageSize))
		}
	}
	if edit != nil {
		edit(sch.Properties)
	}
	return schemaJSON(sch)
}

// schemaJSON encodes a tool's input schema once, when the tool is
// registered. The SDK reads the input schema of the tool called on every
// 2026-07-28 request (for x-mcp-header annotations) by encoding and
// decoding it: from a *jsonschema.Schema that encoding took a twentieth
// of the CPU of a search under load; from JSON it is a copy.
func schemaJSON(sch *jsonschema.Schema) json.RawMessage {
	b, err := json.Marshal(sch)
	if err != nil {
		panic(fmt.Sprintf("encode input schema: %v", err)) // a programming error, caught by any test
	}
	return b
}

// requireQuery validates a mandatory query.
func requireQuery(q string) (string, error) {
	q = strings.TrimSpace(q)
	if q == "" {
		return "", argErr("query", "must not be empty")
	}
	if utf8.RuneCountInString(q) > maxQueryRunes {
		return "", argErr("query", "is longer than %d characters", maxQueryRunes)
	}
	return q, checkSearchable(q)
}

// checkSearchable refuses a query without a word in it (only punctuation
// or symbols), before the index is asked: the answer is the same whether
// the index is ready or not, and never a list of arbitrary items.
func checkSearchable(q string) error {
	if err := (search.Query{Text: q}).Validate(); errors.Is(err, search.ErrNothingToSearch) {
		return argErr("query", "has nothing to search for: %q holds no letters or digits", q)
	}
	return nil
}

// parsePaging validates matchMode, offset and pageSize into a query.
func parsePaging(mode string, offset, pageSize int) (search.Query, error) {
	var q search.Query
	switch strings.ToLower(strings.TrimSpace(mode)) {
	case "", "fuzzy":
	case "exact":
		q.Exact = true
	default:
		return q, argErr("matchMode", "must be fuzzy or exact, not %q", mode)
	}
	pageSize = cmp.Or(pageSize, defaultPageSize)
	if pageSize < 1 || pageSize > search.MaxPageSize {
		return q, argErr("pageSize", "must be between 1 and %d, not %d", search.MaxPageSize, pageSize)
	}
	offset = cmp.Or(offset, 1)
	if offset < 1 {
		return q, argErr("offset", "is a 1-based page number and must be 1 or more, not %d", offset)
	}
	if (offset-1)*pageSize >= maxResultWindow {
		return q, argErr("offset", "page %d of %d starts beyond the first %d results; narrow the query instead", offset, pageSize, maxResultWindow)
	}
	q.Page, q.PageSize = offset, pageSize
	return q, nil
}

// search runs q on the index and shapes the answer. A project given by
// identifier is resolved from the index's own projects.
// openWaiter is an Index that can wait for itself to open (UserIndex).
type openWaiter interface {
	WaitOpen(ctx context.Context)
}

var _ openWaiter = (*UserIndex)(nil)

// MetaIndexKey is the _meta key of a search answer's index block: the
// same freshness the structured answer's "index" holds, for clients that
// show the model only the content yet want to show people how current
// the answer is.
const MetaIndexKey = "opsearch/index"

// search answers a search tool, with the answer's index block in _meta
// too (MetaIndexKey).
func (s *server) search(ctx context.Context, tool string, q search.Query, project searchProject, note string) (*sdk.CallToolResult, any, error) {
	ans, err := s.searchAnswer(ctx, tool, q, project, note)
	if err != nil {
		return nil, nil, err
	}
	return &sdk.CallToolResult{Meta: sdk.Meta{MetaIndexKey: ans.Index}}, ans, nil
}

func (s *server) searchAnswer(ctx context.Context, tool string, q search.Query, project searchProject, note string) (*searchAnswer, error) {
	sr, err := s.idx.Searcher()
	if w, ok := s.idx.(openWaiter); ok && errors.Is(err, ErrIndexNotReady) && s.opts.OpenWait > 0 {
		wctx, cancel := context.WithTimeout(ctx, s.opts.OpenWait)
		w.WaitOpen(wctx)
		cancel()
		sr, err = s.idx.Searcher()
	}
	switch {
	case errors.Is(err, ErrIndexNotReady):
		return notReadyAnswer(q, note, notReadyNote), nil
	case errors.Is(err, sync.ErrKeyNotVerified):
		// Not an error the agent can fix: the index exists but is not
		// this key's until OpenProject says so.
		return notReadyAnswer(q, note, sync.ErrKeyNotVerified.Error()+"; nothing can be concluded from this empty answer. The list_* tools read OpenProject directly"), nil
	case err != nil:
		return nil, s.failOpen(ctx, tool, err)
	}
	if project.set {
		id, err := s.resolveProject(ctx, sr, project)
		if err != nil {
			return nil, s.fail(ctx, tool, err)
		}
		q.ProjectIDs = []int64{id}
	}
	if slots := s.opts.SearchSlots; slots != nil && !slotHeld(ctx) {
		if err := slots.Acquire(ctx); err != nil {
			return nil, s.fail(ctx, tool, fmt.Errorf("wait for a search slot: %w", err))
		}
		defer slots.Release()
	}
	start := time.Now()
	resp, err := sr.Search(ctx, q)
	if s.opts.ObserveSearch != nil && err == nil {
		s.opts.ObserveSearch(time.Since(start), tool)
	}
	if errors.Is(err, ErrIndexNotReady) {
		return notReadyAnswer(q, note, notReadyNote), nil
	}
	if errors.Is(err, search.ErrNothingToSearch) {
		// Caught above for the tools' own queries; said the same way
		// should the engine find another.
		return nil, argErr("query", "has nothing to search for: %q holds no letters or digits", q.Text)
	}
	if err != nil {
		return nil, s.fail(ctx, tool, err)
	}
	if s.verify != nil && len(resp.Results) > 0 {
		var withheld string
		if resp, withheld, err = s.verifyAnswer(ctx, sr, q, resp); err != nil {
			return nil, s.fail(ctx, tool, err)
		}
		note = strings.TrimPrefix(note+"; "+withheld, "; ")
		note = strings.TrimSuffix(note, "; ")
	}
	kinds := q.Kinds
	if len(kinds) == 0 {
		kinds = indexer.Kinds()
	}
	ans := &searchAnswer{
		Query: resp.Query, MatchMode: resp.Mode, Match: resp.Match, Results: answerResults(resp.Results), Total: resp.Total,
		TotalIsLowerBound: resp.TotalIsLowerBound, Offset: resp.Page, PageSize: resp.PageSize,
		Index: indexState(resp.Index, kinds), Note: note, TookMS: resp.TookMS,
	}
	// Another page exists when the total says so, or, where the total is
	// only a lower bound (a status filter, exact mode), when this page is
	// full.
	more := resp.Page*resp.PageSize < resp.Total || resp.TotalIsLowerBound && len(resp.Results) == resp.PageSize
	if more && resp.Page*resp.PageSize < maxResultWindow {
		ans.NextOffset = resp.Page + 1
	}
	return ans, nil
}

func (s *server) resolveProject(ctx context.Context, sr Searcher, p searchProject) (int64, error) {
	if p.ident == "" {
		if p.id <= 0 {
			return 0, argErr("projectId", "must be a positive id or a project identifier, not %d", p.id)
		}
		return p.id, nil
	}
	r, ok := sr.(projectResolver)
	if !ok {
		return 0, argErr("projectId", "give the numeric project id (identifiers cannot be resolved here)")
	}
	id, found, err := r.ResolveProject(ctx, p.ident)
	if err != nil {
		return 0, err
	}
	if !found {
		return 0, argErr("projectId", "no project with identifier %q in the local index (it holds the projects this API key can see; openproject_list_projects lists them)", p.ident)
	}
	return id, nil
}

// failOpen explains why the index could not be opened: another process
// holding it is the operator's business and says so; auth and network
// failures go through fail, which names them without upstream text.
func (s *server) failOpen(ctx context.Context, tool string, err error) error {
	var le *sync.LockedError
	if errors.As(err, &le) {
		s.log.ErrorContext(ctx, "tool call failed", "tool", tool, "request_id", callID(ctx), "error", err.Error())
		return &toolError{msg: "the local index is in use by another opsearch process (" + le.Dir + "); searches are unavailable here until it exits. The list_* and get_* tools still work",
			category: "index_locked"}
	}
	if msg := openMessage(err, s.baseURL()); msg != "" {
		id := callID(ctx)
		s.log.Log(ctx, failLevel(err), "tool call failed", "tool", tool, "request_id", id, "error", err.Error())
		return &toolError{msg: fmt.Sprintf("%s (request id %s)", msg, id), category: errorCategory(err)}
	}
	return s.fail(ctx, tool, err)
}

// openMessage says what to do when the index could not be opened because
// OpenProject, asked whose the key is, did not answer as it should
// (openproject.Hint); "" for other failures.
func openMessage(err error, base string) string {
	hint := openproject.Hint(err)
	if hint == "" {
		return ""
	}
	var oe *openproject.Error
	detail := ""
	switch {
	case errors.As(err, &oe) && oe.Status != 0:
		detail = fmt.Sprintf(" (%s %s answered %d)", oe.Method, oe.Path, oe.Status)
	case oe != nil && oe.Err != nil:
		detail = fmt.Sprintf(" (%s %s: %s)", oe.Method, oe.Path, oe.Err)
	}
	what := "cannot open the local index: OpenProject at " + base + " did not answer as expected"
	switch {
	case errors.Is(err, openproject.ErrNetwork):
		what = "cannot reach OpenProject at " + base
	case errors.Is(err, openproject.ErrUnauthenticated):
		what = "OpenProject at " + base + " rejected the API key"
	case errors.Is(err, openproject.ErrNotFound), errors.Is(err, openproject.ErrMalformed):
		what = base + " does not answer as OpenProject's API"
	}
	return what + detail + ": " + hint
}

const notReadyNote = "the local index is still being opened or built (first start, or a rebuild): nothing can be concluded from this empty answer. Try again shortly, or use the list_* tools, which read OpenProject directly"

func notReadyAnswer(q search.Query, note, why string) *searchAnswer {
	mode := "fuzzy"
	if q.Exact {
		mode = "exact"
	}
	return &searchAnswer{
		Query: q.Text, MatchMode: mode, Results: []answerResult{}, Offset: q.Page, PageSize: q.PageSize,
		Index: answerIndex{Ready: false, Note: why}, Note: note,
	}
}

// indexState narrows the freshness to the searched kinds and says, in one
// note, what an agent must know before trusting an empty or short answer.
func indexState(f search.Freshness, kinds []kind.Kind) answerIndex {
	out := answerIndex{User: f.Owner, Ready: true, Complete: true, Rebuilding: f.Rebuilding, Unreachable: f.Unreachable, Kinds: map[kind.Kind]answerKind{},
		Permissions: f.Permissions}
	var incomplete, failed []string
	for _, k := range kinds {
		kf := f.Kinds[k]
		ak := answerKind{Items: kf.Store, LastSync: kf.LastSync, Complete: kf.Complete, Unsupported: kf.Unsupported, Note: kf.Note}
		if kf.LastError != nil {
			ak.LastError, _ = capText(*kf.LastError, capRow)
			failed = append(failed, string(k))
		}
		if !kf.Complete && !kf.Unsupported {
			out.Complete = false
			incomplete = append(incomplete, string(k))
		}
		out.Kinds[k] = ak
	}
	var notes []string
	if u := f.Unreachable; u != nil {
		// As of the oldest last successful sync of the kinds searched.
		var asOf *time.Time
		for _, k := range kinds {
			if ls := f.Kinds[k].LastSync; ls != nil && (asOf == nil || ls.Before(*asOf)) {
				asOf = ls
			}
		}
		note := "OpenProject unreachable since " + u.Since.UTC().Format(time.RFC3339) + "; answers come from the local index"
		if asOf != nil {
			note += " as of " + asOf.UTC().Format(time.RFC3339)
		}
		notes = append(notes, note)
	}
	if f.Rebuilding {
		notes = append(notes, "the index is being rebuilt from the local store; results may be missing until it finishes")
	}
	if len(failed) > 0 {
		notes = append(notes, "the last sync of "+strings.Join(failed, ", ")+" failed (see lastError): results may be stale")
	}
	if len(incomplete) > 0 {
		notes = append(notes, "the crawl of "+strings.Join(incomplete, ", ")+" is not complete: an empty or short result does not mean nothing exists")
	}
	if p := f.Permissions; p != nil && p.Missing > 0 {
		out.Complete = false
		notes = append(notes, fmt.Sprintf("%d items you may see are not in the shared index yet: an empty or short result does not mean nothing exists", p.Missing))
	}
	out.Note = strings.Join(notes, "; ")
	return out
}

// syncStatus answers openproject_sync_status.
func (s *server) syncStatus(ctx context.Context) (*sdk.CallToolResult, any, error) {
	var ans syncStatusAnswer
	if src, ok := s.idx.(syncInfoSource); ok {
		ans.SyncInfo = src.syncInfo()
		// Where the server keeps its files is the operator's business
		// (the startup log says it); on a shared server any user with a
		// valid key may call this tool.
		ans.SyncInfo.DataDir = ""
	}
	sr, err := s.idx.Searcher()
	switch {
	case errors.Is(err, ErrIndexNotReady):
		ans.Note = notReadyNote
		return nil, &ans, nil
	case errors.Is(err, sync.ErrKeyNotVerified):
		// As the search tools say it: a state that passes, not a failure.
		ans.Note = sync.ErrKeyNotVerified.Error() + "; the index answers once it has"
		return nil, &ans, nil
	case err != nil:
		return nil, nil, s.failOpen(ctx, toolSyncStatus, err)
	}
	f, err := sr.Freshness(ctx)
	if errors.Is(err, ErrIndexNotReady) {
		ans.Note = notReadyNote
		return nil, &ans, nil
	}
	if err != nil {
		return nil, nil, s.fail(ctx, toolSyncStatus, err)
	}
	ans.Ready, ans.Complete, ans.Rebuilding, ans.Kinds, ans.Permissions = true, f.Complete, f.Rebuilding, f.Kinds, f.Permissions
	for k, kf := range ans.Kinds {
		if kf.LastError != nil {
			msg, _ := capText(*kf.LastError, capRow)
			kf.LastError = &msg
			ans.Kinds[k] = kf
		}
	}
	ans.Note = f.Note
	if ans.SyncInfo.Note != "" {
		ans.Note = strings.TrimPrefix(ans.Note+"; "+ans.SyncInfo.Note, "; ")
		ans.SyncInfo.Note = ""
	}
	return nil, &ans, nil
}

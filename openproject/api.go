package openproject

import (
	"cmp"
	"context"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Page is one page of a paginated collection.
type Page[T any] struct {
	Items []T
	// Total counts the whole result; Count the items on this page.
	Total, Count int
	// PageSize is the size the server actually used (it caps silently);
	// Offset is the 1-based page number.
	PageSize, Offset int
}

// Last reports whether no page follows this one. Responses pruned with
// select may omit pageSize; the item count stands in for it then.
func (p Page[T]) Last() bool {
	size := p.PageSize
	if size <= 0 {
		size = len(p.Items)
	}
	if len(p.Items) == 0 || size <= 0 {
		return true
	}
	return max(p.Offset, 1)*size >= p.Total
}

// EachPage fetches pages starting at opts.Offset (default 1) and calls fn
// for each until the collection ends, fn returns an error, or ctx is done.
// It follows the server's echoed pageSize, so a silently capped page size
// neither skips nor repeats items, and it stops once it has seen total
// items even when a select= response omits the paging fields.
//
// While fn works on one page the next is already being fetched: a crawl's
// fn fetches a thousand work packages' activities, and listing the next
// thousand (rendered, sent and decoded: about half a second against the
// fake) then waited for it, every page. At most two pages are held. The
// request for a page fn did not get, because fn failed or ctx ended, is
// cancelled.
//
// The two pages' fetches read their answers into two buffers EachPage
// keeps until it returns (withPageBuffer). A page of a thousand work
// packages is about 7 MB of JSON, too large for the client's pool, and
// read into a fresh, doubling buffer every page it touched memory the
// runtime had given back, a page fault per 4 KiB: in a first sync of
// 100,000 work packages at zero latency on a 2 vCPU virtual machine the
// buffers' growth was 4.2 s of CPU by profile, and reusing them took the
// sync from 128-131 s (four runs) to 118-120 s (two), its CPU from
// 148-156 s to 139-141 s.
func EachPage[T any](ctx context.Context, opts ListOptions, fetch func(context.Context, ListOptions) (Page[T], error), fn func(Page[T]) error) error {
	if opts.Offset <= 0 {
		opts.Offset = 1
	}
	type result struct {
		page Page[T]
		err  error
	}
	// ahead is the next page's fetch, when one runs; it is always
	// drained before EachPage returns.
	var ahead chan result
	cancelAhead := func() {}
	defer func() {
		cancelAhead()
		if ahead != nil {
			<-ahead
		}
	}()
	seen := -1
	var bufs [2]pageBuffer
	for turn := 0; ; turn++ {
		var page Page[T]
		var err error
		if ahead != nil {
			r := <-ahead
			cancelAhead()
			ahead = nil
			page, err = r.page, r.err
		} else {
			page, err = fetch(withPageBuffer(ctx, &bufs[turn%2]), opts)
		}
		if err != nil {
			return err
		}
		if seen < 0 {
			size := page.PageSize
			if size <= 0 {
				size = len(page.Items)
			}
			seen = (opts.Offset - 1) * size
		}
		seen += len(page.Items)
		last := page.Last() || seen >= page.Total
		if !last {
			next := opts
			next.Offset++
			actx, cancel := context.WithCancel(ctx)
			ahead, cancelAhead = make(chan result, 1), cancel
			go func(ch chan<- result, buf *pageBuffer) {
				p, err := fetch(withPageBuffer(actx, buf), next)
				ch <- result{p, err}
			}(ahead, &bufs[(turn+1)%2])
		}
		if err := fn(page); err != nil {
			return err
		}
		if last {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		opts.Offset++
	}
}

// decodePage requests the collection r names and converts its elements
// with conv. The elements are decoded with the collection, in one pass: decoding
// them into raw messages first and then each on its own scanned every
// byte twice more, and activities, a sync's most frequent answer, are
// mostly links that decoding skips.
func decodePage[W any, T any](ctx context.Context, c *Client, r request, conv func(W) T) (Page[T], error) {
	var coll halCollectionOf[W]
	if err := c.do(ctx, r, &coll); err != nil {
		return Page[T]{}, err
	}
	p := pageHead[T](r, coll.Total, coll.Count, coll.PageSize, coll.Offset, len(coll.Embedded.Elements))
	for _, w := range coll.Embedded.Elements {
		p.Items = append(p.Items, conv(w))
	}
	p.Count = cmp.Or(p.Count, len(p.Items))
	return p, nil
}

// pageHead is a page's figures with room for n items.
func pageHead[T any](r request, total, count, pageSize, offset, n int) Page[T] {
	p := Page[T]{Total: total, Count: count, PageSize: pageSize, Offset: offset, Items: make([]T, 0, n)}
	if p.Offset == 0 {
		// Pruned by select, or an unpaginated collection: the page asked for.
		p.Offset = 1
		if o, err := strconv.Atoi(r.query.Get("offset")); err == nil && o > 1 {
			p.Offset = o
		}
	}
	return p
}

// pageOf converts a collection the answer to r held, as its body or
// embedded in it.
func pageOf[W any, T any](c *Client, r request, coll halCollection, conv func(W) T) (Page[T], error) {
	p := pageHead[T](r, coll.Total, coll.Count, coll.PageSize, coll.Offset, len(coll.Embedded.Elements))
	for _, raw := range coll.Embedded.Elements {
		var w W
		if err := decodeBody(raw, &w); err != nil {
			return Page[T]{}, c.errorf(r, ErrMalformed, 200, fmt.Errorf("decode element: %w", err))
		}
		p.Items = append(p.Items, conv(w))
	}
	p.Count = cmp.Or(p.Count, len(p.Items))
	return p, nil
}

func decodeAll[W any, T any](ctx context.Context, c *Client, r request, conv func(W) T) ([]T, error) {
	p, err := decodePage(ctx, c, r, conv)
	return p.Items, err
}

func get(path string, q url.Values) request {
	return request{method: http.MethodGet, path: path, query: q}
}

// Root returns the API root. coreVersion is only visible to admins.
func (c *Client) Root(ctx context.Context) (Root, error) {
	var w wireRoot
	if err := c.do(ctx, get("/api/v3", nil), &w); err != nil {
		return Root{}, err
	}
	return Root{InstanceName: w.InstanceName, CoreVersion: w.CoreVersion, UserID: w.Links.ref("user").ID}, nil
}

// Me returns the user the API key belongs to.
func (c *Client) Me(ctx context.Context) (User, error) {
	var w wireUser
	if err := c.do(ctx, get("/api/v3/users/me", nil), &w); err != nil {
		return User{}, err
	}
	return w.model(), nil
}

// User returns one user.
func (c *Client) User(ctx context.Context, id int64) (User, error) {
	var w wireUser
	if err := c.do(ctx, get("/api/v3/users/"+strconv.FormatInt(id, 10), nil), &w); err != nil {
		return User{}, err
	}
	return w.model(), nil
}

// ListUsers lists users (needs admin or the manage-user permission).
func (c *Client) ListUsers(ctx context.Context, opts ListOptions) (Page[User], error) {
	return decodePage(ctx, c, get("/api/v3/users", opts.Values()), wireUser.model)
}

// ListProjects lists the projects the user can see.
func (c *Client) ListProjects(ctx context.Context, opts ListOptions) (Page[Project], error) {
	return decodePage(ctx, c, get("/api/v3/projects", opts.Values()), wireProject.model)
}

// Project returns a project by numeric id or identifier.
func (c *Client) Project(ctx context.Context, idOrIdentifier string) (Project, error) {
	if err := checkPathParam("project", idOrIdentifier); err != nil {
		return Project{}, err
	}
	var w wireProject
	if err := c.do(ctx, get("/api/v3/projects/"+url.PathEscape(idOrIdentifier), nil), &w); err != nil {
		return Project{}, err
	}
	return w.model(), nil
}

// ListWorkPackages lists work packages across all visible projects. Without
// Filters the server returns only open ones; pass StatusAll to get closed
// ones too.
func (c *Client) ListWorkPackages(ctx context.Context, opts ListOptions) (Page[WorkPackage], error) {
	return c.listWorkPackages(ctx, "/api/v3/work_packages", opts)
}

// ListProjectWorkPackages lists the work packages of one project.
func (c *Client) ListProjectWorkPackages(ctx context.Context, project string, opts ListOptions) (Page[WorkPackage], error) {
	if err := checkPathParam("project", project); err != nil {
		return Page[WorkPackage]{}, err
	}
	return c.listWorkPackages(ctx, "/api/v3/projects/"+url.PathEscape(project)+"/work_packages", opts)
}

func (c *Client) listWorkPackages(ctx context.Context, path string, opts ListOptions) (Page[WorkPackage], error) {
	return c.workPackagePage(ctx, get(path, opts.Values()), nil)
}

// workPackagePage decodes a page of work packages: coll when the answer to
// r embedded it (a query's results), else the answer to r itself. Closed
// is filled from the status list where the server did not embed the
// status.
func (c *Client) workPackagePage(ctx context.Context, r request, coll *halCollection) (Page[WorkPackage], error) {
	if coll == nil {
		coll = new(halCollection)
		if err := c.do(ctx, r, coll); err != nil {
			return Page[WorkPackage]{}, err
		}
	}
	needStatuses := false
	page, err := pageOf(c, r, *coll, func(w wireWorkPackage) WorkPackage {
		wp, closed := w.model()
		if closed != nil {
			wp.Closed = *closed
		} else {
			needStatuses = true
		}
		return wp
	})
	if err != nil {
		return page, err
	}
	if needStatuses {
		if err := c.fillClosed(ctx, page.Items); err != nil {
			return page, err
		}
	}
	return page, nil
}

// fillClosed sets Closed from the cached status list, for servers (or
// select= responses) that do not embed the status.
func (c *Client) fillClosed(ctx context.Context, wps []WorkPackage) error {
	closed, err := c.closedStatuses(ctx)
	if err != nil {
		return err
	}
	for i := range wps {
		if wps[i].Status.ID != 0 {
			wps[i].Closed = closed[wps[i].Status.ID]
		}
	}
	return nil
}

func (c *Client) closedStatuses(ctx context.Context) (map[int64]bool, error) {
	c.mu.Lock()
	m := c.statusClosed
	c.mu.Unlock()
	if m != nil {
		return m, nil
	}
	sts, err := c.Statuses(ctx)
	if err != nil {
		return nil, err
	}
	m = make(map[int64]bool, len(sts))
	for _, s := range sts {
		m[s.ID] = s.IsClosed
	}
	c.mu.Lock()
	c.statusClosed = m
	c.mu.Unlock()
	return m, nil
}

// WorkPackage returns one work package.
// It is the one read that decodes the work package's custom fields.
func (c *Client) WorkPackage(ctx context.Context, id int64) (WorkPackage, error) {
	r := get(wpPath(id), nil)
	var raw stdjson.RawMessage
	if err := c.do(ctx, r, &raw); err != nil {
		return WorkPackage{}, err
	}
	var w wireWorkPackage
	if err := decodeBody(raw, &w); err != nil {
		return WorkPackage{}, c.errorf(r, ErrMalformed, http.StatusOK, fmt.Errorf("decode work package: %w", err))
	}
	wp, err := c.finishWorkPackage(ctx, w)
	if err != nil {
		return wp, err
	}
	wp.CustomFields = decodeCustomFields(raw)
	return wp, nil
}

func wpPath(id int64) string { return "/api/v3/work_packages/" + strconv.FormatInt(id, 10) }

// Activities returns the whole journal of a work package, oldest first.
// The endpoint is not paginated.
func (c *Client) Activities(ctx context.Context, workPackageID int64) ([]Activity, error) {
	acts, err := decodeAll(ctx, c, get(wpPath(workPackageID)+"/activities", nil), wireActivity.model)
	for i := range acts {
		acts[i].WorkPackageID = cmp.Or(acts[i].WorkPackageID, workPackageID)
	}
	return acts, err
}

// Statuses lists all statuses (unpaginated).
func (c *Client) Statuses(ctx context.Context) ([]Status, error) {
	return decodeAll(ctx, c, get("/api/v3/statuses", nil), func(w wireStatus) Status {
		return Status{ID: int64(w.ID), Name: w.Name, IsClosed: w.IsClosed, IsDefault: w.IsDefault, Color: w.Color, Position: w.Position}
	})
}

// Types lists work package types, of one project when project is not empty.
func (c *Client) Types(ctx context.Context, project string) ([]Type, error) {
	path := "/api/v3/types"
	if project != "" {
		if err := checkPathParam("project", project); err != nil {
			return nil, err
		}
		path = "/api/v3/projects/" + url.PathEscape(project) + "/types"
	}
	return decodeAll(ctx, c, get(path, nil), func(w wireType) Type {
		return Type{ID: int64(w.ID), Name: w.Name, Color: w.Color, Position: w.Position, IsDefault: w.IsDefault, IsMilestone: w.IsMilestone}
	})
}

// Priorities lists all priorities (unpaginated).
func (c *Client) Priorities(ctx context.Context) ([]Priority, error) {
	return decodeAll(ctx, c, get("/api/v3/priorities", nil), func(w wirePriority) Priority {
		active := w.IsActive == nil || *w.IsActive
		return Priority{ID: int64(w.ID), Name: w.Name, Position: w.Position, IsDefault: w.IsDefault, IsActive: active}
	})
}

// WikiPage returns a wiki page by id, the only way the API offers to read
// one. Text is filled (and HasText set) only when the server renders it.
func (c *Client) WikiPage(ctx context.Context, id int64) (WikiPage, error) {
	var w wireWikiPage
	if err := c.do(ctx, get("/api/v3/wiki_pages/"+strconv.FormatInt(id, 10), nil), &w); err != nil {
		return WikiPage{}, err
	}
	p := w.model()
	c.noteWikiText(p.HasText)
	return p, nil
}

// WikiPageAttachments lists a wiki page's attachments (unpaginated).
func (c *Client) WikiPageAttachments(ctx context.Context, id int64) ([]Attachment, error) {
	return decodeAll(ctx, c, get("/api/v3/wiki_pages/"+strconv.FormatInt(id, 10)+"/attachments", nil), wireAttachment.model)
}

// WorkPackageAttachments lists a work package's attachments (unpaginated).
func (c *Client) WorkPackageAttachments(ctx context.Context, id int64) ([]Attachment, error) {
	return decodeAll(ctx, c, get(wpPath(id)+"/attachments", nil), wireAttachment.model)
}

// MeetingAttachments lists a meeting's attachments (unpaginated).
func (c *Client) MeetingAttachments(ctx context.Context, id int64) ([]Attachment, error) {
	return decodeAll(ctx, c, get("/api/v3/meetings/"+strconv.FormatInt(id, 10)+"/attachments", nil), wireAttachment.model)
}

// ListMeetings lists meetings. Servers before the meetings list existed
// answer 404, reported as ErrUnsupported.
func (c *Client) ListMeetings(ctx context.Context, opts ListOptions) (Page[Meeting], error) {
	p, err := decodePage(ctx, c, get("/api/v3/meetings", opts.Values()), wireMeeting.model)
	if errors.Is(err, ErrNotFound) {
		var e *Error
		errors.As(err, &e)
		return p, &Error{Kind: ErrUnsupported, Status: e.Status, Identifier: e.Identifier, Message: "this OpenProject version has no meetings list", Method: e.Method, Path: e.Path}
	}
	return p, err
}

// Meeting returns one meeting (without agenda items).
func (c *Client) Meeting(ctx context.Context, id int64) (Meeting, error) {
	var w wireMeeting
	if err := c.do(ctx, get("/api/v3/meetings/"+strconv.FormatInt(id, 10), nil), &w); err != nil {
		return Meeting{}, err
	}
	return w.model(), nil
}

// AgendaItems lists a meeting's agenda items with their outcomes
// (unpaginated), ordered by position.
func (c *Client) AgendaItems(ctx context.Context, meetingID int64) ([]AgendaItem, error) {
	items, err := decodeAll(ctx, c, get("/api/v3/meetings/"+strconv.FormatInt(meetingID, 10)+"/agenda_items", nil), wireAgendaItem.model)
	for i := range items {
		items[i].MeetingID = cmp.Or(items[i].MeetingID, meetingID)
	}
	return items, err
}

// ListQueries lists saved queries visible to the user.
func (c *Client) ListQueries(ctx context.Context, opts ListOptions) (Page[Query], error) {
	return decodePage(ctx, c, get("/api/v3/queries", opts.Values()), wireQuery.model)
}

// Query returns one saved query.
func (c *Client) Query(ctx context.Context, id int64) (Query, error) {
	var w wireQuery
	if err := c.do(ctx, get("/api/v3/queries/"+strconv.FormatInt(id, 10), nil), &w); err != nil {
		return Query{}, err
	}
	return w.model(), nil
}

// QueryWithResults returns a saved query and one page of its work
// packages, in one request: opts (PageSize and Offset, typically) go with
// GET /api/v3/queries/{id}, whose answer embeds the page. A server that
// only links the results gets a second request to the link, with opts
// merged into its query. A query with neither has an empty page.
func (c *Client) QueryWithResults(ctx context.Context, id int64, opts ListOptions) (Query, Page[WorkPackage], error) {
	r := get("/api/v3/queries/"+strconv.FormatInt(id, 10), opts.Values())
	var w wireQueryWithResults
	if err := c.do(ctx, r, &w); err != nil {
		return Query{}, Page[WorkPackage]{}, err
	}
	q := w.model()
	if w.Embedded.Results != nil {
		p, err := c.workPackagePage(ctx, r, w.Embedded.Results)
		return q, p, err
	}
	link := w.Links.ref("results")
	if link.IsZero() {
		return q, Page[WorkPackage]{}, nil
	}
	// The link is absolute below the instance (it may carry the base
	// URL's path prefix); requests are relative to the base URL.
	i := strings.Index(link.Href, "/api/v3/")
	if i < 0 {
		return q, Page[WorkPackage]{}, c.errorf(r, ErrMalformed, http.StatusOK, fmt.Errorf("results link %q is outside /api/v3", link.Href))
	}
	u, err := url.Parse(link.Href[i:])
	if err != nil {
		return q, Page[WorkPackage]{}, c.errorf(r, ErrMalformed, http.StatusOK, fmt.Errorf("results link: %w", err))
	}
	rq := u.Query()
	maps.Copy(rq, opts.Values())
	p, err := c.workPackagePage(ctx, get(u.Path, rq), nil)
	return q, p, err
}

// ListWikiPageLinks lists the links between work packages and wiki pages
// (GET /api/v3/wiki_page_links). Most OpenProject versions have no such
// endpoint and answer 404 (ErrNotFound) or another 4xx (ErrRequest).
func (c *Client) ListWikiPageLinks(ctx context.Context, opts ListOptions) (Page[WikiPageLink], error) {
	return decodePage(ctx, c, get("/api/v3/wiki_page_links", opts.Values()), wireWikiPageLink.model)
}

// OpenAPISpec returns the instance's OpenAPI document as the server sent
// it: GET /api/v3/spec.json, or /api/v3/openapi.json, the name some
// versions publish it under. It is not HAL, and large (about 1.2 MB on a
// current server), so it is left to the caller to decode what it needs.
func (c *Client) OpenAPISpec(ctx context.Context) (stdjson.RawMessage, error) {
	raw, err := c.GetJSON(ctx, "/api/v3/spec.json", nil)
	if errors.Is(err, ErrNotFound) {
		raw, err = c.GetJSON(ctx, "/api/v3/openapi.json", nil)
	}
	return raw, err
}

// GetJSON fetches any API path below the base URL and returns the raw JSON,
// for endpoints opsearch does not model (the OpenAPI spec, for example).
func (c *Client) GetJSON(ctx context.Context, path string, q url.Values) (stdjson.RawMessage, error) {
	if !strings.HasPrefix(path, "/api/v3") {
		return nil, fmt.Errorf("get json: path %q must start with /api/v3", path)
	}
	var raw stdjson.RawMessage
	if err := c.do(ctx, get(path, q), &raw); err != nil {
		return nil, err
	}
	return raw, nil
}

// checkPathParam rejects values that would change the request path.
func checkPathParam(name, v string) error {
	if strings.TrimSpace(v) == "" {
		return fmt.Errorf("%s id or identifier is empty", name)
	}
	if strings.ContainsAny(v, "/?#") || v == "." || v == ".." {
		return fmt.Errorf("%s id or identifier %q contains characters that are not allowed", name, v)
	}
	return nil
}

// Attachment returns one attachment's metadata.
func (c *Client) Attachment(ctx context.Context, id int64) (Attachment, error) {
	var w wireAttachment
	if err := c.do(ctx, get("/api/v3/attachments/"+strconv.FormatInt(id, 10), nil), &w); err != nil {
		return Attachment{}, err
	}
	return w.model(), nil
}

// AttachmentContent downloads attachment id's file, at most max bytes:
// a longer one is an *Error of kind ErrTooLarge, read no further than
// max+1 bytes. It follows the redirect a server with external storage
// answers (a presigned URL, often on another host) and sends the
// credential to this instance's origin only: an S3-style store refuses a
// request with two authentications, and the key must not leave the
// instance anyway.
func (c *Client) AttachmentContent(ctx context.Context, id int64, max int64) (data []byte, contentType string, err error) {
	if id <= 0 {
		return nil, "", fmt.Errorf("download attachment: id %d is not positive", id)
	}
	if max <= 0 {
		return nil, "", fmt.Errorf("download attachment %d: limit %d is not positive", id, max)
	}
	out := &content{max: max}
	if err := c.do(ctx, get("/api/v3/attachments/"+strconv.FormatInt(id, 10)+"/content", nil), out); err != nil {
		return nil, "", err
	}
	return out.data, out.contentType, nil
}

// Relations lists one page of the relations work package workPackageID is
// involved in, at either end, ordered by id. Only relations between work
// packages the user sees are listed. It asks GET /api/v3/relations with
// an "involved" filter, which every server since 7.0 offers, rather than
// /work_packages/{id}/relations, which current servers answer with a
// redirect; opts.Filters are added to the involved filter (e.g. "type").
func (c *Client) Relations(ctx context.Context, workPackageID int64, opts ListOptions) (Page[Relation], error) {
	if workPackageID <= 0 {
		return Page[Relation]{}, fmt.Errorf("list relations: work package id %d is not positive", workPackageID)
	}
	fs := append(Filters{{Name: "involved", Operator: "=", Values: []string{strconv.FormatInt(workPackageID, 10)}}}, opts.Filters...)
	opts.Filters = fs
	return decodePage(ctx, c, get("/api/v3/relations", opts.Values()), wireRelation.model)
}

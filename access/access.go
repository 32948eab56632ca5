package access

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/opsearch/opsearch/indexer"
	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
)

// API is what computing a view asks of OpenProject, with the user's key.
type API interface {
	ListProjects(context.Context, openproject.ListOptions) (openproject.Page[openproject.Project], error)
	WorkPackageCountsByProject(context.Context, openproject.Filters) (openproject.WorkPackageCounts, error)
	WorkPackageIDPage(context.Context, openproject.ListOptions) (openproject.Page[int64], error)
	ListMeetings(context.Context, openproject.ListOptions) (openproject.Page[openproject.Meeting], error)
	WikiPage(context.Context, int64) (openproject.WikiPage, error)
	Activities(context.Context, int64) ([]openproject.Activity, error)
}

var _ API = (*openproject.Client)(nil)

// Holdings is what the shared store holds, by project id: the ids of
// each kind, ascending.
type Holdings struct {
	WorkPackages map[int64][]int64
	WikiPages    map[int64][]int64
	Meetings     map[int64][]int64
	// Internal names the work packages with at least one stored internal
	// comment.
	Internal map[int64][]int64
}

// Options tune Compute.
type Options struct {
	// Probes is how many answers nothing has contradicted a refresh asks
	// again (a project's wiki permission, its internal comments, the id
	// listing of partly visible projects; about a request each), the
	// oldest first. Zero means 2; negative means none.
	Probes int
	// Full re-probes every project: for a key's validation, and whenever
	// the caller must not rely on earlier answers.
	Full bool
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// View is what one user may see of the shared store, as computed at At.
// It is immutable: a refresh makes a new one.
type View struct {
	// Visibility restricts searches of the shared index to the user's
	// documents.
	Visibility *indexer.Visibility
	// Internal lists the projects in which the user reads internal
	// comments, ascending.
	Internal []int64
	// Missing lists documents the user sees that the store does not hold
	// (indexer.DocID form): until a sync fetches them, the view is
	// incomplete and says so.
	Missing []string
	// At is when the view was computed; CheckedAt is the oldest answer
	// it took over from an earlier view instead of asking again (At when
	// none).
	At, CheckedAt time.Time
	// Requests is how many requests computing it took.
	Requests int

	// projects are the visible projects with what the user sees of
	// each wholesale.
	projects map[int64]grant
	// probes are the permission answers per project, kept for the next
	// refresh.
	probes map[int64]probe
	// some is the listing of the work packages of projects the user
	// sees some of.
	some listing
	// held is what the store held when the view was computed; Apply
	// tells documents that entered a project since by it. It is shared
	// and never written.
	held *Holdings
}

// grant is what a user sees of one project wholesale: its project
// document always, and each kind of the project's documents it names.
type grant struct {
	workPackages, wiki, meetings bool
}

// probe is one project's answers to the permission probes.
type probe struct {
	wikiAt     time.Time // zero: not asked
	wiki       bool
	internalAt time.Time // zero: not asked (no visible work package had any)
	internal   bool
}

// listing is the id-only listing of the work packages of the projects a
// user sees some of: the user's count per project when it was made, and
// the ids.
type listing struct {
	at     time.Time
	counts map[int64]int
	ids    []int64
}

// ErrIncompleteHoldings is returned (wrapped) by View.Err when the view
// names documents the store lacks.
var ErrIncompleteHoldings = errors.New("the shared store lacks documents the user sees")

// Err reports whether the view is complete: ErrIncompleteHoldings,
// naming how many documents are missing, when the store lacks some.
func (v *View) Err() error {
	if len(v.Missing) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %d documents, %s first", ErrIncompleteHoldings, len(v.Missing), v.Missing[0])
}

// Compute derives a user's view of held from OpenProject, asked through
// api with the user's key. prev, the user's previous view (nil for the
// first), lends the answers a refresh does not ask again. An error of any
// request fails the whole computation: a view is exact or not made, and
// the caller keeps the previous one.
func Compute(ctx context.Context, api API, held *Holdings, prev *View, opts Options) (*View, error) {
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	budget := opts.Probes
	if budget == 0 {
		budget = 2
	}
	if opts.Full {
		prev = nil
	}
	c := &computation{api: api, held: held, at: now()}

	projects, err := c.projects(ctx)
	if err != nil {
		return nil, err
	}
	v := &View{At: c.at, CheckedAt: c.at, held: held, projects: make(map[int64]grant, len(projects)), probes: map[int64]probe{}}
	for _, p := range projects {
		v.projects[p] = grant{}
	}
	some, err := c.countWorkPackages(ctx, v)
	if err != nil {
		return nil, err
	}
	mDocs, err := c.meetings(ctx, v)
	if err != nil {
		return nil, err
	}

	// What the previous view answered and nothing since contradicts is
	// asked again only within the budget, the oldest answers first.
	var checks []check
	if prev != nil && maps.Equal(prev.some.counts, some) {
		v.some = prev.some
		checks = append(checks, check{at: prev.some.at, run: func(ctx context.Context) error { return c.listSome(ctx, v, some) }})
	} else if err := c.listSome(ctx, v, some); err != nil {
		return nil, err
	}
	visibleWP := c.visibleWorkPackages(v)
	for _, p := range projects {
		var old probe
		if prev != nil {
			old = prev.probes[p]
		}
		pr := old
		v.probes[p] = pr
		if len(held.WikiPages[p]) > 0 {
			ask := func(ctx context.Context) error { return c.probeWiki(ctx, v, p) }
			if old.wikiAt.IsZero() {
				if err := ask(ctx); err != nil {
					return nil, err
				}
			} else {
				checks = append(checks, check{at: old.wikiAt, run: ask})
			}
		}
		if len(held.Internal[p]) > 0 {
			ask := func(ctx context.Context) error { return c.probeInternal(ctx, v, p, visibleWP) }
			if old.internalAt.IsZero() {
				if err := ask(ctx); err != nil {
					return nil, err
				}
			} else {
				checks = append(checks, check{at: old.internalAt, run: ask})
			}
		}
	}
	slices.SortStableFunc(checks, func(a, b check) int { return a.at.Compare(b.at) })
	for i, ch := range checks {
		if i >= budget {
			v.CheckedAt = ch.at
			break
		}
		if err := ch.run(ctx); err != nil {
			return nil, err
		}
	}
	wpDocs := c.someDocs(v)
	for p, pr := range v.probes {
		if pr.wiki {
			g := v.projects[p]
			g.wiki = true
			v.projects[p] = g
		}
		if pr.internal {
			v.Internal = append(v.Internal, p)
		}
	}
	slices.Sort(v.Internal)
	slices.Sort(c.missing)
	v.Missing = slices.Compact(c.missing)
	v.Requests = c.requests
	v.Visibility = v.visibility(append(wpDocs, mDocs...), held)
	return v, nil
}

// check is an answer a refresh may take over or ask again: when it was
// last asked, and how.
type check struct {
	at  time.Time
	run func(context.Context) error
}

// computation is one Compute call's state.
type computation struct {
	api      API
	held     *Holdings
	at       time.Time
	requests int
	missing  []string
}

// projects lists the ids of the projects the user sees, ascending.
func (c *computation) projects(ctx context.Context) ([]int64, error) {
	var ids []int64
	err := openproject.EachPage(ctx, openproject.ListOptions{
		Filters:  openproject.Filters{},
		SortBy:   []openproject.Sort{{Field: "id", Direction: "asc"}},
		PageSize: openproject.MaxPageSize,
	}, func(ctx context.Context, o openproject.ListOptions) (openproject.Page[openproject.Project], error) {
		c.requests++
		return c.api.ListProjects(ctx, o)
	}, func(p openproject.Page[openproject.Project]) error {
		for _, pr := range p.Items {
			ids = append(ids, pr.ID)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list projects: %w", err)
	}
	slices.Sort(ids)
	return slices.Compact(ids), nil
}

// countWorkPackages grants the projects whose work packages the user
// sees all of, and returns the user's counts of those the user sees
// some of.
func (c *computation) countWorkPackages(ctx context.Context, v *View) (map[int64]int, error) {
	c.requests++
	counts, err := c.api.WorkPackageCountsByProject(ctx, openproject.Filters{openproject.StatusAll()})
	if err != nil {
		return nil, fmt.Errorf("count work packages: %w", err)
	}
	some := map[int64]int{}
	for p, n := range counts.ByProject {
		g, visible := v.projects[p]
		switch {
		case n == 0:
		case visible && n == len(c.held.WorkPackages[p]):
			g.workPackages = true
			v.projects[p] = g
		default:
			// Fewer than the store holds (shares only, or a role
			// without view_work_packages), or more (the store is
			// behind): the ids say which. A project missing from the
			// projects list can only be a race with a membership
			// change; its ids say that too.
			some[p] = n
		}
	}
	return some, nil
}

// listSome lists the ids of the work packages the user sees in the
// projects of some.
func (c *computation) listSome(ctx context.Context, v *View, some map[int64]int) error {
	v.some = listing{at: c.at, counts: some}
	if len(some) == 0 {
		return nil
	}
	var ids []int64
	err := openproject.EachPage(ctx, openproject.ListOptions{
		Filters:  openproject.Filters{openproject.StatusAll(), openproject.InProjects(slices.Sorted(maps.Keys(some))...)},
		SortBy:   []openproject.Sort{{Field: "id", Direction: "asc"}},
		PageSize: openproject.MaxPageSize,
	}, func(ctx context.Context, o openproject.ListOptions) (openproject.Page[int64], error) {
		c.requests++
		return c.api.WorkPackageIDPage(ctx, o)
	}, func(p openproject.Page[int64]) error {
		ids = append(ids, p.Items...)
		return nil
	})
	if err != nil {
		return fmt.Errorf("list visible work package ids: %w", err)
	}
	v.some.ids = ids
	return nil
}

// someDocs returns the documents of v's listed work packages that the
// store holds, and notes the others as missing.
func (c *computation) someDocs(v *View) []string {
	held := map[int64]bool{}
	for p := range v.some.counts {
		for _, id := range c.held.WorkPackages[p] {
			held[id] = true
		}
	}
	var docs []string
	for _, id := range v.some.ids {
		d := indexer.DocID(kind.WorkPackage, id)
		if held[id] {
			docs = append(docs, d)
		} else {
			c.missing = append(c.missing, d)
		}
	}
	return docs
}

// meetings grants the projects whose meetings the user sees all of, and
// returns the documents of the others the user sees. A server without
// the meetings list shows no meeting to anyone, and the shared store
// holds none.
func (c *computation) meetings(ctx context.Context, v *View) ([]string, error) {
	seen := map[int64][]int64{}
	err := openproject.EachPage(ctx, openproject.ListOptions{
		Filters:  openproject.Filters{},
		SortBy:   []openproject.Sort{{Field: "id", Direction: "asc"}},
		PageSize: openproject.MaxPageSize,
	}, func(ctx context.Context, o openproject.ListOptions) (openproject.Page[openproject.Meeting], error) {
		c.requests++
		return c.api.ListMeetings(ctx, o)
	}, func(p openproject.Page[openproject.Meeting]) error {
		for _, m := range p.Items {
			seen[m.Project.ID] = append(seen[m.Project.ID], m.ID)
		}
		return nil
	})
	if errors.Is(err, openproject.ErrUnsupported) || errors.Is(err, openproject.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list meetings: %w", err)
	}
	var docs []string
	for _, p := range slices.Sorted(maps.Keys(seen)) {
		ids := seen[p]
		slices.Sort(ids)
		held := c.held.Meetings[p]
		if g, visible := v.projects[p]; visible && slices.Equal(ids, held) {
			g.meetings = true
			v.projects[p] = g
			continue
		}
		for _, id := range ids {
			d := indexer.DocID(kind.Meeting, id)
			if _, ok := slices.BinarySearch(held, id); ok {
				docs = append(docs, d)
			} else {
				c.missing = append(c.missing, d)
			}
		}
	}
	return docs, nil
}

// visibleWorkPackages returns a function telling whether the user sees
// work package id of project p, by v's grants and its listing as it is
// when called.
func (c *computation) visibleWorkPackages(v *View) func(p, id int64) bool {
	return func(p, id int64) bool {
		if v.projects[p].workPackages {
			return true
		}
		_, ok := slices.BinarySearch(v.some.ids, id)
		return ok
	}
}

// probeWiki asks OpenProject whether the user reads project p's wiki
// (view_wiki_pages is per project, so one page answers for all). A page
// that answers 404 may have been deleted since it was stored, so unless
// the answer was no before, a second one is tried before it is.
func (c *computation) probeWiki(ctx context.Context, v *View, p int64) error {
	pr := v.probes[p]
	// A no confirmed by one page stays no; a first answer, or a yes
	// turning, is worth a second page.
	tries := 2
	if !pr.wikiAt.IsZero() && !pr.wiki {
		tries = 1
	}
	pr.wikiAt, pr.wiki = c.at, false
	pages := c.held.WikiPages[p]
	for _, id := range pages[:min(tries, len(pages))] {
		c.requests++
		_, err := c.api.WikiPage(ctx, id)
		if err == nil {
			pr.wiki = true
			break
		}
		if !errors.Is(err, openproject.ErrNotFound) && !errors.Is(err, openproject.ErrPermission) {
			return fmt.Errorf("probe the wiki of project %d: %w", p, err)
		}
	}
	v.probes[p] = pr
	return nil
}

// probeInternal asks OpenProject whether the user reads project p's
// internal comments, through the activities of a work package of p with
// stored internal comments that the user sees. Without one there is
// nothing to ask, and nothing the answer would show.
func (c *computation) probeInternal(ctx context.Context, v *View, p int64, visibleWP func(p, id int64) bool) error {
	pr := v.probes[p]
	pr.internalAt, pr.internal = time.Time{}, false
	for _, id := range c.held.Internal[p] {
		if !visibleWP(p, id) {
			continue
		}
		c.requests++
		acts, err := c.api.Activities(ctx, id)
		if err != nil {
			return fmt.Errorf("probe the internal comments of project %d: %w", p, err)
		}
		pr.internalAt = c.at
		pr.internal = slices.ContainsFunc(acts, func(a openproject.Activity) bool { return a.Internal })
		break
	}
	v.probes[p] = pr
	return nil
}

// visibility is the index restriction of v: whole projects where every
// kind the store holds there is granted, the granted kinds elsewhere,
// and docs one by one. A work package with stored internal comments has
// two documents (indexer.WorkPackageDocs): the user sees the whole one
// where they read internal comments, its public twin elsewhere.
func (v *View) visibility(docs []string, held *Holdings) *indexer.Visibility {
	vis := &indexer.Visibility{}
	reads := func(p int64) bool {
		_, ok := slices.BinarySearch(v.Internal, p)
		return ok
	}
	internalIn := map[int64]int64{} // work package -> project
	for p, ids := range held.Internal {
		for _, id := range ids {
			internalIn[id] = p
		}
	}
	for _, d := range docs {
		if k, id, _ := indexer.ParseDocID(d); k == kind.WorkPackage {
			if p, ok := internalIn[id]; ok && !reads(p) {
				d = indexer.PublicDocID(id)
			}
		}
		vis.Docs = append(vis.Docs, d)
	}
	for _, p := range slices.Sorted(maps.Keys(v.projects)) {
		g := v.projects[p]
		if g.workPackages {
			for _, id := range held.Internal[p] {
				if reads(p) {
					vis.Except = append(vis.Except, indexer.PublicDocID(id))
				} else {
					vis.Except = append(vis.Except, indexer.DocID(kind.WorkPackage, id))
				}
			}
		}
		if g.workPackages && g.wiki && g.meetings {
			vis.Projects = append(vis.Projects, p)
			continue
		}
		kinds := []kind.Kind{kind.Project}
		if g.workPackages {
			kinds = append(kinds, kind.WorkPackage)
		}
		if g.wiki {
			kinds = append(kinds, kind.WikiPage)
		}
		if g.meetings {
			kinds = append(kinds, kind.Meeting)
		}
		vis.Partial = append(vis.Partial, indexer.ProjectKinds{Project: p, Kinds: kinds})
	}
	slices.Sort(vis.Docs)
	slices.Sort(vis.Except)
	return vis
}

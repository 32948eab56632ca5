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

	// answers are what OpenProject said, kept for the next refresh.
	answers *Answers
	// projects are the visible projects with what the user sees of
	// each wholesale.
	projects map[int64]grant
	// held is what the store held when the view was derived; Apply
	// tells documents that entered a project since by it. It is shared
	// and never written.
	held *Holdings
}

// Answers are what OpenProject told about one user when their view was
// computed: everything a View is derived from (Derive) besides what the
// store holds. Replicas sharing a store share them (Exchange), so one
// asks and the others derive. They are immutable once made, and hold
// nothing secret: ids, counts and yes-or-no answers.
type Answers struct {
	// At is when they were asked; CheckedAt is the oldest answer taken
	// over from earlier ones instead of asking again (At when none).
	At        time.Time `json:"at"`
	CheckedAt time.Time `json:"checkedAt"`
	// Requests is how many requests asking took.
	Requests int `json:"requests"`
	// Projects are the ids of the projects the user sees, ascending.
	Projects []int64 `json:"projects"`
	// Counts are the user's work package counts by project (none zero).
	Counts map[int64]int `json:"counts"`
	// Meetings are the ids of the meetings the user sees by project,
	// ascending; nil for a server without the meetings list.
	Meetings map[int64][]int64 `json:"meetings,omitempty"`
	// Listing lists the work packages of the projects the user sees some
	// of.
	Listing Listing `json:"listing"`
	// Probes are the permission answers per project.
	Probes map[int64]Probe `json:"probes"`
}

// grant is what a user sees of one project wholesale: its project
// document always, and each kind of the project's documents it names.
type grant struct {
	workPackages, wiki, meetings bool
}

// Probe is one project's answers to the permission probes.
type Probe struct {
	WikiAt     time.Time `json:"wikiAt,omitzero"` // zero: not asked
	Wiki       bool      `json:"wiki,omitempty"`
	InternalAt time.Time `json:"internalAt,omitzero"` // zero: not asked (no visible work package had any)
	Internal   bool      `json:"internal,omitempty"`
}

// Listing is the id-only listing of the work packages of the projects a
// user sees some of: the user's count per project when it was made, and
// the ids, ascending.
type Listing struct {
	At     time.Time     `json:"at,omitzero"`
	Counts map[int64]int `json:"counts,omitempty"`
	IDs    []int64       `json:"ids,omitempty"`
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

// Answers are the answers v was derived from.
func (v *View) Answers() *Answers { return v.answers }

// Compute derives a user's view of held from OpenProject, asked through
// api with the user's key (Ask, then Derive). prev, the user's previous
// view (nil for the first), lends the answers a refresh does not ask
// again. An error of any request fails the whole computation: a view is
// exact or not made, and the caller keeps the previous one.
func Compute(ctx context.Context, api API, held *Holdings, prev *View, opts Options) (*View, error) {
	var old *Answers
	if prev != nil {
		old = prev.answers
	}
	a, err := Ask(ctx, api, held, old, opts)
	if err != nil {
		return nil, err
	}
	return Derive(a, held), nil
}

// Ask asks OpenProject, through api with the user's key, what Derive
// needs to make the user's view of held. prev, the user's previous
// answers (nil for the first), lends those a refresh does not ask again
// (Options.Probes). An error of any request fails it all.
func Ask(ctx context.Context, api API, held *Holdings, prev *Answers, opts Options) (*Answers, error) {
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
	a := &Answers{At: c.at, CheckedAt: c.at, Probes: map[int64]Probe{}}
	var err error
	if a.Projects, err = c.projects(ctx); err != nil {
		return nil, err
	}
	if a.Counts, err = c.countWorkPackages(ctx); err != nil {
		return nil, err
	}
	if a.Meetings, err = c.meetings(ctx); err != nil {
		return nil, err
	}
	some := a.some(held)

	// What the previous answers said and nothing since contradicts is
	// asked again only within the budget, the oldest first.
	var checks []check
	if prev != nil && maps.Equal(prev.Listing.Counts, some) {
		a.Listing = prev.Listing
		checks = append(checks, check{at: prev.Listing.At, run: func(ctx context.Context) error { return c.listSome(ctx, a, some) }})
	} else if err := c.listSome(ctx, a, some); err != nil {
		return nil, err
	}
	for _, p := range a.Projects {
		var old Probe
		if prev != nil {
			old = prev.Probes[p]
		}
		a.Probes[p] = old
		if len(held.WikiPages[p]) > 0 {
			ask := func(ctx context.Context) error { return c.probeWiki(ctx, a, p) }
			if old.WikiAt.IsZero() {
				if err := ask(ctx); err != nil {
					return nil, err
				}
			} else {
				checks = append(checks, check{at: old.WikiAt, run: ask})
			}
		}
		if len(held.Internal[p]) > 0 {
			ask := func(ctx context.Context) error { return c.probeInternal(ctx, a, p) }
			if old.InternalAt.IsZero() {
				if err := ask(ctx); err != nil {
					return nil, err
				}
			} else {
				checks = append(checks, check{at: old.InternalAt, run: ask})
			}
		}
	}
	slices.SortStableFunc(checks, func(a, b check) int { return a.at.Compare(b.at) })
	for i, ch := range checks {
		if i >= budget {
			a.CheckedAt = ch.at
			break
		}
		if err := ch.run(ctx); err != nil {
			return nil, err
		}
	}
	a.Requests = c.requests
	return a, nil
}

// wholesale reports whether the user sees every work package of project
// p that held holds: p is visible and their count equals the store's.
func (a *Answers) wholesale(held *Holdings, p int64) bool {
	n := a.Counts[p]
	_, visible := slices.BinarySearch(a.Projects, p)
	return visible && n > 0 && n == len(held.WorkPackages[p])
}

// some returns the user's counts of the projects whose work packages
// they see some of, as held tells: fewer than the store holds (shares
// only, or a role without view_work_packages), or more (the store is
// behind). A project missing from the projects list can only be a race
// with a membership change; its ids say that too.
func (a *Answers) some(held *Holdings) map[int64]int {
	some := map[int64]int{}
	for p, n := range a.Counts {
		if n > 0 && !a.wholesale(held, p) {
			some[p] = n
		}
	}
	return some
}

// Derive makes the user's view of held from their answers. Derived from
// answers asked when the store held something else (another replica's,
// or older ones), it shows no more than they allow: a project whose work
// packages the answers neither grant wholesale nor list shows none until
// the answers are asked again.
func Derive(a *Answers, held *Holdings) *View {
	v := &View{At: a.At, CheckedAt: a.CheckedAt, Requests: a.Requests, answers: a, held: held,
		projects: make(map[int64]grant, len(a.Projects))}
	for _, p := range a.Projects {
		g := grant{workPackages: a.wholesale(held, p)}
		if pr := a.Probes[p]; pr.Wiki {
			g.wiki = true
		}
		if pr := a.Probes[p]; pr.Internal {
			v.Internal = append(v.Internal, p)
		}
		v.projects[p] = g
	}
	var missing []string
	// The listed work packages of the projects listed, as far as the
	// store holds them.
	listed := map[int64]bool{}
	for p := range a.Listing.Counts {
		for _, id := range held.WorkPackages[p] {
			listed[id] = true
		}
	}
	var docs []string
	for _, id := range a.Listing.IDs {
		d := indexer.DocID(kind.WorkPackage, id)
		if listed[id] {
			docs = append(docs, d)
		} else {
			missing = append(missing, d)
		}
	}
	// Meetings: wholesale where the user sees exactly what the store
	// holds of a visible project, one by one elsewhere.
	for _, p := range slices.Sorted(maps.Keys(a.Meetings)) {
		ids, have := a.Meetings[p], held.Meetings[p]
		if g, visible := v.projects[p]; visible && slices.Equal(ids, have) {
			g.meetings = true
			v.projects[p] = g
			continue
		}
		for _, id := range ids {
			d := indexer.DocID(kind.Meeting, id)
			if _, ok := slices.BinarySearch(have, id); ok {
				docs = append(docs, d)
			} else {
				missing = append(missing, d)
			}
		}
	}
	slices.Sort(v.Internal)
	slices.Sort(missing)
	v.Missing = slices.Compact(missing)
	v.Visibility = v.visibility(docs, held)
	return v
}

// check is an answer a refresh may take over or ask again: when it was
// last asked, and how.
type check struct {
	at  time.Time
	run func(context.Context) error
}

// computation is one Ask call's state.
type computation struct {
	api      API
	held     *Holdings
	at       time.Time
	requests int
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

// countWorkPackages returns the user's work package counts by project,
// none zero.
func (c *computation) countWorkPackages(ctx context.Context) (map[int64]int, error) {
	c.requests++
	counts, err := c.api.WorkPackageCountsByProject(ctx, openproject.Filters{openproject.StatusAll()})
	if err != nil {
		return nil, fmt.Errorf("count work packages: %w", err)
	}
	out := map[int64]int{}
	for p, n := range counts.ByProject {
		if n > 0 {
			out[p] = n
		}
	}
	return out, nil
}

// listSome lists the ids of the work packages the user sees in the
// projects of some.
func (c *computation) listSome(ctx context.Context, a *Answers, some map[int64]int) error {
	l := Listing{At: c.at, Counts: some}
	if len(some) == 0 {
		a.Listing = l
		return nil
	}
	err := openproject.EachPage(ctx, openproject.ListOptions{
		Filters:  openproject.Filters{openproject.StatusAll(), openproject.InProjects(slices.Sorted(maps.Keys(some))...)},
		SortBy:   []openproject.Sort{{Field: "id", Direction: "asc"}},
		PageSize: openproject.MaxPageSize,
	}, func(ctx context.Context, o openproject.ListOptions) (openproject.Page[int64], error) {
		c.requests++
		return c.api.WorkPackageIDPage(ctx, o)
	}, func(p openproject.Page[int64]) error {
		l.IDs = append(l.IDs, p.Items...)
		return nil
	})
	if err != nil {
		return fmt.Errorf("list visible work package ids: %w", err)
	}
	slices.Sort(l.IDs)
	a.Listing = l
	return nil
}

// meetings returns the ids of the meetings the user sees, by project. A
// server without the meetings list shows no meeting to anyone (nil), and
// the shared store holds none.
func (c *computation) meetings(ctx context.Context) (map[int64][]int64, error) {
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
	for _, ids := range seen {
		slices.Sort(ids)
	}
	return seen, nil
}

// visibleWorkPackage reports whether the user sees work package id of
// project p, by the answers so far.
func (c *computation) visibleWorkPackage(a *Answers, p, id int64) bool {
	if a.wholesale(c.held, p) {
		return true
	}
	_, ok := slices.BinarySearch(a.Listing.IDs, id)
	return ok
}

// probeWiki asks OpenProject whether the user reads project p's wiki
// (view_wiki_pages is per project, so one page answers for all). A page
// that answers 404 may have been deleted since it was stored, so unless
// the answer was no before, a second one is tried before it is.
func (c *computation) probeWiki(ctx context.Context, a *Answers, p int64) error {
	pr := a.Probes[p]
	// A no confirmed by one page stays no; a first answer, or a yes
	// turning, is worth a second page.
	tries := 2
	if !pr.WikiAt.IsZero() && !pr.Wiki {
		tries = 1
	}
	pr.WikiAt, pr.Wiki = c.at, false
	pages := c.held.WikiPages[p]
	for _, id := range pages[:min(tries, len(pages))] {
		c.requests++
		_, err := c.api.WikiPage(ctx, id)
		if err == nil {
			pr.Wiki = true
			break
		}
		if !errors.Is(err, openproject.ErrNotFound) && !errors.Is(err, openproject.ErrPermission) {
			return fmt.Errorf("probe the wiki of project %d: %w", p, err)
		}
	}
	a.Probes[p] = pr
	return nil
}

// probeInternal asks OpenProject whether the user reads project p's
// internal comments, through the activities of a work package of p with
// stored internal comments that the user sees. Without one there is
// nothing to ask, and nothing the answer would show.
func (c *computation) probeInternal(ctx context.Context, a *Answers, p int64) error {
	pr := a.Probes[p]
	pr.InternalAt, pr.Internal = time.Time{}, false
	for _, id := range c.held.Internal[p] {
		if !c.visibleWorkPackage(a, p, id) {
			continue
		}
		c.requests++
		acts, err := c.api.Activities(ctx, id)
		if err != nil {
			return fmt.Errorf("probe the internal comments of project %d: %w", p, err)
		}
		pr.InternalAt = c.at
		pr.Internal = slices.ContainsFunc(acts, func(a openproject.Activity) bool { return a.Internal })
		break
	}
	a.Probes[p] = pr
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

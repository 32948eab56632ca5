package access

import (
	"context"
	"fmt"
	"slices"

	"github.com/opsearch/opsearch/indexer"
	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/store"
)

// HoldingsOf reads what st holds, by project. It scans every stored work
// package, wiki page, meeting and activity list, so a caller computing
// many users' views reads it once for all of them.
func HoldingsOf(ctx context.Context, st *store.Store) (*Holdings, error) {
	h := &Holdings{
		WorkPackages: map[int64][]int64{},
		WikiPages:    map[int64][]int64{},
		Meetings:     map[int64][]int64{},
		Internal:     map[int64][]int64{},
	}
	projectOf := map[int64]int64{}
	err := st.ScanWorkPackages(ctx, store.DefaultScanBatch, func(wps []openproject.WorkPackage) error {
		for _, wp := range wps {
			h.WorkPackages[wp.Project.ID] = append(h.WorkPackages[wp.Project.ID], wp.ID)
			projectOf[wp.ID] = wp.Project.ID
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read work packages: %w", err)
	}
	err = st.ScanWikiPages(ctx, store.DefaultScanBatch, func(ps []openproject.WikiPage) error {
		for _, p := range ps {
			h.WikiPages[p.Project.ID] = append(h.WikiPages[p.Project.ID], p.ID)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read wiki pages: %w", err)
	}
	err = st.ScanMeetings(ctx, store.DefaultScanBatch, func(ms []openproject.Meeting) error {
		for _, m := range ms {
			h.Meetings[m.Project.ID] = append(h.Meetings[m.Project.ID], m.ID)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read meetings: %w", err)
	}
	err = st.ScanActivities(ctx, store.DefaultScanBatch, func(lists []store.WorkPackageActivities) error {
		for _, l := range lists {
			p, ok := projectOf[l.WorkPackageID]
			// The criterion of indexer.WorkPackageDocs: these have a
			// public twin.
			if ok && slices.ContainsFunc(l.Activities, func(a openproject.Activity) bool { return a.Internal && a.IsComment() }) {
				h.Internal[p] = append(h.Internal[p], l.WorkPackageID)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read activities: %w", err)
	}
	// Scans go in id order; the lists are ascending already.
	return h, nil
}

// Apply returns the view to search with once batch, the changes of
// documents about to be indexed in the shared index (ChangesOf), are in it: v itself when they change
// nothing v shows, else a copy. fetched says whether the view's own user
// fetched them, with their key: they see those (and internal comments
// only where the view says they read them). Documents another user's
// crawl brought are hidden when they entered a project or kind v shows
// wholesale, until the next Compute decides: a project whose work
// packages are all shared with the user one by one has the counts of
// one they may read entirely. Documents v already shows stay shown,
// in the form (whole, or public twin) their internal comments now call
// for, so a comment turning internal never shows to a user who may not
// read it.
//
// Apply must see a batch before the index does, or a search in between
// may show what it would hide.
func (v *View) Apply(batch []Change, fetched bool) *View {
	// Most batches change nothing a view shows; the lists are only
	// copied when one does.
	show, hide := &idSet{base: v.Visibility.Docs}, &idSet{base: v.Visibility.Except}
	// visible makes id visible (in a project shown wholesale by not
	// hiding it, elsewhere by naming it) or hidden.
	visible := func(id string, wholesale, on bool) {
		hide.set(id, !on && wholesale)
		show.set(id, on && !wholesale)
	}
	for _, it := range batch {
		if it.Deleted {
			continue // gone from the index: nothing left to show or hide
		}
		g := v.projects[it.Project]
		switch it.Kind {
		case kind.Project:
			// A project's document is its own project's.
			if _, member := v.projects[it.ID]; fetched && !member {
				visible(indexer.DocID(kind.Project, it.ID), false, true)
			}
		case kind.WikiPage, kind.Meeting:
			id := indexer.DocID(it.Kind, it.ID)
			wholesale, held := g.wiki, v.held.WikiPages[it.Project]
			if it.Kind == kind.Meeting {
				wholesale, held = g.meetings, v.held.Meetings[it.Project]
			}
			switch {
			case fetched:
				visible(id, wholesale, true)
			case wholesale && !contains(held, it.ID):
				visible(id, true, false)
			}
		case kind.WorkPackage:
			full, public := indexer.DocID(kind.WorkPackage, it.ID), indexer.PublicDocID(it.ID)
			wholesale := g.workPackages
			var seen bool
			switch {
			case fetched, show.has(full), show.has(public):
				seen = true
			case wholesale:
				seen = contains(v.held.WorkPackages[it.Project], it.ID)
			default:
				continue // nothing shows it
			}
			if !it.Twin {
				// No public twin is indexed (or it is being deleted):
				// nothing to show or hide of it.
				show.set(public, false)
				hide.set(public, false)
				visible(full, wholesale, seen)
				continue
			}
			want, other := full, public
			if !contains(v.Internal, it.Project) {
				want, other = public, full
			}
			visible(want, wholesale, seen)
			visible(other, wholesale, false)
		}
	}
	if !show.changed() && !hide.changed() {
		return v
	}
	w := *v
	vis := *v.Visibility
	vis.Docs, vis.Except = show.list(), hide.list()
	w.Visibility = &vis
	return &w
}

// idSet is a sorted list of document ids with changes over it, kept
// apart until list makes the new list.
type idSet struct {
	base []string
	ov   map[string]bool
}

func (s *idSet) has(id string) bool {
	if on, ok := s.ov[id]; ok {
		return on
	}
	_, ok := slices.BinarySearch(s.base, id)
	return ok
}

func (s *idSet) set(id string, on bool) {
	if s.has(id) == on {
		return
	}
	if s.ov == nil {
		s.ov = map[string]bool{}
	}
	s.ov[id] = on
}

// changed reports whether the list differs from base.
func (s *idSet) changed() bool {
	for id, on := range s.ov {
		if _, in := slices.BinarySearch(s.base, id); in != on {
			return true
		}
	}
	return false
}

// list returns the ids, sorted.
func (s *idSet) list() []string {
	out := make([]string, 0, len(s.base)+len(s.ov))
	for _, id := range s.base {
		if on, ok := s.ov[id]; !ok || on {
			out = append(out, id)
		}
	}
	for id, on := range s.ov {
		if _, in := slices.BinarySearch(s.base, id); on && !in {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// contains reports whether the ascending ids hold id.
func contains(ids []int64, id int64) bool {
	_, ok := slices.BinarySearch(ids, id)
	return ok
}

// Change is what Apply needs to know of a document about to be indexed:
// its entity, its project and, for a work package, whether it has a
// public twin (stored internal comments).
type Change struct {
	Kind    kind.Kind
	ID      int64
	Project int64
	Twin    bool
	// Deleted says the entity leaves the store and the index.
	Deleted bool
}

// ChangesOf returns the changes a batch makes, one per entity: docs
// about to be indexed (a work package's whole document and public twin
// are one change) and the ids of documents about to be deleted (a public
// twin's alone is not a change of its work package, whose document is
// in docs).
func ChangesOf(docs []indexer.Document, deleted []string) []Change {
	out := make([]Change, 0, len(docs)+len(deleted))
	for _, id := range deleted {
		if k, n, ok := indexer.ParseDocID(id); ok && !indexer.IsPublicTwin(id) {
			out = append(out, Change{Kind: k, ID: n, Deleted: true})
		}
	}
	at := map[string]int{}
	for _, d := range docs {
		full := indexer.DocID(d.Kind, d.EntityID)
		i, ok := at[full]
		if !ok {
			i = len(out)
			at[full] = i
			out = append(out, Change{Kind: d.Kind, ID: d.EntityID})
		}
		if d.PublicTwin {
			out[i].Twin = true
		} else {
			out[i].Project = d.ProjectID
		}
	}
	return out
}

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

// Entered returns the view to search with after documents of kind k
// entered project p in the store since v was computed: v itself unless
// it shows all of p's documents of that kind, else a copy that hides
// these until the next Compute decides. A project whose work packages
// are all shared with the user one by one has the counts of one whose
// work packages the user may all read, and only the next computation
// tells a new one apart.
func (v *View) Entered(p int64, k kind.Kind, ids ...int64) *View {
	g, ok := v.projects[p]
	if !ok || len(ids) == 0 {
		return v
	}
	if !(k == kind.WorkPackage && g.workPackages || k == kind.WikiPage && g.wiki || k == kind.Meeting && g.meetings) {
		return v
	}
	w := *v
	vis := *v.Visibility
	vis.Except = slices.Clone(vis.Except)
	for _, id := range ids {
		vis.Except = append(vis.Except, indexer.DocID(k, id))
		if k == kind.WorkPackage {
			vis.Except = append(vis.Except, indexer.PublicDocID(id))
		}
	}
	slices.Sort(vis.Except)
	vis.Except = slices.Compact(vis.Except)
	w.Visibility = &vis
	return &w
}

package sync

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/store"
)

// wikiProbesKey is the shared store's meta key of the full wiki probes
// its users finished within WikiFullProbeEvery (wikiProbes).
const wikiProbesKey = "sync.wiki_probes"

// maxWikiProbes bounds the probes recorded; the newest are kept.
const maxWikiProbes = 64

// wikiProbes is what the full wiki probes of a shared store's users
// vouch for, so that a user whose wikis they all read need not ask every
// id again: the first sync of users 2..n of an instance would otherwise
// cost each of them about as many requests as the first's (a full probe
// runs WikiDeepMissRun ids past the last page).
type wikiProbes struct {
	Probes []wikiProbe `json:"probes"`
}

// wikiProbe is one finished full probe: it asked every id from 1 to past
// Below with a key that reads the wikis of Projects (of every project,
// if All: an administrator's), at At or later, or it relied on such
// probes up to some id and asked every unknown id above it (a covered
// probe, whose At is the oldest it relied on). So every page those wikis
// held at At is in the store, and a page made since that is not has a
// higher id than any known when the probe started, above Below.
type wikiProbe struct {
	At       time.Time `json:"at"`
	All      bool      `json:"all,omitempty"`
	Projects []int64   `json:"projects,omitempty"` // sorted
	// Below is the highest page id known when the probe ended: the store's
	// highest page when it started, or higher, one the probe found.
	Below int64 `json:"below"`
}

// covers reports whether p read project id's wiki.
func (p wikiProbe) covers(id int64) bool {
	_, ok := slices.BinarySearch(p.Projects, id)
	return p.All || ok
}

// readWikiProbes returns the probes recorded in the store; a damaged
// record vouches for nothing.
func readWikiProbes(raw []byte) wikiProbes {
	var ps wikiProbes
	if len(raw) == 0 || json.Unmarshal(raw, &ps) != nil {
		return wikiProbes{}
	}
	return ps
}

// mayReadWikis returns the store's projects whose wikis the worker's
// user may read (all but those the user is known not to read), and
// false if that is not known project by project (no view: ReadsWiki is
// nil). A project with no stored page is in it: nothing shows whether
// the user reads its wiki.
func (w *Worker) mayReadWikis() ([]int64, bool, error) {
	return w.wikiProjects(func(_ int64, reads, known bool) bool { return reads || !known })
}

// readWikis returns the projects whose wikis the worker's user is known
// to read: those the view knows, and those of the pages r fetched.
func (w *Worker) readWikis(r *run) ([]int64, bool, error) {
	return w.wikiProjects(func(id int64, reads, _ bool) bool { return reads || r.wikiRead[id] })
}

// wikiProjects returns the store's projects for which keep holds, given
// what ReadsWiki says of each; false if ReadsWiki is nil.
func (w *Worker) wikiProjects(keep func(project int64, reads, known bool) bool) ([]int64, bool, error) {
	rw := w.opts.Shared.ReadsWiki
	if rw == nil {
		return nil, false, nil
	}
	ids, err := w.st.IDs(kind.Project)
	if err != nil {
		return nil, false, fmt.Errorf("read project ids: %w", err)
	}
	return slices.DeleteFunc(ids, func(id int64) bool {
		reads, known := rw(id)
		return !keep(id, reads, known)
	}), true, nil
}

// coveredProbe reports whether the recent full probes of other users
// (within WikiFullProbeEvery) read, between them, every wiki this user
// may read, so that this user's full probe need only ask the ids above
// below no user found. at is the oldest of the probes relied on: the
// user's own next full probe is due WikiFullProbeEvery after it.
//
// An administrator's probe covers every wiki. A user whose view is not
// known (nil ReadsWiki) may read every wiki, so only an administrator's
// covers them; the same holds for a project no user found a page of,
// since whether anyone reads its wiki is unknown. The projects come
// from the store, which the user's sync's project step just brought up
// to date.
func (w *Worker) coveredProbe() (below int64, at time.Time, ok bool, err error) {
	if w.opts.Shared.Admin {
		return 0, time.Time{}, false, nil // an administrator's probe vouches for others
	}
	raw, _, err := w.st.Meta(wikiProbesKey)
	if err != nil {
		return 0, time.Time{}, false, fmt.Errorf("read wiki probes: %w", err)
	}
	now := w.opts.Now()
	recent := slices.DeleteFunc(readWikiProbes(raw).Probes, func(p wikiProbe) bool {
		return now.Sub(p.At) >= w.opts.WikiFullProbeEvery || p.At.After(now)
	})
	if len(recent) == 0 {
		return 0, time.Time{}, false, nil
	}
	may, known, err := w.mayReadWikis()
	if err != nil {
		return 0, time.Time{}, false, err
	}
	// best is the probe each project relies on: of those that cover it,
	// the one with the highest Below (fewest ids left to ask).
	best := func(project int64, all bool) (wikiProbe, bool) {
		var b wikiProbe
		found := false
		for _, p := range recent {
			if (all && p.All || !all && p.covers(project)) && (!found || p.Below > b.Below) {
				b, found = p, true
			}
		}
		return b, found
	}
	if !known {
		p, ok := best(0, true)
		return p.Below, p.At, ok, nil
	}
	below, at = -1, now
	for _, id := range may {
		p, ok := best(id, false)
		if !ok {
			return 0, time.Time{}, false, nil
		}
		if below < 0 || p.Below < below {
			below = p.Below
		}
		if p.At.Before(at) {
			at = p.At
		}
	}
	if below < 0 {
		// The user may read no wiki the store knows of: any recent
		// probe dates the check, and new projects' pages are found past
		// the highest known page.
		p := slices.MaxFunc(recent, func(a, b wikiProbe) int { return a.At.Compare(b.At) })
		below, at = p.Below, p.At
	}
	return below, at, true, nil
}

// recordProbe returns the write that records the worker's user's
// finished full probe of run r, started at started, with below the
// highest page id known at its end; nil if what it covers is not known.
// It covers the wikis the user is known to read; one they read but no
// page shows (an empty wiki, or one the view did not probe) stays
// uncovered, which costs a later user a full probe, never a page.
func (w *Worker) recordProbe(r *run, started time.Time, below int64) (func(*store.WriteTx) error, error) {
	probe := wikiProbe{At: started, All: w.opts.Shared.Admin, Below: below}
	if !probe.All {
		reads, known, err := w.readWikis(r)
		if err != nil {
			return nil, err
		}
		if !known {
			return nil, nil
		}
		probe.Projects = reads
	}
	now, every := w.opts.Now(), w.opts.WikiFullProbeEvery
	return func(tx *store.WriteTx) error {
		// Read under the write, so concurrent crawls' records all stay.
		raw, _, err := tx.Meta(wikiProbesKey)
		if err != nil {
			return fmt.Errorf("read wiki probes: %w", err)
		}
		ps := readWikiProbes(raw)
		ps.Probes = slices.DeleteFunc(ps.Probes, func(p wikiProbe) bool { return now.Sub(p.At) >= every })
		ps.Probes = append(ps.Probes, probe)
		slices.SortStableFunc(ps.Probes, func(a, b wikiProbe) int { return b.At.Compare(a.At) })
		ps.Probes = ps.Probes[:min(len(ps.Probes), maxWikiProbes)]
		raw, err = json.Marshal(ps)
		if err != nil {
			return fmt.Errorf("record wiki probe: %w", err)
		}
		return tx.SetMeta(wikiProbesKey, raw)
	}, nil
}

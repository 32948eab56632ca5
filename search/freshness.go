package search

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/opsearch/opsearch/indexer"
	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/store"
)

// Freshness says, per kind, what the index holds and how current it is.
type Freshness struct {
	// Complete is true when every supported kind finished a full crawl:
	// only then does "no results" mean nothing matches, as of each kind's
	// LastSync. It is not freshness: a later sync that failed leaves the
	// data complete as of LastSync, and Note and the kinds' LastError say
	// that the last sync failed, when and why.
	Complete bool `json:"complete"`
	// Rebuilding is true while the index is rebuilt from the store; the
	// previous index keeps answering meanwhile.
	Rebuilding bool   `json:"rebuilding,omitempty"`
	Note       string `json:"note,omitempty"`
	// Kinds holds every kind, keyed by its name (kind.Kind); activities
	// are the work packages' comments and change journals.
	Kinds map[kind.Kind]KindFreshness `json:"kinds"`
	// Owner is whose index answered: the OpenProject user the store
	// belongs to (absent before the store knows it).
	Owner *Owner `json:"owner,omitempty"`
	// Unreachable, when set, says OpenProject cannot be reached now, so
	// the answer comes from the index as of its last sync alone. The
	// server fills it in: this package never talks to OpenProject.
	Unreachable *Unreachable `json:"unreachable,omitempty"`
	// Permissions, for an index every user of an instance shares, says
	// how current what decides this user's share of it is. The server
	// fills it in.
	Permissions *Permissions `json:"permissions,omitempty"`
}

// Permissions describes the view of a shared index an answer came
// through: what OpenProject said the user may see, and when.
type Permissions struct {
	// CheckedAt is when OpenProject was last asked the oldest answer the
	// view rests on.
	CheckedAt time.Time `json:"checkedAt"`
	// Missing counts documents the user may see that the shared index
	// does not hold yet (their crawl has not fetched them).
	Missing int `json:"missing,omitempty"`
	// LastError is why the view could not be computed again since; the
	// older one answers meanwhile.
	LastError string `json:"lastError,omitempty"`
}

// Unreachable describes an outage of OpenProject.
type Unreachable struct {
	Since     time.Time `json:"since"`
	LastError string    `json:"lastError,omitempty"`
}

// Owner names the user an index belongs to.
type Owner struct {
	UserID int64  `json:"id"`
	Login  string `json:"login,omitempty"`
	Name   string `json:"name,omitempty"`
}

// KindFreshness is one kind's sync and index state.
type KindFreshness struct {
	// Store is the number of entities in the local store; Index the number
	// of documents in the index (activities are part of work packages).
	Store int  `json:"store"`
	Index *int `json:"index,omitempty"`
	// LastSync is when the last sync of this kind finished successfully.
	LastSync    *time.Time `json:"last_sync"`
	LastAttempt *time.Time `json:"last_attempt,omitempty"`
	Complete    bool       `json:"complete"`
	LastError   *string    `json:"last_error"`
	// Retrying counts entities whose own fetch failed; the next sync
	// fetches them again.
	Retrying    int    `json:"retrying,omitempty"`
	Unsupported bool   `json:"unsupported,omitempty"`
	Note        string `json:"note,omitempty"`
}

// Freshness reports the index's state from the store's sync states and
// the index's counts.
func (e *Engine) Freshness(ctx context.Context) (Freshness, error) {
	gen, err := e.st.Generation()
	if err != nil {
		return Freshness{}, fmt.Errorf("read store generation: %w", err)
	}
	key := freshKey{gen: gen}
	if e.opts.Rebuilding != nil {
		key.building, key.why = e.opts.Rebuilding()
	}
	e.freshMu.Lock()
	if e.freshKey != nil && *e.freshKey == key {
		f := e.fresh
		e.freshMu.Unlock()
		// Callers may change their copy's kinds (capping an error text).
		f.Kinds = maps.Clone(f.Kinds)
		return f, nil
	}
	e.freshMu.Unlock()
	// Computed from transactions that start after gen was read, so it is
	// at least as new as gen: cached under gen, it is never older than
	// what a search at gen should see.
	f, err := freshness(ctx, e.st, e.opts.Shared, e.indexCounts, func() (bool, string) { return key.building, key.why })
	if err != nil {
		return Freshness{}, err
	}
	e.freshMu.Lock()
	e.fresh, e.freshKey = f, &key
	e.freshMu.Unlock()
	f.Kinds = maps.Clone(f.Kinds)
	return f, nil
}

// freshKey is what a Freshness is a function of besides the index counts,
// which follow the store (Engine.indexCounts).
type freshKey struct {
	gen      uint64
	building bool
	why      string
}

func freshness(ctx context.Context, st *store.Store, shared *Owner, count func(ctx context.Context, key string) (map[kind.Kind]uint64, error), rebuilding func() (bool, string)) (Freshness, error) {
	var owner int64
	if shared != nil {
		owner = shared.UserID
	}
	states, err := st.AllSyncStatesOf(owner)
	if err != nil {
		return Freshness{}, fmt.Errorf("read sync state: %w", err)
	}
	storeCounts := make(map[kind.Kind]int, len(kind.All()))
	var key strings.Builder
	for _, k := range kind.All() {
		n, err := st.Count(k)
		if err != nil {
			return Freshness{}, fmt.Errorf("count store: %w", err)
		}
		storeCounts[k] = n
		s := states[k]
		fmt.Fprintf(&key, "%s=%d@%d/%d;", k, n, s.LastFinished.UnixNano(), s.LastSuccess.UnixNano())
	}
	// A rebuild changes the index but not the store: it is part of the key.
	building, why := false, ""
	if rebuilding != nil {
		building, why = rebuilding()
	}
	fmt.Fprintf(&key, "rebuilding=%t", building)
	counts, err := count(ctx, key.String())
	if err != nil {
		return Freshness{}, fmt.Errorf("count index: %w", err)
	}
	f := Freshness{Complete: true, Kinds: map[kind.Kind]KindFreshness{}}
	if shared != nil {
		o := *shared
		f.Owner = &o
		// The store's counts are every user's: what this one sees is
		// the restricted index's.
		for _, k := range kind.All() {
			switch {
			case slices.Contains(indexer.Kinds(), k):
				storeCounts[k] = int(counts[k])
			default:
				storeCounts[k] = int(counts[kind.WorkPackage])
			}
		}
	} else if id, found, err := st.Identity(); err != nil {
		return Freshness{}, fmt.Errorf("read identity: %w", err)
	} else if found {
		f.Owner = &Owner{UserID: id.UserID, Login: id.Login, Name: id.Name}
	}
	var incomplete, failures []string
	for _, k := range kind.All() {
		s := states[k]
		kf := KindFreshness{Store: storeCounts[k], Complete: s.Complete, Unsupported: s.Unsupported, Note: s.Note, Retrying: len(s.Retry)}
		if slices.Contains(indexer.Kinds(), k) && counts != nil {
			c := int(counts[k])
			kf.Index = &c
		} else if k == kind.Activity && counts != nil {
			// Comments are indexed inside their work packages' documents.
			c := int(counts[kind.WorkPackage])
			kf.Index = &c
			kf.Note = "comments are indexed as part of their work packages"
		}
		if !s.LastSuccess.IsZero() {
			t := s.LastSuccess
			kf.LastSync = &t
		}
		if !s.LastFinished.IsZero() {
			t := s.LastFinished
			kf.LastAttempt = &t
		}
		if s.LastError != "" {
			msg := s.LastError
			kf.LastError = &msg
			failures = append(failures, failureNote(k, s))
		} else if len(s.Retry) > 0 {
			failures = append(failures, fmt.Sprintf("%s: %d items failed to fetch and are fetched again by the next sync", k, len(s.Retry)))
		}
		if !s.Complete && !s.Unsupported {
			f.Complete = false
			incomplete = append(incomplete, string(k))
		}
		f.Kinds[k] = kf
	}
	if building {
		f.Rebuilding = true
		f.Note = "the index is being rebuilt from the local store (" + why + "); results may be missing until it finishes"
	}
	var notes []string
	if f.Note != "" {
		notes = append(notes, f.Note)
	}
	if len(incomplete) > 0 {
		notes = append(notes, "the first crawl has not finished for "+strings.Join(incomplete, ", ")+": an empty or short result does not mean nothing exists")
	}
	f.Note = strings.Join(append(notes, failures...), "; ")
	return f, nil
}

// failureNote says what a failed latest run of kind means for its data:
// still complete as of the last success, or not complete yet, and when
// the run failed and why.
func failureNote(k kind.Kind, s store.SyncState) string {
	const layout = time.RFC3339
	var b strings.Builder
	b.WriteString(string(k))
	switch {
	case s.Complete && !s.LastSuccess.IsZero():
		b.WriteString(": complete as of " + s.LastSuccess.UTC().Format(layout))
	case s.Complete:
		b.WriteString(": complete")
	default:
		b.WriteString(": not complete yet")
	}
	b.WriteString("; last sync failed")
	if !s.LastFinished.IsZero() {
		b.WriteString(" at " + s.LastFinished.UTC().Format(layout))
	}
	b.WriteString(": " + s.LastError)
	return b.String()
}

package sync

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/store"
)

// noMeetingsList is the meetings state's note on servers without the list.
const noMeetingsList = "this OpenProject version has no meetings list"

// syncProjects re-lists all projects (there are few), writes the new and
// changed ones and deletes those no longer listed. Projects carry no
// lockVersion, so changes are found by comparing with the stored copy.
func (w *Worker) syncProjects(ctx context.Context, r *run, st *store.SyncState, kr *KindReport) error {
	var all []openproject.Project
	err := openproject.EachPage(ctx, openproject.ListOptions{
		Filters:  openproject.Filters{},
		SortBy:   []openproject.Sort{{Field: "id", Direction: "asc"}},
		PageSize: w.opts.PageSize,
	}, r.api.ListProjects, func(p openproject.Page[openproject.Project]) error {
		all = append(all, p.Items...)
		return nil
	})
	if err != nil {
		return fmt.Errorf("list projects: %w", err)
	}
	kr.Fetched = len(all)
	listed := map[int64]bool{}
	var puts []openproject.Project
	err = w.st.View(ctx, func(tx *store.ReadTx) error {
		for _, p := range all {
			listed[p.ID] = true
			old, found, err := tx.Project(p.ID)
			if err != nil {
				return err
			}
			if !found || !sameJSON(old, p) {
				puts = append(puts, p)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("read projects: %w", err)
	}
	docs := projectDocs(puts)
	st.Complete = true
	if err := w.commit(ctx, putAll(puts, (*store.WriteTx).PutProject), docs, nil, st); err != nil {
		return err
	}
	kr.Updated = len(puts)

	if !w.mayDelete() {
		return nil // what this user does not list may be another's
	}
	gone, err := w.confirmGone(ctx, kind.Project, listed, func(ctx context.Context, id int64) error {
		_, err := r.api.Project(ctx, strconv.FormatInt(id, 10))
		return err
	})
	if err != nil {
		return fmt.Errorf("verify project deletions: %w", err)
	}
	return w.deleteEntities(ctx, kind.Project, gone, kr)
}

// confirmGone returns the stored ids of kind that are not in listed and
// for which get answers 404 (one request per candidate, so the cost is
// proportional to deletions): two observations, the listing and the
// fetch, agree before anything is deleted. Paging over a shrinking list
// can skip an item, and a server can answer 404 transiently; either alone
// deletes nothing. A candidate whose fetch fails otherwise (an item
// failure) is kept and checked again by the next sync, which will list it
// or not.
func (w *Worker) confirmGone(ctx context.Context, k kind.Kind, listed map[int64]bool, get func(context.Context, int64) error) ([]int64, error) {
	stored, err := w.st.IDs(k)
	if err != nil {
		return nil, fmt.Errorf("read %s ids: %w", k, err)
	}
	var gone []int64
	for _, id := range stored {
		if listed[id] {
			continue
		}
		err := get(ctx, id)
		switch {
		case errors.Is(err, openproject.ErrNotFound):
			gone = append(gone, id)
		case itemFailure(ctx, err):
			w.log.Warn("deletion check failed, kept for the next sync", "kind", k, "id", id, "error", err)
		case err != nil:
			return nil, err
		}
	}
	return gone, nil
}

// syncMeetings re-lists all meetings and fetches agenda items only for
// meetings whose lockVersion or updatedAt moved.
//
// The fake server moves a meeting's updatedAt when its agenda changes.
// Whether the real server does for every agenda edit is unverified (agenda
// items carry their own updatedAt/lockVersion and are edited through
// their own endpoint); if it does not, an agenda edit is picked up with
// the next change to the meeting itself.
//
// Servers without the meetings list (OpenProject 13-17) mark the kind
// unsupported with a note; that is not an error.
func (w *Worker) syncMeetings(ctx context.Context, r *run, st *store.SyncState, kr *KindReport) error {
	caps, err := r.api.Capabilities(ctx)
	if err != nil {
		return fmt.Errorf("probe capabilities: %w", err)
	}
	if !caps.MeetingsList {
		kr.Unsupported = true
		st.Note = noMeetingsList
		st.Complete = true
		return nil
	}
	st.Note = ""
	listed := map[int64]bool{}
	err = openproject.EachPage(ctx, openproject.ListOptions{
		Filters:  openproject.Filters{},
		SortBy:   []openproject.Sort{{Field: "id", Direction: "asc"}},
		PageSize: w.opts.PageSize,
	}, r.api.ListMeetings, func(p openproject.Page[openproject.Meeting]) error {
		kr.Fetched += len(p.Items)
		for _, m := range p.Items {
			listed[m.ID] = true
		}
		return w.meetingPage(ctx, r, p.Items, st, kr)
	})
	if errors.Is(err, openproject.ErrUnsupported) {
		kr.Unsupported = true
		st.Note = noMeetingsList
		st.Complete = true
		return nil
	}
	if err != nil {
		return fmt.Errorf("list meetings: %w", err)
	}
	// A marked meeting the full listing no longer shows has nothing left
	// to retry; whether it is gone is confirmGone's question.
	for _, id := range slices.Clone(st.Retry) {
		if !listed[id] {
			st.Retry = dropID(st.Retry, id)
		}
	}
	if !w.mayDelete() {
		st.Complete = true
		return nil // what this user does not list may be another's
	}
	gone, err := w.confirmGone(ctx, kind.Meeting, listed, func(ctx context.Context, id int64) error {
		_, err := r.api.Meeting(ctx, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("verify meeting deletions: %w", err)
	}
	if err := w.deleteEntities(ctx, kind.Meeting, gone, kr); err != nil {
		return err
	}
	st.Complete = true
	return nil
}

// meetingPage stores the new and changed meetings of one page with their
// agenda items. A meeting whose agenda cannot be fetched (an item
// failure, 404 included: the listing has just shown the meeting) is
// stored with the agenda stored before, if any, and marked in st.Retry
// for the next sync; the rest of the page is committed. Only when every
// agenda fetch of the page failed is it an outage, and the page fails.
func (w *Worker) meetingPage(ctx context.Context, r *run, items []openproject.Meeting, st *store.SyncState, kr *KindReport) error {
	var changed []openproject.Meeting
	var oldAgenda [][]openproject.AgendaItem
	err := w.st.View(ctx, func(tx *store.ReadTx) error {
		for _, m := range items {
			old, found, err := tx.Meeting(m.ID)
			if err != nil {
				return err
			}
			_, marked := slices.BinarySearch(st.Retry, m.ID)
			if found && !marked && old.LockVersion == m.LockVersion && old.UpdatedAt.Equal(m.UpdatedAt) {
				continue
			}
			changed = append(changed, m)
			oldAgenda = append(oldAgenda, old.AgendaItems)
		}
		return nil
	})
	if err != nil || len(changed) == 0 {
		return err
	}
	ids := make([]int64, len(changed))
	for i, m := range changed {
		ids[i] = m.ID
	}
	agendas, failed, err := fetchEach(ctx, w.lim, "agenda items of meeting", ids, r.api.AgendaItems)
	if err != nil {
		return err
	}
	retry := slices.Clone(st.Retry)
	marked := 0
	for i, m := range changed {
		if failed[i] != nil {
			changed[i].AgendaItems = oldAgenda[i]
			retry = addID(retry, m.ID)
			marked++
			w.log.Warn("meeting marked for the next sync", "id", m.ID, "error", failed[i])
			continue
		}
		changed[i].AgendaItems = agendas[i]
		retry = dropID(retry, m.ID)
	}
	docs := meetingDocs(changed)
	prev := st.Retry
	st.Retry = retry
	err = w.commit(ctx, putAll(changed, (*store.WriteTx).PutMeeting), docs, nil, st)
	if err != nil {
		st.Retry = prev
		return err
	}
	kr.Updated += len(docs)
	kr.Retry += marked
	return nil
}

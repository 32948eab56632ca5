package search

import (
	"context"
	"slices"

	"github.com/opsearch/opsearch/indexer"
	"github.com/opsearch/opsearch/internal/spread"
	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/scorer"
	"github.com/opsearch/opsearch/store"
)

// followContainers puts the container of each matching attachment just
// before it in ranked, unless the container already ranks higher: a
// phrase found only in the PDF attached to a work package finds the
// work package, and the attachment after it says which file and where.
// A container the ranking holds lower moves up, with the attachment's
// score; one it lacks is loaded from the store. Containers of kinds the
// query excludes are not added, and neither are those of partial
// matches, which would crowd out better results with guesses.
//
// Visibility: an attachment is visible exactly where its container is
// (indexer.Visibility), so its container may be shown. Whether the
// searcher may read the container's internal comments is not known
// here, so a container loaded this way carries none.
//
// added names the containers it loaded (by document id): the caller
// leaves them out of the index's tail, so paging shows each result once.
// alone counts the index's hits among them, which matched tells: the
// hits of each of ids the query matches by itself. It is asked for the
// containers it may load, on another core while they load: a tenth of a
// query's time went to asking it after them.
func (e *Engine) followContainers(ctx context.Context, rs []ranked, q Query, matched func(ids []string) (map[string]int, error)) (out []ranked, added map[string]bool, alone int, err error) {
	if q.Exact || len(q.Statuses) > 0 || !slices.ContainsFunc(rs, func(r ranked) bool { return r.c.att != nil }) {
		return rs, nil, 0, nil
	}
	pos := map[string]int{}
	for i, r := range rs {
		if r.c.att == nil {
			pos[r.c.hit.DocID()] = i
			if r.c.hit.Public {
				pos[r.c.hit.ID] = i
			}
		}
	}
	var missing []indexer.Hit
	for _, r := range rs {
		a := r.c.att
		if a == nil || r.match != MatchGood {
			continue
		}
		ck := a.ContainerKind()
		if ck == "" || (len(q.Kinds) > 0 && !slices.Contains(q.Kinds, ck)) {
			continue
		}
		id := indexer.DocID(ck, a.Container.ID)
		if _, ok := pos[id]; !ok && !slices.ContainsFunc(missing, func(h indexer.Hit) bool { return h.ID == id }) {
			missing = append(missing, indexer.Hit{ID: id, Kind: ck, EntityID: a.Container.ID, Public: ck == kind.WorkPackage})
		}
	}
	var self map[string]int
	var merr error
	wait := func() {}
	if len(missing) > 0 {
		ids := make([]string, len(missing))
		for i, h := range missing {
			ids[i] = h.ID
		}
		wait = spread.Go(ctx, func() { self, merr = matched(ids) })
	}
	loaded, err := e.hydrate(ctx, missing, nil)
	wait()
	if err == nil {
		err = merr
	}
	if err != nil {
		return nil, nil, 0, err
	}
	extra := map[string]*candidate{}
	for _, c := range loaded {
		extra[c.hit.ID] = c
	}
	out = make([]ranked, 0, len(rs)+len(loaded))
	added = map[string]bool{}
	placed := map[string]bool{}
	for i, r := range rs {
		if a := r.c.att; a != nil && r.match == MatchGood {
			id := indexer.DocID(a.ContainerKind(), a.Container.ID)
			if !placed[id] {
				via := &AttachmentMatch{ID: a.ID, FileName: a.FileName}
				if len(r.res.Matches) > 0 {
					via.Snippet = r.res.Matches[0].Snippet
				}
				if j, ok := pos[id]; ok && j > i {
					moved := rs[j]
					moved.via = via
					moved.coverage = max(moved.coverage, r.coverage)
					moved.words = r.words
					out = append(out, moved)
					placed[id] = true
				} else if c := extra[id]; c != nil {
					out = append(out, ranked{c: c, coverage: r.coverage, words: r.words, match: MatchGood, via: via,
						res: scorer.Result{ID: c.hit.ID, MatchedFields: []string{"attachment"}}})
					placed[id], added[id] = true, true
				}
			}
		}
		if r.c.att == nil && placed[r.c.hit.ID] {
			continue // moved up already
		}
		if r.c.att == nil {
			placed[r.c.hit.ID] = true
		}
		out = append(out, r)
	}
	for id := range added {
		alone += self[id]
	}
	return out, added, alone, nil
}

// StoredAttachment returns attachment id as the store holds it, with its
// extracted text. It checks no permission: the caller asks OpenProject
// first (the get_attachment tool does).
func (e *Engine) StoredAttachment(ctx context.Context, id int64) (a openproject.Attachment, found bool, err error) {
	err = e.st.View(ctx, func(tx *store.ReadTx) error {
		a, found, err = tx.Attachment(id)
		return err
	})
	return a, found, err
}

package sync

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/opsearch/opsearch/indexer"
	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/store"
)

// This file holds the one place per kind where sync turns entities into
// index documents. The crawl (fresh from the API), the recovery of an
// interrupted commit and the rebuild from the store all go through these,
// so a document never depends on which path produced it; the field
// mapping itself is indexer's From* builders.

// projectDocs builds the documents of projects.
func projectDocs(ps []openproject.Project) []indexer.Document {
	docs := make([]indexer.Document, len(ps))
	for i, p := range ps {
		docs[i] = indexer.FromProject(p)
	}
	return docs
}

// wikiDocs builds the documents of wiki pages.
func wikiDocs(ps []openproject.WikiPage) []indexer.Document {
	docs := make([]indexer.Document, len(ps))
	for i, p := range ps {
		docs[i] = indexer.FromWikiPage(p)
	}
	return docs
}

// meetingDocs builds the documents of meetings, whose agenda items are
// inline.
func meetingDocs(ms []openproject.Meeting) []indexer.Document {
	docs := make([]indexer.Document, len(ms))
	for i, m := range ms {
		docs[i] = indexer.FromMeeting(m)
	}
	return docs
}

// workPackageDocs builds a work package's documents with its comments:
// in a shared store (twins) also its public twin, and the ids to delete
// (indexer.WorkPackageDocs).
func workPackageDocs(wp openproject.WorkPackage, acts []openproject.Activity, twins bool) (docs []indexer.Document, stale []string) {
	return indexer.WorkPackageDocs(wp, acts, twins)
}

// storedWorkPackageDocs builds the documents of stored work packages,
// joining each with its stored activity list inside tx (one read
// transaction per batch, not per work package); a shared store's come
// with their twins.
func storedWorkPackageDocs(tx *store.ReadTx, wps []openproject.WorkPackage) (docs []indexer.Document, stale []string, err error) {
	id, _, err := tx.Identity()
	if err != nil {
		return nil, nil, err
	}
	docs = make([]indexer.Document, 0, len(wps))
	for _, wp := range wps {
		acts, _, err := tx.Activities(wp.ID)
		if err != nil {
			return nil, nil, fmt.Errorf("read activities of work package %d: %w", wp.ID, err)
		}
		d, s := workPackageDocs(wp, acts, id.Shared)
		docs, stale = append(docs, d...), append(stale, s...)
	}
	return docs, stale, nil
}

// docsFromStore builds the documents of ids from the store's copies
// (docFromStore); dels are the ids whose entities the store lacks.
func docsFromStore(tx *store.ReadTx, ids []string) (docs []indexer.Document, dels []string, err error) {
	for _, id := range ids {
		doc, found, err := docFromStore(tx, id)
		if err != nil {
			return nil, nil, err
		}
		if found {
			docs = append(docs, doc)
		} else {
			dels = append(dels, id)
		}
	}
	return docs, dels, nil
}

// docFromStore builds the document of doc id from the store's copy; found
// is false when the entity is not stored (or the id is not a document id).
func docFromStore(tx *store.ReadTx, docID string) (indexer.Document, bool, error) {
	k, id, ok := indexer.ParseDocID(docID)
	if !ok {
		return indexer.Document{}, false, nil
	}
	switch k {
	case kind.WorkPackage:
		wp, found, err := tx.WorkPackage(id)
		if err != nil || !found {
			return indexer.Document{}, false, err
		}
		docs, _, err := storedWorkPackageDocs(tx, []openproject.WorkPackage{wp})
		if err != nil {
			return indexer.Document{}, false, err
		}
		// docID may be the public twin's, which exists only while the
		// work package has internal comments.
		for _, d := range docs {
			if d.ID == docID {
				return d, true, nil
			}
		}
		return indexer.Document{}, false, nil
	case kind.WikiPage:
		p, found, err := tx.WikiPage(id)
		if err != nil || !found {
			return indexer.Document{}, false, err
		}
		return wikiDocs([]openproject.WikiPage{p})[0], true, nil
	case kind.Meeting:
		m, found, err := tx.Meeting(id)
		if err != nil || !found {
			return indexer.Document{}, false, err
		}
		return meetingDocs([]openproject.Meeting{m})[0], true, nil
	case kind.Project:
		p, found, err := tx.Project(id)
		if err != nil || !found {
			return indexer.Document{}, false, err
		}
		return projectDocs([]openproject.Project{p})[0], true, nil
	case kind.Attachment:
		a, found, err := tx.Attachment(id)
		if err != nil || !found {
			return indexer.Document{}, false, err
		}
		d, ok := indexer.FromAttachment(a)
		return d, ok, nil
	}
	return indexer.Document{}, false, nil
}

// rebuildBatch is the number of entities read per store transaction in a
// rebuild; it bounds the memory a rebuild holds besides the index's own
// batch.
const rebuildBatch = 500

// Rebuilder is the part of *indexer.Bleve a rebuild from the store needs.
type Rebuilder interface {
	Rebuild(ctx context.Context, fill func(add func(docs ...indexer.Document) error) error) error
}

var _ Rebuilder = (*indexer.Bleve)(nil)

// RebuildIndex rebuilds idx from st alone, without any API request: every
// stored project, work package (with its comments), wiki page, meeting
// and attachment
// becomes a document built by the same functions the crawl uses. The store
// is read in batches of short transactions, so memory stays bounded and
// writers are not blocked. progress, if set, is called after each batch
// with the documents added so far and the total expected.
//
// The caller must keep sync commits away while it runs (User does, by
// holding the worker's sync lock): a commit between a batch's read and its
// add could put a stale copy into the new index.
func RebuildIndex(ctx context.Context, st *store.Store, idx Rebuilder, progress func(done, total int)) error {
	total := 0
	for _, k := range indexer.Kinds() {
		n, err := st.Count(k)
		if err != nil {
			return fmt.Errorf("count stored %s: %w", k, err)
		}
		total += n
	}
	done := 0
	report := func(n int) {
		done += n
		if progress != nil {
			progress(done, total)
		}
	}
	err := idx.Rebuild(ctx, func(add func(...indexer.Document) error) error {
		if err := st.ScanProjects(ctx, rebuildBatch, func(ps []openproject.Project) error {
			report(len(ps))
			return add(projectDocs(ps)...)
		}); err != nil {
			return err
		}
		if err := st.ScanWorkPackages(ctx, rebuildBatch, func(wps []openproject.WorkPackage) error {
			var docs []indexer.Document
			if err := st.View(ctx, func(tx *store.ReadTx) error {
				var err error
				docs, _, err = storedWorkPackageDocs(tx, wps)
				return err
			}); err != nil {
				return err
			}
			report(len(wps))
			return add(docs...)
		}); err != nil {
			return err
		}
		if err := st.ScanWikiPages(ctx, rebuildBatch, func(ps []openproject.WikiPage) error {
			report(len(ps))
			return add(wikiDocs(ps)...)
		}); err != nil {
			return err
		}
		if err := st.ScanMeetings(ctx, rebuildBatch, func(ms []openproject.Meeting) error {
			report(len(ms))
			return add(meetingDocs(ms)...)
		}); err != nil {
			return err
		}
		return st.ScanAttachments(ctx, rebuildBatch, func(as []openproject.Attachment) error {
			report(len(as))
			return add(attachmentDocs(as)...)
		})
	})
	if err != nil {
		return fmt.Errorf("rebuild index from store: %w", err)
	}
	return nil
}

// CheckableIndex is what a consistency check needs of an index: its own
// verdict (*indexer.Bleve.NeedsRebuild) and its per-kind counts.
type CheckableIndex interface {
	NeedsRebuild() (bool, string)
	Count(ctx context.Context) (map[kind.Kind]uint64, error)
}

var _ CheckableIndex = (*indexer.Bleve)(nil)

// IndexMismatch returns why idx does not reflect st, or "" when it does:
// the reason NeedsRebuild gives (missing, damaged, other mapping version)
// or the first kind whose document count differs from the store's entity
// count. Equal counts are not proof of equal content, but together with
// the pending-commit recovery they catch what actually happens: a lost or
// replaced index directory, or a crash between store and index writes.
func IndexMismatch(ctx context.Context, st *store.Store, idx CheckableIndex) (string, error) {
	if needs, why := idx.NeedsRebuild(); needs {
		return why, nil
	}
	counts, err := idx.Count(ctx)
	if err != nil {
		return "", fmt.Errorf("count index documents: %w", err)
	}
	for _, k := range indexer.Kinds() {
		n, err := st.Count(k)
		if err != nil {
			return "", fmt.Errorf("count stored %s: %w", k, err)
		}
		if uint64(n) != counts[k] {
			return fmt.Sprintf("count mismatch: index has %d %s documents, store has %d", counts[k], k, n), nil
		}
	}
	return "", nil
}

// recoverPending brings the index entries recorded as pending in line
// with the store: an interrupted commit left them possibly stale. It needs
// no API request, so OpenUser and OpenLocal run it too, before comparing
// counts.
func recoverPending(ctx context.Context, st *store.Store, idx Index, log *slog.Logger) error {
	raw, ok, err := st.Meta(pendingKey)
	if err != nil || !ok || len(raw) == 0 {
		return err
	}
	var ids []string
	if err := json.Unmarshal(raw, &ids); err != nil {
		return fmt.Errorf("decode pending ids: %w", err)
	}
	var docs []indexer.Document
	var dels []string
	err = st.View(ctx, func(tx *store.ReadTx) error {
		docs, dels, err = docsFromStore(tx, ids)
		return err
	})
	if err != nil {
		return fmt.Errorf("read pending entities: %w", err)
	}
	if len(docs) > 0 {
		if err := idx.Index(ctx, docs...); err != nil {
			return fmt.Errorf("index documents: %w", err)
		}
	}
	if len(dels) > 0 {
		if err := idx.Delete(ctx, dels...); err != nil {
			return fmt.Errorf("delete documents: %w", err)
		}
	}
	log.Info("re-indexed documents of an interrupted sync", "documents", len(docs), "deleted", len(dels))
	if err := st.Update(ctx, func(tx *store.WriteTx) error { return tx.SetMeta(pendingKey, nil) }); err != nil {
		return fmt.Errorf("clear pending ids: %w", err)
	}
	return nil
}

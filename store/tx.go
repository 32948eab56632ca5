package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
)

// ReadTx is a read-only view of the store, valid only inside the View (or
// Update) callback that received it. Every value it returns is decoded or
// copied inside the transaction, so results stay valid after it ends.
// Like bbolt's Tx it must not be used from several goroutines.
type ReadTx struct {
	tx    kvTx
	codec *codec
}

// Generation identifies the committed state this transaction reads: it
// changes with every committed write (bbolt's transaction id, or a
// PostgreSQL store's change sequence), so a cache of decoded entities
// stays valid while it does not.
func (tx *ReadTx) Generation() uint64 { return tx.tx.generation() }

// WriteTx is a read-write transaction, valid only inside the Update
// callback that received it. It has every ReadTx method, and a put or
// delete is visible to reads later in the same transaction.
type WriteTx struct {
	ReadTx
}

// Project returns project id; found is false if it is not stored.
func (r *ReadTx) Project(id int64) (openproject.Project, bool, error) {
	return getJSON[openproject.Project](r, kind.Project, id)
}

// WorkPackage returns work package id; found is false if it is not stored.
func (r *ReadTx) WorkPackage(id int64) (openproject.WorkPackage, bool, error) {
	return getJSON[openproject.WorkPackage](r, kind.WorkPackage, id)
}

// Activities returns the stored activity list of work package wpID; found
// is false if none was stored (a stored empty list is found).
func (r *ReadTx) Activities(wpID int64) ([]openproject.Activity, bool, error) {
	return getJSON[[]openproject.Activity](r, kind.Activity, wpID)
}

// WikiPage returns wiki page id; found is false if it is not stored.
func (r *ReadTx) WikiPage(id int64) (openproject.WikiPage, bool, error) {
	return getJSON[openproject.WikiPage](r, kind.WikiPage, id)
}

// Meeting returns meeting id with its agenda items; found is false if it is
// not stored.
func (r *ReadTx) Meeting(id int64) (openproject.Meeting, bool, error) {
	return getJSON[openproject.Meeting](r, kind.Meeting, id)
}

// Attachment returns attachment id with its extracted text; found is
// false if it is not stored.
func (r *ReadTx) Attachment(id int64) (openproject.Attachment, bool, error) {
	return getJSON[openproject.Attachment](r, kind.Attachment, id)
}

// getJSON decodes the value of kind/id, in either encoding (see codec).
// Decoding copies everything it keeps, so the result does not reference
// the mmap.
func getJSON[T any](r *ReadTx, k kind.Kind, id int64) (T, bool, error) {
	var v T
	b := r.tx.bucket(bucketOf(k))
	if b == nil {
		return v, false, fmt.Errorf("get %s %d: bucket missing", k, id)
	}
	raw := b.get(idKey(id))
	if raw == nil {
		return v, false, nil
	}
	if err := r.codec.decodeIn(r.tx, raw, &v); err != nil {
		return v, false, fmt.Errorf("decode %s %d: %w", k, id, err)
	}
	return v, true, nil
}

// Count returns the number of stored entities of kind, from a counter kept
// in step with every put and delete (O(1); bbolt's Stats walks every page).
// It returns 0 for an unknown kind.
func (r *ReadTx) Count(k kind.Kind) int {
	b := r.tx.bucket(bucketCounts)
	if b == nil {
		return 0
	}
	n, _ := decodeUint(b.get(bucketOf(k)))
	return int(n)
}

// IDs returns the stored ids of kind in ascending order (nil for an unknown
// kind or an empty one).
func (r *ReadTx) IDs(k kind.Kind) []int64 {
	b := r.tx.bucket(bucketOf(k))
	if b == nil {
		return nil
	}
	ids := make([]int64, 0, r.Count(k))
	c := b.cursor()
	for key, _ := c.first(); key != nil; key, _ = c.next() {
		ids = append(ids, keyID(key))
	}
	return ids
}

// MaxID returns the highest stored id of kind, 0 if there is none.
func (r *ReadTx) MaxID(k kind.Kind) int64 {
	b := r.tx.bucket(bucketOf(k))
	if b == nil {
		return 0
	}
	key, _ := b.cursor().last()
	return keyID(key)
}

// SyncState returns the sync state of kind; a kind never synced yields a
// zero state with Kind set.
func (r *ReadTx) SyncState(k kind.Kind) (SyncState, error) { return r.SyncStateOf(0, k) }

// SyncStateOf returns owner's sync state of kind (see SyncState.Owner); a
// kind never synced yields a zero state with Kind and Owner set.
func (r *ReadTx) SyncStateOf(owner int64, k kind.Kind) (SyncState, error) {
	if err := checkKind(k); err != nil {
		return SyncState{}, fmt.Errorf("get sync state: %w", err)
	}
	if owner < 0 {
		return SyncState{}, fmt.Errorf("get sync state: owner %d is not a user id", owner)
	}
	st := SyncState{Kind: k, Owner: owner}
	raw := r.tx.bucket(bucketSync).get(syncStateKey(owner, k))
	if raw == nil {
		return st, nil
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		return SyncState{Kind: k, Owner: owner}, fmt.Errorf("decode sync state %s: %w", k, err)
	}
	st.Kind, st.Owner = k, owner
	return st, nil
}

// FetchedByReader reports what SetFetchedByReader recorded for work
// package wpID (false when nothing was).
func (r *ReadTx) FetchedByReader(wpID int64) bool {
	return r.tx.bucket(bucketReaders).get(idKey(wpID)) != nil
}

// Identity returns the recorded identity; found is false if none was set.
func (r *ReadTx) Identity() (Identity, bool, error) {
	var id Identity
	raw := r.tx.bucket(bucketMeta).get(keyIdentity)
	if raw == nil {
		return id, false, nil
	}
	if err := json.Unmarshal(raw, &id); err != nil {
		return Identity{}, false, fmt.Errorf("decode identity: %w", err)
	}
	return id, true, nil
}

// Meta returns a copy of the value SetMeta stored under key.
func (r *ReadTx) Meta(key string) ([]byte, bool, error) {
	if key == "" {
		return nil, false, errors.New("get meta: empty key")
	}
	v := r.tx.bucket(bucketExtra).get([]byte(key))
	if v == nil {
		return nil, false, nil
	}
	return bytes.Clone(v), true, nil
}

// PutProject stores (inserts or replaces) a project.
func (w *WriteTx) PutProject(p openproject.Project) error {
	return w.put(kind.Project, p.ID, p)
}

// PutWorkPackage stores (inserts or replaces) a work package.
func (w *WriteTx) PutWorkPackage(wp openproject.WorkPackage) error {
	return w.put(kind.WorkPackage, wp.ID, wp)
}

// PutActivities replaces the whole activity list of work package wpID. A
// nil or empty list is stored as an empty list, which records "fetched,
// none visible" as distinct from "never fetched".
func (w *WriteTx) PutActivities(wpID int64, acts []openproject.Activity) error {
	if acts == nil {
		acts = []openproject.Activity{}
	}
	return w.put(kind.Activity, wpID, acts)
}

// SetFetchedByReader records whether work package wpID's stored
// activities were fetched by a user who reads its project's internal
// comments. A shared store needs it: what a user who does not read them
// fetched says nothing of internal comments, so one who does must fetch
// again.
func (w *WriteTx) SetFetchedByReader(wpID int64, yes bool) error {
	if err := checkID(kind.WorkPackage, wpID); err != nil {
		return fmt.Errorf("mark activities: %w", err)
	}
	b := w.tx.bucket(bucketReaders)
	if !yes {
		return b.delete(idKey(wpID))
	}
	return b.put(idKey(wpID), []byte{1})
}

// PutWikiPage stores (inserts or replaces) a wiki page.
func (w *WriteTx) PutWikiPage(p openproject.WikiPage) error {
	return w.put(kind.WikiPage, p.ID, p)
}

// PutMeeting stores (inserts or replaces) a meeting with its agenda items.
func (w *WriteTx) PutMeeting(m openproject.Meeting) error {
	return w.put(kind.Meeting, m.ID, m)
}

// PutAttachment stores (inserts or replaces) an attachment. Its
// container's list is the caller's to keep (SetContainerAttachments).
func (w *WriteTx) PutAttachment(a openproject.Attachment) error {
	return w.put(kind.Attachment, a.ID, a)
}

func (w *WriteTx) put(k kind.Kind, id int64, v any) error {
	if err := checkID(k, id); err != nil {
		return fmt.Errorf("put %s: %w", k, err)
	}
	if err := w.codec.maybeTrain(w.tx, k); err != nil {
		return err
	}
	raw, err := w.codec.marshal(k, v)
	if err != nil {
		return fmt.Errorf("encode %s %d: %w", k, id, err)
	}
	b := w.tx.bucket(bucketOf(k))
	b.denseFill()
	key := idKey(id)
	// The extra get keeps Count exact; it hits the pages put is about to
	// touch anyway.
	isNew := b.get(key) == nil
	if err := b.put(key, raw); err != nil {
		return fmt.Errorf("put %s %d: %w", k, id, err)
	}
	if k.Container() {
		// A changed container may have changed attachments: an upload
		// moves the container's updatedAt, and a wiki page embeds its
		// list.
		if err := w.markContainer(k, id, containerOf(v)); err != nil {
			return err
		}
	}
	if isNew {
		return w.addCount(k, 1)
	}
	return nil
}

// Delete removes entity id of kind; deleting an absent id is not an error.
// Deleting a work package also deletes its activity list, which is keyed
// by the same id and means nothing without it.
func (w *WriteTx) Delete(k kind.Kind, id int64) error {
	if err := checkKind(k); err != nil {
		return fmt.Errorf("delete: %w", err)
	}
	if err := w.del(k, id); err != nil {
		return err
	}
	if k.Container() {
		// Its attachments go with it, in the next attachment sync.
		if err := w.markContainer(k, id, containerMark{gone: true}); err != nil {
			return err
		}
	}
	if k == kind.WorkPackage {
		if err := w.tx.bucket(bucketReaders).delete(idKey(id)); err != nil {
			return fmt.Errorf("delete %s %d: %w", k, id, err)
		}
		return w.del(kind.Activity, id)
	}
	return nil
}

func (w *WriteTx) del(k kind.Kind, id int64) error {
	b := w.tx.bucket(bucketOf(k))
	key := idKey(id)
	if b.get(key) == nil {
		return nil
	}
	if err := b.delete(key); err != nil {
		return fmt.Errorf("delete %s %d: %w", k, id, err)
	}
	return w.addCount(k, -1)
}

func (w *WriteTx) addCount(k kind.Kind, delta int64) error {
	b := w.tx.bucket(bucketCounts)
	n, _ := decodeUint(b.get(bucketOf(k)))
	next := int64(n) + delta
	if next < 0 {
		// Only reachable through a damaged counter; never store a negative.
		next = 0
	}
	if err := b.put(bucketOf(k), encodeUint(uint64(next))); err != nil {
		return fmt.Errorf("update %s count: %w", k, err)
	}
	return nil
}

// SetSyncState stores st under st.Kind and st.Owner, replacing the
// previous state. Write it in the same Update as the entities it
// accounts for.
func (w *WriteTx) SetSyncState(st SyncState) error {
	if err := checkKind(st.Kind); err != nil {
		return fmt.Errorf("set sync state: %w", err)
	}
	if st.Owner < 0 {
		return fmt.Errorf("set sync state: owner %d is not a user id", st.Owner)
	}
	return w.putJSON(bucketSync, syncStateKey(st.Owner, st.Kind), st.onDisk())
}

// SetMeta stores a small caller-defined value under key (in a bucket of its
// own, so it cannot clash with the store's own metadata). A nil value
// deletes the key.
func (w *WriteTx) SetMeta(key string, value []byte) error {
	if key == "" {
		return errors.New("set meta: empty key")
	}
	b := w.tx.bucket(bucketExtra)
	if value == nil {
		if err := b.delete([]byte(key)); err != nil {
			return fmt.Errorf("delete meta %q: %w", key, err)
		}
		return nil
	}
	// bbolt keeps the slice until commit; the caller may reuse theirs.
	if err := b.put([]byte(key), bytes.Clone(value)); err != nil {
		return fmt.Errorf("set meta %q: %w", key, err)
	}
	return nil
}

func (w *WriteTx) putJSON(bucket, key []byte, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s/%s: %w", bucket, key, err)
	}
	if err := w.tx.bucket(bucket).put(key, raw); err != nil {
		return fmt.Errorf("write %s/%s: %w", bucket, key, err)
	}
	return nil
}

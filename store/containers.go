package store

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
)

// bucketContainers holds, per container (a work package, wiki page or
// meeting, kind.Container), the ids of its stored attachments and
// whether its list is due to be read again. Putting or deleting a
// container marks it due in the same transaction, so the attachment
// sync reads the lists of exactly the containers that changed, however
// the change arrived (a crawl, a write tool's refresh, a webhook), and a
// crash between the two loses nothing.
var bucketContainers = []byte("attachment_containers")

// containerCodes are the first byte of a container key: the file
// format, never to change.
var containerCodes = map[kind.Kind]byte{kind.WorkPackage: 'w', kind.WikiPage: 'p', kind.Meeting: 'm'}

func containerKey(k kind.Kind, id int64) []byte {
	key := make([]byte, 9)
	key[0] = containerCodes[k]
	binary.BigEndian.PutUint64(key[1:], uint64(id))
	return key
}

func parseContainerKey(key []byte) (kind.Kind, int64, bool) {
	if len(key) != 9 {
		return "", 0, false
	}
	for k, c := range containerCodes {
		if c == key[0] {
			return k, int64(binary.BigEndian.Uint64(key[1:])), true
		}
	}
	return "", 0, false
}

// containerEntry is a container's value in bucketContainers.
type containerEntry struct {
	Due bool `json:"due,omitempty"`
	// Gone marks a container deleted from the store since its list was
	// read, so the attachment sync neither asks OpenProject for its
	// list nor reads the container's record to learn it is gone (a
	// read per container touched every page of the work packages).
	// Entries written before it existed lack it; their containers are
	// then found gone by reading the record.
	Gone bool `json:"gone,omitempty"`
	// Project is the container's, as last put, which its attachments'
	// documents carry: kept here, the attachment sync need not read the
	// container (its title comes with each attachment). Entries written
	// before it existed lack it; the container is then read.
	Project     openproject.Ref `json:"project,omitzero"`
	Attachments []int64         `json:"attachments,omitempty"`
}

// containerMark is what a put or a delete tells a container's entry.
type containerMark struct {
	gone    bool
	project openproject.Ref
}

// containerOf is the mark of putting v, a container.
func containerOf(v any) containerMark {
	switch c := v.(type) {
	case openproject.WorkPackage:
		return containerMark{project: c.Project}
	case openproject.WikiPage:
		return containerMark{project: c.Project}
	case openproject.Meeting:
		return containerMark{project: c.Project}
	}
	return containerMark{}
}

// ContainerAttachments is a container and the ids of its stored
// attachments.
type ContainerAttachments struct {
	Kind        kind.Kind
	ID          int64
	Attachments []int64
	// Gone reports that the container was deleted from the store since
	// its list was last read (false where that is not recorded).
	Gone bool
	// Project is the container's as last put (zero where that is not
	// recorded).
	Project openproject.Ref
}

func (r *ReadTx) containerEntry(k kind.Kind, id int64) (containerEntry, error) {
	var e containerEntry
	raw := r.tx.bucket(bucketContainers).get(containerKey(k, id))
	if raw == nil {
		return e, nil
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		return e, fmt.Errorf("decode attachments of %s %d: %w", k, id, err)
	}
	return e, nil
}

// ContainerAttachments returns the ids of container k/id's stored
// attachments.
func (r *ReadTx) ContainerAttachments(k kind.Kind, id int64) ([]int64, error) {
	e, err := r.containerEntry(k, id)
	return e.Attachments, err
}

// DueContainers returns up to max containers whose attachment lists are
// due (max ≤ 0: all), in key order, starting after the container
// after names (nil: from the first).
func (r *ReadTx) DueContainers(max int, after *ContainerAttachments) ([]ContainerAttachments, error) {
	var out []ContainerAttachments
	c := r.tx.bucket(bucketContainers).cursor()
	var key, val []byte
	if after != nil {
		key, val = first(c, containerKey(after.Kind, after.ID))
	} else {
		key, val = c.first()
	}
	for ; key != nil; key, val = c.next() {
		k, id, ok := parseContainerKey(key)
		if !ok {
			continue
		}
		var e containerEntry
		if err := json.Unmarshal(val, &e); err != nil {
			return nil, fmt.Errorf("decode attachments of %s %d: %w", k, id, err)
		}
		if !e.Due {
			continue
		}
		out = append(out, ContainerAttachments{Kind: k, ID: id, Attachments: e.Attachments, Gone: e.Gone, Project: e.Project})
		if max > 0 && len(out) == max {
			break
		}
	}
	return out, nil
}

// CountDueContainers is the number of containers whose attachment lists
// are due.
func (r *ReadTx) CountDueContainers() (int, error) {
	due, err := r.DueContainers(0, nil)
	return len(due), err
}

// markContainer marks container k/id's attachment list due, and records
// what m says of the container: gone from the store, or put with its
// project.
func (w *WriteTx) markContainer(k kind.Kind, id int64, m containerMark) error {
	e, err := w.containerEntry(k, id)
	if err != nil {
		return err
	}
	next := e
	next.Due, next.Gone = true, m.gone
	if !m.gone {
		next.Project = m.project
	}
	if next.Due == e.Due && next.Gone == e.Gone && next.Project == e.Project {
		return nil
	}
	return w.putEntry(k, id, next)
}

// SetContainerAttachments records the ids of container k/id's stored
// attachments, as its list was just read, and clears its due mark. The
// attachments themselves are the caller's to put and delete in the same
// transaction. A container no longer stored is forgotten instead (ids
// must then be empty).
func (w *WriteTx) SetContainerAttachments(k kind.Kind, id int64, ids []int64) error {
	if !k.Container() {
		return fmt.Errorf("set attachments: %w: %s holds no attachments", ErrUnknownKind, k)
	}
	if err := checkID(k, id); err != nil {
		return fmt.Errorf("set attachments: %w", err)
	}
	key := containerKey(k, id)
	e, err := w.containerEntry(k, id)
	if err != nil {
		return err
	}
	if len(ids) == 0 && e.Gone {
		// Known gone by its entry, not by a read of the container's
		// bucket, which at 100,000 work packages touched every page
		// of it. A container deleted before entries carried the mark
		// keeps an empty entry, which is not due and costs some bytes.
		if err := w.tx.bucket(bucketContainers).delete(key); err != nil {
			return fmt.Errorf("forget attachments of %s %d: %w", k, id, err)
		}
		return nil
	}
	ids = slices.Clone(ids)
	slices.Sort(ids)
	return w.putEntry(k, id, containerEntry{Project: e.Project, Attachments: slices.Compact(ids)})
}

// putEntry writes container k/id's entry. Entries are written mostly in
// key order (a crawl puts containers by ascending id), so pages are
// split full, as the entities' are.
func (w *WriteTx) putEntry(k kind.Kind, id int64, e containerEntry) error {
	w.tx.bucket(bucketContainers).denseFill()
	return w.putJSON(bucketContainers, containerKey(k, id), e)
}

// migrate3to4 marks every stored container due, so the first sync after
// the upgrade reads their attachment lists.
func migrate3to4(tx kvTx) error {
	b, err := tx.createBucket(bucketContainers)
	if err != nil {
		return fmt.Errorf("create bucket %s: %w", bucketContainers, err)
	}
	due, _ := json.Marshal(containerEntry{Due: true})
	for k := range containerCodes {
		src := tx.bucket(bucketOf(k))
		if src == nil {
			continue
		}
		c := src.cursor()
		for key, _ := c.first(); key != nil; key, _ = c.next() {
			if err := b.put(containerKey(k, keyID(key)), due); err != nil {
				return fmt.Errorf("mark %s %d: %w", k, keyID(key), err)
			}
		}
	}
	return nil
}

// MarkContainerDue marks container k/id's attachment list due again: a
// sync that could not finish reading it (a failed download) leaves it
// for the next.
func (w *WriteTx) MarkContainerDue(k kind.Kind, id int64) error {
	if !k.Container() {
		return fmt.Errorf("mark attachments: %w: %s holds no attachments", ErrUnknownKind, k)
	}
	if err := checkID(k, id); err != nil {
		return fmt.Errorf("mark attachments: %w", err)
	}
	// Only the mark changes: what the last put or delete recorded stays.
	e, err := w.containerEntry(k, id)
	if err != nil || e.Due {
		return err
	}
	e.Due = true
	return w.putEntry(k, id, e)
}

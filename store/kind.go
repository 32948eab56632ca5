package store

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/opsearch/opsearch/kind"
)

// buckets names each kind's entity bucket, and the kind's key in the
// counts and sync buckets. These names are the file format: stores written
// by every earlier version use them, so they must never change, whatever
// the kinds are called elsewhere. This is the only place that maps a kind
// to a name on disk.
var buckets = map[kind.Kind]string{
	kind.Project:     "projects",
	kind.WorkPackage: "work_packages",
	// A work package's whole activity list, keyed by the work package id.
	kind.Activity: "activities",
	kind.WikiPage: "wiki_pages",
	// Meetings carry their agenda items (and outcomes) inline.
	kind.Meeting: "meetings",
	// Attachment metadata with the text extracted from the file.
	kind.Attachment: "attachments",
}

// bucketOf returns k's bucket name, nil for a kind that is not stored.
func bucketOf(k kind.Kind) []byte {
	name, ok := buckets[k]
	if !ok {
		return nil
	}
	return []byte(name)
}

// ErrUnknownKind is wrapped by errors for a kind that is not one of
// kind.All().
var ErrUnknownKind = errors.New("unknown kind")

// ErrInvalidID is wrapped by errors for an entity id that is not positive.
// OpenProject ids start at 1; a zero id means an unfilled model.
var ErrInvalidID = errors.New("invalid id")

func checkKind(k kind.Kind) error {
	if bucketOf(k) == nil {
		return fmt.Errorf("%w %q", ErrUnknownKind, string(k))
	}
	return nil
}

func checkID(k kind.Kind, id int64) error {
	if id <= 0 {
		return fmt.Errorf("%w: %s %d", ErrInvalidID, k, id)
	}
	return nil
}

// idKey encodes id as 8 bytes big-endian so that key order is id order.
func idKey(id int64) []byte {
	var k [8]byte
	binary.BigEndian.PutUint64(k[:], uint64(id))
	return k[:]
}

// keyID decodes an idKey; a key of any other length yields 0.
func keyID(k []byte) int64 {
	if len(k) != 8 {
		return 0
	}
	return int64(binary.BigEndian.Uint64(k))
}

func encodeUint(n uint64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], n)
	return b[:]
}

func decodeUint(b []byte) (uint64, bool) {
	if len(b) != 8 {
		return 0, false
	}
	return binary.BigEndian.Uint64(b), true
}

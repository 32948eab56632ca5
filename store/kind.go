package store

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Kind names an entity kind. Its value is the name of the kind's bucket and
// the key of its SyncState, so the constants must never change.
type Kind string

// The stored kinds.
const (
	KindProject     Kind = "projects"
	KindWorkPackage Kind = "work_packages"
	// KindActivity is keyed by work package id; one value holds the whole
	// activity list of that work package.
	KindActivity Kind = "activities"
	KindWikiPage Kind = "wiki_pages"
	// KindMeeting values carry their agenda items (and outcomes) inline.
	KindMeeting Kind = "meetings"
)

// Kinds returns every Kind in a fixed order (projects first, since the other
// kinds refer to them). The slice is new on each call.
func Kinds() []Kind {
	return []Kind{KindProject, KindWorkPackage, KindActivity, KindWikiPage, KindMeeting}
}

// Valid reports whether k is one of the stored kinds.
func (k Kind) Valid() bool {
	switch k {
	case KindProject, KindWorkPackage, KindActivity, KindWikiPage, KindMeeting:
		return true
	}
	return false
}

// ErrUnknownKind is wrapped by errors for a Kind that is not one of Kinds().
var ErrUnknownKind = errors.New("unknown kind")

// ErrInvalidID is wrapped by errors for an entity id that is not positive.
// OpenProject ids start at 1; a zero id means an unfilled model.
var ErrInvalidID = errors.New("invalid id")

func checkKind(k Kind) error {
	if !k.Valid() {
		return fmt.Errorf("%w %q", ErrUnknownKind, string(k))
	}
	return nil
}

func checkID(k Kind, id int64) error {
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

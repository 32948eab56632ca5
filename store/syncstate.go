package store

import (
	"strconv"
	"time"

	"github.com/opsearch/opsearch/kind"
)

// SyncState is what the crawler records about one kind. It is stored as
// JSON in the sync bucket, keyed by the kind's bucket name, and written
// with SetSyncState in the same transaction as the entities it describes,
// so the cursor never runs ahead of the data.
type SyncState struct {
	// Kind is the kind this state describes. On disk it is spelled as the
	// kind's bucket name (syncStateOnDisk); reading takes it from the key.
	Kind kind.Kind `json:"kind"`
	// Owner is the user whose crawl this state describes in a store
	// several users' crawls write (a shared store); 0 in a user's own
	// store. Each owner's states are kept apart.
	Owner int64 `json:"owner,omitempty"`
	// Cursor is the highest updatedAt among the entities committed so far:
	// the next incremental run asks for changes since Cursor (minus a safety
	// margin). Zero means no incremental run is possible yet.
	Cursor time.Time `json:"cursor,omitzero"`
	// LastStarted is when the latest run of this kind started.
	LastStarted time.Time `json:"lastStarted,omitzero"`
	// LastFinished is when the latest run ended, successfully or not. A
	// LastStarted after LastFinished means a run is going on or was cut off.
	LastFinished time.Time `json:"lastFinished,omitzero"`
	// LastSuccess is when a run last ended without error.
	LastSuccess time.Time `json:"lastSuccess,omitzero"`
	// ItemsSeen is how many entities the latest run fetched.
	ItemsSeen int `json:"itemsSeen,omitempty"`
	// LastError is the error that ended the latest run; "" when it
	// succeeded. It is shown to users, so it must not contain secrets.
	LastError string `json:"lastError,omitempty"`
	// Complete is true once a full crawl of the kind has finished with
	// nothing left to retry. A later run that fails does not clear it:
	// completeness and freshness are separate facts, so the data stays
	// complete as of LastSuccess while LastError says what the latest run
	// could not do. Search results use it to tell whether "nothing found"
	// can be trusted.
	Complete bool `json:"complete,omitempty"`
	// Unsupported is true when the server cannot provide this kind (or not
	// usefully); Note says why.
	Unsupported bool `json:"unsupported,omitempty"`
	// Note is a human-readable remark on the kind, such as "server has no
	// meetings list" or "wiki pages carry no text".
	Note string `json:"note,omitempty"`
	// HighestID is the highest id seen for the kind, e.g. the highest wiki
	// page id found, past which probing continues.
	HighestID int64 `json:"highestId,omitempty"`
	// RecheckNext is the round-robin position for re-checking known ids
	// (wiki pages): the next run resumes re-checks at the first id >= it.
	RecheckNext int64 `json:"recheckNext,omitempty"`
	// LastFullListing is when the last id-only listing, used to detect
	// deletions, completed.
	LastFullListing time.Time `json:"lastFullListing,omitzero"`
	// Retry lists ids whose own fetch failed in a run that otherwise went
	// on (an activities or agenda request, a wiki page): the next run
	// fetches them again whether or not they look changed. It is written
	// with the batch that gave up on them, so a mark is never lost.
	Retry []int64 `json:"retry,omitempty"`
	// Missing lists stored ids that answered 404 once where no listing can
	// confirm a deletion (wiki pages). One 404 is weak evidence, as
	// servers answer it transiently, so a later run deletes an id only if
	// it answers 404 again; one that answers is dropped from the list.
	Missing []int64 `json:"missing,omitempty"`
	// Extra holds anything else a sync strategy needs to remember.
	Extra map[string]string `json:"extra,omitempty"`
}

// syncStateOnDisk is a SyncState as the sync bucket holds it: the same
// JSON, field for field and in the same order, except that "kind" is the
// bucket name ("work_packages"), as every store written so far has it. The
// outer Kind comes first and hides the embedded one.
type syncStateOnDisk struct {
	Kind string `json:"kind"`
	SyncState
}

// syncStateKey is where the sync bucket keeps the state of kind k of
// owner: the kind's bucket name, with "@owner" for a shared store's users.
func syncStateKey(owner int64, k kind.Kind) []byte {
	key := bucketOf(k)
	if owner == 0 {
		return key
	}
	return []byte(string(key) + "@" + strconv.FormatInt(owner, 10))
}

func (st SyncState) onDisk() syncStateOnDisk {
	return syncStateOnDisk{Kind: string(bucketOf(st.Kind)), SyncState: st}
}

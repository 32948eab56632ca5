package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/opsearch/opsearch/internal/private"
	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
)

// FileName is the name of the store file inside a user directory.
const FileName = "store.db"

// SchemaVersion is the schema version this code writes and understands.
// Opening a store with an older version migrates it; a newer one is refused.
// Version 3 adds values compressed with a dictionary (dict.go), which a
// version 2 reader cannot decode: it refuses the file instead. Version 4
// adds attachments and the containers' attachment lists (containers.go).
// Version 5 writes work packages and activity lists in MessagePack
// (msgpMark), which a version 4 reader would take for damage.
const SchemaVersion = 5

// DefaultLockTimeout is how long Open waits for another process to release
// the file when Options.LockTimeout is zero.
const DefaultLockTimeout = time.Second

// Bucket and key names. Entity buckets are named by bucketOf (kind.go).
var (
	bucketMeta   = []byte("meta")
	bucketCounts = []byte("counts")
	bucketExtra  = []byte("extra")
	bucketSync   = []byte("sync")
	// bucketReaders holds, in a shared store, the work packages whose
	// stored activities a user who reads internal comments fetched.
	bucketReaders = []byte("internal_readers")

	keySchemaVersion = []byte("schema_version")
	keyCreatedAt     = []byte("created_at")
	// keyRecode marks a store whose entity values are still (partly)
	// JSON: version 2 recodes them compactly after the migration.
	keyRecode   = []byte("recode_pending")
	keyIdentity = []byte("identity")
)

// Options configures Open.
type Options struct {
	// LockTimeout is how long Open waits for the file lock another process
	// (or another Store in this one) holds. Zero means DefaultLockTimeout;
	// bbolt's own default of waiting forever is never used, so a second
	// opsearch command fails clearly instead of hanging.
	LockTimeout time.Duration
}

// ErrLocked is matched (errors.Is) by the *LockedError Open returns when
// another process holds the store.
var ErrLocked = errors.New("store is locked")

// LockedError reports that the store file is held by another process (or
// another open Store) and the lock was not released within the timeout.
type LockedError struct {
	// Path is the store file.
	Path string
}

func (e *LockedError) Error() string {
	return fmt.Sprintf("store %s is in use by another opsearch process", e.Path)
}

// Is makes errors.Is(err, ErrLocked) true.
func (e *LockedError) Is(target error) bool { return target == ErrLocked }

// ErrSchemaTooNew is matched (errors.Is) by the *SchemaTooNewError Open
// returns for a store written by a newer opsearch.
var ErrSchemaTooNew = errors.New("store schema is newer than this opsearch")

// SchemaTooNewError reports a store whose schema version is newer than
// SchemaVersion. The file is left untouched.
type SchemaTooNewError struct {
	Path      string
	Found     uint64
	Supported uint64
}

func (e *SchemaTooNewError) Error() string {
	return fmt.Sprintf("store %s has schema version %d, this opsearch supports up to %d: upgrade opsearch",
		e.Path, e.Found, e.Supported)
}

// Is makes errors.Is(err, ErrSchemaTooNew) true.
func (e *SchemaTooNewError) Is(target error) bool { return target == ErrSchemaTooNew }

// ErrClosed is returned by every method called after Close.
var ErrClosed = errors.New("store is closed")

// Store is one user's store (or an instance's shared one): a bbolt file,
// or a store in PostgreSQL (OpenPostgres). It is safe for concurrent use;
// the engine serialises writers and lets readers run in parallel.
type Store struct {
	eng  engine
	path string
	// keyIterations is the PBKDF2 cost of a new key verifier; tests of
	// this package lower it (a verifier records its own cost).
	keyIterations int
	codec         *codec

	closed atomic.Bool
}

// Open opens (creating if needed) the store in dir. dir is created with
// mode 0700, and tightened to 0700 if it exists with looser permissions; the
// file is created 0600 (and tightened likewise). If another process holds
// the file, Open fails after opts.LockTimeout with a *LockedError.
func Open(dir string, opts Options) (*Store, error) {
	if dir == "" {
		return nil, errors.New("open store: empty directory")
	}
	if err := private.Dir(dir); err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	path := filepath.Join(dir, FileName)
	if err := private.File(path); err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}

	timeout := opts.LockTimeout
	if timeout <= 0 {
		timeout = DefaultLockTimeout
	}
	eng, err := openBoltEngine(path, timeout)
	if err != nil {
		return nil, err
	}
	return openEngine(context.Background(), eng)
}

// openEngine makes a Store of an open engine: it creates or checks and
// migrates the schema, loads the dictionaries and finishes a recoding
// left pending. On failure it closes eng.
func openEngine(ctx context.Context, eng engine) (*Store, error) {
	c, err := newCodec()
	if err != nil {
		_ = eng.close()
		return nil, err
	}
	path := eng.where()
	s := &Store{eng: eng, path: path, keyIterations: keyIterations, codec: c}
	if err := eng.update(ctx, func(tx kvTx) error { return initSchema(tx, path) }); err != nil {
		_ = eng.close()
		c.close()
		var tooNew *SchemaTooNewError
		if errors.As(err, &tooNew) {
			return nil, err
		}
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	if err := c.loadDicts(ctx, eng); err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	if err := s.recode(ctx); err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	return s, nil
}

// initSchema creates the buckets of a new store, or checks and migrates an
// existing one.
func initSchema(tx kvTx, path string) error {
	meta := tx.bucket(bucketMeta)
	if meta == nil {
		names, err := tx.bucketNames()
		if err != nil {
			return fmt.Errorf("list buckets: %w", err)
		}
		if len(names) > 0 {
			return fmt.Errorf("file has bucket %q but no %q bucket: not an opsearch store", names[0], bucketMeta)
		}
		if meta, err = tx.createBucket(bucketMeta); err != nil {
			return fmt.Errorf("create meta bucket: %w", err)
		}
		if err := meta.put(keySchemaVersion, encodeUint(SchemaVersion)); err != nil {
			return fmt.Errorf("write schema version: %w", err)
		}
		if err := meta.put(keyCreatedAt, []byte(time.Now().UTC().Format(time.RFC3339))); err != nil {
			return fmt.Errorf("write creation time: %w", err)
		}
		return ensureBuckets(tx)
	}

	version, ok := decodeUint(meta.get(keySchemaVersion))
	if !ok || version == 0 {
		return errors.New("read schema version: missing or malformed")
	}
	if version > SchemaVersion {
		return &SchemaTooNewError{Path: path, Found: version, Supported: SchemaVersion}
	}
	if err := migrate(tx, version); err != nil {
		return err
	}
	return ensureBuckets(tx)
}

// ensureBuckets creates any missing bucket and any missing key counter, so
// a migration that adds a kind needs no code of its own for either.
func ensureBuckets(tx kvTx) error {
	for _, name := range [][]byte{bucketCounts, bucketExtra, bucketSync, bucketReaders, bucketContainers} {
		if _, err := tx.createBucket(name); err != nil {
			return fmt.Errorf("create bucket %s: %w", name, err)
		}
	}
	counts := tx.bucket(bucketCounts)
	for _, k := range kind.All() {
		name := bucketOf(k)
		b, err := tx.createBucket(name)
		if err != nil {
			return fmt.Errorf("create bucket %s: %w", name, err)
		}
		if counts.get(name) == nil {
			// Counting walks every key: fine once, too slow for each Count.
			n, err := b.keyCount()
			if err != nil {
				return fmt.Errorf("count %s: %w", k, err)
			}
			if err := counts.put(name, encodeUint(uint64(n))); err != nil {
				return fmt.Errorf("write %s count: %w", k, err)
			}
		}
	}
	return nil
}

// migrate brings a store from schema version from up to SchemaVersion, one
// step at a time, recording each step's version in the same transaction.
func migrate(tx kvTx, from uint64) error {
	meta := tx.bucket(bucketMeta)
	for v := from; v < SchemaVersion; v++ {
		step := migration(v)
		if step == nil {
			return fmt.Errorf("migrate schema: no migration from version %d", v)
		}
		if err := step(tx); err != nil {
			return fmt.Errorf("migrate schema from version %d: %w", v, err)
		}
		if err := meta.put(keySchemaVersion, encodeUint(v+1)); err != nil {
			return fmt.Errorf("write schema version: %w", err)
		}
	}
	return nil
}

// migration returns the step that turns a version-from store into a
// version-from+1 one. Version 1 is the first; add a case per new version,
// e.g. `case 1: return migrate1to2`.
func migration(from uint64) func(kvTx) error {
	switch from {
	case 1:
		return migrate1to2
	case 2:
		// Nothing to rewrite: version 2 values stay readable, and
		// dictionaries come with the next writes.
		return func(kvTx) error { return nil }
	case 3:
		return migrate3to4
	case 4:
		// Nothing to rewrite: CBOR values stay readable, and values are
		// written in MessagePack from the next write on.
		return func(kvTx) error { return nil }
	default:
		return nil
	}
}

// ReleaseMapped drops the store file's pages from this process's
// resident memory. A first crawl reads much of the store through its
// memory map, and those pages stay mapped until bbolt remaps the file:
// at 100,000 work packages, 41 MB of them counted in a sync's peak
// memory, during the index merge that ends it, when the store's last
// growth came early. The pages stay in the page cache; reading them
// again maps them again. A store in PostgreSQL has nothing to release.
func (s *Store) ReleaseMapped() error {
	if b, ok := s.eng.(*boltEngine); ok {
		return dropMapped(b.db, b.path)
	}
	return nil
}

// Path returns the store file's path, or for a store in PostgreSQL the
// database and store name (without credentials).
func (s *Store) Path() string { return s.path }

// Size returns the size of the store on disk, in bytes. A file does not
// shrink when data is deleted (see CompactTo).
func (s *Store) Size() (int64, error) {
	if s.closed.Load() {
		return 0, ErrClosed
	}
	return s.eng.size(context.Background())
}

// Close closes the file and releases its lock. It waits for running
// transactions. Calling it again returns nil.
func (s *Store) Close() error {
	if !s.closed.CompareAndSwap(false, true) {
		return nil
	}
	err := s.eng.close()
	// The engine's close waited for every transaction: nothing decodes now.
	s.codec.close()
	if err != nil {
		return fmt.Errorf("close store: %w", err)
	}
	return nil
}

// View runs fn in a read-only transaction. Everything fn gets from the
// ReadTx is already decoded and safe to keep, but fn must be short: a long
// read transaction blocks writers that need to grow the file. ctx is
// checked before the transaction starts.
func (s *Store) View(ctx context.Context, fn func(*ReadTx) error) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("view store: %w", err)
	}
	if s.closed.Load() {
		return ErrClosed
	}
	return s.eng.view(ctx, func(tx kvTx) error { return fn(&ReadTx{tx: tx, codec: s.codec}) })
}

// Update runs fn in one read-write transaction, committed if fn returns nil
// and rolled back otherwise; fn's error is returned as is. Write one Update
// per API page (100-1000 entities): each commit costs two fsyncs. ctx is
// checked before the transaction starts and again once the writer lock is
// held, so a cancelled caller that waited for another writer writes nothing.
func (s *Store) Update(ctx context.Context, fn func(*WriteTx) error) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("update store: %w", err)
	}
	if s.closed.Load() {
		return ErrClosed
	}
	return s.eng.update(ctx, func(tx kvTx) error {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("update store: %w", err)
		}
		return fn(&WriteTx{ReadTx{tx: tx, codec: s.codec}})
	})
}

// view is View for the single-shot helpers, which have no context.
func (s *Store) view(fn func(*ReadTx) error) error {
	return s.View(context.Background(), fn)
}

// Identity is who the store belongs to. There is deliberately no field for
// the API key: keys live in memory only.
type Identity struct {
	// BaseURL is the OpenProject base URL, without credentials.
	BaseURL string `json:"baseUrl"`
	// Instance is the directory name derived from BaseURL (InstanceName).
	Instance string `json:"instance"`
	// UserID is the id /api/v3/users/me returned.
	UserID int64 `json:"userId"`
	// Login and Name describe the user for status output.
	Login string `json:"login,omitempty"`
	Name  string `json:"name,omitempty"`
	// Shared marks the store every user of the instance shares (UserID
	// 0): its crawls keep each user's sync state apart (SyncState.Owner),
	// and its index holds public twins of work packages with internal
	// comments (indexer.WorkPackageDocs).
	Shared bool `json:"shared,omitempty"`
}

// SetIdentity records who the store belongs to, replacing any previous
// identity. A BaseURL with credentials, a query or a fragment is refused.
// An empty Instance is filled in with InstanceName(BaseURL).
func (s *Store) SetIdentity(id Identity) error {
	inst, err := InstanceName(id.BaseURL)
	if err != nil {
		return fmt.Errorf("set identity: %w", err)
	}
	id.Instance = cmp.Or(id.Instance, inst)
	switch {
	case id.Shared && id.UserID != 0:
		return fmt.Errorf("set identity: a shared store belongs to no user, not %d", id.UserID)
	case !id.Shared && id.UserID <= 0:
		return fmt.Errorf("set identity: invalid user id %d", id.UserID)
	}
	return s.Update(context.Background(), func(tx *WriteTx) error {
		return tx.putJSON(bucketMeta, keyIdentity, id)
	})
}

// Generation is the store's generation as a read transaction started now
// sees it (ReadTx.Generation): it changes with every committed write.
func (s *Store) Generation() (gen uint64, err error) {
	err = s.view(func(tx *ReadTx) error { gen = tx.Generation(); return nil })
	return gen, err
}

// Identity returns the recorded identity; found is false if none was set.
func (s *Store) Identity() (id Identity, found bool, err error) {
	err = s.view(func(tx *ReadTx) error {
		id, found, err = tx.Identity()
		return err
	})
	return id, found, err
}

// Project returns project id in its own short transaction.
func (s *Store) Project(id int64) (openproject.Project, bool, error) {
	return single(s, func(tx *ReadTx) (openproject.Project, bool, error) { return tx.Project(id) })
}

// WorkPackage returns work package id in its own short transaction.
func (s *Store) WorkPackage(id int64) (openproject.WorkPackage, bool, error) {
	return single(s, func(tx *ReadTx) (openproject.WorkPackage, bool, error) { return tx.WorkPackage(id) })
}

// Activities returns the activities of work package wpID in its own short
// transaction.
func (s *Store) Activities(wpID int64) ([]openproject.Activity, bool, error) {
	return single(s, func(tx *ReadTx) ([]openproject.Activity, bool, error) { return tx.Activities(wpID) })
}

// WikiPage returns wiki page id in its own short transaction.
func (s *Store) WikiPage(id int64) (openproject.WikiPage, bool, error) {
	return single(s, func(tx *ReadTx) (openproject.WikiPage, bool, error) { return tx.WikiPage(id) })
}

// Attachment returns attachment id, with its text, in its own short
// transaction.
func (s *Store) Attachment(id int64) (openproject.Attachment, bool, error) {
	return single(s, func(tx *ReadTx) (openproject.Attachment, bool, error) { return tx.Attachment(id) })
}

// Meeting returns meeting id, with its agenda items, in its own short
// transaction.
func (s *Store) Meeting(id int64) (openproject.Meeting, bool, error) {
	return single(s, func(tx *ReadTx) (openproject.Meeting, bool, error) { return tx.Meeting(id) })
}

func single[T any](s *Store, get func(*ReadTx) (T, bool, error)) (v T, found bool, err error) {
	err = s.view(func(tx *ReadTx) error {
		v, found, err = get(tx)
		return err
	})
	return v, found, err
}

// Meta returns a copy of the value SetMeta stored under key.
func (s *Store) Meta(key string) ([]byte, bool, error) {
	return single(s, func(tx *ReadTx) ([]byte, bool, error) { return tx.Meta(key) })
}

// Count returns the number of stored entities of k (for kind.Activity:
// the number of work packages with a stored activity list).
func (s *Store) Count(k kind.Kind) (n int, err error) {
	if err := checkKind(k); err != nil {
		return 0, fmt.Errorf("count: %w", err)
	}
	err = s.view(func(tx *ReadTx) error { n = tx.Count(k); return nil })
	return n, err
}

// IDs returns the stored ids of k in ascending order. It reads keys
// only, but for very large kinds prefer a Scan.
func (s *Store) IDs(k kind.Kind) (ids []int64, err error) {
	if err := checkKind(k); err != nil {
		return nil, fmt.Errorf("list ids: %w", err)
	}
	err = s.view(func(tx *ReadTx) error { ids = tx.IDs(k); return nil })
	return ids, err
}

// MaxID returns the highest stored id of k, 0 if there is none.
func (s *Store) MaxID(k kind.Kind) (id int64, err error) {
	if err := checkKind(k); err != nil {
		return 0, fmt.Errorf("max id: %w", err)
	}
	err = s.view(func(tx *ReadTx) error { id = tx.MaxID(k); return nil })
	return id, err
}

// SyncState returns the sync state of k; a kind never synced yields a
// zero state with Kind set.
func (s *Store) SyncState(k kind.Kind) (st SyncState, err error) { return s.SyncStateOf(0, k) }

// SyncStateOf returns owner's sync state of k (see SyncState.Owner).
func (s *Store) SyncStateOf(owner int64, k kind.Kind) (st SyncState, err error) {
	err = s.view(func(tx *ReadTx) error {
		st, err = tx.SyncStateOf(owner, k)
		return err
	})
	return st, err
}

// AllSyncStates returns the sync state of every kind in kind.All(), read
// in one transaction; kinds never synced have a zero state with Kind set.
func (s *Store) AllSyncStates() (map[kind.Kind]SyncState, error) { return s.AllSyncStatesOf(0) }

// AllSyncStatesOf is AllSyncStates for owner's crawl (see SyncState.Owner).
func (s *Store) AllSyncStatesOf(owner int64) (map[kind.Kind]SyncState, error) {
	out := make(map[kind.Kind]SyncState, len(kind.All()))
	err := s.view(func(tx *ReadTx) error {
		for _, k := range kind.All() {
			st, err := tx.SyncStateOf(owner, k)
			if err != nil {
				return err
			}
			out[k] = st
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// boltEngine is the embedded engine: one bbolt file, locked by one
// process at a time.
type boltEngine struct {
	db   *bolt.DB
	path string
}

var _ engine = (*boltEngine)(nil)

// openBoltEngine opens (creating if needed) the bbolt file at path after
// checking its structure, so a damaged file is a *DamagedError instead of
// a crash later.
func openBoltEngine(path string, timeout time.Duration) (*boltEngine, error) {
	if fi, err := os.Stat(path); err == nil && fi.Size() > 0 {
		if err := verifyLocked(path, timeout); err != nil {
			return nil, err
		}
	}
	db, err := openBolt(path, &bolt.Options{
		Timeout: timeout,
		// Skipping the freelist write makes each commit cheaper; on open the
		// freelist is rebuilt by a scan (tens of ms for hundreds of MiB).
		NoFreelistSync: true,
		FreelistType:   bolt.FreelistMapType,
	})
	if err != nil {
		return nil, err
	}
	return &boltEngine{db: db, path: path}, nil
}

// openBolt opens the bbolt file, turning a lock timeout into a
// *LockedError and a panic over a damaged file into a *DamagedError.
func openBolt(path string, o *bolt.Options) (db *bolt.DB, err error) {
	defer func() {
		if v := recover(); v != nil {
			db, err = nil, &DamagedError{Path: path, Reason: fmt.Sprint(v)}
		}
	}()
	db, err = bolt.Open(path, 0o600, o)
	switch {
	case errors.Is(err, berrors.ErrTimeout):
		return nil, &LockedError{Path: path}
	case errors.Is(err, berrors.ErrInvalid), errors.Is(err, berrors.ErrChecksum), errors.Is(err, berrors.ErrVersionMismatch):
		return nil, &DamagedError{Path: path, Reason: "no valid meta page: " + err.Error()}
	case err != nil:
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	return db, nil
}

// verifyLocked checks the file's structure (verifyFile) while holding a
// shared lock on it, taken by a read-only bbolt open, which reads only
// the meta pages: a writer in another process cannot change the file
// meanwhile, and one that holds it makes this fail as locked.
func verifyLocked(path string, timeout time.Duration) error {
	ro, err := openBolt(path, &bolt.Options{ReadOnly: true, Timeout: timeout})
	if err != nil {
		return err
	}
	defer ro.Close()
	return verifyFile(path)
}

func (e *boltEngine) view(_ context.Context, fn func(kvTx) error) (err error) {
	defer e.guard(&err)()
	err = e.db.View(func(tx *bolt.Tx) error { return fn(boltTx{tx}) })
	if errors.Is(err, berrors.ErrDatabaseNotOpen) {
		// Close won the race after the Store's check.
		return ErrClosed
	}
	return err
}

func (e *boltEngine) update(_ context.Context, fn func(kvTx) error) (err error) {
	defer e.guard(&err)()
	var fnErr error
	err = e.db.Update(func(tx *bolt.Tx) error {
		fnErr = fn(boltTx{tx})
		return fnErr
	})
	switch {
	case fnErr != nil:
		return fnErr
	case errors.Is(err, berrors.ErrDatabaseNotOpen):
		return ErrClosed
	case err != nil:
		return fmt.Errorf("commit store: %w", err)
	}
	return nil
}

func (e *boltEngine) size(context.Context) (int64, error) {
	fi, err := os.Stat(e.path)
	if err != nil {
		return 0, fmt.Errorf("stat store: %w", err)
	}
	return fi.Size(), nil
}

func (e *boltEngine) where() string { return e.path }

// close waits for running transactions, then closes the file and
// releases its lock.
func (e *boltEngine) close() error { return e.db.Close() }

// guard turns what a damaged file does to a transaction into a
// *DamagedError in *err instead of a crash: a fault on the memory map (a
// file truncated underneath) and a panic raised inside bbolt (its
// assertions about page structure). Any other panic is a bug of ours and
// goes on: mistaking it for damage would set the user's data aside.
// Use as: defer e.guard(&err)().
func (e *boltEngine) guard(err *error) func() {
	old := debug.SetPanicOnFault(true)
	return func() {
		v := recover()
		debug.SetPanicOnFault(old)
		if v == nil {
			return
		}
		if _, fault := v.(interface{ Addr() uintptr }); fault || panickedInBolt() {
			*err = &DamagedError{Path: e.path, Reason: fmt.Sprint(v)}
			return
		}
		panic(v)
	}
}

// panickedInBolt reports whether the panic being recovered was raised in
// bbolt's code: the first frame past the runtime's panic machinery.
func panickedInBolt() bool {
	pcs := make([]uintptr, 32)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(3, pcs)])
	afterPanic := false
	for {
		f, more := frames.Next()
		switch {
		case f.Function == "runtime.gopanic":
			afterPanic = true
		case afterPanic && !strings.HasPrefix(f.Function, "runtime."):
			return strings.HasPrefix(f.Function, "go.etcd.io/bbolt")
		}
		if !more {
			return false
		}
	}
}

// boltTx is a bbolt transaction as a kvTx.
type boltTx struct{ tx *bolt.Tx }

// generation is bbolt's transaction id: a read transaction has the id of
// the last commit, and every commit raises it.
func (t boltTx) generation() uint64 { return uint64(t.tx.ID()) }

func (t boltTx) bucket(name []byte) kvBucket {
	b := t.tx.Bucket(name)
	if b == nil {
		return nil // not a nil *bolt.Bucket inside a non-nil interface
	}
	return boltBucket{b}
}

func (t boltTx) createBucket(name []byte) (kvBucket, error) {
	b, err := t.tx.CreateBucketIfNotExists(name)
	if err != nil {
		return nil, err
	}
	return boltBucket{b}, nil
}

func (t boltTx) bucketNames() ([][]byte, error) {
	var names [][]byte
	err := t.tx.ForEach(func(name []byte, _ *bolt.Bucket) error {
		names = append(names, append([]byte(nil), name...))
		return nil
	})
	return names, err
}

func (t boltTx) onCommit(f func()) { t.tx.OnCommit(f) }

type boltBucket struct{ b *bolt.Bucket }

func (b boltBucket) get(key []byte) []byte          { return b.b.Get(key) }
func (b boltBucket) put(key, value []byte) error    { return b.b.Put(key, value) }
func (b boltBucket) delete(key []byte) error        { return b.b.Delete(key) }
func (b boltBucket) cursor() kvCursor               { return boltCursor{b.b.Cursor()} }
func (b boltBucket) keyCount() (int, error)         { return b.b.Stats().KeyN, nil }
func (b boltBucket) denseFill()                     { b.b.FillPercent = entityFill }
func (c boltCursor) first() ([]byte, []byte)        { return c.c.First() }
func (c boltCursor) last() ([]byte, []byte)         { return c.c.Last() }
func (c boltCursor) next() ([]byte, []byte)         { return c.c.Next() }
func (c boltCursor) seek(k []byte) ([]byte, []byte) { return c.c.Seek(k) }

type boltCursor struct{ c *bolt.Cursor }

// entityFill is how full a split leaves an entity page. bbolt's default,
// half, suits random inserts; entities arrive in ascending id order (a
// crawl lists by id) and are replaced in place afterwards, so half-full
// pages would stay half empty: at 0.5 a 10,000 work package store used
// 44 % of its leaf bytes.
const entityFill = 0.9

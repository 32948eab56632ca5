package store

import "context"

// engine is the storage under a Store: named buckets of byte keys in byte
// order, read in snapshot transactions and written by one writer at a
// time. Everything above it (the schema, the codec, counts, sync state,
// the typed entity methods, migrations) is the Store's and the same on
// every engine, so a store behaves alike on a bbolt file and on
// PostgreSQL, and one conformance suite (store_test.go) covers both.
type engine interface {
	// view runs fn in a read-only transaction over one consistent
	// snapshot; update runs fn in the one read-write transaction at a
	// time, committed if fn returns nil. Both return ErrClosed after
	// close and fn's error as is.
	view(ctx context.Context, fn func(kvTx) error) error
	update(ctx context.Context, fn func(kvTx) error) error
	// size is how much room the store takes where it lives, in bytes.
	size(ctx context.Context) (int64, error)
	// where names the store in errors and status: a file's path, or a
	// database and store name without credentials.
	where() string
	close() error
}

// kvTx is one transaction of an engine, valid only inside the callback
// that received it and only on that goroutine.
type kvTx interface {
	// generation identifies the committed state a read transaction sees
	// and changes with every committed write (ReadTx.Generation).
	generation() uint64
	// bucket returns the named bucket, or nil if it does not exist.
	bucket(name []byte) kvBucket
	// createBucket returns the named bucket, creating it if needed (write
	// transactions only).
	createBucket(name []byte) (kvBucket, error)
	// bucketNames lists the buckets there are.
	bucketNames() ([][]byte, error)
	// onCommit runs f once the transaction has committed.
	onCommit(f func())
}

// kvBucket is a bucket of a transaction. A value get returns is valid
// only inside the transaction and must not be changed; callers copy what
// they keep. A put's value is not retained past the call's transaction
// by the caller, who must not change it before the commit.
type kvBucket interface {
	get(key []byte) []byte
	put(key, value []byte) error
	delete(key []byte) error
	// cursor walks the bucket in key order; a put or delete in the same
	// bucket invalidates it (as bbolt's cursors).
	cursor() kvCursor
	// keyCount counts the keys by walking them (slow: Store keeps its own
	// counters and uses this only to create one).
	keyCount() (int, error)
	// denseFill says the bucket's keys mostly arrive in ascending order
	// and are replaced in place, so an engine that splits pages may fill
	// them fuller.
	denseFill()
}

// kvCursor positions on a key and moves in key order. Each method returns
// the key and value it lands on, or a nil key past either end.
type kvCursor interface {
	first() ([]byte, []byte)
	last() ([]byte, []byte)
	next() ([]byte, []byte)
	// seek lands on the first key at or after key.
	seek(key []byte) ([]byte, []byte)
}

package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// A store in PostgreSQL keeps the same buckets and keys as a bbolt file,
// as rows of one table, so the schema, the codec and every typed method
// above the engine are shared (engine.go). What PostgreSQL adds is that
// several opsearch processes can use one store at once:
//
//   - Writers of a store are serialised by a row lock on its row in
//     opsearch_stores, taken first in every write transaction; the row's
//     generation rises by one per write transaction, and every row the
//     transaction writes records that generation as its seq. Writes of a
//     store therefore commit in seq order, which makes seq a change feed:
//     whoever has applied everything up to seq N asks only for rows with
//     a greater seq (Changes).
//   - A deletion leaves a row with a NULL value (a tombstone) so the feed
//     reports it; reads never see tombstones.
//   - Reads run in REPEATABLE READ transactions: one snapshot for the
//     whole View, as in bbolt.
//   - The SQL schema is versioned in opsearch_schema and migrated on
//     start under a transaction-scoped advisory lock, so replicas that
//     start together migrate once.

// pgSchemaLock is the advisory lock key that serialises schema
// migrations between processes ("opsearch" in ASCII).
const pgSchemaLock = 0x6f70736561726368

// pgMigrations are the SQL schema's versions, in order; pgMigrations[i]
// brings version i to version i+1. Append, never edit.
var pgMigrations = []string{
	`CREATE TABLE opsearch_stores (
		name       text PRIMARY KEY,
		generation bigint NOT NULL DEFAULT 0,
		created_at timestamptz NOT NULL DEFAULT now()
	);
	CREATE TABLE opsearch_buckets (
		store  text NOT NULL REFERENCES opsearch_stores (name) ON DELETE CASCADE,
		bucket bytea NOT NULL,
		PRIMARY KEY (store, bucket)
	);
	CREATE TABLE opsearch_kv (
		store  text NOT NULL,
		bucket bytea NOT NULL,
		key    bytea NOT NULL,
		value  bytea,
		seq    bigint NOT NULL,
		PRIMARY KEY (store, bucket, key),
		FOREIGN KEY (store, bucket) REFERENCES opsearch_buckets (store, bucket) ON DELETE CASCADE
	);
	CREATE INDEX opsearch_kv_seq ON opsearch_kv (store, seq);`,
	`CREATE TABLE opsearch_leases (
		store      text NOT NULL REFERENCES opsearch_stores (name) ON DELETE CASCADE,
		name       text NOT NULL,
		holder     text NOT NULL,
		expires_at timestamptz NOT NULL,
		PRIMARY KEY (store, name)
	);`,
	`CREATE TABLE opsearch_commits (
		store  text NOT NULL REFERENCES opsearch_stores (name) ON DELETE CASCADE,
		seq    bigint NOT NULL,
		author bigint NOT NULL,
		PRIMARY KEY (store, seq)
	);`,
	`CREATE TABLE opsearch_replicas (
		store   text NOT NULL REFERENCES opsearch_stores (name) ON DELETE CASCADE,
		replica text NOT NULL,
		applied bigint NOT NULL,
		seen_at timestamptz NOT NULL,
		PRIMARY KEY (store, replica)
	);
	ALTER TABLE opsearch_stores ADD COLUMN purged_through bigint NOT NULL DEFAULT 0;`,
}

// PostgresOptions configures OpenPostgres.
type PostgresOptions struct {
	// MaxConns bounds the connection pool; zero leaves pgx's default
	// (the larger of 4 and the number of CPUs).
	MaxConns int32
}

// pgEngine is a store in PostgreSQL.
type pgEngine struct {
	pool  *pgxpool.Pool
	name  string
	label string
}

var _ engine = (*pgEngine)(nil)

// OpenPostgres opens (creating if needed) the store called name in the
// PostgreSQL database at dsn (a postgres:// URL or a key=value
// connection string), migrating the database's opsearch tables first.
// Several processes may open the same store at once; their writes are
// serialised per store. The connection string's password is never
// logged or put in errors.
func OpenPostgres(ctx context.Context, dsn, name string, opts PostgresOptions) (*Store, error) {
	if strings.TrimSpace(name) == "" {
		return nil, errors.New("open store: empty store name")
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// pgx's parse errors quote the string, password included.
		return nil, errors.New("open store: the PostgreSQL connection string is malformed (expected postgres://user@host:port/database or key=value pairs)")
	}
	if opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	}
	label := fmt.Sprintf("postgres://%s/%s#%s", cfg.ConnConfig.Host, cfg.ConnConfig.Database, name)
	if cfg.ConnConfig.Port != 0 {
		label = fmt.Sprintf("postgres://%s:%d/%s#%s", cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Database, name)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", label, redactPG(err, cfg.ConnConfig.Password))
	}
	e := &pgEngine{pool: pool, name: name, label: label}
	if err := e.migrate(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open store %s: %w", label, redactPG(err, cfg.ConnConfig.Password))
	}
	if _, err := pool.Exec(ctx, `INSERT INTO opsearch_stores (name) VALUES ($1) ON CONFLICT DO NOTHING`, name); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open store %s: %w", label, redactPG(err, cfg.ConnConfig.Password))
	}
	return openEngine(ctx, e)
}

// redactPG removes password from an error's text; pgx's connection errors
// can quote the connection string.
func redactPG(err error, password string) error {
	if err == nil || password == "" || !strings.Contains(err.Error(), password) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), password, "xxxxx"))
}

// migrate brings the database's opsearch tables to the newest version,
// one transaction for all steps, under an advisory lock.
func (e *pgEngine) migrate(ctx context.Context) error {
	return pgx.BeginFunc(ctx, e.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(pgSchemaLock)); err != nil {
			return fmt.Errorf("lock schema: %w", err)
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS opsearch_schema (
			version    int PRIMARY KEY,
			applied_at timestamptz NOT NULL DEFAULT now()
		)`); err != nil {
			return fmt.Errorf("create schema table: %w", err)
		}
		var version int
		if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM opsearch_schema`).Scan(&version); err != nil {
			return fmt.Errorf("read schema version: %w", err)
		}
		if version > len(pgMigrations) {
			return &SchemaTooNewError{Path: "the PostgreSQL database", Found: uint64(version), Supported: uint64(len(pgMigrations))}
		}
		for v := version; v < len(pgMigrations); v++ {
			if _, err := tx.Exec(ctx, pgMigrations[v]); err != nil {
				return fmt.Errorf("migrate schema to version %d: %w", v+1, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO opsearch_schema (version) VALUES ($1)`, v+1); err != nil {
				return fmt.Errorf("record schema version %d: %w", v+1, err)
			}
		}
		return nil
	})
}

func (e *pgEngine) view(ctx context.Context, fn func(kvTx) error) error {
	return e.run(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, false, fn)
}

func (e *pgEngine) update(ctx context.Context, fn func(kvTx) error) error {
	return e.run(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted}, true, fn)
}

// run runs fn in one transaction. A write transaction first takes the
// store's row lock and its next generation.
func (e *pgEngine) run(ctx context.Context, o pgx.TxOptions, write bool, fn func(kvTx) error) error {
	ptx, err := e.pool.BeginTx(ctx, o)
	if err != nil {
		return e.fail(err)
	}
	defer func() { _ = ptx.Rollback(context.WithoutCancel(ctx)) }()
	t := &pgTx{ctx: ctx, tx: ptx, store: e.name, write: write}
	q := `SELECT generation FROM opsearch_stores WHERE name = $1`
	if write {
		q = `UPDATE opsearch_stores SET generation = generation + 1 WHERE name = $1 RETURNING generation`
	}
	var gen int64
	if err := ptx.QueryRow(ctx, q, e.name).Scan(&gen); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("open transaction: store %q was dropped from the database", e.name)
		}
		return e.fail(err)
	}
	t.gen = uint64(gen)
	rows, err := ptx.Query(ctx, `SELECT bucket FROM opsearch_buckets WHERE store = $1`, e.name)
	if err != nil {
		return e.fail(err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		return e.fail(err)
	}
	t.buckets = map[string]bool{}
	for _, n := range names {
		t.buckets[string(n)] = true
	}
	if err := fn(t); err != nil {
		return err
	}
	if write {
		t.keep(t.flush())
	}
	if t.err != nil {
		return e.fail(t.err)
	}
	if !write {
		return nil
	}
	if t.author != 0 {
		if _, err := ptx.Exec(ctx, `INSERT INTO opsearch_commits (store, seq, author) VALUES ($1, $2, $3)`, e.name, int64(t.gen), t.author); err != nil {
			return e.fail(err)
		}
	}
	// Delivered on commit, to every process listening (waitChange).
	if _, err := ptx.Exec(ctx, `SELECT pg_notify($1, $2)`, pgChannel, e.name); err != nil {
		return e.fail(err)
	}
	if err := ptx.Commit(ctx); err != nil {
		return fmt.Errorf("commit store: %w", e.fail(err))
	}
	for _, f := range t.commitHooks {
		f()
	}
	return nil
}

// fail turns a closed pool into ErrClosed and wraps the rest.
func (e *pgEngine) fail(err error) error {
	if strings.Contains(err.Error(), "closed pool") {
		return ErrClosed
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return fmt.Errorf("postgres: %s (%s): %w", pe.Message, pe.Code, err)
	}
	return fmt.Errorf("postgres: %w", err)
}

func (e *pgEngine) size(ctx context.Context) (int64, error) {
	var n int64
	err := e.pool.QueryRow(ctx, `SELECT coalesce(sum(octet_length(key) + coalesce(octet_length(value), 0)), 0) FROM opsearch_kv WHERE store = $1`, e.name).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("measure store: %w", e.fail(err))
	}
	return n, nil
}

func (e *pgEngine) where() string { return e.label }

// close waits for borrowed connections to come back, then closes them.
func (e *pgEngine) close() error {
	e.pool.Close()
	return nil
}

// pgTx is one transaction of a pgEngine. A failed statement is kept in
// err: the kv methods have no error result for reads, and the engine
// refuses to commit a transaction that saw one.
type pgTx struct {
	ctx         context.Context
	tx          pgx.Tx
	store       string
	write       bool
	gen         uint64
	buckets     map[string]bool
	commitHooks []func()
	err         error
	// writes are the puts and deletes not sent yet, in order, and
	// pending finds a key's among them: a transaction's writes go to the
	// server in one batch (flush) before anything reads the bucket in a
	// way the overlay cannot answer (a cursor, a count) and before the
	// commit. A page of a crawl so costs a round trip per read, not
	// four per entity.
	writes  []pgWrite
	pending map[string]int
	// author is whose crawl or write the transaction commits (setAuthor),
	// 0 for none.
	author int64
}

func (t *pgTx) setAuthor(user int64) { t.author = user }

type pgWrite struct {
	bucket, key, value []byte
	del                bool
}

func pendingKey(bucket, key []byte) string { return string(bucket) + "\x00" + string(key) }

// queue records a put (or, with del, a delete) for the next flush.
func (t *pgTx) queue(bucket, key, value []byte, del bool) {
	if t.pending == nil {
		t.pending = map[string]int{}
	}
	w := pgWrite{bucket: bucket, key: bytes.Clone(key), value: value, del: del}
	pk := pendingKey(bucket, key)
	if i, ok := t.pending[pk]; ok {
		t.writes[i] = w
		return
	}
	t.pending[pk] = len(t.writes)
	t.writes = append(t.writes, w)
}

// overlay returns what the transaction's unsent writes say of key: the
// value, or deleted, or nothing (known false).
func (t *pgTx) overlay(bucket, key []byte) (value []byte, deleted, known bool) {
	i, ok := t.pending[pendingKey(bucket, key)]
	if !ok {
		return nil, false, false
	}
	w := t.writes[i]
	return w.value, w.del, true
}

// flush sends the unsent writes in one batch.
func (t *pgTx) flush() error {
	if len(t.writes) == 0 || t.err != nil {
		return nil
	}
	var b pgx.Batch
	for _, w := range t.writes {
		if w.del {
			b.Queue(`UPDATE opsearch_kv SET value = NULL, seq = $4 WHERE store = $1 AND bucket = $2 AND key = $3 AND value IS NOT NULL`,
				t.store, w.bucket, w.key, int64(t.gen))
			continue
		}
		b.Queue(`INSERT INTO opsearch_kv (store, bucket, key, value, seq) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (store, bucket, key) DO UPDATE SET value = excluded.value, seq = excluded.seq`,
			t.store, w.bucket, w.key, w.value, int64(t.gen))
	}
	t.writes, t.pending = t.writes[:0], nil
	if err := t.tx.SendBatch(t.ctx, &b).Close(); err != nil {
		t.keep(err)
		return err
	}
	return nil
}

func (t *pgTx) generation() uint64 { return t.gen }

func (t *pgTx) keep(err error) {
	if err != nil && t.err == nil {
		t.err = err
	}
}

func (t *pgTx) bucket(name []byte) kvBucket {
	if !t.buckets[string(name)] {
		return nil
	}
	return &pgBucket{t: t, name: bytes.Clone(name)}
}

func (t *pgTx) createBucket(name []byte) (kvBucket, error) {
	if !t.write {
		return nil, errors.New("create bucket: read-only transaction")
	}
	if !t.buckets[string(name)] {
		if _, err := t.tx.Exec(t.ctx, `INSERT INTO opsearch_buckets (store, bucket) VALUES ($1, $2) ON CONFLICT DO NOTHING`, t.store, name); err != nil {
			return nil, err
		}
		t.buckets[string(name)] = true
	}
	return &pgBucket{t: t, name: bytes.Clone(name)}, nil
}

func (t *pgTx) bucketNames() ([][]byte, error) {
	names := make([][]byte, 0, len(t.buckets))
	for n := range t.buckets {
		names = append(names, []byte(n))
	}
	slices.SortFunc(names, bytes.Compare)
	return names, nil
}

func (t *pgTx) onCommit(f func()) { t.commitHooks = append(t.commitHooks, f) }

type pgBucket struct {
	t    *pgTx
	name []byte
}

func (b *pgBucket) get(key []byte) []byte {
	if b.t.err != nil {
		return nil
	}
	if v, deleted, known := b.t.overlay(b.name, key); known {
		if deleted {
			return nil
		}
		return v
	}
	var v []byte
	err := b.t.tx.QueryRow(b.t.ctx, `SELECT value FROM opsearch_kv WHERE store = $1 AND bucket = $2 AND key = $3 AND value IS NOT NULL`,
		b.t.store, b.name, key).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	b.t.keep(err)
	if v == nil && err == nil {
		v = []byte{} // a stored empty value is not an absent one
	}
	return v
}

func (b *pgBucket) put(key, value []byte) error {
	if !b.t.write {
		return errors.New("put: read-only transaction")
	}
	if value == nil {
		value = []byte{}
	}
	b.t.queue(b.name, key, value, false)
	return nil
}

func (b *pgBucket) delete(key []byte) error {
	if !b.t.write {
		return errors.New("delete: read-only transaction")
	}
	b.t.queue(b.name, key, nil, true)
	return nil
}

func (b *pgBucket) keyCount() (int, error) {
	if err := b.t.flush(); err != nil {
		return 0, err
	}
	var n int
	err := b.t.tx.QueryRow(b.t.ctx, `SELECT count(*) FROM opsearch_kv WHERE store = $1 AND bucket = $2 AND value IS NOT NULL`, b.t.store, b.name).Scan(&n)
	return n, err
}

func (b *pgBucket) denseFill() {}

func (b *pgBucket) cursor() kvCursor { return &pgCursor{b: b} }

// pgCursorBatch is how many rows a cursor reads per query.
const pgCursorBatch = 256

// pgCursor walks a bucket a batch of rows at a time, each batch a query
// for the keys past the last one seen.
type pgCursor struct {
	b    *pgBucket
	rows []pgRow
	i    int
	// more is set when the last query filled its batch: there may be
	// keys past it.
	more bool
}

type pgRow struct{ k, v []byte }

func (c *pgCursor) load(cond string, key []byte, desc bool) {
	c.rows, c.i, c.more = nil, 0, false
	if c.b.t.flush() != nil || c.b.t.err != nil {
		return
	}
	order := "ASC"
	if desc {
		order = "DESC"
	}
	q := `SELECT key, value FROM opsearch_kv WHERE store = $1 AND bucket = $2 AND value IS NOT NULL` + cond +
		` ORDER BY key ` + order + fmt.Sprintf(` LIMIT %d`, pgCursorBatch)
	args := []any{c.b.t.store, c.b.name}
	if cond != "" {
		args = append(args, key)
	}
	rows, err := c.b.t.tx.Query(c.b.t.ctx, q, args...)
	if err != nil {
		c.b.t.keep(err)
		return
	}
	c.rows, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (pgRow, error) {
		var x pgRow
		err := r.Scan(&x.k, &x.v)
		return x, err
	})
	c.b.t.keep(err)
	c.more = !desc && len(c.rows) == pgCursorBatch
}

func (c *pgCursor) at() ([]byte, []byte) {
	if c.i < 0 || c.i >= len(c.rows) {
		return nil, nil
	}
	r := c.rows[c.i]
	return r.k, r.v
}

func (c *pgCursor) first() ([]byte, []byte) {
	c.load("", nil, false)
	return c.at()
}

func (c *pgCursor) last() ([]byte, []byte) {
	c.load("", nil, true)
	c.rows = c.rows[:min(len(c.rows), 1)]
	return c.at()
}

func (c *pgCursor) seek(key []byte) ([]byte, []byte) {
	c.load(` AND key >= $3`, key, false)
	return c.at()
}

func (c *pgCursor) next() ([]byte, []byte) {
	if c.i >= len(c.rows) {
		return nil, nil
	}
	c.i++
	if c.i < len(c.rows) {
		return c.at()
	}
	if !c.more {
		return nil, nil
	}
	last := c.rows[len(c.rows)-1].k
	c.load(` AND key > $3`, last, false)
	return c.at()
}

// pgChannel is the LISTEN/NOTIFY channel on which every write
// transaction announces its store's name.
const pgChannel = "opsearch_changes"

var _ changeFeed = (*pgEngine)(nil)

// changes reads the feed in one snapshot: the generation bound first (so
// no commit is cut), then the rows up to it.
func (e *pgEngine) changes(ctx context.Context, after uint64, limit int) ([]Change, uint64, error) {
	kinds := changeKinds()
	names := make([][]byte, 0, len(kinds))
	for b := range kinds {
		names = append(names, []byte(b))
	}
	var out []Change
	var through uint64
	err := e.view(ctx, func(t kvTx) error {
		tx := t.(*pgTx)
		through = tx.gen
		// The generation of the limit+1st change, if there is one: the
		// batch stops before it, unless that cuts the first commit.
		var next int64
		err := tx.tx.QueryRow(ctx, `SELECT seq FROM opsearch_kv WHERE store = $1 AND seq > $2 AND bucket = ANY($3)
			ORDER BY seq OFFSET $4 LIMIT 1`, e.name, int64(after), names, limit).Scan(&next)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return err
		default:
			var first int64
			if err := tx.tx.QueryRow(ctx, `SELECT min(seq) FROM opsearch_kv WHERE store = $1 AND seq > $2 AND bucket = ANY($3)`,
				e.name, int64(after), names).Scan(&first); err != nil {
				return err
			}
			through = uint64(next - 1)
			if next == first {
				through = uint64(next)
			}
		}
		rows, err := tx.tx.Query(ctx, `SELECT kv.bucket, kv.key, kv.value IS NULL, kv.seq, coalesce(c.author, 0)
			FROM opsearch_kv kv LEFT JOIN opsearch_commits c ON c.store = kv.store AND c.seq = kv.seq
			WHERE kv.store = $1 AND kv.seq > $2 AND kv.seq <= $3 AND kv.bucket = ANY($4) ORDER BY kv.seq, kv.bucket, kv.key`,
			e.name, int64(after), int64(through), names)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (Change, error) {
			var bucket, key []byte
			var deleted bool
			var seq, author int64
			if err := r.Scan(&bucket, &key, &deleted, &seq, &author); err != nil {
				return Change{}, err
			}
			k := kinds[string(bucket)]
			if string(bucket) == string(bucketReaders) {
				deleted = false // the list itself did not go
			}
			return Change{Kind: k, ID: keyID(key), Deleted: deleted, Generation: uint64(seq), Author: author}, nil
		})
		return err
	})
	return out, through, err
}

// waitChange listens on its own pooled connection, which it gives back
// closed: a connection that listened must not serve other queries.
func (e *pgEngine) waitChange(ctx context.Context, after uint64, poll time.Duration) (uint64, error) {
	conn, err := e.pool.Acquire(ctx)
	if err != nil {
		return 0, e.fail(err)
	}
	raw := conn.Hijack()
	defer raw.Close(context.WithoutCancel(ctx))
	if _, err := raw.Exec(ctx, "LISTEN "+pgChannel); err != nil {
		return 0, e.fail(err)
	}
	for {
		var gen int64
		if err := raw.QueryRow(ctx, `SELECT generation FROM opsearch_stores WHERE name = $1`, e.name).Scan(&gen); err != nil {
			return 0, e.fail(err)
		}
		if uint64(gen) > after {
			return uint64(gen), nil
		}
		wctx, cancel := context.WithTimeout(ctx, poll)
		_, err := raw.WaitForNotification(wctx)
		cancel()
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		if err != nil && !errors.Is(err, context.DeadlineExceeded) && !pgconn.Timeout(err) {
			return 0, e.fail(err)
		}
	}
}

var _ leaser = (*pgEngine)(nil)

// Leases are timed by the database's clock, never a replica's: replicas
// whose clocks disagree still agree on who holds one.

func (e *pgEngine) acquireLease(ctx context.Context, name, holder string, ttl time.Duration) (bool, error) {
	rows, err := e.pool.Query(ctx, `INSERT INTO opsearch_leases (store, name, holder, expires_at)
		VALUES ($1, $2, $3, clock_timestamp() + $4 * interval '1 millisecond')
		ON CONFLICT (store, name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
		WHERE opsearch_leases.holder = excluded.holder OR opsearch_leases.expires_at < clock_timestamp()
		RETURNING holder`, e.name, name, holder, ttl.Milliseconds())
	if err != nil {
		return false, e.fail(err)
	}
	held, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return false, e.fail(err)
	}
	return len(held) == 1, nil
}

func (e *pgEngine) releaseLease(ctx context.Context, name, holder string) error {
	if _, err := e.pool.Exec(ctx, `DELETE FROM opsearch_leases WHERE store = $1 AND name = $2 AND holder = $3`, e.name, name, holder); err != nil {
		return e.fail(err)
	}
	return nil
}

func (e *pgEngine) leaseHolder(ctx context.Context, name string) (LeaseInfo, bool, error) {
	var l LeaseInfo
	err := e.pool.QueryRow(ctx, `SELECT holder, expires_at, expires_at >= clock_timestamp() FROM opsearch_leases
		WHERE store = $1 AND name = $2`, e.name, name).Scan(&l.Holder, &l.Expires, &l.Held)
	if errors.Is(err, pgx.ErrNoRows) {
		return LeaseInfo{}, false, nil
	}
	if err != nil {
		return LeaseInfo{}, false, e.fail(err)
	}
	return l, true, nil
}

// checkLease locks the lease row against a takeover until the
// transaction ends and fails unless holder holds it unexpired.
func (t *pgTx) checkLease(name, holder string) (bool, error) {
	var n int
	err := t.tx.QueryRow(t.ctx, `SELECT count(*) FROM (SELECT 1 FROM opsearch_leases
		WHERE store = $1 AND name = $2 AND holder = $3 AND expires_at >= clock_timestamp() FOR SHARE) held`,
		t.store, name, holder).Scan(&n)
	if err != nil {
		t.keep(err)
		return false, err
	}
	return n == 1, nil
}

var _ purger = (*pgEngine)(nil)

func (e *pgEngine) reportApplied(ctx context.Context, replica string, gen uint64) error {
	_, err := e.pool.Exec(ctx, `INSERT INTO opsearch_replicas (store, replica, applied, seen_at) VALUES ($1, $2, $3, clock_timestamp())
		ON CONFLICT (store, replica) DO UPDATE SET applied = excluded.applied, seen_at = excluded.seen_at`, e.name, replica, int64(gen))
	if err != nil {
		return e.fail(err)
	}
	return nil
}

func (e *pgEngine) purgedThrough(ctx context.Context) (uint64, error) {
	var n int64
	if err := e.pool.QueryRow(ctx, `SELECT purged_through FROM opsearch_stores WHERE name = $1`, e.name).Scan(&n); err != nil {
		return 0, e.fail(err)
	}
	return uint64(n), nil
}

// purgeTombstones deletes the tombstones every replica seen within keep
// has applied, and records how far it went.
func (e *pgEngine) purgeTombstones(ctx context.Context, keep time.Duration) (int64, uint64, error) {
	var removed int64
	var through uint64
	err := pgx.BeginFunc(ctx, e.pool, func(tx pgx.Tx) error {
		var low *int64
		if err := tx.QueryRow(ctx, `SELECT min(applied) FROM opsearch_replicas
			WHERE store = $1 AND seen_at >= clock_timestamp() - $2 * interval '1 millisecond'`, e.name, keep.Milliseconds()).Scan(&low); err != nil {
			return err
		}
		if low == nil || *low <= 0 {
			return nil
		}
		tag, err := tx.Exec(ctx, `DELETE FROM opsearch_kv WHERE store = $1 AND value IS NULL AND seq <= $2`, e.name, *low)
		if err != nil {
			return err
		}
		removed = tag.RowsAffected()
		if _, err := tx.Exec(ctx, `UPDATE opsearch_stores SET purged_through = greatest(purged_through, $2) WHERE name = $1`, e.name, *low); err != nil {
			return err
		}
		through = uint64(*low)
		return nil
	})
	if err != nil {
		return 0, 0, e.fail(err)
	}
	return removed, through, nil
}

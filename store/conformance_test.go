package store

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/opsearch/opsearch/internal/optesting/pgtest"

	"github.com/jackc/pgx/v5"
)

// The store's tests are its engines' conformance suite: every test that
// calls eachEngine runs once on a bbolt file and once on PostgreSQL, and
// the two must give the same answers.

// opener opens one engine's store for a test, and opens the same store
// again after the test closed it.
type opener struct {
	name string
	open func(t testing.TB) *Store
	// reopen opens the store open opened last, which must be closed.
	reopen func(t testing.TB) *Store
	// atRest returns every byte the store keeps where it lives.
	atRest func(t testing.TB) []byte
}

// eachEngine runs f as a subtest per engine.
func eachEngine(t *testing.T, f func(t *testing.T, o opener)) {
	t.Helper()
	for _, o := range openers() {
		t.Run(o.name, func(t *testing.T) { f(t, o) })
	}
}

func openers() []opener {
	var dir string
	var pgName, dsn string
	return []opener{
		{
			name: "bbolt",
			open: func(t testing.TB) *Store {
				s, d := openTemp(t)
				dir = d
				return s
			},
			reopen: func(t testing.TB) *Store {
				s, err := Open(dir, Options{})
				if err != nil {
					t.Fatalf("Open again: %v", err)
				}
				t.Cleanup(func() { _ = s.Close() })
				return s
			},
			atRest: func(t testing.TB) []byte {
				raw, err := os.ReadFile(filepath.Join(dir, FileName))
				if err != nil {
					t.Fatal(err)
				}
				return raw
			},
		},
		{
			name: "postgres",
			open: func(t testing.TB) *Store {
				dsn = pgtest.DSN(t)
				pgName = pgtest.StoreName(t)
				return openPostgresTemp(t, dsn, pgName)
			},
			reopen: func(t testing.TB) *Store { return openPostgresTemp(t, dsn, pgName) },
			atRest: func(t testing.TB) []byte {
				ctx := context.Background()
				conn, err := pgx.Connect(ctx, dsn)
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close(ctx)
				var raw []byte
				if err := conn.QueryRow(ctx, `SELECT coalesce(string_agg(key || coalesce(value, ''), ''), '') FROM opsearch_kv WHERE store = $1`, pgName).Scan(&raw); err != nil {
					t.Fatal(err)
				}
				return raw
			},
		},
	}
}

func openPostgresTemp(t testing.TB, dsn, name string) *Store {
	t.Helper()
	s, err := OpenPostgres(context.Background(), dsn, name, PostgresOptions{})
	if err != nil {
		t.Fatalf("OpenPostgres: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// The store's tests are its engines' conformance suite: every test that
// calls eachEngine runs once on a bbolt file and once on PostgreSQL, and
// the two must give the same answers.

// testPostgresEnv names the database the PostgreSQL runs use. Unset, a
// local server's database "test" is tried; if none answers the runs are
// skipped, unless CI is set (CI's machine has one, and a skip there would
// hide a broken engine).
const testPostgresEnv = "OPSEARCH_TEST_POSTGRES"

const defaultTestPostgres = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// testPostgres returns the test database's connection string, or skips t.
func testPostgres(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv(testPostgresEnv)
	if dsn == "" {
		dsn = defaultTestPostgres
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		if os.Getenv(testPostgresEnv) != "" || os.Getenv("CI") != "" {
			t.Fatalf("PostgreSQL for the store tests: %v", err)
		}
		t.Skipf("no PostgreSQL at %s (set %s): %v", dsn, testPostgresEnv, err)
	}
	_ = conn.Close(ctx)
	return dsn
}

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
				dsn = testPostgres(t)
				pgName = tempStoreName(t)
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

// tempStoreName is a store name no other test uses; the store is dropped
// when t ends.
func tempStoreName(t testing.TB) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "test/" + filepath.Base(t.Name()) + "/" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		dsn := testPostgres(t)
		conn, err := pgx.Connect(context.Background(), dsn)
		if err != nil {
			t.Errorf("drop test store: %v", err)
			return
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(context.Background(), `DELETE FROM opsearch_stores WHERE name = $1`, name); err != nil {
			t.Errorf("drop test store: %v", err)
		}
	})
	return name
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

// Package pgtest gives tests a PostgreSQL database: the one
// OPSEARCH_TEST_POSTGRES names, or a local server's database "test". Where
// none answers, tests skip, unless CI or OPSEARCH_TEST_POSTGRES is set:
// there a missing database is a failure, not a reason to test less.
// Test-only: nothing in the opsearch binary imports it.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Env names the test database's connection string.
const Env = "OPSEARCH_TEST_POSTGRES"

// Default is the database tried when Env is unset.
const Default = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// DSN returns a connection string for t alone: its tables live in a
// schema of their own, dropped when t ends (Schema). So no test meets
// another's rows, and a checkout whose schema version is older than
// another's that ran on the same database is not refused by it. It skips
// t when no database answers (see the package comment).
func DSN(t testing.TB) string {
	t.Helper()
	return Schema(t)
}

// server returns the test database's own connection string, or skips t.
func server(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv(Env)
	if dsn == "" {
		dsn = Default
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		if os.Getenv(Env) != "" || os.Getenv("CI") != "" {
			t.Fatalf("PostgreSQL for the tests: %v", err)
		}
		t.Skipf("no PostgreSQL at %s (set %s): %v", dsn, Env, err)
	}
	_ = conn.Close(ctx)
	return dsn
}

// StoreName returns a store name no other test uses (the schema DSN
// gives t drops it with the rest).
func StoreName(t testing.TB) string {
	t.Helper()
	return "test/" + filepath.Base(t.Name()) + "/" + random()
}

// Schema returns a connection string whose tables live in a new, empty
// schema, dropped when t ends: the database as a new deployment finds it.
func Schema(t testing.TB) string {
	t.Helper()
	dsn := server(t)
	schema := "opsearch_test_" + random()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Error(err)
		}
	})
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme == "" {
		t.Fatalf("%s must be a postgres:// URL for this test", Env)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

func random() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

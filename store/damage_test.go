package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opsearch/opsearch/openproject"
)

// filledStore writes 4,000 work packages (a few MiB of pages) and closes
// the store; it returns the directory.
func filledStore(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for b := range 20 {
		err := s.Update(context.Background(), func(w *WriteTx) error {
			for i := range 200 {
				wp := openproject.WorkPackage{ID: int64(b*200 + i + 1), Subject: strings.Repeat("subject words ", 20)}
				if err := w.PutWorkPackage(wp); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestOpenDamaged: a store file with zeroed, overwritten or cut-off
// pages is reported as damaged when opened, with what is wrong, instead
// of crashing the process inside bbolt (whose open panics in a goroutine
// of its own on such a file).
func TestOpenDamaged(t *testing.T) {
	if testing.Short() {
		t.Skip(skipShort)
	}
	tests := []struct {
		name   string
		damage func(f *os.File, size int64) error
		reason string
	}{
		{"zeroed pages", func(f *os.File, size int64) error {
			_, err := f.WriteAt(make([]byte, 64*4096), size/3)
			return err
		}, "identifies itself as page 0"},
		{"overwritten pages", func(f *os.File, size int64) error {
			b := make([]byte, 64*4096)
			for i := range b {
				b[i] = byte(i * 7)
			}
			_, err := f.WriteAt(b, size/3)
			return err
		}, "identifies itself as page"},
		{"truncated", func(f *os.File, size int64) error { return f.Truncate(size / 2) }, "truncated"},
		{"both meta pages zeroed", func(f *os.File, _ int64) error {
			_, err := f.WriteAt(make([]byte, 2*4096), 0)
			return err
		}, "meta page"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filledStore(t)
			path := filepath.Join(dir, FileName)
			f, err := os.OpenFile(path, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			fi, _ := f.Stat()
			if err := tt.damage(f, fi.Size()); err != nil {
				t.Fatal(err)
			}
			f.Close()
			s, err := Open(dir, Options{})
			var de *DamagedError
			if !errors.Is(err, ErrDamaged) || !errors.As(err, &de) || de.Path != path || !strings.Contains(err.Error(), tt.reason) {
				if s != nil {
					s.Close()
				}
				t.Fatalf("Open of a store with %s: %v; want a DamagedError mentioning %q", tt.name, err, tt.reason)
			}
		})
	}
}

// TestReadAfterTruncation: a file cut short while the store is open
// makes reads fail as damaged (the fault on the memory map becomes an
// error), not kill the process.
func TestReadAfterTruncation(t *testing.T) {
	dir := filledStore(t)
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := os.Truncate(filepath.Join(dir, FileName), 8192); err != nil {
		t.Fatal(err)
	}
	n := 0
	err = s.ScanWorkPackages(context.Background(), 100, func(ws []openproject.WorkPackage) error { n += len(ws); return nil })
	if !errors.Is(err, ErrDamaged) {
		t.Fatalf("scan of a truncated file: %d read, err %v; want ErrDamaged", n, err)
	}
}

// TestPanicOfOursIsNotDamage: a panic raised by the caller's function in
// a transaction is a bug, not damage: it is not turned into ErrDamaged
// (which would set the user's data aside).
func TestPanicOfOursIsNotDamage(t *testing.T) {
	s, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	defer func() {
		if v := recover(); v != "a bug of ours" {
			t.Errorf("recovered %v; want the caller's own panic to go on", v)
		}
	}()
	_ = s.View(context.Background(), func(*ReadTx) error { panic("a bug of ours") })
	t.Error("View returned after its function panicked")
}

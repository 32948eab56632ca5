package store

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/opsearch/opsearch/internal/optesting/procmem"
)

// TestReleaseMapped: pages of the store read through its memory map
// count in the process's resident memory until ReleaseMapped drops
// them; the store reads as before afterwards, and memory that is not
// the store's map keeps its contents.
func TestReleaseMapped(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	putVaried(t, s, 1, 3001)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	path := filepath.Join(dir, FileName)
	readAll := func() {
		t.Helper()
		for id := int64(1); id <= 3000; id++ {
			wp, found, err := s.WorkPackage(id)
			if err != nil || !found || wp.Subject != variedWorkPackage(id).Subject {
				t.Fatalf("work package %d: %v %v %q", id, found, err, wp.Subject)
			}
		}
	}
	readAll()
	sentinel := bytes.Repeat([]byte("opsearch"), 1<<16)
	before := procmem.Resident(t, path)
	if before < 256 {
		t.Fatalf("%d KiB of the store resident after reading 3,000 work packages: the test shows nothing", before)
	}
	if err := s.ReleaseMapped(); err != nil {
		t.Fatal(err)
	}
	if after := procmem.Resident(t, path); after > before/10 {
		t.Errorf("%d KiB of the store resident after ReleaseMapped, %d before", after, before)
	}
	if !bytes.Equal(sentinel, bytes.Repeat([]byte("opsearch"), 1<<16)) {
		t.Fatal("memory outside the store's map changed")
	}
	readAll()
}

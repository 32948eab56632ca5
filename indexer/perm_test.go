//go:build unix

package indexer

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestFilesPrivate: every file the index writes, its meta files
// (opsearch_meta.json, bleve's index_meta.json) included, is 0600 and
// every directory 0700, as the README promises, even under umask 000 and
// through a rebuild; an index written by an older version with looser
// meta files is tightened when opened. Not parallel: the umask is the
// process's.
func TestFilesPrivate(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	ctx := context.Background()
	tests := []struct {
		name string
		// meta are the meta files the case must have written.
		meta  []string
		build func(t *testing.T, dir string)
	}{
		{"new index, indexed", []string{"index_meta.json"}, func(t *testing.T, dir string) {
			b := mustOpen(t, dir)
			if err := b.Index(ctx, corpus()...); err != nil {
				t.Fatal(err)
			}
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
		}},
		{"rebuilt", []string{"index_meta.json", metaFile}, func(t *testing.T, dir string) {
			b := mustOpen(t, dir)
			if err := b.Rebuild(ctx, func(add func(...Document) error) error { return add(corpus()...) }); err != nil {
				t.Fatal(err)
			}
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
		}},
		{"older index with loose meta files, reopened", []string{"index_meta.json", metaFile}, func(t *testing.T, dir string) {
			b := mustOpen(t, dir)
			if err := b.Rebuild(ctx, func(add func(...Document) error) error { return add(corpus()...) }); err != nil {
				t.Fatal(err)
			}
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			for _, f := range []string{metaFile, "index_meta.json"} {
				if err := os.Chmod(filepath.Join(dir, f), 0o666); err != nil {
					t.Fatal(err)
				}
			}
			b = mustOpen(t, dir)
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent := t.TempDir()
			if err := os.Chmod(parent, 0o700); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(parent, "index")
			tt.build(t, dir)
			seen := map[string]bool{}
			err := filepath.WalkDir(parent, func(path string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				fi, err := d.Info()
				if err != nil {
					return err
				}
				seen[d.Name()] = true
				want := fs.FileMode(0o600)
				if d.IsDir() {
					want = 0o700
				}
				if perm := fi.Mode().Perm(); perm&^want != 0 {
					rel, _ := filepath.Rel(parent, path)
					t.Errorf("%s is %#o, want %#o or tighter", rel, perm, want)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range tt.meta {
				if !seen[f] {
					t.Errorf("no %s was written", f)
				}
			}
		})
	}
}

func mustOpen(t *testing.T, dir string) *Bleve {
	t.Helper()
	b, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

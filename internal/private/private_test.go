package private_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/opsearch/opsearch/internal/private"
)

// TestTighten: a new directory is 0700; a loose directory and file are
// tightened; a missing file is fine; a file where a directory should be
// is refused.
func TestTighten(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "a", "b")
	if err := private.Dir(dir); err != nil {
		t.Fatal(err)
	}
	loose := filepath.Join(root, "loose")
	if err := os.Mkdir(loose, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(loose, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{private.Dir(loose), private.File(file), private.File(filepath.Join(root, "missing"))} {
		if err != nil {
			t.Fatal(err)
		}
	}
	for path, want := range map[string]os.FileMode{dir: 0o700, loose: 0o700, file: 0o600} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", path, fi.Mode().Perm(), want)
		}
	}
	if err := private.Dir(file); err == nil {
		t.Error("a file taken for a directory")
	}
}

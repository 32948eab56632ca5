// Package private keeps a user's files to that user: directories 0700
// and files 0600, tightened where they were created looser (by an older
// version, a restored backup, a umask). The store and the audit log both
// hold what one user may see or did, and keep it this way.
package private

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// Dir creates dir (and missing parents) with mode 0700, and removes group
// and other permissions from dir if it already existed with them.
func Dir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create directory: %w", err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("stat directory: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("tighten directory permissions: %w", err)
		}
	}
	return nil
}

// File sets an existing file's mode to 0600 if it grants more; a missing
// file is fine (its creator makes it 0600).
func File(path string) error {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("stat file: %w", err)
	}
	if fi.Mode().Perm()&^0o600 != 0 {
		if err := os.Chmod(path, 0o600); err != nil {
			return fmt.Errorf("tighten file permissions: %w", err)
		}
	}
	return nil
}

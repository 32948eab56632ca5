package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	bolt "go.etcd.io/bbolt"
)

// compactTxMaxSize bounds each write transaction of CompactTo so a large
// store does not have to fit one transaction in memory.
const compactTxMaxSize = 64 << 20

// CompactTo writes a compacted copy of the store to dst, a path that must
// not exist yet (created 0600). The file never shrinks on its own; to
// reclaim space, compact to a temporary path, Close the store, rename the
// copy over Path() and reopen.
//
// CompactTo holds one read transaction for its whole run, which blocks
// writes that need to grow the file; run it when no sync is writing. ctx is
// checked only before it starts.
func (s *Store) CompactTo(ctx context.Context, dst string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("compact store: %w", err)
	}
	if s.closed.Load() {
		return ErrClosed
	}
	if _, err := os.Lstat(dst); err == nil {
		return fmt.Errorf("compact store: %s already exists", dst)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("compact store: %w", err)
	}
	out, err := bolt.Open(dst, 0o600, &bolt.Options{
		Timeout:        DefaultLockTimeout,
		NoFreelistSync: true,
		FreelistType:   bolt.FreelistMapType,
	})
	if err != nil {
		return fmt.Errorf("compact store: open %s: %w", dst, err)
	}
	be, ok := s.eng.(*boltEngine)
	if !ok {
		_ = out.Close()
		_ = os.Remove(dst)
		return fmt.Errorf("compact store: %s is not a bbolt file", s.path)
	}
	if err := bolt.Compact(out, be.db, compactTxMaxSize); err != nil {
		_ = out.Close()
		_ = os.Remove(dst)
		return fmt.Errorf("compact store: %w", err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("compact store: close %s: %w", dst, err)
	}
	return nil
}

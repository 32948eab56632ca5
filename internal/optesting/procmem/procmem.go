// Package procmem reads how much of a file this process holds resident
// through its memory maps, for tests of code that releases mapped pages.
package procmem

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"testing"
)

// ErrUnsupported is returned where /proc/self/smaps cannot be read (not
// Linux): a test skips.
var ErrUnsupported = errors.New("no /proc/self/smaps")

// MappedKiB returns the resident size, in KiB, of this process's
// mappings of the file at path.
func MappedKiB(path string) (int, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return 0, fmt.Errorf("%w: %v", ErrUnsupported, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	in, kib := false, 0
	for sc.Scan() {
		fields := bytes.Fields(sc.Bytes())
		// A mapping's header: "start-end perms offset dev inode [path]".
		if len(fields) >= 5 && bytes.IndexByte(fields[0], '-') > 0 && !bytes.HasSuffix(fields[0], []byte(":")) {
			in = len(fields) >= 6 && string(fields[5]) == path
			continue
		}
		if in && len(fields) >= 2 && string(fields[0]) == "Rss:" {
			n, err := strconv.Atoi(string(fields[1]))
			if err != nil {
				return 0, fmt.Errorf("read /proc/self/smaps: %w", err)
			}
			kib += n
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("read /proc/self/smaps: %w", err)
	}
	return kib, nil
}

// Resident is MappedKiB for a test: it skips t where /proc/self/smaps
// cannot be read and fails it on any other error.
func Resident(t testing.TB, path string) int {
	t.Helper()
	kib, err := MappedKiB(path)
	if errors.Is(err, ErrUnsupported) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return kib
}

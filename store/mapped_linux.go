package store

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"syscall"

	bolt "go.etcd.io/bbolt"
)

// dropMapped drops this process's page-table entries for db's memory
// map, the file at path, so the pages a long crawl read through it stop
// counting in the process's resident memory. They stay in the page
// cache, and the next read maps them again with a minor fault.
//
// It runs inside a read transaction: bbolt remaps only under a lock that
// readers share, so the mapping found in /proc/self/maps is the one
// advised. The mapping is shared and read-only (bbolt writes with
// pwrite), so MADV_DONTNEED loses nothing; it is only ever applied to
// the range whose start is bbolt's and whose file is path.
func dropMapped(db *bolt.DB, path string) error {
	return db.View(func(*bolt.Tx) error {
		start := db.Info().Data
		end, err := mappingEnd(start, path)
		if err != nil || end <= start {
			return err
		}
		if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, start, end-start, syscall.MADV_DONTNEED); errno != 0 {
			return fmt.Errorf("release the store's mapped pages: %w", errno)
		}
		return nil
	})
}

// mappingEnd returns the end of the mapping of path that starts at
// start, from /proc/self/maps; 0 when there is none.
func mappingEnd(start uintptr, path string) (uintptr, error) {
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return 0, fmt.Errorf("read the process's mappings: %w", err)
	}
	defer f.Close()
	fi, err := os.Stat(path)
	if err != nil {
		return 0, fmt.Errorf("stat the store file: %w", err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, nil
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		// "start-end perms offset dev inode path"
		fields := bytes.Fields(sc.Bytes())
		if len(fields) < 6 {
			continue
		}
		lo, hi, ok := bytes.Cut(fields[0], []byte("-"))
		if !ok {
			continue
		}
		s, err1 := strconv.ParseUint(string(lo), 16, 64)
		e, err2 := strconv.ParseUint(string(hi), 16, 64)
		inode, err3 := strconv.ParseUint(string(fields[4]), 10, 64)
		if err1 != nil || err2 != nil || err3 != nil || uintptr(s) != start {
			continue
		}
		// The same file: its inode, not its name, which a rename or a
		// symbolic link would change.
		if inode != st.Ino {
			return 0, nil
		}
		return uintptr(e), nil
	}
	return 0, sc.Err()
}

//go:build unix

package access_test

import (
	"io/fs"
	"syscall"
)

// allocated returns the bytes of the blocks allocated to a file, which
// a sparse or preallocated file (bbolt's) makes differ from its size.
func allocated(fi fs.FileInfo) int64 {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return -1
	}
	return st.Blocks * 512
}

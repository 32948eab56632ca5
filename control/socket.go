package control

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// SocketName is the control socket's file name in a user directory.
const SocketName = "control.sock"

// maxSocketPath is the longest socket path every Unix takes: sun_path is
// 108 bytes on Linux and 104 on the BSDs and macOS, with the final NUL.
const maxSocketPath = 103

// SocketPath is where the process holding the files of the user
// directory dir listens: dir/control.sock, or, when that path is too
// long for a Unix socket, a file named by a hash of dir in a directory
// private to this OS user under the temporary directory.
func SocketPath(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("locate control socket: %w", err)
	}
	p := filepath.Join(abs, SocketName)
	if len(p) <= maxSocketPath {
		return p, nil
	}
	h := sha256.Sum256([]byte(abs))
	return filepath.Join(fallbackDir(), hex.EncodeToString(h[:10])+".sock"), nil
}

func fallbackDir() string {
	return filepath.Join(os.TempDir(), "opsearch-"+strconv.Itoa(os.Getuid()))
}

// ensurePrivateDir makes sure the socket's directory exists and only
// this OS user can enter it: a socket in a directory someone else
// controls could be replaced by theirs, which would then read the
// queries and answer them.
func ensurePrivateDir(dir string, create bool) error {
	if create {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("create control socket directory: %w", err)
		}
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("check control socket directory: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("check control socket directory: %s is not a directory", dir)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if !create {
			return fmt.Errorf("check control socket directory: %s is open to other users (mode %v)", dir, fi.Mode().Perm())
		}
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("make control socket directory private: %w", err)
		}
	}
	if !ownedByMe(fi) {
		return errors.New("check control socket directory: " + dir + " belongs to another user")
	}
	return nil
}

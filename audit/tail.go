package audit

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Tail returns the last n complete lines of the log in dir, oldest
// first, each with Raw set to its bytes; a line that cannot be parsed
// has only Raw. A torn last line is left out.
func Tail(dir string, n int) ([]Line, error) {
	names, err := listFiles(dir)
	if errors.Is(err, fs.ErrNotExist) || err == nil && len(names) == 0 {
		return nil, fmt.Errorf("tail audit log in %s: %w", dir, ErrNoLog)
	}
	if err != nil {
		return nil, fmt.Errorf("tail audit log: %w", err)
	}
	if n <= 0 {
		return nil, nil
	}
	var out []Line // newest first while collecting
	for i := len(names) - 1; i >= 0 && len(out) < n; i-- {
		data, err := os.ReadFile(filepath.Join(dir, names[i]))
		if err != nil {
			return nil, fmt.Errorf("tail audit log: %w", err)
		}
		lines := splitLines(data)
		for j := len(lines) - 1; j >= 0 && len(out) < n; j-- {
			l, err := ParseLine(lines[j])
			if err != nil && !errors.Is(err, ErrHashMismatch) {
				l = Line{}
			}
			l.Raw = slices.Clone(lines[j])
			out = append(out, l)
		}
	}
	slices.Reverse(out)
	return out, nil
}

// Found is a user's audit log under a data directory.
type Found struct {
	// Instance is the instance's directory name, UserID the user's id.
	Instance string
	UserID   int64
	// Dir is the log's directory.
	Dir string
}

func (f Found) String() string { return f.Instance + "/" + strconv.FormatInt(f.UserID, 10) }

// Find lists the audit logs under dataDir, sorted by instance and user:
// the servers keep each user's in DirName inside the user's own
// directory, <dataDir>/<instance>/<user id>/ (sync.User.OwnDir). A
// missing dataDir holds none.
func Find(dataDir string) ([]Found, error) {
	insts, err := os.ReadDir(dataDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("find audit logs: %w", err)
	}
	var out []Found
	for _, inst := range insts {
		if !inst.IsDir() {
			continue
		}
		users, err := os.ReadDir(filepath.Join(dataDir, inst.Name()))
		if err != nil {
			return nil, fmt.Errorf("find audit logs: %w", err)
		}
		for _, u := range users {
			id, err := strconv.ParseInt(u.Name(), 10, 64)
			if !u.IsDir() || err != nil || id <= 0 {
				continue
			}
			dir := filepath.Join(dataDir, inst.Name(), u.Name(), DirName)
			if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
				continue
			}
			out = append(out, Found{Instance: inst.Name(), UserID: id, Dir: dir})
		}
	}
	slices.SortFunc(out, func(a, b Found) int {
		if c := strings.Compare(a.Instance, b.Instance); c != 0 {
			return c
		}
		return cmp.Compare(a.UserID, b.UserID)
	})
	return out, nil
}

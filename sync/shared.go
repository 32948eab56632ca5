package sync

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/opsearch/opsearch/store"
)

// SharedDirName is the directory, beside the users' own, of the store and
// index every user of an instance shares: <dataDir>/<instance>/shared.
const SharedDirName = "shared"

// SharedDir returns the shared store's directory for the instance at
// baseURL (see SharedDirName). It creates nothing.
func SharedDir(dataDir, baseURL string) (string, error) {
	if dataDir == "" {
		return "", fmt.Errorf("shared dir: empty data dir")
	}
	inst, err := store.InstanceName(baseURL)
	if err != nil {
		return "", fmt.Errorf("shared dir: %w", err)
	}
	return filepath.Join(dataDir, inst, SharedDirName), nil
}

// OpenShared opens (creating) the store and index every user of the
// instance at baseURL shares, without any API request: each user's crawl
// writes into them through a worker of SharedWorker, and package access
// decides what each user sees. The returned User has no Worker and no
// user: its Identity is the instance's, with Shared set.
//
// An index that does not reflect the store is rebuilt from the store
// before OpenShared returns (opts.RebuildProgress reports it), while no
// crawl can write yet.
func OpenShared(ctx context.Context, dataDir, baseURL string, opts UserOptions) (*User, error) {
	return openShared(ctx, dataDir, baseURL, opts, true)
}

// openShared is OpenShared; a replica's index (opts.StoreURL) is built
// or caught up only with ready, else the caller does it (Manager: in the
// background, with its progress on /health: User.catchUp).
func openShared(ctx context.Context, dataDir, baseURL string, opts UserOptions, ready bool) (*User, error) {
	dir, err := SharedDir(dataDir, baseURL)
	if err != nil {
		return nil, fmt.Errorf("open shared store: %w", err)
	}
	inst, err := store.InstanceName(baseURL)
	if err != nil {
		return nil, fmt.Errorf("open shared store: %w", err)
	}
	var u *User
	if opts.StoreURL != "" {
		u, err = openReplica(ctx, dir, inst, opts)
	} else {
		u, err = openDir(dir, opts, true)
	}
	if err != nil {
		return nil, err
	}
	defer close(u.done)
	have, found, err := u.Store.Identity()
	if err != nil {
		u.closeFiles()
		return nil, fmt.Errorf("read identity: %w", err)
	}
	want := store.Identity{BaseURL: baseURL, Instance: inst, Shared: true}
	if found && (have.Instance != want.Instance || have.UserID != 0 || !have.Shared) {
		u.closeFiles()
		return nil, &IdentityMismatchError{Dir: dir, Stored: have, Want: want}
	}
	if !found || have != want {
		if err := u.Store.SetIdentity(want); err != nil {
			u.closeFiles()
			return nil, fmt.Errorf("record identity: %w", err)
		}
	}
	u.Identity = want
	if u.Follower != nil {
		if ready {
			err = u.catchUp(ctx, opts.RebuildProgress)
		}
	} else {
		var reason string
		reason, err = u.check(ctx)
		if err == nil && reason != "" {
			err = u.rebuild(ctx, reason, opts.RebuildProgress)
		}
	}
	if err != nil {
		u.closeFiles()
		return nil, err
	}
	return u, nil
}

// SharedWorker returns a worker that crawls into u, a store OpenShared
// opened, with the key of user sh.Owner (api must be authenticated as
// that user). Every worker of u serialises its commits on u's lock
// (sh.Commits is set to it). The caller runs one worker per user and
// keeps sh's functions in step with the user's view (see Shared).
func (u *User) SharedWorker(api API, sh Shared, opts Options) (*Worker, error) {
	if !u.Identity.Shared {
		return nil, fmt.Errorf("shared worker: %s is a user's own store", u.Dir)
	}
	if sh.Owner <= 0 {
		return nil, fmt.Errorf("shared worker: invalid user id %d", sh.Owner)
	}
	sh.Commits = &u.sharedCommits
	opts.Shared = &sh
	if opts.Logger == nil {
		opts.Logger = u.log
	}
	if u.Follower != nil {
		// Replicas share the store: one at a time crawls for a user, and
		// every replica's index (this one's too) follows what it
		// commits, through one path.
		opts.Lease = &SyncLease{Name: fmt.Sprintf("sync/user/%d", sh.Owner), Holder: u.replica}
		return NewWorker(api, u.Store, storeOnly{}, opts), nil
	}
	return NewWorker(api, u.Store, u.Index, opts), nil
}

// DefaultShared reports whether a team server keeps the shared store for
// baseURL's instance when its operator chose neither a shared index nor
// one per user: it does, unless dataDir already holds users' own stores
// of the instance and no shared store (a server that ran when an index
// per user was the default), which it keeps, so that an upgrade crawls
// nothing again by surprise. kept lists those stores.
func DefaultShared(dataDir, baseURL string) (shared bool, kept []LocalUser, err error) {
	dir, err := SharedDir(dataDir, baseURL)
	if err != nil {
		return false, nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, store.FileName)); err == nil {
		return true, nil, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return false, nil, fmt.Errorf("look for the shared store: %w", err)
	}
	all, err := LocalUsers(dataDir)
	if err != nil {
		return false, nil, err
	}
	inst := filepath.Base(filepath.Dir(dir))
	for _, lu := range all {
		if lu.Instance == inst {
			kept = append(kept, lu)
		}
	}
	return len(kept) == 0, kept, nil
}

// sharedStores lists the instances (directory names) under dataDir that
// hold a shared store, only inst's if inst is set.
func sharedStores(dataDir, inst string) ([]string, error) {
	insts, err := os.ReadDir(dataDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list data dir: %w", err)
	}
	var out []string
	for _, d := range insts {
		if !d.IsDir() || inst != "" && d.Name() != inst {
			continue
		}
		if _, err := os.Stat(filepath.Join(dataDir, d.Name(), SharedDirName, store.FileName)); err == nil {
			out = append(out, d.Name())
		}
	}
	return out, nil
}

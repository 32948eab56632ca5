package sync

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	gosync "sync"
	"time"

	"github.com/opsearch/opsearch/access"
	"github.com/opsearch/opsearch/indexer"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/store"
)

// IndexDirName is the index directory inside a user directory, next to
// the store file.
const IndexDirName = "index"

// UserAPI is what OpenUser needs from the client besides what the worker
// uses: who the key belongs to, and which instance it talks to. It is a
// separate interface so stand-ins for the worker's API need not grow.
type UserAPI interface {
	API
	Me(ctx context.Context) (openproject.User, error)
	BaseURL() string
}

var _ UserAPI = (*openproject.Client)(nil)

// ErrLocked is matched (errors.Is) by the *LockedError OpenUser and
// OpenLocal return when another process holds the user's store or index.
var ErrLocked = errors.New("user data is locked")

// LockedError reports that another opsearch process (or another open User
// in this one) holds the files in Dir. It unwraps to store.ErrLocked or
// indexer.ErrLocked.
type LockedError struct {
	Dir string
	// Holder describes the process holding the files ("pid 4242,
	// opsearch serve, since 2026-12-01 11:02:03"), read from the note it
	// left in Dir; empty when unknown.
	Holder string
	Err    error
}

func (e *LockedError) Error() string {
	if e.Holder != "" {
		return "another opsearch process (" + e.Holder + ") is using " + e.Dir
	}
	return "another opsearch process is using " + e.Dir
}

// Is makes errors.Is(err, ErrLocked) true.
func (e *LockedError) Is(target error) bool { return target == ErrLocked }

func (e *LockedError) Unwrap() error { return e.Err }

// ErrIdentityMismatch is matched by the *IdentityMismatchError returned
// when a user directory's store belongs to someone else.
var ErrIdentityMismatch = errors.New("store belongs to another user")

// IdentityMismatchError reports a store whose recorded identity differs
// from the user the caller asked for. Nothing is changed on disk: a store
// that landed in the wrong directory must not be merged with another
// user's data.
type IdentityMismatchError struct {
	Dir    string
	Stored store.Identity
	Want   store.Identity
}

func (e *IdentityMismatchError) Error() string {
	return fmt.Sprintf("store in %s belongs to user %d of %s, not user %d of %s",
		e.Dir, e.Stored.UserID, e.Stored.BaseURL, e.Want.UserID, e.Want.BaseURL)
}

// Is makes errors.Is(err, ErrIdentityMismatch) true.
func (e *IdentityMismatchError) Is(target error) bool { return target == ErrIdentityMismatch }

// ErrNoLocalUser is matched by the *ChooseUserError OpenLocal returns when
// the data directory holds no user, or several, matching its arguments.
var ErrNoLocalUser = errors.New("no single local user")

// LocalUser is one user directory found under a data directory.
type LocalUser struct {
	// Instance is the instance directory name (store.InstanceName of the
	// base URL).
	Instance string
	UserID   int64
	Dir      string
}

func (l LocalUser) String() string { return l.Instance + "/" + strconv.FormatInt(l.UserID, 10) }

// ChooseUserError reports that OpenLocal could not pick one user: none
// matched, or several did. Candidates are the ones that matched the
// arguments given (all users when none were given).
type ChooseUserError struct {
	DataDir    string
	BaseURL    string
	UserID     int64
	Candidates []LocalUser
	// Shared names the instances (directory names) whose shared store
	// the data directory holds: a team server's, which the commands that
	// open a user's own store cannot read.
	Shared []string
}

func (e *ChooseUserError) Error() string {
	var b strings.Builder
	if len(e.Candidates) == 0 && len(e.Shared) > 0 {
		fmt.Fprintf(&b, "%s holds no user's own index, only the shared index of %s that a team server (opsearch serve --http) keeps for all its users", e.DataDir, strings.Join(e.Shared, ", "))
		b.WriteString(": search it through that server (its GET /health reports the index and the crawl); search and status read a user's own index, kept by opsearch sync or by opsearch serve over stdio")
		return b.String()
	}
	if len(e.Candidates) == 0 {
		fmt.Fprintf(&b, "no opsearch data under %s", e.DataDir)
		if e.BaseURL != "" {
			fmt.Fprintf(&b, " for %s", e.BaseURL)
		}
		if e.UserID != 0 {
			fmt.Fprintf(&b, " for user %d", e.UserID)
		}
		b.WriteString(": run a sync (opsearch serve or sync) with this data directory first")
		return b.String()
	}
	names := make([]string, len(e.Candidates))
	for i, c := range e.Candidates {
		names[i] = c.String()
	}
	fmt.Fprintf(&b, "%d users have data under %s (%s): choose one with --user ID (and --base-url, or OPENPROJECT_BASE_URL, where they belong to different instances), e.g. --user %d",
		len(e.Candidates), e.DataDir, strings.Join(names, ", "), e.Candidates[0].UserID)
	return b.String()
}

// Is makes errors.Is(err, ErrNoLocalUser) true.
func (e *ChooseUserError) Is(target error) bool { return target == ErrNoLocalUser }

// ErrKeyNotVerified reports a local index that waits for OpenProject to
// confirm whose API key this is: the key is not one the store remembers
// for its user (store.Store.RememberKey), so the index does not answer
// for it offline.
var ErrKeyNotVerified = errors.New("the API key is not yet verified for the local index: OpenProject has not confirmed whose key it is (it may be unreachable); searches answer once it has")

// UserOptions configure OpenUser and OpenLocal.
type UserOptions struct {
	// Logger receives the rebuild's and (unless WorkerOptions.Logger is
	// set) the worker's messages; nil discards.
	Logger *slog.Logger
	// LockTimeout bounds the wait for another process's lock on the store
	// and the index (default: store.DefaultLockTimeout). A command must
	// fail clearly rather than hang while `opsearch serve` runs.
	LockTimeout time.Duration
	// WorkerOptions configure the worker OpenUser creates.
	WorkerOptions Options
	// Thesaurus is the index's synonym groups (nil: the built-in ones).
	Thesaurus indexer.Thesaurus
	// RebuildProgress, if set, is called during a rebuild of the index from
	// the store with the documents added so far and the total.
	RebuildProgress func(done, total int)
	// Holder names this process in the note a user directory keeps about
	// who holds its files ("opsearch serve"), which another process's
	// LockedError reports; default "opsearch". Never put a key here.
	Holder string
	// StoreURL, if set, is a PostgreSQL database (postgres://...) that
	// holds the instance's shared store instead of a file in the data
	// directory, for several opsearch replicas at once (OpenShared): each
	// keeps its own index in the data directory, following the store's
	// changes (Follower), and syncs hold a lease so one replica at a time
	// crawls. Only the shared store may live there.
	StoreURL string
}

// User is one user's opened data: store, index and (for OpenUser) the
// worker that syncs them. Close it when done.
type User struct {
	Store    *store.Store
	Index    *indexer.Bleve
	Identity store.Identity
	// Worker syncs Store and Index; nil for OpenLocal, which must not
	// touch the API.
	Worker *Worker
	// Dir is the user directory: <dataDir>/<instance>/<user id>, or the
	// shared directory for a user of the instance's shared store.
	Dir string
	// OwnDir is the directory of the user's own files (the query log):
	// Dir, but for a user of a shared store their <user id> directory
	// beside it, so nothing one user wrote lands where another's is.
	OwnDir string
	// View is set for a user of a shared store (ManagerOptions.Shared):
	// the user's current view of it, which every search of Index must
	// be restricted to. Nil for a user's own store.
	View *access.Tracker

	log    *slog.Logger
	cancel context.CancelFunc
	// done is closed when the background rebuild ended, or at once when
	// none was needed.
	done chan struct{}

	mu         gosync.Mutex
	rebuilding bool
	reason     string
	rebuildErr error

	closeOnce gosync.Once
	closeErr  error

	// sharedCommits serialises the commits of a shared store's workers
	// (SharedWorker).
	sharedCommits gosync.Mutex
	// release, set for a user of a shared store, is what Close does
	// instead of closing the files, which are the instance's.
	release func()
	// Follower keeps Index current with Store when other processes write
	// the store too (UserOptions.StoreURL); nil otherwise.
	Follower *Follower
	// replica names this process to the other replicas (its leases).
	replica string
	// followKnown says the index recorded the store generation it
	// followed to (OpenFollower); false means it must be built first.
	followKnown bool
}

// OpenUser opens the data of the user api's key belongs to: it asks
// /api/v3/users/me who that is, opens (creating) the store and index in
// store.UserDir(dataDir, api.BaseURL(), id), records or checks the
// store's identity and returns a User with a Worker ready to sync.
//
// If the index does not reflect the store (missing, damaged, built with
// another mapping version, or with per-kind document counts that differ
// from the store's), it is rebuilt from the store in the background with
// no API request; the old index keeps answering meanwhile, syncs are
// skipped (ErrSyncRunning) until it finishes, and Rebuilding reports it.
// Cancelling ctx or calling Close stops the rebuild.
//
// A store or index held by another process fails with a *LockedError.
func OpenUser(ctx context.Context, dataDir string, api UserAPI, opts UserOptions) (*User, error) {
	me, err := api.Me(ctx)
	if err != nil {
		return nil, fmt.Errorf("resolve user: %w", err)
	}
	base := api.BaseURL()
	dir, err := store.UserDir(dataDir, base, me.ID)
	if err != nil {
		return nil, fmt.Errorf("open user: %w", err)
	}
	want := store.Identity{BaseURL: base, UserID: me.ID, Login: me.Login, Name: me.Name}
	if want.Instance, err = store.InstanceName(base); err != nil {
		return nil, fmt.Errorf("open user: %w", err)
	}
	u, err := openDir(dir, opts, true)
	if err != nil {
		return nil, err
	}
	if err := u.adoptIdentity(want); err != nil {
		u.closeFiles()
		return nil, err
	}
	wopts := opts.WorkerOptions
	if wopts.Logger == nil {
		wopts.Logger = u.log
	}
	u.Worker = NewWorker(api, u.Store, u.Index, wopts)

	reason, err := u.check(ctx)
	if err != nil {
		u.closeFiles()
		return nil, err
	}
	if reason == "" {
		close(u.done)
		return u, nil
	}
	empty, err := u.storeEmpty()
	if err != nil {
		u.closeFiles()
		return nil, err
	}
	if empty {
		// A new user's index is "missing" too. Building it from an empty
		// store takes milliseconds and records the mapping version; doing
		// it here keeps the first sync from being skipped by a rebuild.
		defer close(u.done)
		if err := u.rebuild(ctx, reason, opts.RebuildProgress); err != nil {
			u.closeFiles()
			return nil, err
		}
		return u, nil
	}
	// Holding the sync lock keeps the worker's commits out of the rebuild
	// (see RebuildIndex). It is taken here, not in the goroutine, so no
	// sync can start in between.
	u.Worker.running.Lock()
	rctx, cancel := context.WithCancel(ctx)
	u.cancel = cancel
	u.setRebuilding(reason)
	go func() {
		defer close(u.done)
		defer u.Worker.running.Unlock()
		u.finishRebuild(u.rebuild(rctx, reason, opts.RebuildProgress))
	}()
	return u, nil
}

// OpenLocal opens a user's data for offline commands (search, status,
// eval): it never calls the API. baseURL and userID select the user; an
// empty baseURL or a zero userID means "the only one there is" under
// dataDir (or under that instance), and anything else fails with a
// *ChooseUserError listing what exists.
//
// An index that does not reflect the store is rebuilt from the store
// before OpenLocal returns (progress reports it), so a search after a
// mapping change still answers. The returned User has no Worker.
func OpenLocal(ctx context.Context, dataDir, baseURL string, userID int64, opts UserOptions) (*User, error) {
	lu, err := FindLocalUser(dataDir, baseURL, userID)
	if err != nil {
		return nil, err
	}
	u, err := openDir(lu.Dir, opts, false)
	if err != nil {
		return nil, err
	}
	id, found, err := u.Store.Identity()
	if err != nil {
		u.closeFiles()
		return nil, fmt.Errorf("read identity: %w", err)
	}
	if found && (id.Instance != lu.Instance || id.UserID != lu.UserID) {
		u.closeFiles()
		return nil, &IdentityMismatchError{Dir: lu.Dir, Stored: id, Want: store.Identity{BaseURL: baseURL, Instance: lu.Instance, UserID: lu.UserID}}
	}
	if !found {
		id = store.Identity{BaseURL: baseURL, Instance: lu.Instance, UserID: lu.UserID}
	}
	u.Identity = id

	reason, err := u.check(ctx)
	if err != nil {
		u.closeFiles()
		return nil, err
	}
	defer close(u.done)
	if reason == "" {
		return u, nil
	}
	u.setRebuilding(reason)
	err = u.rebuild(ctx, reason, opts.RebuildProgress)
	u.finishRebuild(err)
	if err != nil {
		u.closeFiles()
		return nil, err
	}
	return u, nil
}

// LocalUsers lists the user directories under dataDir that hold a store,
// sorted by instance and user id. A missing dataDir holds none.
func LocalUsers(dataDir string) ([]LocalUser, error) {
	insts, err := os.ReadDir(dataDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list data dir: %w", err)
	}
	var out []LocalUser
	for _, inst := range insts {
		if !inst.IsDir() {
			continue
		}
		users, err := os.ReadDir(filepath.Join(dataDir, inst.Name()))
		if err != nil {
			return nil, fmt.Errorf("list instance dir: %w", err)
		}
		for _, ud := range users {
			id, err := strconv.ParseInt(ud.Name(), 10, 64)
			if !ud.IsDir() || err != nil || id <= 0 {
				continue
			}
			dir := filepath.Join(dataDir, inst.Name(), ud.Name())
			if _, err := os.Stat(filepath.Join(dir, store.FileName)); err != nil {
				continue
			}
			out = append(out, LocalUser{Instance: inst.Name(), UserID: id, Dir: dir})
		}
	}
	slices.SortFunc(out, func(a, b LocalUser) int {
		if c := strings.Compare(a.Instance, b.Instance); c != 0 {
			return c
		}
		return int(a.UserID - b.UserID)
	})
	return out, nil
}

// FindLocalUser picks the user directory OpenLocal opens (see there),
// without opening it: a *ChooseUserError when none or several match.
func FindLocalUser(dataDir, baseURL string, userID int64) (LocalUser, error) {
	inst := ""
	if baseURL != "" {
		var err error
		if inst, err = store.InstanceName(baseURL); err != nil {
			return LocalUser{}, fmt.Errorf("open local user: %w", err)
		}
	}
	all, err := LocalUsers(dataDir)
	if err != nil {
		return LocalUser{}, err
	}
	var match []LocalUser
	for _, lu := range all {
		if (inst == "" || lu.Instance == inst) && (userID == 0 || lu.UserID == userID) {
			match = append(match, lu)
		}
	}
	if len(match) != 1 {
		if len(match) == 0 && (inst != "" || userID != 0) {
			// Show what does exist, so the user sees the right choice.
			match = all
		}
		ce := &ChooseUserError{DataDir: dataDir, BaseURL: baseURL, UserID: userID, Candidates: match}
		if len(match) == 0 {
			if ce.Shared, err = sharedStores(dataDir, inst); err != nil {
				return LocalUser{}, err
			}
		}
		return LocalUser{}, ce
	}
	return match[0], nil
}

// LocalUserForKey returns the local user of baseURL's instance whose
// store remembers key (store.Store.KeyVerified: OpenProject confirmed the
// key for that user before), or 0 when none does. It reads only the
// stores, each briefly; with it a data directory holding several users
// serves the key's own index while OpenProject cannot be asked.
func LocalUserForKey(dataDir, baseURL, key string, opts UserOptions) (int64, error) {
	inst, err := store.InstanceName(baseURL)
	if err != nil {
		return 0, fmt.Errorf("find the key's local user: %w", err)
	}
	all, err := LocalUsers(dataDir)
	if err != nil {
		return 0, err
	}
	for _, lu := range all {
		if lu.Instance != inst {
			continue
		}
		st, err := store.Open(lu.Dir, store.Options{LockTimeout: opts.LockTimeout})
		if errors.Is(err, store.ErrLocked) {
			return 0, &LockedError{Dir: lu.Dir, Err: err}
		}
		if err != nil {
			continue // a damaged store is nobody's yet
		}
		ok, err := st.KeyVerified(key)
		_ = st.Close()
		if err == nil && ok {
			return lu.UserID, nil
		}
	}
	return 0, nil
}

// openDir opens store and index in dir.
func openDir(dir string, opts UserOptions, setAside bool) (*User, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	st, err := store.Open(dir, store.Options{LockTimeout: opts.LockTimeout})
	if errors.Is(err, store.ErrDamaged) && setAside {
		// The store can be crawled again, and nothing else can be done
		// with a damaged file: move it out of the way (kept for a look)
		// and start over with an empty one.
		aside, aerr := setAsideDamaged(dir)
		if aerr != nil {
			return nil, fmt.Errorf("%w; setting it aside failed: %w", err, aerr)
		}
		log.Error("the store was damaged: set aside, crawling again from OpenProject", "dir", dir, "error", err, "set_aside_as", aside)
		st, err = store.Open(dir, store.Options{LockTimeout: opts.LockTimeout})
	}
	if errors.Is(err, store.ErrDamaged) {
		return nil, fmt.Errorf("%w: opsearch sync or opsearch serve sets it aside and crawls again from OpenProject", err)
	}
	if errors.Is(err, store.ErrLocked) {
		return nil, &LockedError{Dir: dir, Holder: readHolder(dir), Err: err}
	}
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	idx, err := openIndex(dir, opts)
	if err != nil {
		_ = st.Close()
		return nil, err
	}
	writeHolder(dir, opts.Holder, log)
	return &User{
		Store: st, Index: idx, Dir: dir, OwnDir: dir,
		log:    log.With("subsystem", "sync", "dir", dir),
		cancel: func() {},
		done:   make(chan struct{}),
	}, nil
}

// openIndex opens the index in user directory dir; another process
// holding it is a *LockedError naming that process.
func openIndex(dir string, opts UserOptions) (*indexer.Bleve, error) {
	idx, err := indexer.Open(filepath.Join(dir, IndexDirName), indexer.Options{LockTimeout: opts.LockTimeout, Thesaurus: opts.Thesaurus})
	if errors.Is(err, indexer.ErrLocked) {
		return nil, &LockedError{Dir: dir, Holder: readHolder(dir), Err: err}
	}
	if err != nil {
		return nil, fmt.Errorf("open index: %w", err)
	}
	return idx, nil
}

// setAsideDamaged renames dir's damaged store file to
// store.db.damaged-<UTC time> and returns the new path.
func setAsideDamaged(dir string) (string, error) {
	from := filepath.Join(dir, store.FileName)
	to := from + ".damaged-" + time.Now().UTC().Format("20060102T150405Z")
	if err := os.Rename(from, to); err != nil {
		return "", fmt.Errorf("set aside damaged store: %w", err)
	}
	return to, nil
}

// HolderFileName is the note in a user directory that says which process
// holds its files, for the error another process gets.
const HolderFileName = "holder.json"

type holderNote struct {
	PID     int       `json:"pid"`
	Command string    `json:"command"`
	Since   time.Time `json:"since"`
}

// writeHolder records this process as the holder of dir's files. It is
// written while holding the locks, so a note read by a process that
// failed to lock is the holder's (or missing, if it is not written yet).
func writeHolder(dir, command string, log *slog.Logger) {
	command = cmp.Or(command, "opsearch")
	b, err := json.Marshal(holderNote{PID: os.Getpid(), Command: command, Since: time.Now().UTC().Truncate(time.Second)})
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, HolderFileName), b, 0o600)
	}
	if err != nil {
		log.Warn("cannot record this process as the holder of the user's files", "error", err)
	}
}

// readHolder describes the process that holds dir's files, from its
// note; "" when there is none or it cannot be read.
func readHolder(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, HolderFileName))
	if err != nil {
		return ""
	}
	var n holderNote
	if json.Unmarshal(b, &n) != nil || n.PID <= 0 {
		return ""
	}
	return fmt.Sprintf("pid %d, %s, since %s", n.PID, n.Command, n.Since.Local().Format(time.DateTime))
}

// adoptIdentity records want as the store's identity, or refuses a store
// that belongs to another user. The instance name, not the URL string, is
// compared: http and https, or a trailing slash, reach the same instance
// and the same directory.
func (u *User) adoptIdentity(want store.Identity) error {
	have, found, err := u.Store.Identity()
	if err != nil {
		return fmt.Errorf("read identity: %w", err)
	}
	if found && (have.Instance != want.Instance || have.UserID != want.UserID) {
		return &IdentityMismatchError{Dir: u.Dir, Stored: have, Want: want}
	}
	if !found || have != want {
		if err := u.Store.SetIdentity(want); err != nil {
			return fmt.Errorf("record identity: %w", err)
		}
	}
	u.Identity = want
	return nil
}

// check recovers an interrupted commit, then returns why the index must
// be rebuilt ("" when it reflects the store).
func (u *User) check(ctx context.Context) (string, error) {
	if err := recoverPending(ctx, u.Store, u.Index, u.log); err != nil {
		return "", fmt.Errorf("recover index: %w", err)
	}
	reason, err := IndexMismatch(ctx, u.Store, u.Index)
	if err != nil {
		return "", fmt.Errorf("check index: %w", err)
	}
	return reason, nil
}

// storeEmpty reports whether the store holds no documents' entities.
func (u *User) storeEmpty() (bool, error) {
	for _, k := range indexer.Kinds() {
		n, err := u.Store.Count(k)
		if err != nil {
			return false, fmt.Errorf("count stored %s: %w", k, err)
		}
		if n > 0 {
			return false, nil
		}
	}
	return true, nil
}

// rebuild rebuilds the index from the store and logs the outcome.
func (u *User) rebuild(ctx context.Context, reason string, progress func(done, total int)) error {
	u.log.Info("rebuilding index from store", "reason", reason)
	start := time.Now()
	err := RebuildIndex(ctx, u.Store, u.Index, progress)
	switch {
	case err != nil && ctx.Err() != nil:
		u.log.Info("index rebuild cancelled", "error", err)
	case err != nil:
		u.log.Error("index rebuild failed", "error", err)
	default:
		u.log.Info("index rebuilt from store", "duration", time.Since(start))
	}
	return err
}

func (u *User) setRebuilding(reason string) {
	u.mu.Lock()
	u.rebuilding, u.reason = true, reason
	u.mu.Unlock()
}

func (u *User) finishRebuild(err error) {
	u.mu.Lock()
	u.rebuilding, u.rebuildErr = false, err
	if err != nil {
		u.reason = "rebuild failed: " + err.Error()
	} else {
		u.reason = ""
	}
	u.mu.Unlock()
}

// Rebuilding reports whether the index is being rebuilt from the store
// and why (a NeedsRebuild reason or a count mismatch). After a failed
// rebuild it returns false with the failure as the reason.
func (u *User) Rebuilding() (bool, string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.rebuilding, u.reason
}

// WaitRebuild waits for a background rebuild to end and returns its error;
// it returns nil at once when none was started.
func (u *User) WaitRebuild(ctx context.Context) error {
	select {
	case <-u.done:
	case <-ctx.Done():
		return fmt.Errorf("wait for index rebuild: %w", context.Cause(ctx))
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.rebuildErr
}

// Close stops a background rebuild, then closes the index and the store.
// Stop any scheduler driving Worker first: a sync must not outlive the
// store. Close is safe to call twice.
func (u *User) Close() error {
	u.closeOnce.Do(func() {
		u.cancel()
		<-u.done
		if u.release != nil {
			u.release()
			return
		}
		u.closeErr = u.closeFiles()
	})
	return u.closeErr
}

// closeFiles closes the index, then the store (the store is the source
// of truth and goes last).
func (u *User) closeFiles() error {
	var errs []error
	if err := u.Index.Close(); err != nil {
		errs = append(errs, err)
	}
	if err := u.Store.Close(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

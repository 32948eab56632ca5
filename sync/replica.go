package sync

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/opsearch/opsearch/access"
	"github.com/opsearch/opsearch/indexer"
	"github.com/opsearch/opsearch/store"
)

// openReplica opens the instance's shared store in the PostgreSQL
// database opts.StoreURL (the store is named by the instance, inst) and
// this replica's own index in dir, with the Follower that keeps the index
// current. The caller builds or catches the index up (catchUp).
func openReplica(ctx context.Context, dir, inst string, opts UserOptions) (*User, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create index directory: %w", err)
	}
	st, err := store.OpenPostgres(ctx, opts.StoreURL, inst, store.PostgresOptions{})
	if err != nil {
		return nil, err
	}
	idx, err := openIndex(dir, opts)
	if err != nil {
		_ = st.Close()
		return nil, err
	}
	log = log.With("subsystem", "sync", "dir", dir, "store", st.Path())
	host, _ := os.Hostname()
	var tag [4]byte
	_, _ = rand.Read(tag[:])
	replica := fmt.Sprintf("%s/%d/%s", host, os.Getpid(), hex.EncodeToString(tag[:]))
	f, known, err := OpenFollower(st, idx, dir, FollowerOptions{Logger: log, Replica: replica})
	if err != nil {
		_ = idx.Close()
		_ = st.Close()
		return nil, err
	}
	writeHolder(dir, opts.Holder, log)
	u := &User{
		Store: st, Index: idx, Dir: dir, OwnDir: dir,
		Follower: f, replica: replica,
		log:    log,
		cancel: func() {},
		done:   make(chan struct{}),
	}
	u.followKnown = known
	return u, nil
}

// catchUp brings a replica's index to the store: from the generation it
// recorded, or, for a new index (or one whose mapping changed), by
// building it from the store first.
func (u *User) catchUp(ctx context.Context, progress func(done, total int)) error {
	report := func(done, total int) {
		u.Follower.building(done, total)
		if progress != nil {
			progress(done, total)
		}
	}
	purged, err := u.Store.PurgedThrough(ctx)
	if err != nil {
		return err
	}
	if needs, why := u.Index.NeedsRebuild(); needs || !u.followKnown || u.Follower.Applied() < purged {
		switch {
		case needs:
		case !u.followKnown:
			why = "this replica's index has not followed the store yet"
		default:
			why = "deletions this replica had not applied have left the store's change feed"
		}
		gen, err := u.Follower.Start()
		if err != nil {
			return err
		}
		if err := u.rebuild(ctx, why, report); err != nil {
			return err
		}
		if err := u.Follower.Built(gen); err != nil {
			return err
		}
		u.followKnown = true
	}
	n, err := u.Follower.CatchUp(ctx)
	if err != nil {
		return fmt.Errorf("catch up with the store: %w", err)
	}
	u.log.Info("index caught up with the shared store", "changes", n, "generation", u.Follower.Applied())
	u.Follower.setReady()
	return nil
}

// ErrIndexBuilding is returned by Manager.Acquire while a replica builds
// its index from the shared store: it serves nobody until the index
// holds the store.
var ErrIndexBuilding = errors.New("this replica is building its index from the shared store")

// DefaultOwnWritesWait bounds how long a search waits for the user's own
// last write to reach this replica's index (AwaitOwnWrites).
const DefaultOwnWritesWait = 2 * time.Second

// AwaitOwnWrites waits, bounded by ctx, until this replica's index holds
// the user's last write through any replica (read-your-writes across
// replicas): a write tool's refresh records its commit's generation in
// the shared store, and the Follower applies commits in order. It
// returns at once for a store no other process writes, and for a user
// who wrote nothing; on a timeout the search goes on without the write.
func (u *User) AwaitOwnWrites(ctx context.Context) error {
	if u.Follower == nil {
		return nil
	}
	raw, ok, err := u.Store.Meta(writtenKey(u.Identity.UserID))
	if err != nil || !ok {
		return err
	}
	gen, err := strconv.ParseUint(string(raw), 10, 64)
	if err != nil {
		return fmt.Errorf("read the user's last write: %w", err)
	}
	return u.Follower.WaitApplied(ctx, gen)
}

// storeOnly is the index of a replica's sync worker: the worker writes
// the store only, and the replica's Follower indexes what it committed,
// as every other replica's does.
type storeOnly struct{}

func (storeOnly) Index(context.Context, ...indexer.Document) error { return nil }
func (storeOnly) Delete(context.Context, ...string) error          { return nil }
func (storeOnly) Settle(context.Context) (bool, error)             { return false, nil }

var _ Index = storeOnly{}

// viewExchange shares users' view answers among the replicas of a shared
// store (access.Exchange): the latest answers of each user under a meta
// key, and the claim to ask OpenProject for a user as a store lease, so
// one replica at a time computes a user's view and the others derive it.
type viewExchange struct {
	st     *store.Store
	holder string
}

var _ access.Exchange = viewExchange{}

// viewClaimTTL bounds how long a replica that dies while computing a view
// keeps the others waiting: they ask themselves once it runs out (or
// once access's own wait ends, whichever is first).
const viewClaimTTL = 30 * time.Second

func viewKey(user int64) string { return "view.answers." + strconv.FormatInt(user, 10) }

func (x viewExchange) Answers(ctx context.Context, user int64) (*access.Answers, bool, error) {
	var (
		b     []byte
		found bool
	)
	err := x.st.View(ctx, func(tx *store.ReadTx) error {
		var err error
		b, found, err = tx.Meta(viewKey(user))
		return err
	})
	if err != nil || !found {
		return nil, false, err
	}
	var a access.Answers
	if err := json.Unmarshal(b, &a); err != nil {
		return nil, false, fmt.Errorf("read the view answers of user %d: %w", user, err)
	}
	return &a, true, nil
}

func (x viewExchange) Publish(ctx context.Context, user int64, a *access.Answers) error {
	b, err := json.Marshal(a)
	if err != nil {
		return fmt.Errorf("encode the view answers of user %d: %w", user, err)
	}
	return x.st.Update(ctx, func(tx *store.WriteTx) error { return tx.SetMeta(viewKey(user), b) })
}

func (x viewExchange) Claim(ctx context.Context, user int64) (func(), bool, error) {
	name := "view/user/" + strconv.FormatInt(user, 10)
	held, err := x.st.AcquireLease(ctx, name, x.holder, viewClaimTTL)
	if err != nil || !held {
		return func() {}, false, err
	}
	return func() { _ = x.st.ReleaseLease(context.WithoutCancel(ctx), name, x.holder) }, true, nil
}

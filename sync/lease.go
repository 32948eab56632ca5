package sync

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/opsearch/opsearch/store"
)

// DefaultLeaseTTL is a sync lease's time when SyncLease.TTL is zero: a
// replica that dies mid-crawl is replaced by another this long after its
// last renewal.
const DefaultLeaseTTL = 15 * time.Second

// writtenKey is the store meta key of the generation of a user's last
// write through a replica (RefreshWorkPackage), which a search of theirs
// on any replica waits for (User.AwaitOwnWrites).
func writtenKey(user int64) string { return "replica.written." + strconv.FormatInt(user, 10) }

// ErrLeaseHeld is returned by Sync when another process holds the sync's
// lease (Options.Lease): it is syncing the same store now, and this
// process's index follows what it writes.
var ErrLeaseHeld = errors.New("another process holds the sync lease")

// SyncLease names the store lease (store.Store.AcquireLease) a worker
// holds while it syncs, and who it is.
type SyncLease struct {
	// Name is the lease, the same for every process that may do this
	// sync (e.g. "sync/shared" for an instance's shared crawl).
	Name string
	// Holder names this process, unique among them (host and pid).
	Holder string
	// TTL is how long the lease lasts unrenewed; zero means
	// DefaultLeaseTTL. A running sync renews it every third of it.
	TTL time.Duration
}

func (l SyncLease) ttl() time.Duration {
	if l.TTL <= 0 {
		return DefaultLeaseTTL
	}
	return l.TTL
}

// keepLease renews l every third of its time until release is called,
// and cancels the returned context if a renewal finds the lease gone or
// fails until it has run out: the sync stops rather than write as a
// holder it no longer is (its writes would fail anyway, CheckLease).
// release stops the renewals, waits for them and gives the lease up.
func (w *Worker) keepLease(ctx context.Context, l SyncLease) (context.Context, func()) {
	lctx, cancel := context.WithCancelCause(ctx)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(l.ttl() / 3)
		defer tick.Stop()
		last := time.Now()
		for {
			select {
			case <-stop:
				return
			case <-lctx.Done():
				return
			case <-tick.C:
			}
			held, err := w.st.AcquireLease(lctx, l.Name, l.Holder, l.ttl())
			switch {
			case err == nil && held:
				last = time.Now()
			case err == nil:
				cancel(fmt.Errorf("renew the sync lease: %w: another process holds %q now", store.ErrLeaseLost, l.Name))
				return
			case time.Since(last) >= l.ttl():
				cancel(fmt.Errorf("renew the sync lease: %w: %w", store.ErrLeaseLost, err))
				return
			default:
				w.log.Warn("renewing the sync lease failed; retrying", "lease", l.Name, "error", err)
			}
		}
	}()
	return lctx, func() {
		close(stop)
		<-done
		if err := context.Cause(lctx); err != nil && !errors.Is(err, context.Canceled) {
			w.log.Warn("sync stopped: its lease was lost", "lease", l.Name, "error", err)
		}
		cancel(nil)
		if err := w.st.ReleaseLease(context.WithoutCancel(ctx), l.Name, l.Holder); err != nil {
			w.log.Warn("releasing the sync lease failed; it expires by itself", "lease", l.Name, "error", err)
		}
	}
}

// update is the worker's store write: while a Sync holds the lease, the
// transaction first checks that this process still holds it, so a sync
// that lost it writes nothing more. A refresh (RefreshWorkPackage)
// outside a sync writes one entity as a sync batch would, converging with
// whichever replica syncs, and needs no lease.
func (w *Worker) update(ctx context.Context, fn func(*store.WriteTx) error) error {
	l := w.opts.Lease
	check := l != nil && w.leased.Load()
	return w.st.Update(ctx, func(tx *store.WriteTx) error {
		if check {
			if err := tx.CheckLease(l.Name, l.Holder); err != nil {
				return err
			}
		}
		if w.opts.Shared != nil {
			// Other replicas learn whose key fetched what this commits.
			tx.SetAuthor(w.opts.Shared.Owner)
		}
		return fn(tx)
	})
}

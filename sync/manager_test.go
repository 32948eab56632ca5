package sync

import (
	"cmp"
	"context"
	"errors"
	"runtime"
	gosync "sync"
	"testing"
	"time"

	"github.com/opsearch/opsearch/internal/optesting"
	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
)

// testAttachment closes the user and counts syncs.
type testAttachment struct {
	u     *User
	mu    gosync.Mutex
	syncs int
	runs  [][2]time.Time // start and end of each sync
}

func (a *testAttachment) RecordSync(rep Report, _ error) {
	a.mu.Lock()
	a.syncs++
	a.runs = append(a.runs, [2]time.Time{rep.Started, rep.Started.Add(rep.Duration)})
	a.mu.Unlock()
}

func (a *testAttachment) Close() error { return a.u.Close() }

func newTestManager(t *testing.T, o ManagerOptions[*testAttachment]) (*Manager[*testAttachment], *optest.Server) {
	t.Helper()
	data := opgen.Generate(opgen.GenOptions{Seed: 3, Projects: 4, Users: 6, WorkPackages: 30, Comments: 30, WikiPages: 3, Meetings: 3})
	op, base := optesting.Start(t, data, optest.Options{})
	o.DataDir = t.TempDir()
	o.NewClient = func(key string) (UserAPI, error) {
		return openproject.New(openproject.Config{BaseURL: base, APIKey: key, MaxAttempts: 1})
	}
	o.Attach = func(u *User) *testAttachment { return &testAttachment{u: u} }
	o.Schedule = cmp.Or(o.Schedule, "@every 1h")
	m, err := NewManager(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := m.Close(ctx); err != nil {
			t.Error(err)
		}
	})
	return m, op
}

func TestManagerValidateOnce(t *testing.T) {
	m, op := newTestManager(t, ManagerOptions[*testAttachment]{})
	ctx := context.Background()
	var wg gosync.WaitGroup
	for range 32 {
		wg.Go(func() {
			id, err := m.Validate(ctx, optest.AliceKey)
			if err != nil || id.UserID != 2 {
				t.Errorf("alice: %+v %v", id, err)
			}
			if _, err := m.Validate(ctx, "bad-key"); !errors.Is(err, openproject.ErrUnauthenticated) {
				t.Errorf("bad key: %v", err)
			}
		})
	}
	wg.Wait()
	if n := op.RequestCount("/api/v3/users/me"); n != 2 {
		t.Errorf("/users/me requests = %d, want 2 (one per key)", n)
	}
	if _, err := m.Validate(ctx, ""); !errors.Is(err, openproject.ErrUnauthenticated) {
		t.Errorf("empty key: %v", err)
	}
}

func TestManagerKeyCacheExpires(t *testing.T) {
	now := time.Now()
	var mu gosync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	// Without the grace period, so the second check is in the foreground.
	m, op := newTestManager(t, ManagerOptions[*testAttachment]{Now: clock, KeyCacheTTL: time.Minute, KeyGrace: -1})
	ctx := context.Background()
	if _, err := m.Validate(ctx, optest.BobKey); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	now = now.Add(2 * time.Minute)
	mu.Unlock()
	if _, err := m.Validate(ctx, optest.BobKey); err != nil {
		t.Fatal(err)
	}
	if n := op.RequestCount("/api/v3/users/me"); n != 2 {
		t.Errorf("/users/me requests = %d, want 2 (revalidated after the TTL)", n)
	}
}

func TestManagerMaxUsersAndLeases(t *testing.T) {
	m, _ := newTestManager(t, ManagerOptions[*testAttachment]{MaxUsers: 1, IdleTimeout: time.Hour})
	ctx := context.Background()
	l, err := m.Acquire(ctx, optest.AliceKey)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Acquire(ctx, optest.BobKey); !errors.Is(err, ErrTooManyUsers) {
		t.Fatalf("second user: %v, want ErrTooManyUsers", err)
	}
	// The same user shares the entry.
	l2, err := m.Acquire(ctx, optest.AliceKey)
	if err != nil {
		t.Fatal(err)
	}
	if l2.Attachment != l.Attachment {
		t.Error("two leases of one user got different attachments")
	}
	l.Release()
	l2.Release()
	if _, err := m.Acquire(ctx, "bad-key"); !errors.Is(err, openproject.ErrUnauthenticated) {
		t.Errorf("bad key: %v", err)
	}
}

func TestManagerIdleStopReopens(t *testing.T) {
	m, _ := newTestManager(t, ManagerOptions[*testAttachment]{IdleTimeout: 50 * time.Millisecond})
	ctx := context.Background()
	l, err := m.Acquire(ctx, optest.AliceKey)
	if err != nil {
		t.Fatal(err)
	}
	att := l.Attachment
	deadline := time.Now().Add(10 * time.Second)
	for {
		att.mu.Lock()
		n := att.syncs
		att.mu.Unlock()
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no sync")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Held by a lease: never stopped.
	time.Sleep(150 * time.Millisecond)
	if m.ActiveUsers() != 1 {
		t.Fatal("a leased user was stopped")
	}
	l.Release()
	for m.ActiveUsers() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("idle user not stopped")
		}
		time.Sleep(10 * time.Millisecond)
	}
	l, err = m.Acquire(ctx, optest.AliceKey)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	if l.Attachment == att {
		t.Error("reopened user reuses the closed attachment")
	}
	l.Release()
}

func TestManagerSyncLimit(t *testing.T) {
	m, _ := newTestManager(t, ManagerOptions[*testAttachment]{MaxConcurrentSyncs: 1})
	ctx := context.Background()
	var leases []*Lease[*testAttachment]
	for _, k := range []string{optest.AliceKey, optest.BobKey, "opsearch-user-4"} {
		l, err := m.Acquire(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		leases = append(leases, l)
	}
	// Probe the semaphore while syncs run: never more than one holder.
	deadline := time.Now().Add(20 * time.Second)
	for {
		done := 0
		for _, l := range leases {
			a := l.Attachment
			a.mu.Lock()
			if a.syncs > 0 {
				done++
			}
			a.mu.Unlock()
		}
		if done == len(leases) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("syncs did not finish")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// No two syncs overlapped.
	var runs [][2]time.Time
	for _, l := range leases {
		a := l.Attachment
		a.mu.Lock()
		runs = append(runs, a.runs...)
		a.mu.Unlock()
		l.Release()
	}
	for i, a := range runs {
		for _, b := range runs[i+1:] {
			if a[0].Before(b[1]) && b[0].Before(a[1]) {
				t.Errorf("syncs overlapped: %v and %v", a, b)
			}
		}
	}
}

// TestManagerCloseWaitsForRevokedStop: a sync that finds its key revoked
// stops its user from the sync's own callback, in the background; Close
// must not return before that stop has closed the user's files.
func TestManagerCloseWaitsForRevokedStop(t *testing.T) {
	data := opgen.Generate(opgen.GenOptions{Seed: 3, Projects: 4, Users: 6, WorkPackages: 30, Comments: 30, WikiPages: 3, Meetings: 3})
	op, base := optesting.Start(t, data, optest.Options{})
	// /users/me answers; the sync's first listing says the key is revoked.
	op.SetFaults(optest.Faults{PathPrefix: "/api/v3/projects", FailNext: 1 << 30, FailStatus: 401})
	var att *testAttachment
	var attMu gosync.Mutex
	m, err := NewManager(ManagerOptions[*testAttachment]{
		DataDir: t.TempDir(), Schedule: "@every 1h",
		NewClient: func(key string) (UserAPI, error) {
			return openproject.New(openproject.Config{BaseURL: base, APIKey: key, MaxAttempts: 1})
		},
		Attach: func(u *User) *testAttachment {
			attMu.Lock()
			defer attMu.Unlock()
			att = &testAttachment{u: u}
			return att
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	l, err := m.Acquire(t.Context(), optest.AliceKey)
	if err != nil {
		t.Fatal(err)
	}
	l.Release()
	// Wait for the failed sync to be recorded (its stop begins then).
	for {
		attMu.Lock()
		a := att
		attMu.Unlock()
		a.mu.Lock()
		n := a.syncs
		a.mu.Unlock()
		if n > 0 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := m.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// Closed files: the store refuses reads.
	if _, err := att.u.Store.Count(kind.WorkPackage); err == nil {
		t.Error("Close returned while the revoked user's store was still open")
	}
}

// TestManagerOnOpen: the OnOpen hook sees every user the Manager opens,
// with a sync-now function that runs a sync of that user in its
// scheduler, and is undone before the user's files close.
func TestManagerOnOpen(t *testing.T) {
	type hooked struct {
		u       *User
		syncNow func(context.Context) (Report, error)
	}
	opened := make(chan hooked, 2)
	closedOpen := make(chan bool, 2)
	m, _ := newTestManager(t, ManagerOptions[*testAttachment]{
		OnOpen: func(u *User, sn func(context.Context) (Report, error)) func() {
			opened <- hooked{u, sn}
			return func() {
				_, _, err := u.Store.Identity()
				closedOpen <- err == nil
			}
		},
	})
	l, err := m.Acquire(t.Context(), optest.AliceKey)
	if err != nil {
		t.Fatal(err)
	}
	h := <-opened
	if h.u != l.Attachment.u {
		t.Fatalf("the hook got another user than the attachment")
	}
	// The scheduler starts once the (empty) index is checked; until then
	// sync-now says so rather than failing silently.
	var rep Report
	for {
		rep, err = h.syncNow(t.Context())
		if !errors.Is(err, ErrNotSyncing) {
			break
		}
		runtime.Gosched()
	}
	if err != nil || rep.Kinds[kind.WorkPackage] == nil || rep.Kinds[kind.WorkPackage].Fetched == 0 {
		t.Fatalf("sync through the hook: %+v, %v", rep, err)
	}
	l.Release()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := m.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if open := <-closedOpen; !open {
		t.Error("the hook was undone after the user's files closed")
	}
}

// TestManagerKeyGraceDuringOutage: once a key's validation expired, a key
// OpenProject confirmed recently keeps being served while OpenProject is
// down or hangs, without waiting for it; past the grace period the
// outage is reported; the Manager says since when OpenProject is
// unreachable, and forgets it when OpenProject answers again.
func TestManagerKeyGraceDuringOutage(t *testing.T) {
	for _, fault := range []struct {
		name   string
		faults optest.Faults
	}{
		{"down", optest.Faults{FailNext: 1 << 30, FailStatus: 503}},
		{"hanging", optest.Faults{HangNext: 1 << 30}},
	} {
		t.Run(fault.name, func(t *testing.T) {
			t0 := time.Now()
			now := t0
			var mu gosync.Mutex
			clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
			advance := func(d time.Duration) { mu.Lock(); now = t0.Add(d); mu.Unlock() }
			m, op := newTestManager(t, ManagerOptions[*testAttachment]{Now: clock, KeyCacheTTL: time.Minute, KeyGrace: 10 * time.Minute})
			ctx := context.Background()
			if _, err := m.Validate(ctx, optest.AliceKey); err != nil {
				t.Fatal(err)
			}
			if up := m.Upstream(); up.Down {
				t.Fatalf("upstream %+v after a successful check", up)
			}
			op.SetFaults(fault.faults)
			advance(2 * time.Minute) // the validation expired, the grace has not
			// The sweep that drops expired validations runs meanwhile: it
			// must keep one within its grace (it did not, and every
			// request failed a minute or two into an outage).
			m.keyMu.Lock()
			m.pruneKeysLocked(clock())
			m.keyMu.Unlock()
			id, err := m.Validate(ctx, optest.AliceKey)
			if err != nil || id.Login != "alice" {
				t.Fatalf("within the grace period: %+v, %v; want alice served", id, err)
			}
			if fault.name == "hanging" {
				return // the check in flight hangs until the Manager closes
			}
			advance(11 * time.Minute) // past the grace period
			if _, err := m.Validate(ctx, optest.AliceKey); !errors.Is(err, openproject.ErrServer) {
				t.Fatalf("past the grace period: %v, want the server error", err)
			}
			up := m.Upstream()
			if !up.Down || up.Since.Before(t0.Add(2*time.Minute)) || up.LastError == "" {
				t.Errorf("upstream %+v, want down since the first failed check", up)
			}
			op.SetFaults(optest.Faults{})
			if _, err := m.Validate(ctx, optest.AliceKey); err != nil {
				t.Fatal(err)
			}
			if up := m.Upstream(); up.Down {
				t.Errorf("upstream %+v after OpenProject answered again", up)
			}
		})
	}
}

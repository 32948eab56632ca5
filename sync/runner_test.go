package sync

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	gosync "sync"
	"testing"
	"time"

	"github.com/opsearch/opsearch/internal/optesting"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
)

// gateAPI holds every sync at its first call (ListProjects) until the
// test lets it through.
type gateAPI struct {
	API
	entered chan time.Time
	release chan struct{}
}

func (g *gateAPI) ListProjects(ctx context.Context, o openproject.ListOptions) (openproject.Page[openproject.Project], error) {
	g.entered <- time.Now()
	select {
	case <-g.release:
	case <-ctx.Done():
		return openproject.Page[openproject.Project]{}, ctx.Err()
	}
	return g.API.ListProjects(ctx, o)
}

// TestSchedulerSyncNow: a sync asked for while another runs waits for it
// and then runs its own, instead of failing with ErrSyncRunning; before
// Start and after Stop it says the scheduler is not running; a caller
// that leaves stops waiting.
func TestSchedulerSyncNow(t *testing.T) {
	_, base := optesting.Start(t, opgen.Generate(opgen.GenOptions{Seed: 5, WorkPackages: 20, WikiPages: 3, Meetings: 2}), optest.Options{})
	g := &gateAPI{API: newClient(t, base, optest.AliceKey, nil), entered: make(chan time.Time, 4), release: make(chan struct{})}
	w := NewWorker(g, openStore(t), newMemIndex(), Options{})
	var mu gosync.Mutex
	var synced []error
	s, err := NewScheduler(w, SchedulerOptions{Spec: "@every 1h", NoJitter: true, OnSync: func(_ Report, err error) {
		mu.Lock()
		synced = append(synced, err)
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SyncNow(t.Context()); !errors.Is(err, ErrNotStarted) {
		t.Fatalf("SyncNow before Start: %v, want ErrNotStarted", err)
	}
	s.Start(t.Context())
	first := <-g.entered // the start-up sync, held at its first request

	type outcome struct {
		rep Report
		err error
	}
	got := make(chan outcome, 1)
	go func() {
		rep, err := s.SyncNow(t.Context())
		got <- outcome{rep, err}
	}()
	// A caller that gives up while waiting gets its context's error.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := s.SyncNow(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("SyncNow with a cancelled context: %v", err)
	}

	g.release <- struct{}{} // the start-up sync goes on and ends
	second := <-g.entered   // SyncNow's own sync starts after it
	g.release <- struct{}{}
	o := <-got
	if o.err != nil {
		t.Fatalf("SyncNow while a sync ran: %v", o.err)
	}
	if o.rep.Started.Before(first) || second.Before(first) || o.rep.Kinds == nil {
		t.Errorf("SyncNow reported a sync started %v; the running one started %v", o.rep.Started, first)
	}
	mu.Lock()
	n := len(synced)
	mu.Unlock()
	if n != 2 {
		t.Errorf("%d syncs recorded, want 2 (the start-up sync and SyncNow's)", n)
	}
	s.Stop()
	if _, err := s.SyncNow(t.Context()); !errors.Is(err, ErrNotStarted) {
		t.Fatalf("SyncNow after Stop: %v, want ErrNotStarted", err)
	}
}

// fakePublisher records what a Runner hands over.
type fakePublisher struct {
	mu      gosync.Mutex
	user    *User
	worker  *Worker
	openErr error
	syncs   chan error
	events  []string
}

func (p *fakePublisher) SetUser(u *User) *User {
	p.mu.Lock()
	defer p.mu.Unlock()
	old := p.user
	p.user = u
	if u == nil {
		p.events = append(p.events, "unpublish")
	} else {
		p.events = append(p.events, "publish")
	}
	return old
}

func (p *fakePublisher) SetWorker(w *Worker) {
	p.mu.Lock()
	p.worker = w
	p.mu.Unlock()
}

func (p *fakePublisher) SetOpenError(err error) {
	p.mu.Lock()
	p.openErr = err
	p.mu.Unlock()
}

func (p *fakePublisher) RecordSync(_ Report, err error) { p.syncs <- err }

func (p *fakePublisher) state() (*User, []string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.user, append([]string(nil), p.events...), p.openErr
}

var _ Publisher = (*fakePublisher)(nil)

// TestRunner: the runner opens the key's user, hands it to the hook and
// the publisher, syncs at once, syncs on request through the hook, and
// on shutdown withdraws the user, undoes the hook and closes the files,
// in that order.
func TestRunner(t *testing.T) {
	_, base := optesting.Start(t, opgen.Generate(opgen.GenOptions{Seed: 5, WorkPackages: 20, WikiPages: 3, Meetings: 2}), optest.Options{})
	data := t.TempDir()
	pub := &fakePublisher{syncs: make(chan error, 8)}
	var syncNow func(context.Context) (Report, error)
	var hooked *User
	var mu gosync.Mutex
	r, err := NewRunner(RunnerOptions{
		DataDir: data, Client: newClient(t, base, optest.AliceKey, nil), Key: optest.AliceKey,
		Schedule: "@every 1h", Publish: pub,
		OnOpen: func(u *User, sn func(context.Context) (Report, error)) func() {
			mu.Lock()
			hooked, syncNow = u, sn
			mu.Unlock()
			return func() {
				// Still open: the hook is undone before the files close.
				if _, _, err := u.Store.Identity(); err != nil {
					t.Errorf("the store was closed before the hook was undone: %v", err)
				}
				pub.mu.Lock()
				pub.events = append(pub.events, "hook closed")
				pub.mu.Unlock()
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	if err := <-pub.syncs; err != nil {
		t.Fatalf("start-up sync: %v", err)
	}
	u, _, _ := pub.state()
	mu.Lock()
	sn, hu := syncNow, hooked
	mu.Unlock()
	if u == nil || hu != u || u.Identity.Login != "alice" {
		t.Fatalf("published %v, hooked %v; want alice's user in both", u, hu)
	}
	rep, err := sn(t.Context())
	if err != nil || rep.Kinds == nil {
		t.Fatalf("sync through the hook: %+v, %v", rep, err)
	}
	<-pub.syncs
	if ok, err := u.Store.KeyVerified(optest.AliceKey); err != nil || !ok {
		t.Errorf("the key is not remembered for offline use: %v %v", ok, err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	_, events, _ := pub.state()
	if fmt.Sprint(events) != "[publish unpublish hook closed]" {
		t.Errorf("events %v, want publish, unpublish, hook closed", events)
	}
	if _, _, err := u.Store.Identity(); err == nil {
		t.Error("the store is still open after Run returned")
	}
}

// TestRunnerUnverifiedKey: a key the local index does not remember, with
// OpenProject down, gets no published user and the reason; the hook has
// the user (commands beside the server may search it) but its sync-now
// says the process is not syncing yet, and why.
func TestRunnerUnverifiedKey(t *testing.T) {
	srv, base := optesting.Start(t, opgen.Generate(opgen.GenOptions{Seed: 5, WorkPackages: 10, WikiPages: 2, Meetings: 2}), optest.Options{})
	data := t.TempDir()
	// alice's index, synced by a process that did not remember her key.
	u, err := OpenUser(t.Context(), data, newClient(t, base, optest.AliceKey, nil), UserOptions{})
	if err != nil {
		t.Fatal(err)
	}
	syncUser(t, u)
	u.Close()

	srv.SetFaults(optest.Faults{FailNext: 1 << 30, FailStatus: http.StatusServiceUnavailable})
	pub := &fakePublisher{syncs: make(chan error, 8)}
	hooked := make(chan func(context.Context) (Report, error), 1)
	r, err := NewRunner(RunnerOptions{
		DataDir: data, Client: newClient(t, base, optest.AliceKey, nil), Key: optest.AliceKey, Publish: pub,
		OnOpen: func(_ *User, sn func(context.Context) (Report, error)) func() { hooked <- sn; return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	sn := <-hooked
	if _, err := sn(t.Context()); !errors.Is(err, ErrNotSyncing) {
		t.Errorf("sync-now before the key is confirmed: %v, want ErrNotSyncing", err)
	}
	pu, _, openErr := pub.state()
	if pu != nil || !errors.Is(openErr, ErrKeyNotVerified) {
		t.Errorf("published %v with open error %v; want nothing published and ErrKeyNotVerified", pu, openErr)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
}

func TestRetryable(t *testing.T) {
	tests := []struct {
		err  error
		want bool
		wait time.Duration
	}{
		{&LockedError{Dir: "d"}, true, LockedRetry},
		{fmt.Errorf("resolve user: %w", openproject.ErrNetwork), true, RetryMin},
		{openproject.ErrServer, true, RetryMin},
		{context.DeadlineExceeded, true, RetryMin},
		{openproject.ErrUnauthenticated, false, RetryMin},
		{openproject.ErrPermission, false, RetryMin},
		{&IdentityMismatchError{}, false, RetryMin},
		{errors.New("disk full"), false, RetryMin},
	}
	for _, tt := range tests {
		if got := Retryable(tt.err); got != tt.want {
			t.Errorf("Retryable(%v) = %v, want %v", tt.err, got, tt.want)
		}
		if got := RetryPause(tt.err, 0); got != tt.wait {
			t.Errorf("RetryPause(%v, 0) = %v, want %v", tt.err, got, tt.wait)
		}
	}
	if got := RetryPause(openproject.ErrNetwork, 30); got != RetryMax {
		t.Errorf("RetryPause after many attempts = %v, want the cap %v", got, RetryMax)
	}
}

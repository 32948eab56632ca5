package sync

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	gosync "sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/opsearch/opsearch/internal/optesting"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
	"github.com/robfig/cron/v3"
)

// hookAPI wraps the real client: ListProjects (the first call of every
// sync) can panic once and records how many syncs are inside it at once.
type hookAPI struct {
	API
	panics    atomic.Int32
	active    atomic.Int32
	maxActive atomic.Int32
	delay     time.Duration
}

func (h *hookAPI) ListProjects(ctx context.Context, o openproject.ListOptions) (openproject.Page[openproject.Project], error) {
	if h.panics.Add(-1) >= 0 {
		panic("injected panic")
	}
	n := h.active.Add(1)
	defer h.active.Add(-1)
	for {
		m := h.maxActive.Load()
		if n <= m || h.maxActive.CompareAndSwap(m, n) {
			break
		}
	}
	time.Sleep(h.delay)
	return h.API.ListProjects(ctx, o)
}

// syncedLog collects OnSync outcomes.
type syncedLog struct {
	mu   gosync.Mutex
	errs []error
	ch   chan error
}

func (s *syncedLog) on(_ Report, err error) {
	s.mu.Lock()
	s.errs = append(s.errs, err)
	s.mu.Unlock()
	s.ch <- err
}

func (s *syncedLog) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-s.ch:
		return err
	case <-time.After(20 * time.Second):
		t.Fatal("no sync finished")
		return nil
	}
}

func TestScheduler(t *testing.T) {
	// Nothing may reach stdout, which the MCP stdio transport owns.
	stdout := os.Stdout
	r, wpipe, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	os.Stdout = wpipe
	captured := make(chan []byte)
	go func() { b, _ := io.ReadAll(r); captured <- b }()
	defer func() {
		os.Stdout = stdout
		wpipe.Close()
		if out := <-captured; len(out) > 0 {
			t.Errorf("scheduler wrote to stdout: %q", out)
		}
	}()

	_, base := optesting.Start(t, opgen.Generate(opgen.GenOptions{Seed: 5, WorkPackages: 60, WikiPages: 10, Meetings: 5}), optest.Options{})
	h := &hookAPI{API: newClient(t, base, optest.AliceKey, nil), delay: 50 * time.Millisecond}
	h.panics.Store(1)
	var logs bytes.Buffer
	var logMu gosync.Mutex
	logger := slog.New(slog.NewTextHandler(lockedWriter{&logs, &logMu}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	w := NewWorker(h, openStore(t), newMemIndex(), Options{Logger: logger, WikiDeepMissRun: 30})
	done := &syncedLog{ch: make(chan error, 100)}
	s, err := NewScheduler(w, SchedulerOptions{Spec: "@every 1s", NoJitter: true, Logger: logger, OnSync: done.on})
	if err != nil {
		t.Fatal(err)
	}
	s.Start(t.Context())
	defer s.Stop()

	// The start-up sync panics; the panic is recovered and logged, and
	// the worker is usable again.
	panicked := func() bool {
		logMu.Lock()
		defer logMu.Unlock()
		return bytes.Contains(logs.Bytes(), []byte("sync panicked"))
	}
	deadline := time.Now().Add(10 * time.Second)
	for !panicked() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !panicked() {
		t.Fatal("panic not recovered and logged")
	}
	s.Trigger()
	if err := done.wait(t); err != nil {
		t.Fatalf("sync after panic: %v", err)
	}

	// Triggers, cron ticks and manual syncs never overlap.
	var running atomic.Int32
	var wg gosync.WaitGroup
	for range 5 {
		s.Trigger()
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := w.Sync(t.Context()); errors.Is(err, ErrSyncRunning) {
				running.Add(1)
			}
		}()
	}
	wg.Wait()
	if h.maxActive.Load() != 1 {
		t.Errorf("%d syncs ran at once", h.maxActive.Load())
	}
	if running.Load() == 0 {
		t.Error("no concurrent Sync was refused with ErrSyncRunning")
	}
	// cron runs at least once more on its own.
	if err := done.wait(t); err != nil {
		t.Errorf("scheduled sync: %v", err)
	}
	s.Stop()
}

type lockedWriter struct {
	b  *bytes.Buffer
	mu *gosync.Mutex
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func TestStopCancelsSync(t *testing.T) {
	srv, base := optesting.Start(t, opgen.Generate(opgen.GenOptions{Seed: 5, WorkPackages: 60, WikiPages: 10, Meetings: 5}), optest.Options{})
	srv.SetFaults(optest.Faults{PathPrefix: "/api/v3/work_packages", HangNext: 1})
	w := NewWorker(newClient(t, base, optest.AliceKey, nil), openStore(t), newMemIndex(), Options{})
	done := &syncedLog{ch: make(chan error, 10)}
	s, err := NewScheduler(w, SchedulerOptions{OnSync: done.on})
	if err != nil {
		t.Fatal(err)
	}
	s.Start(t.Context())
	time.Sleep(200 * time.Millisecond) // the sync hangs on the work package list
	stopped := make(chan struct{})
	go func() { s.Stop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("Stop did not cancel the running sync")
	}
	if err := done.wait(t); !errors.Is(err, context.Canceled) {
		t.Errorf("stopped sync returned %v", err)
	}
}

func TestJitterSchedule(t *testing.T) {
	inner, err := cron.ParseStandard("@every 2m")
	if err != nil {
		t.Fatal(err)
	}
	j := jitterSchedule{inner: inner}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	seen := map[time.Duration]bool{}
	for range 200 {
		d := j.Next(now).Sub(now)
		if d < time.Minute || d >= 3*time.Minute {
			t.Fatalf("jittered interval %v outside [1m, 3m)", d)
		}
		seen[d.Truncate(10*time.Second)] = true
	}
	if len(seen) < 5 {
		t.Errorf("jitter too regular: %v", seen)
	}
}

func TestBackoff(t *testing.T) {
	var b backoff
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if !b.allow(now) {
		t.Fatal("fresh backoff blocks")
	}
	b.fail(now, time.Minute, 3*time.Minute)
	if b.allow(now.Add(59*time.Second)) || !b.allow(now.Add(time.Minute)) {
		t.Error("first failure should pause one step")
	}
	for range 5 {
		b.fail(now, time.Minute, 3*time.Minute)
	}
	if b.allow(now.Add(179*time.Second)) || !b.allow(now.Add(3*time.Minute)) {
		t.Error("pause not capped at the maximum")
	}
	if !b.reset() || !b.allow(now) {
		t.Error("reset did not clear the pause")
	}
}

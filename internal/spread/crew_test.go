package spread

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// heldCrew returns a crew held for the test, with its helper running.
func heldCrew(t *testing.T) *Crew {
	t.Helper()
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("a crew helps only with two cores")
	}
	c := NewCrew()
	release := c.Hold()
	t.Cleanup(func() {
		release()
		c.Wait()
	})
	if !c.on.Load() {
		t.Fatal("Hold did not start the helper")
	}
	return c
}

func TestCrewRunsAnOfferOnTheHelper(t *testing.T) {
	c := heldCrew(t)
	ran := make(chan struct{})
	j := c.offer(func() { close(ran) }, false)
	if j == nil {
		t.Fatal("a free running helper refused the offer")
	}
	// The caller neither runs nor waits for it: only the helper can.
	<-ran
	j.await()
	if got := j.state.Load(); got != jobDone {
		t.Fatalf("job state %d, want done", got)
	}
	if c.slot.Load() != nil {
		t.Fatal("the slot still holds the job")
	}
}

func TestCrewBusyOrAbsentRefuses(t *testing.T) {
	if (*Crew)(nil).offer(func() {}, true) != nil {
		t.Fatal("a nil crew took an offer")
	}
	if NewCrew().offer(func() {}, true) != nil {
		t.Fatal("a crew nobody held took an offer")
	}
	c := heldCrew(t)
	free := occupy(t, c)
	if c.offer(func() {}, false) != nil {
		t.Fatal("a helper busy with a job took another")
	}
	free()
}

// TestCrewQueuesBehindABusyHelper: an offer made to a busy helper with
// queue set waits for it rather than being refused, and the helper runs
// it once it is done with its job.
func TestCrewQueuesBehindABusyHelper(t *testing.T) {
	c := heldCrew(t)
	free := occupy(t, c)
	var ran atomic.Bool
	j := c.offer(func() { ran.Store(true) }, true)
	if j == nil {
		t.Fatal("a busy helper refused an offer made to wait for it")
	}
	if ran.Load() {
		t.Fatal("the queued offer ran while the helper was busy")
	}
	free()
	j.await()
	if !ran.Load() || j.state.Load() != jobDone {
		t.Fatalf("the queued offer did not run on the helper: ran %v, state %d", ran.Load(), j.state.Load())
	}
}

// occupy gives c's helper a job that runs until free is called, and
// returns once the helper runs it.
func occupy(t *testing.T, c *Crew) (free func()) {
	t.Helper()
	block, started := make(chan struct{}), make(chan struct{})
	j := c.offer(func() { close(started); <-block }, false)
	if j == nil {
		t.Fatal("a free running helper refused the offer")
	}
	<-started
	return func() {
		close(block)
		j.await()
	}
}

func TestCrewWithdrawRunsNothing(t *testing.T) {
	c := heldCrew(t)
	free := occupy(t, c)
	// The helper is busy, so this one waits in the slot until withdrawn.
	var ran atomic.Bool
	j := &job{f: func() { ran.Store(true) }, done: make(chan struct{})}
	if !c.slot.CompareAndSwap(nil, j) {
		t.Fatal("slot not free")
	}
	if !c.withdraw(j) {
		t.Fatal("an offer nobody started could not be withdrawn")
	}
	free()
	if ran.Load() {
		t.Fatal("a withdrawn job ran")
	}
}

func TestRunWithCrew(t *testing.T) {
	c := heldCrew(t)
	ctx := WithCrew(context.Background(), c)
	boom := errors.New("boom")
	for _, n := range []int{0, 1, 2, 3, 17, 1000} {
		calls := make([]atomic.Int32, n)
		err := Run(ctx, n, 4, func(take func() (int, bool)) error {
			for i, ok := take(); ok; i, ok = take() {
				calls[i].Add(1)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		for i := range calls {
			if got := calls[i].Load(); got != 1 {
				t.Fatalf("n=%d: index %d taken %d times, want 1", n, i, got)
			}
		}
	}
	// An error from any call, the helper's included, is returned.
	var calls atomic.Int32
	err := Run(ctx, 100, 2, func(take func() (int, bool)) error {
		if calls.Add(1) == 2 {
			return boom
		}
		for _, ok := take(); ok; _, ok = take() {
			time.Sleep(10 * time.Microsecond)
		}
		return nil
	})
	if calls.Load() == 2 && !errors.Is(err, boom) {
		t.Fatalf("Run returned %v, want boom from the second call", err)
	}
}

func TestGo(t *testing.T) {
	for _, tc := range []struct {
		name string
		ctx  func(t *testing.T) context.Context
	}{
		{"no crew", func(*testing.T) context.Context { return context.Background() }},
		{"crew", func(t *testing.T) context.Context { return WithCrew(context.Background(), heldCrew(t)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ran atomic.Int32
			wait := Go(tc.ctx(t), func() { ran.Add(1) })
			wait()
			if got := ran.Load(); got != 1 {
				t.Fatalf("f ran %d times, want 1", got)
			}
		})
	}
}

func TestCrewHelperComesAndGoes(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("a crew helps only with two cores")
	}
	c := NewCrew()
	for range 3 {
		release := c.Hold()
		if !c.on.Load() {
			t.Fatal("a lone hold did not start the helper")
		}
		// A second search keeps the cores busy by itself: the helper
		// returns while both hold the crew.
		second := c.Hold()
		c.Wait()
		if c.on.Load() {
			t.Fatal("the helper runs with two holders")
		}
		second()
		second() // a release counts once
		if got := c.holds.Load(); got != 1 {
			t.Fatalf("holds %d after one of two releases, twice, want 1", got)
		}
		release()
		c.Wait()
		if c.on.Load() || c.holds.Load() != 0 {
			t.Fatalf("after the last release: on %v, holds %d", c.on.Load(), c.holds.Load())
		}
	}
}

func TestRunHandsACallToTheHelper(t *testing.T) {
	c := heldCrew(t)
	ctx := WithCrew(context.Background(), c)
	// Both calls wait until both are running, so one must be the
	// helper's: Run starts no goroutine of its own when the helper is
	// free, and only the helper runs with busy set.
	var in atomic.Int32
	var onHelper atomic.Bool
	err := Run(ctx, 2, 2, func(take func() (int, bool)) error {
		in.Add(1)
		deadline := time.Now().Add(10 * time.Second)
		for in.Load() < 2 {
			if time.Now().After(deadline) {
				return errors.New("the second call never started")
			}
			runtime.Gosched()
		}
		if c.busy.Load() {
			onHelper.Store(true)
		}
		for _, ok := take(); ok; _, ok = take() {
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !onHelper.Load() {
		t.Fatal("no call ran on the crew's helper")
	}
}

package spread

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// A Crew keeps one helper goroutine running on a second core while a
// search runs alone, so that the work it spreads (Run, Each, Go) starts
// there at once instead of waiting for the scheduler to wake an idle
// core.
//
// On a 2 vCPU virtual machine (Firecracker, no guest idle polling) a
// goroutine started while the other core idled began running after 88,
// 135 and over 400 us (p10, p50, p90 of 200 starts): the idle core's
// thread sleeps, and waking it goes through the hypervisor. Until then
// the new goroutine waits in the caller's run queue, so a search's
// "parallel" sections often ran one after the other: an execution trace
// of the 10,000 work package bench's queries showed the small kinds'
// request starting only when the main request had ended, and loading
// workers joining 50-150 us late. A spinning helper picked up the same
// work in 0.4 us.
//
// The helper runs while one search holds the crew and returns when it
// lets go, or when a second search holds it too: two searches keep the
// cores busy by themselves, and under 32 concurrent searches on 2 cores
// a helper spinning through all of them cost throughput (a run of the
// HTTP load benchmark fell to 458 requests/s from 639-647). Spinning on
// after a search, for the next one, gained nothing measurable with
// queries back to back and cost with queries 5 ms apart, and it would
// take a core from the answer's encoding and from the client reading
// it. It runs the work of one caller at a time. A caller that finds it
// gone starts a goroutine as before; one that finds it busy does too on
// three cores or more, and on two leaves the work waiting for it
// (queueBehindBusy). At a million work packages that took the p99 of a
// search collected in parts from 40.7-42.2 ms to 30.8-31.5: the main
// request's second part waits for the helper to end the small kinds'
// request instead of for a core. With one core a Crew does nothing.
//
// A nil *Crew is valid and never helps.
type Crew struct {
	holds atomic.Int32
	// on reports that a helper runs and takes work; it is cleared by the
	// helper before its last check for holders and work (loop).
	on atomic.Bool
	// slot holds the one job offered to the helper; busy is set while
	// the helper runs one.
	slot atomic.Pointer[job]
	busy atomic.Bool

	// mu serializes starting the helper with its decision to return.
	mu      sync.Mutex
	running bool
	exited  chan struct{} // closed when the current helper returns
}

// NewCrew returns a Crew with no helper running.
func NewCrew() *Crew { return &Crew{} }

// Hold marks a search under way, starting the helper if this is the
// only one and it is not running; release ends the hold. Holds nest.
func (c *Crew) Hold() (release func()) {
	if c == nil || runtime.GOMAXPROCS(0) < 2 {
		return func() {}
	}
	if c.holds.Add(1) == 1 && !c.on.Load() {
		c.mu.Lock()
		if !c.running {
			c.running = true
			c.on.Store(true)
			c.exited = make(chan struct{})
			go c.loop(c.exited)
		}
		c.mu.Unlock()
	}
	var once sync.Once
	return func() { once.Do(func() { c.holds.Add(-1) }) }
}

// Wait returns when no helper runs, which is soon after the last holder
// let go. Tests use it to leave no goroutine behind.
func (c *Crew) Wait() {
	if c == nil {
		return
	}
	c.mu.Lock()
	exited := c.exited
	c.mu.Unlock()
	if exited != nil {
		<-exited
	}
}

// job states.
const (
	jobOffered int32 = iota
	jobTaken
	jobDone
	jobWithdrawn
)

type job struct {
	f     func()
	state atomic.Int32
	done  chan struct{}
}

// yieldEvery is how often a spinning helper lets other goroutines on its
// core run (a goroutine woken there waits for it).
const yieldEvery = 20 * time.Microsecond

func (c *Crew) loop(exited chan struct{}) {
	defer close(exited)
	lastYield := time.Now()
	for spins := 0; ; spins++ {
		if j := c.slot.Load(); j != nil && c.slot.CompareAndSwap(j, nil) {
			if j.state.CompareAndSwap(jobOffered, jobTaken) {
				c.busy.Store(true)
				j.f()
				c.busy.Store(false)
				j.state.Store(jobDone)
				close(j.done)
			}
			continue
		}
		if spins%128 != 0 {
			continue
		}
		if now := time.Now(); now.Sub(lastYield) >= yieldEvery {
			runtime.Gosched()
			lastYield = time.Now()
		}
		if c.holds.Load() == 1 {
			continue
		}
		c.mu.Lock()
		c.on.Store(false)
		if c.holds.Load() == 1 || c.slot.Load() != nil {
			// A lone holder or an offer came meanwhile: it saw on set.
			c.on.Store(true)
			c.mu.Unlock()
			continue
		}
		c.running = false
		c.mu.Unlock()
		return
	}
}

// offer hands f to the helper if it runs and is free, or, with queue
// set, if it runs at all: a busy helper takes f when it is done with its
// job, unless the caller withdraws it first.
func (c *Crew) offer(f func(), queue bool) *job {
	if c == nil || !c.on.Load() || (c.busy.Load() && !queue) || c.slot.Load() != nil {
		return nil
	}
	j := &job{f: f, done: make(chan struct{})}
	if !c.slot.CompareAndSwap(nil, j) {
		return nil
	}
	if !c.on.Load() && c.slot.CompareAndSwap(j, nil) {
		// The helper returned before it could see the offer.
		return nil
	}
	return j
}

// withdraw takes back an offer the helper has not started, reporting
// whether it did.
func (c *Crew) withdraw(j *job) bool {
	if !j.state.CompareAndSwap(jobOffered, jobWithdrawn) {
		return false
	}
	c.slot.CompareAndSwap(j, nil)
	return true
}

// await returns when the helper has run j. The helper is running it, so
// the caller spins a little before it blocks: blocking would hand the
// wake-up to the helper's core, where the spinning helper holds it until
// its next yield.
func (j *job) await() {
	for i := 0; i < 1<<16; i++ {
		if j.state.Load() == jobDone {
			return
		}
	}
	<-j.done
}

type crewKey struct{}

// WithCrew returns ctx carrying c for Run, Each and Go.
func WithCrew(ctx context.Context, c *Crew) context.Context {
	return context.WithValue(ctx, crewKey{}, c)
}

func crewOf(ctx context.Context) *Crew {
	c, _ := ctx.Value(crewKey{}).(*Crew)
	return c
}

// queueBehindBusy reports whether an offer should wait for a busy helper
// rather than go to a new goroutine: with two cores, the caller and the
// busy helper hold both, so a new goroutine would wait in a run queue
// until one of them is done, and the helper, when done, is already
// running.
func queueBehindBusy() bool { return runtime.GOMAXPROCS(0) <= 2 }

// Go runs f beside the caller, on ctx's crew's helper when it is free,
// else on a new goroutine; wait returns when f has returned.
func Go(ctx context.Context, f func()) (wait func()) {
	c := crewOf(ctx)
	if j := c.offer(f, queueBehindBusy()); j != nil {
		return func() {
			if c.withdraw(j) {
				// The helper never started it: the caller runs it.
				f()
				return
			}
			j.await()
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	return func() { <-done }
}

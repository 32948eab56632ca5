package access_test

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/opsearch/opsearch/access"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/store"
)

// exchange is an in-memory access.Exchange: what the replicas' shared
// store holds for one user, and its claim.
type exchange struct {
	mu        sync.Mutex
	answers   map[int64]*access.Answers
	claimed   bool // by a replica outside the test's trackers
	publishes int
	fail      error // every call fails with it
}

func (x *exchange) Answers(_ context.Context, user int64) (*access.Answers, bool, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.fail != nil {
		return nil, false, x.fail
	}
	a, ok := x.answers[user]
	return a, ok, nil
}

func (x *exchange) Publish(_ context.Context, user int64, a *access.Answers) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.fail != nil {
		return x.fail
	}
	if x.answers == nil {
		x.answers = map[int64]*access.Answers{}
	}
	x.answers[user] = a
	x.publishes++
	return nil
}

func (x *exchange) Claim(context.Context, int64) (func(), bool, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.fail != nil {
		return func() {}, false, x.fail
	}
	if x.claimed {
		return func() {}, false, nil
	}
	x.claimed = true
	return func() {
		x.mu.Lock()
		x.claimed = false
		x.mu.Unlock()
	}, true, nil
}

var _ access.Exchange = (*exchange)(nil)

// api is OpenProject as one user sees it: projects 1 and 2, nothing
// else; it counts the requests.
type api struct{ calls atomic.Int64 }

func (a *api) ListProjects(context.Context, openproject.ListOptions) (openproject.Page[openproject.Project], error) {
	a.calls.Add(1)
	ps := []openproject.Project{{ID: 1}, {ID: 2}}
	return openproject.Page[openproject.Project]{Items: ps, Total: 2, Count: 2, PageSize: 100, Offset: 1}, nil
}

func (a *api) WorkPackageCountsByProject(context.Context, openproject.Filters) (openproject.WorkPackageCounts, error) {
	a.calls.Add(1)
	return openproject.WorkPackageCounts{ByProject: map[int64]int{}}, nil
}

func (a *api) WorkPackageIDPage(context.Context, openproject.ListOptions) (openproject.Page[int64], error) {
	a.calls.Add(1)
	return openproject.Page[int64]{PageSize: 100, Offset: 1}, nil
}

func (a *api) ListMeetings(context.Context, openproject.ListOptions) (openproject.Page[openproject.Meeting], error) {
	a.calls.Add(1)
	return openproject.Page[openproject.Meeting]{}, openproject.ErrUnsupported
}

func (a *api) WikiPage(context.Context, int64) (openproject.WikiPage, error) {
	a.calls.Add(1)
	return openproject.WikiPage{}, openproject.ErrNotFound
}

func (a *api) Activities(context.Context, int64) ([]openproject.Activity, error) {
	a.calls.Add(1)
	return nil, nil
}

var _ access.API = (*api)(nil)

// replicas returns the holdings of an empty shared store and two
// replicas' trackers of user 7 sharing x, each asking through its own
// api.
func replicas(t *testing.T, x *exchange) (a, b *access.Tracker, apiA, apiB *api) {
	t.Helper()
	st, err := store.Open(t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	held := access.NewHoldingsCache(st)
	apiA, apiB = &api{}, &api{}
	a, b = access.NewTracker(apiA, held, 7, access.Options{}), access.NewTracker(apiB, held, 7, access.Options{})
	a.Share(x, time.Hour, nil)
	b.Share(x, time.Hour, nil)
	return a, b, apiA, apiB
}

// TestTrackerShare: among replicas, a user's view is asked for by one at
// a time; the others derive it from the answers it shares.
func TestTrackerShare(t *testing.T) {
	t.Run("the other replica derives", func(t *testing.T) {
		x := &exchange{}
		a, b, apiA, apiB := replicas(t, x)
		va, err := a.Refresh(t.Context(), true)
		if err != nil {
			t.Fatal(err)
		}
		if apiA.calls.Load() == 0 || x.publishes != 1 {
			t.Fatalf("replica a: %d requests, %d answers shared; want some, and one", apiA.calls.Load(), x.publishes)
		}
		vb, err := b.Renew(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if n := apiB.calls.Load(); n != 0 {
			t.Errorf("replica b asked OpenProject %d times for a view a had just shared", n)
		}
		if !reflect.DeepEqual(vb.Visibility, va.Visibility) || !vb.At.Equal(va.At) {
			t.Errorf("b's view %+v (at %v), a's %+v (at %v)", vb.Visibility, vb.At, va.Visibility, va.At)
		}
		// b's view is a's answers: nothing newer is shared, so b's next
		// renewal claims the user and asks itself, and shares.
		if _, err := b.Renew(t.Context()); err != nil {
			t.Fatal(err)
		}
		if apiB.calls.Load() == 0 || x.publishes != 2 {
			t.Errorf("b's renewal with nothing newer shared: %d requests, %d answers shared; want some, and two", apiB.calls.Load(), x.publishes)
		}
		if x.claimed {
			t.Error("the claim was not given back")
		}
	})

	t.Run("waits for the replica that holds the claim", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			x := &exchange{claimed: true}
			a, b, _, apiB := replicas(t, x)
			// The replica holding the claim shares its answers after two
			// seconds; a computes them here, as it would.
			va, err := a.Refresh(t.Context(), true)
			if err != nil {
				t.Fatal(err)
			}
			x.mu.Lock()
			shared := x.answers[7]
			delete(x.answers, 7)
			x.mu.Unlock()
			go func() {
				time.Sleep(2 * time.Second)
				fresh := *shared
				fresh.At = time.Now()
				_ = x.Publish(context.Background(), 7, &fresh)
			}()
			start := time.Now()
			vb, err := b.Renew(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if waited := time.Since(start); waited < 2*time.Second || waited >= 15*time.Second {
				t.Errorf("b's renewal returned after %v; want once the answers came, 2 s later", waited)
			}
			if n := apiB.calls.Load(); n != 0 {
				t.Errorf("b asked OpenProject %d times while another replica computed the view", n)
			}
			if !reflect.DeepEqual(vb.Visibility, va.Visibility) {
				t.Errorf("b's view %+v, the shared one %+v", vb.Visibility, va.Visibility)
			}
		})
	})

	t.Run("asks when the claim holder never shares", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			x := &exchange{claimed: true}
			_, b, _, apiB := replicas(t, x)
			start := time.Now()
			if _, err := b.Renew(t.Context()); err != nil {
				t.Fatal(err)
			}
			if waited := time.Since(start); waited < 15*time.Second {
				t.Errorf("b gave up waiting after %v, want 15 s", waited)
			}
			if apiB.calls.Load() == 0 {
				t.Error("b has a view without asking anyone")
			}
		})
	})

	t.Run("asks when the exchange fails", func(t *testing.T) {
		x := &exchange{fail: errors.New("store unreachable")}
		_, b, _, apiB := replicas(t, x)
		if _, err := b.Renew(t.Context()); err != nil {
			t.Fatalf("a failing exchange failed the renewal: %v", err)
		}
		if apiB.calls.Load() == 0 {
			t.Error("b has a view without asking anyone")
		}
	})

	t.Run("old answers are not taken", func(t *testing.T) {
		x := &exchange{}
		a, b, _, apiB := replicas(t, x)
		if _, err := a.Refresh(t.Context(), true); err != nil {
			t.Fatal(err)
		}
		x.mu.Lock()
		old := *x.answers[7]
		old.At = old.At.Add(-2 * time.Hour) // beyond the hour they are shared for
		x.answers[7] = &old
		x.mu.Unlock()
		if _, err := b.Renew(t.Context()); err != nil {
			t.Fatal(err)
		}
		if apiB.calls.Load() == 0 {
			t.Error("b took answers older than the shared period instead of asking")
		}
	})
}

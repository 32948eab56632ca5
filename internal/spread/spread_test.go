package spread_test

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/opsearch/opsearch/internal/spread"
)

func TestEachCallsEveryIndexOnce(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 17, 1000} {
		calls := make([]atomic.Int32, n)
		spread.Each(context.Background(), n, func(i int) { calls[i].Add(1) })
		for i := range calls {
			if c := calls[i].Load(); c != 1 {
				t.Fatalf("n=%d: f(%d) called %d times, want 1", n, i, c)
			}
		}
	}
}

func TestRun(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("needs two cores to run two workers")
	}
	boom := errors.New("boom")
	tests := []struct {
		name        string
		n, limit    int
		fail        int // index whose worker returns boom; -1: none
		wantWorkers int
		wantErr     error
	}{
		{"one worker under limit 1", 50, 1, -1, 1, nil},
		{"one item, one worker", 1, 4, -1, 1, nil},
		{"two workers at most", 50, 2, -1, 2, nil},
		{"an error is returned", 50, 2, 7, 2, boom},
	}
	for _, tc := range tests {
		// In a synctest bubble the guard below fires as soon as every
		// worker waits, instead of after ten real seconds.
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				calls := make([]atomic.Int32, tc.n)
				var workers atomic.Int32
				started := make(chan struct{})
				err := spread.Run(context.Background(), tc.n, tc.limit, func(take func() (int, bool)) error {
					if workers.Add(1) == int32(tc.wantWorkers) {
						close(started)
					}
					// Every worker waits for all of them, so each takes
					// indexes: the test sees how many Run started. A Run
					// that starts too few fails below, not by hanging.
					select {
					case <-started:
					case <-time.After(10 * time.Second):
					}
					var failed error
					for i, ok := take(); ok; i, ok = take() {
						calls[i].Add(1)
						if i == tc.fail {
							failed = boom
						}
					}
					return failed
				})
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				if w := workers.Load(); w != int32(tc.wantWorkers) {
					t.Errorf("%d workers, want %d", w, tc.wantWorkers)
				}
				for i := range calls {
					if c := calls[i].Load(); c != 1 {
						t.Fatalf("index %d taken %d times, want 1", i, c)
					}
				}
			})
		})
	}
}

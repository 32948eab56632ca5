package sync

import (
	"math/rand/v2"
	gosync "sync"
	"testing"
	"time"
)

func TestLatencyHistQuantiles(t *testing.T) {
	ms := time.Millisecond
	top := latencyOf(latencyBuckets - 1) // about 17 minutes
	for _, tc := range []struct {
		name string
		add  []time.Duration
		want RequestLatency // each within latencyError of the figure
	}{
		{name: "none"},
		{name: "one", add: []time.Duration{20 * ms}, want: RequestLatency{20 * ms, 20 * ms, 20 * ms, 20 * ms}},
		{
			// 89 requests of 20 ms, 10 of 40 ms and one of 150 ms: the
			// mean is 23.3 ms.
			name: "a tail",
			add:  append(append(repeat(20*ms, 89), repeat(40*ms, 10)...), 150*ms),
			want: RequestLatency{23300 * time.Microsecond, 20 * ms, 40 * ms, 40 * ms},
		},
		{
			name: "the 99th is the slowest of a hundred",
			add:  append(repeat(20*ms, 98), 150*ms, 150*ms),
			want: RequestLatency{22600 * time.Microsecond, 20 * ms, 20 * ms, 150 * ms},
		},
		{name: "at most a microsecond", add: []time.Duration{0, 300 * time.Nanosecond}, want: RequestLatency{150, time.Microsecond, time.Microsecond, time.Microsecond}},
		{name: "over any timeout", add: []time.Duration{time.Hour}, want: RequestLatency{time.Hour, top, top, top}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h latencyHist
			// Order does not matter.
			for _, i := range rand.Perm(len(tc.add)) {
				h.add(tc.add[i])
			}
			got := h.stats()
			for _, q := range []struct {
				name      string
				got, want time.Duration
			}{{"median", got.Median, tc.want.Median}, {"p90", got.P90, tc.want.P90}, {"p99", got.P99, tc.want.P99}} {
				if !near(q.got, q.want) {
					t.Errorf("%s %v, want %v", q.name, q.got, q.want)
				}
			}
			if got.Mean != tc.want.Mean {
				t.Errorf("mean %v, want %v (exact)", got.Mean, tc.want.Mean)
			}
		})
	}
}

// TestLatencyHistBuckets: every latency from a microsecond to a minute
// comes back within latencyError of itself.
func TestLatencyHistBuckets(t *testing.T) {
	for d := time.Microsecond; d <= time.Minute; d = d * 21 / 20 {
		if got := latencyOf(latencyBucket(d)); !near(got, d) {
			t.Fatalf("%v comes back as %v", d, got)
		}
	}
}

// TestLatencyHistConcurrent: requests running in parallel all count.
func TestLatencyHistConcurrent(t *testing.T) {
	var h latencyHist
	var wg gosync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				h.add(20 * time.Millisecond)
			}
		})
	}
	wg.Wait()
	var n int64
	for i := range h.counts {
		n += h.counts[i].Load()
	}
	if n != 8000 {
		t.Errorf("counted %d requests, want 8000", n)
	}
}

// latencyError is the largest relative error of a quantile: half a
// bucket's width, sixteen buckets a doubling.
const latencyError = 0.022

func near(got, want time.Duration) bool {
	if want == 0 {
		return got == 0
	}
	r := float64(got)/float64(want) - 1
	return r <= latencyError && r >= -latencyError
}

func repeat(d time.Duration, n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = d
	}
	return out
}

package sync

import (
	"math"
	"sync/atomic"
	"time"
)

// RequestLatency is how long a kind's HTTP requests took, from sending
// to the answer's last byte decoded, as the sync's client saw them: the
// server's response time, the network's, and whatever this machine
// added. Set against the API's own latency it tells whether a slow sync
// waited for the server or for this machine. Zero when the kind made no
// request.
type RequestLatency struct {
	// Mean is what sets a kind's pace: with every slot busy, its time is
	// its requests × Mean ÷ the concurrency. The percentiles show how
	// the requests spread around it.
	Mean, Median, P90, P99 time.Duration
}

// latencyHist counts request latencies in logarithmic buckets, sixteen
// per doubling from 1 µs, so its memory is the same for ten requests and
// a million, and each quantile is within 2.2% of the true one (the mean
// is exact). Safe for concurrent use: a kind's requests run in parallel.
type latencyHist struct {
	counts [latencyBuckets]atomic.Int64
	sum    atomic.Int64 // nanoseconds, for the exact mean
}

const (
	// latencySubBuckets is the number of buckets per doubling.
	latencySubBuckets = 16
	// latencyBuckets covers 1 µs to 2^30 µs (about 18 minutes), beyond
	// any request's timeout.
	latencyBuckets = 30*latencySubBuckets + 1
)

// latencyBucket returns d's bucket: the lowest holds everything up to
// 1 µs, the highest everything from about 17 minutes.
func latencyBucket(d time.Duration) int {
	us := float64(d) / float64(time.Microsecond)
	if us <= 1 {
		return 0
	}
	return min(latencyBuckets-1, int(math.Log2(us)*latencySubBuckets)+1)
}

// latencyOf is the middle (geometric) of bucket b's range.
func latencyOf(b int) time.Duration {
	if b == 0 {
		return time.Microsecond
	}
	us := math.Exp2((float64(b-1) + 0.5) / latencySubBuckets)
	return time.Duration(us * float64(time.Microsecond))
}

// add counts one request that took d.
func (h *latencyHist) add(d time.Duration) {
	h.counts[latencyBucket(d)].Add(1)
	h.sum.Add(int64(d))
}

// stats returns the mean, the median, and the 90th and 99th percentiles
// of what was added.
func (h *latencyHist) stats() RequestLatency {
	var counts [latencyBuckets]int64
	var n int64
	for i := range h.counts {
		counts[i] = h.counts[i].Load()
		n += counts[i]
	}
	if n == 0 {
		return RequestLatency{}
	}
	// quantile is the value below which a share q of the requests fall:
	// the bucket holding the request of rank ceil(q×n).
	quantile := func(q float64) time.Duration {
		rank := max(1, int64(math.Ceil(q*float64(n))))
		var seen int64
		for b, c := range counts {
			if seen += c; seen >= rank {
				return latencyOf(b)
			}
		}
		return latencyOf(latencyBuckets - 1)
	}
	return RequestLatency{Mean: time.Duration(h.sum.Load() / n), Median: quantile(0.5), P90: quantile(0.9), P99: quantile(0.99)}
}

package sync

import (
	"errors"
	"math"
	"time"

	"github.com/opsearch/opsearch/kind"
)

// Summary is a Report in plain data, as `opsearch sync --json` prints it
// and the control socket carries it: errors become their messages.
type Summary struct {
	Started    time.Time `json:"started"`
	DurationMS int64     `json:"durationMs"`
	Requests   int       `json:"requests"`
	// Concurrency, PeakConcurrency and Backoffs are the Report's: the
	// limit on parallel per-item requests the sync settled on, the
	// highest it reached and how often it was halved.
	Concurrency     int `json:"concurrency,omitempty"`
	PeakConcurrency int `json:"peakConcurrency,omitempty"`
	Backoffs        int `json:"backoffs,omitempty"`
	// MergeMS is the Report's Merge: the index's merge after the writes.
	MergeMS int64 `json:"mergeMs,omitempty"`
	// Kinds is keyed by kind, in the singular; decoding also accepts the
	// plural keys of an earlier opsearch (kind.Kind.UnmarshalText).
	Kinds map[kind.Kind]KindSummary `json:"kinds"`
}

// KindSummary is a KindReport in plain data.
type KindSummary struct {
	Fetched     int    `json:"fetched"`
	Updated     int    `json:"updated"`
	Deleted     int    `json:"deleted"`
	Error       string `json:"error,omitempty"`
	Unsupported bool   `json:"unsupported,omitempty"`
	// DurationMS and Requests are the kind's share of the sync.
	DurationMS int64 `json:"durationMs,omitempty"`
	Requests   int   `json:"requests,omitempty"`
	// LatencyMS is how long the kind's requests took (KindReport.Latency).
	LatencyMS *LatencySummary `json:"latencyMs,omitempty"`
}

// LatencySummary is a RequestLatency in milliseconds.
type LatencySummary struct {
	Mean   float64 `json:"mean"`
	Median float64 `json:"median"`
	P90    float64 `json:"p90"`
	P99    float64 `json:"p99"`
}

// latencySummary returns l in milliseconds, nil when it is zero.
func latencySummary(l RequestLatency) *LatencySummary {
	if l == (RequestLatency{}) {
		return nil
	}
	ms := func(d time.Duration) float64 { return math.Round(float64(d)/float64(time.Millisecond)*1000) / 1000 }
	return &LatencySummary{Mean: ms(l.Mean), Median: ms(l.Median), P90: ms(l.P90), P99: ms(l.P99)}
}

// latency returns s as a RequestLatency.
func (s *LatencySummary) latency() RequestLatency {
	if s == nil {
		return RequestLatency{}
	}
	d := func(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }
	return RequestLatency{Mean: d(s.Mean), Median: d(s.Median), P90: d(s.P90), P99: d(s.P99)}
}

// Summary returns r in plain data.
func (r Report) Summary() Summary {
	s := Summary{Started: r.Started, DurationMS: r.Duration.Milliseconds(), Requests: r.Requests,
		Concurrency: r.Concurrency, PeakConcurrency: r.PeakConcurrency, Backoffs: r.Backoffs,
		MergeMS: r.Merge.Milliseconds(), Kinds: map[kind.Kind]KindSummary{}}
	for k, kr := range r.Kinds {
		ks := KindSummary{Fetched: kr.Fetched, Updated: kr.Updated, Deleted: kr.Deleted, Unsupported: kr.Unsupported,
			DurationMS: kr.Duration.Milliseconds(), Requests: kr.Requests, LatencyMS: latencySummary(kr.Latency)}
		if kr.Err != nil {
			ks.Error = kr.Err.Error()
		}
		s.Kinds[k] = ks
	}
	return s
}

// Report turns s back into a Report, each kind's error a plain error
// with its message, for printing a sync that ran in another process.
func (s Summary) Report() Report {
	r := Report{Started: s.Started, Duration: time.Duration(s.DurationMS) * time.Millisecond, Requests: s.Requests,
		Concurrency: s.Concurrency, PeakConcurrency: s.PeakConcurrency, Backoffs: s.Backoffs,
		Merge: time.Duration(s.MergeMS) * time.Millisecond, Kinds: map[kind.Kind]*KindReport{}}
	for k, ks := range s.Kinds {
		kr := &KindReport{Fetched: ks.Fetched, Updated: ks.Updated, Deleted: ks.Deleted, Unsupported: ks.Unsupported,
			Duration: time.Duration(ks.DurationMS) * time.Millisecond, Requests: ks.Requests, Latency: ks.LatencyMS.latency()}
		if ks.Error != "" {
			kr.Err = errors.New(ks.Error)
		}
		r.Kinds[k] = kr
	}
	return r
}

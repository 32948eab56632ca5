package eval

import (
	"bytes"
	"context"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/opsearch/opsearch/sync"
)

// TestBenchSmall runs the whole benchmark on a tiny data set.
func TestBenchSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("syncs a fake server")
	}
	rep, err := Bench(context.Background(), BenchOptions{WorkPackages: 300, Latency: time.Millisecond, Queries: 20, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Queries != 20 {
		t.Errorf("ran %d queries, want 20", rep.Queries)
	}
	if rep.Opsearch.RequestsPerQuery != 0 {
		t.Errorf("opsearch made %.1f API requests per query, want 0", rep.Opsearch.RequestsPerQuery)
	}
	// Two candidate requests plus two per enriched work package.
	if rep.Reference.RequestsPerQuery < 2 {
		t.Errorf("the reference made %.1f requests per query, want at least 2", rep.Reference.RequestsPerQuery)
	}
	if rep.Sync.Requests == 0 || rep.Sync.Documents == 0 || rep.Sync.IndexMB <= 0 {
		t.Errorf("sync figures missing: %+v", rep.Sync)
	}
	if rep.Opsearch.Recall10 < rep.Reference.Recall10 {
		t.Errorf("opsearch recall@10 %.4f below the reference's %.4f", rep.Opsearch.Recall10, rep.Reference.Recall10)
	}
	// The sync is split by kind, each against its own floor: the
	// kinds' requests are the sync's.
	var sum int
	var floor float64
	for _, k := range rep.Sync.Kinds {
		sum += k.Requests
		floor += k.FloorMS
	}
	if len(rep.Sync.Kinds) != 5 || sum != rep.Sync.Requests || math.Abs(floor-rep.Sync.FloorMS) > 0.01 {
		t.Errorf("the kinds' %d requests (floor %.2f ms) against the sync's %d (%.2f ms): %+v", sum, floor, rep.Sync.Requests, rep.Sync.FloorMS, rep.Sync.Kinds)
	}
	var b bytes.Buffer
	rep.WriteText(&b)
	if !strings.Contains(b.String(), "recall@10") {
		t.Errorf("text report lacks recall@10:\n%s", b.String())
	}
	// No request is answered sooner than the fake's latency.
	for _, k := range rep.Sync.Kinds {
		if k.MedianRequestMS < 0.95*rep.LatencyMS || k.MeanRequestMS < rep.LatencyMS {
			t.Errorf("%s: requests took %.2f ms on average and %.2f ms at the median, under the fake's latency of %.2f ms",
				k.Kind, k.MeanRequestMS, k.MedianRequestMS, rep.LatencyMS)
		}
	}
	// The bare client's probe: every request answered, none sooner than
	// the fake's latency, so its time is at least its floor.
	if p := rep.Sync.Probe; p.Requests != sync.DefaultMaxConcurrency*probeRounds || p.Concurrency != sync.DefaultMaxConcurrency ||
		p.MeanRequestMS < rep.LatencyMS || p.MedianRequestMS < 0.95*rep.LatencyMS || p.MS < 0.95*p.FloorMS || p.FloorMS <= 0 {
		t.Errorf("probe figures: %+v (latency %.2f ms)", p, rep.LatencyMS)
	}
	if !regexp.MustCompile(`(?m)^bare client +\d+ ms  \(800 activity requests, 16 at a time, before the sync`).MatchString(b.String()) {
		t.Errorf("text report lacks the bare client's probe:\n%s", b.String())
	}
	if !regexp.MustCompile(`(?m)^  work_package +\d+ ms  \(\d+ requests of [0-9.]+ ms on average, [0-9.]+ ms at the median; floor \d+ ms, [0-9.]+× it\)$`).MatchString(b.String()) {
		t.Errorf("text report lacks the work packages' share of the sync:\n%s", b.String())
	}
	t.Log("\n" + b.String())
}

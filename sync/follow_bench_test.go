package sync

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/opsearch/opsearch/internal/optesting/pgtest"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/store"
)

// BenchmarkFollowLag measures the change feed's lag from a commit on one
// process to its document being searchable on another replica: one work
// package and its comments per commit, the replica's follower woken by
// the commit's notification. Reports p50 and p99.
//
//	go test ./sync -run '^$' -bench FollowLag -benchtime 300x
func BenchmarkFollowLag(b *testing.B) {
	dsn := pgtest.DSN(b)
	name := pgtest.StoreName(b)
	ctx := context.Background()
	writer := pgStore(b, dsn, name)
	r := openReplicaView(b, dsn, name)
	f, _, err := OpenFollower(r.st, r.idx, r.dir, FollowerOptions{Poll: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	if err := f.Built(0); err != nil {
		b.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- f.Run(runCtx) }()
	defer func() {
		stop()
		if err := <-done; !errors.Is(err, context.Canceled) {
			b.Error(err)
		}
	}()
	var lags []time.Duration
	id := int64(0)
	for b.Loop() {
		id++
		start := time.Now()
		if err := writer.Update(ctx, func(tx *store.WriteTx) error {
			return errors.Join(tx.PutWorkPackage(followWP(id, fmt.Sprintf("Lag probe %d of the heron queue", id))),
				tx.PutActivities(id, []openproject.Activity{{ID: id, Kind: "Activity::Comment", Comment: "measured", WorkPackageID: id}}))
		}); err != nil {
			b.Fatal(err)
		}
		gen, err := writer.Generation()
		if err != nil {
			b.Fatal(err)
		}
		if err := f.WaitApplied(ctx, gen); err != nil {
			b.Fatal(err)
		}
		lags = append(lags, time.Since(start))
	}
	slices.Sort(lags)
	pct := func(p float64) float64 {
		return float64(lags[min(len(lags)-1, int(p*float64(len(lags))))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.5), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}

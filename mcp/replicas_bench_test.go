package mcp_test

import (
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/opsearch/opsearch/internal/optesting"
	"github.com/opsearch/opsearch/internal/optesting/pgtest"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
	"github.com/opsearch/opsearch/sync"
)

// BenchmarkReplicasSearchThroughput measures searches per second over
// REST with 1, 2 and 3 replicas of a team server sharing a PostgreSQL
// store (OPSEARCH_BENCH_WPS work packages, default 10,000), 16 clients
// spread round robin over the replicas. The replicas run in this one
// process on this machine's cores, so the figure shows per-core
// efficiency (what replicas cost beside each other), not a cluster's
// scale-out.
//
//	go test ./mcp -run '^$' -bench ReplicasSearchThroughput -benchtime 2000x
func BenchmarkReplicasSearchThroughput(b *testing.B) {
	n := 10000
	if v, err := strconv.Atoi(os.Getenv("OPSEARCH_BENCH_WPS")); err == nil && v > 0 {
		n = v
	}
	dsn := pgtest.Schema(b)
	d := opgen.Generate(opgen.GenOptions{Seed: 1, WorkPackages: n})
	_, base := optesting.Start(b, d, optest.Options{})
	opts := &sync.SharedOptions{BaseURL: base, RefreshEvery: time.Hour, CrawlKey: optest.AdminKey}
	servers := []*modeServer{startModeServerStore(b, base, opts, 0, dsn)}
	for {
		if last, ok := servers[0].mgr.CrawlReport(); ok && last.Err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	servers = append(servers, startModeServerStore(b, base, opts, 0, dsn), startModeServerStore(b, base, opts, 0, dsn))
	for _, s := range servers {
		for {
			st, _ := s.mgr.Follow()
			if !st.Building && st.Behind == 0 {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		// Alice's first request opens her view there.
		s.restSearch(b, optest.AliceKey, map[string]any{"query": "warm up"})
	}
	queries := make([]map[string]any, 0, 200)
	for i := range 200 {
		wp := d.WorkPackages[(i*7919)%len(d.WorkPackages)]
		queries = append(queries, map[string]any{"query": wp.Subject})
	}
	for replicas := 1; replicas <= len(servers); replicas++ {
		b.Run(fmt.Sprintf("replicas=%d", replicas), func(b *testing.B) {
			var next atomic.Int64
			b.SetParallelism(8) // 16 clients on 2 cores
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := next.Add(1)
					servers[int(i)%replicas].restSearch(b, optest.AliceKey, queries[int(i)%len(queries)])
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "searches/s")
		})
	}
}

package mcp_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	gosync "sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
)

// BenchmarkHTTPSearch16 measures openproject_search over Streamable HTTP
// on loopback with 16 concurrent clients of one user, on a synced index
// of 10,000 work packages. It reports requests per second and the 99th
// percentile latency.
func BenchmarkHTTPSearch16(b *testing.B) {
	if testing.Short() {
		b.Skip("syncs 10k work packages")
	}
	gen := opgen.GenOptions{Seed: 21, Projects: 12, Users: 20, WorkPackages: 10000, Comments: 10000, WikiPages: 60, Meetings: 40}
	e := newHTTPEnv(b, httpEnvOpts{gen: &gen})
	ctx := context.Background()
	const clients = 16
	sessions := make([]*sdk.ClientSession, clients)
	for i := range sessions {
		cs, err := e.connectStreamable(ctx, "/mcp", map[string]string{"X-OpenProject-Api-Key": optest.AliceKey})
		if err != nil {
			b.Fatal(err)
		}
		defer func() { _ = cs.Close() }()
		sessions[i] = cs
	}
	waitSynced(ctx, b, sessions[0])
	queries := []string{"Nightingale", "release planning", "migration", "login bug", "dashbord", "review meeting", "performance"}
	b.ResetTimer()
	var mu gosync.Mutex
	lat := make([]time.Duration, 0, b.N)
	next := make(chan int, b.N)
	for i := range b.N {
		next <- i
	}
	close(next)
	start := time.Now()
	var wg gosync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for i := range next {
				t0 := time.Now()
				var out searchOut
				if err := httpCall(ctx, sessions[c], "openproject_search", map[string]any{"query": queries[i%len(queries)]}, &out); err != nil {
					b.Error(err)
					return
				}
				d := time.Since(t0)
				mu.Lock()
				lat = append(lat, d)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	el := time.Since(start)
	b.StopTimer()
	slices.Sort(lat)
	if len(lat) > 0 {
		b.ReportMetric(float64(len(lat))/el.Seconds(), "req/s")
		b.ReportMetric(float64(lat[min(len(lat)-1, len(lat)*99/100)].Microseconds())/1000, "p99-ms")
	}
}

// BenchmarkTenUsersMemory measures the process's memory with 10 users
// active, each with a synced small data set (alice, bob and eight
// generated users). It reports heap in use and the peak RSS (VmHWM).
func BenchmarkTenUsersMemory(b *testing.B) {
	if testing.Short() {
		b.Skip("syncs ten users")
	}
	for range b.N {
		gen := opgen.GenOptions{Seed: 23, Projects: 12, Users: 20, WorkPackages: 2000, Comments: 4000, WikiPages: 60, Meetings: 40}
		e := newHTTPEnv(b, httpEnvOpts{gen: &gen})
		ctx := context.Background()
		keys := []string{optest.AliceKey, optest.BobKey}
		for id := 4; len(keys) < 10; id++ {
			keys = append(keys, "opsearch-user-"+strconv.Itoa(id))
		}
		var wg gosync.WaitGroup
		for _, k := range keys {
			wg.Go(func() {
				cs, err := e.connectStreamable(ctx, "/mcp", map[string]string{"X-OpenProject-Api-Key": k})
				if err != nil {
					b.Error(err)
					return
				}
				defer func() { _ = cs.Close() }()
				waitSynced(ctx, b, cs)
				var out searchOut
				if err := httpCall(ctx, cs, "openproject_search", map[string]any{"query": "release"}, &out); err != nil {
					b.Error(err)
				}
			})
		}
		wg.Wait()
		if n := e.mgr.ActiveUsers(); n != 10 {
			b.Fatalf("active users = %d", n)
		}
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MiB")
		if hwm := vmHWM(); hwm > 0 {
			b.ReportMetric(hwm/1024, "VmHWM-MiB")
		}
	}
}

// vmHWM is the peak resident set size in KiB (Linux), or 0.
func vmHWM() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			var kb float64
			_, _ = fmt.Sscanf(strings.TrimSpace(strings.TrimPrefix(line, "VmHWM:")), "%f", &kb)
			return kb
		}
	}
	return 0
}

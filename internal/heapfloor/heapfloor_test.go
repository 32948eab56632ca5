package heapfloor_test

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"

	"github.com/opsearch/opsearch/internal/heapfloor"
)

func TestPercent(t *testing.T) {
	const mb = 1 << 20
	for _, tc := range []struct {
		name                  string
		base                  int
		live, roots, headroom uint64
		want                  int
	}{
		{"small heap: headroom over live and roots", 100, 8 * mb, 0, 32 * mb, 400},
		{"roots count as the runtime counts them", 100, 6 * mb, 2 * mb, 32 * mb, 400},
		// 3200/7 is 457.1: at 457 the heap could grow 31.99 MiB.
		{"rounded up, never short of the headroom", 100, 7 * mb, 0, 32 * mb, 458},
		{"small heap: the heap minimum reaches the headroom first", 100, 3 * mb, 0, 32 * mb, 875},
		// 32 MiB over 1 MiB live would be GOGC=3200, whose minimum heap
		// (4 MiB × 32) is a 128 MiB goal; 825 gives 33 MiB.
		{"tiny heap: the heap minimum reaches the headroom first", 100, 1 * mb, 0, 32 * mb, 825},
		{"large heap keeps the base", 100, 120 * mb, 0, 32 * mb, 100},
		{"the base is a floor", 200, 20 * mb, 0, 32 * mb, 200},
		{"a huge headroom is capped", 100, 1024, 0, 1 << 30, 5000},
		{"before the first collection", 100, 0, 0, 32 * mb, 100},
		{"collector off stays off", -1, 8 * mb, 0, 32 * mb, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := heapfloor.Percent(tc.base, tc.live, tc.roots, tc.headroom); got != tc.want {
				t.Errorf("Percent(%d, %d, %d, %d) = %d, want %d", tc.base, tc.live, tc.roots, tc.headroom, got, tc.want)
			}
		})
	}
}

// gogc is the GOGC the runtime runs with.
func gogc() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int(s[0].Value.Uint64())
}

// collectUntil runs collections until ok holds, at most 100: the floor
// adjusts in a cleanup the runtime runs after a collection, on its own
// goroutine.
func collectUntil(t *testing.T, ok func() bool) {
	t.Helper()
	for range 100 {
		if ok() {
			return
		}
		runtime.GC()
		runtime.Gosched()
	}
	t.Fatalf("not after 100 collections: GOGC is %d", gogc())
}

// Against the real collector: a test binary keeps a few megabytes live,
// so a floor of 256 MiB raises GOGC to its cap; a larger live heap
// brings it back to the base; Stop restores the GOGC it found.
func TestKeepAdjustsTheCollector(t *testing.T) {
	base := debug.SetGCPercent(150)
	defer debug.SetGCPercent(base)
	f := heapfloor.Keep(256 << 20)
	defer f.Stop()
	collectUntil(t, func() bool { return gogc() == 5000 })

	// 384 MiB live needs no floor of 256 MiB: GOGC goes back to 150.
	live := make([][]byte, 0, 384)
	for range cap(live) {
		live = append(live, make([]byte, 1<<20))
	}
	collectUntil(t, func() bool { return gogc() == 150 })
	runtime.KeepAlive(live)
	live = nil

	f.Stop()
	if got := gogc(); got != 150 {
		t.Errorf("after Stop GOGC = %d, want the 150 Keep found", got)
	}
	for range 3 {
		runtime.GC()
	}
	if got := gogc(); got != 150 {
		t.Errorf("collections after Stop set GOGC to %d", got)
	}
}

// The collector's goal after a collection is the headroom past the live
// heap, not more: reckoned from the live heap alone, the goal of a test
// binary's few live megabytes was the runtime's heap minimum scaled by a
// GOGC in the thousands, tens of megabytes past the headroom.
func TestKeepGivesTheHeadroom(t *testing.T) {
	const headroom = 32 << 20
	base := debug.SetGCPercent(100)
	defer debug.SetGCPercent(base)
	f := heapfloor.Keep(headroom)
	defer f.Stop()
	var live, goal uint64
	read := func() {
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/heap/goal:bytes"}}
		metrics.Read(s)
		live, goal = s[0].Value.Uint64(), s[1].Value.Uint64()
	}
	// The floor is set by a cleanup after the collection: wait for a
	// GOGC above the base, then for the goal it gives.
	collectUntil(t, func() bool { return gogc() > 100 })
	collectUntil(t, func() bool {
		read()
		return goal >= live+headroom
	})
	if live > headroom/4 {
		t.Skipf("%d bytes live: not the small heap this test is about", live)
	}
	if over := goal - live - headroom; over > 1<<20 {
		t.Errorf("goal %d MiB with %d MiB live (GOGC %d): %d KiB past the headroom of 32 MiB", goal>>20, live>>20, gogc(), over>>10)
	}
}

// With the collector off (GOGC=off) nothing is adjusted.
func TestKeepLeavesTheCollectorOff(t *testing.T) {
	base := debug.SetGCPercent(-1)
	defer debug.SetGCPercent(base)
	f := heapfloor.Keep(1 << 30)
	defer f.Stop()
	for range 3 {
		runtime.GC()
	}
	if got := debug.SetGCPercent(-1); got != -1 {
		t.Errorf("GOGC = %d with the collector off, want it left off", got)
	}
}

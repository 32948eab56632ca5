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
		name           string
		base           int
		live, headroom uint64
		want           int
	}{
		{"small heap: headroom over live", 100, 8 * mb, 32 * mb, 400},
		{"large heap keeps the base", 100, 120 * mb, 32 * mb, 100},
		{"the base is a floor", 200, 20 * mb, 32 * mb, 200},
		{"almost nothing live is capped", 100, 1024, 32 * mb, 5000},
		{"before the first collection", 100, 0, 32 * mb, 100},
		{"collector off stays off", -1, 8 * mb, 32 * mb, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := heapfloor.Percent(tc.base, tc.live, tc.headroom); got != tc.want {
				t.Errorf("Percent(%d, %d, %d) = %d, want %d", tc.base, tc.live, tc.headroom, got, tc.want)
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

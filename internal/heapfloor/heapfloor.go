// Package heapfloor keeps the garbage collector from collecting a small
// heap over and over.
//
// The collector's next collection is due when the heap has grown by GOGC
// percent of what was live after the last one. A process that serves
// searches from a memory-mapped store and index keeps little live (8 MB
// at 10,000 work packages) and allocates about half a megabyte per
// search, so at the default GOGC=100 it collected every 15 or so
// searches, and each collection took about 3 ms of CPU: a seventh of
// the searches' own. Raising GOGC for a small heap gives the collector a
// floor of headroom instead: at least Headroom bytes of allocation
// between collections, whatever is live, while a large live heap (a
// sync's batches) keeps GOGC as it was. A memory limit
// (runtime/debug.SetMemoryLimit) still bounds the heap either way.
package heapfloor

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// DefaultHeadroom is the floor opsearch runs with. It is about GOGC=400
// for a search server's 8 MB live heap, which measured 5% lower median
// and 20% lower p99 latency at 10,000 work packages (bench --scale 10000
// --reuse, three runs each way) for at most 32 MiB more heap; a sync's
// live heap of 40-126 MB keeps GOGC=100, so its peak memory is the same.
const DefaultHeadroom = 32 << 20

// maxPercent bounds the GOGC Keep sets: with almost nothing live, the
// headroom still comes in a few collections, not one.
const maxPercent = 5000

// heapMinimum is the runtime's smallest heap goal at GOGC=100 (its
// defaultHeapMinimum); the minimum scales with GOGC.
const heapMinimum = 4 << 20

// Percent returns the smallest GOGC, and never less than base (the GOGC
// the process runs with), that lets the heap grow by at least headroom
// bytes past live before the next collection; roots are the scannable
// stacks and globals. The runtime's goal at GOGC=g is the larger of
// live + (live+roots)×g/100 and heapMinimum×g/100. Both terms count:
// reckoned from live alone, the 1.6 MB a search server keeps live after a
// forced collection got GOGC=2000, whose minimum alone is an 80 MB goal
// (GODEBUG=gctrace=1), and the server touched that much fresh memory (a
// page fault per 4 KiB) before its next collection: on a 2 vCPU AMD EPYC
// the reuse harness's median (bench --scale 10000 --reuse), which frees
// the heap before searching, was 1.68-1.80 ms against 1.27-1.38 ms at
// GOGC=100.
func Percent(base int, live, roots, headroom uint64) int {
	if base < 0 || live == 0 {
		return base
	}
	// The smallest g whose first term reaches the headroom, and the
	// smallest whose minimum reaches live + headroom: either suffices.
	byLive := ceilDiv(headroom*100, live+roots)
	byMinimum := ceilDiv((live+headroom)*100, heapMinimum)
	want := min(byLive, byMinimum)
	if want >= maxPercent {
		return max(base, maxPercent)
	}
	return max(base, int(want))
}

func ceilDiv(a, b uint64) uint64 { return (a + b - 1) / b }

// Floor adjusts GOGC after every collection (Percent) until Stop.
type Floor struct {
	headroom uint64
	base     int

	mu      sync.Mutex
	stopped bool
	set     int // the GOGC set last
}

// Keep starts adjusting GOGC after every collection so that at least
// headroom bytes can be allocated before the next one. It leaves GOGC
// alone when the process runs with the collector off (GOGC=off). Stop
// restores the GOGC it found.
func Keep(headroom uint64) *Floor {
	base := debug.SetGCPercent(100)
	debug.SetGCPercent(base)
	f := &Floor{headroom: headroom, base: base, set: base}
	if base >= 0 {
		f.arm()
	}
	return f
}

// arm asks to be called after the next collection: a cleanup runs once
// the collector has found its object unreachable, and this object is
// unreachable from the start. (It is too large for the tiny allocator,
// whose blocks may hold an object's cleanup back with their neighbours.)
func (f *Floor) arm() {
	runtime.AddCleanup(new(sentinel), func(f *Floor) { f.collected() }, f)
}

// sentinel is arm's object.
type sentinel [32]byte

// collected sets GOGC for the live heap the collection left, and arms
// for the next one.
func (f *Floor) collected() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopped {
		return
	}
	live, roots := heapAfterCollection()
	if p := Percent(f.base, live, roots, f.headroom); p != f.set {
		debug.SetGCPercent(p)
		f.set = p
	}
	f.arm()
}

// Stop stops the adjusting and restores the GOGC Keep found.
func (f *Floor) Stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.stopped {
		f.stopped = true
		debug.SetGCPercent(f.base)
		f.set = f.base
	}
}

// heapAfterCollection returns the heap the last collection left live
// (0 before the first) and the scannable stacks and globals, in bytes.
func heapAfterCollection() (live, roots uint64) {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/scan/stack:bytes"}, {Name: "/gc/scan/globals:bytes"}}
	metrics.Read(s)
	v := func(i int) uint64 {
		if s[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return s[i].Value.Uint64()
	}
	return v(0), v(1) + v(2)
}

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

// Percent returns the GOGC that gives a live heap of live bytes at least
// headroom bytes of growth before the next collection, and never less
// than base, the GOGC the process runs with.
func Percent(base int, live, headroom uint64) int {
	if base < 0 || live == 0 {
		return base
	}
	want := headroom * 100 / live
	if want >= maxPercent {
		return max(base, maxPercent)
	}
	return max(base, int(want))
}

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
	if p := Percent(f.base, liveHeap(), f.headroom); p != f.set {
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

// liveHeap is the heap the last collection left live, in bytes (0 before
// the first).
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

package opgen

import (
	"math/rand/v2"
)

// Independent random streams, so that for example the users stay the same
// when only the number of work packages changes.
const (
	streamUsers uint64 = iota + 1
	streamProjects
	streamWorkPackages
	streamWiki
	streamMeetings
	// StreamQueries is the stream of the saved queries. Generators of
	// derived data outside the package (eval/querygen's labelled queries)
	// take streams from StreamQueries+100 on, so they never share one with
	// the data.
	StreamQueries
	// streamPermissions draws the MixedPermissions additions.
	streamPermissions
	// streamTimeEntries draws the time entries, generated last so that
	// adding them changed nothing else.
	streamTimeEntries
	streamPerWorkPackage = 1 << 40 // + work package id
)

// splitmix64 scrambles seeds so that neighbouring seeds and stream numbers
// give unrelated PCG states.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

func seedPCG(p *rand.PCG, seed int64, stream uint64) {
	p.Seed(splitmix64(uint64(seed)), splitmix64(stream^0x6f70736561726368))
}

// Rand returns random stream number stream of seed. Every part of the
// generator draws from a stream of its own, so that each stays the same
// when another changes; see the stream constants.
func Rand(seed int64, stream uint64) *rand.Rand {
	p := rand.NewPCG(0, 0)
	seedPCG(p, seed, stream)
	return rand.New(p)
}

// weighted tables: value, weight.
type weighted struct{ v, w int }

func pickWeighted(r *rand.Rand, table []weighted) int {
	total := 0
	for _, e := range table {
		total += e.w
	}
	x := r.IntN(total)
	for _, e := range table {
		if x < e.w {
			return e.v
		}
		x -= e.w
	}
	return table[len(table)-1].v
}

package opgen

import (
	"math/rand/v2"
	"strconv"

	"github.com/opsearch/opsearch/openproject"
)

// streamRelations draws the relations between work packages. It lies
// apart from the other streams (and from StreamQueries+100 on, which
// eval/querygen uses), and relations are drawn after everything else, so
// adding them changed nothing that was generated before.
const streamRelations uint64 = 1 << 39

// relationsPerTen is how many relations ten work packages of a project
// get, on average.
const relationsPerTen = 3

// genRelations relates work packages of the same project. Relations are
// stored as the server stores them (forward types only). Two work packages
// are related at most once; a parent and its descendants never are; a
// follows relation always points from the later work package (higher id)
// to the earlier one, so follows chains never form a cycle.
func (g *generator) genRelations(wps []openproject.WorkPackage) []openproject.Relation {
	r := Rand(g.o.Seed, streamRelations)
	byID := make(map[int64]*openproject.WorkPackage, len(wps))
	for i := range wps {
		byID[wps[i].ID] = &wps[i]
	}
	var rels []openproject.Relation
	for _, pw := range g.wpByProject {
		if len(pw) < 2 {
			continue
		}
		related := map[[2]int64]bool{}
		want := len(pw) * relationsPerTen / 10
		for tries := 0; want > 0 && tries < 4*len(pw)*relationsPerTen/10+8; tries++ {
			a, b := wps[pw[r.IntN(len(pw))]].ID, wps[pw[r.IntN(len(pw))]].ID
			if a == b {
				continue
			}
			lo, hi := min(a, b), max(a, b)
			if related[[2]int64{lo, hi}] || ancestorOf(byID, lo, hi) || ancestorOf(byID, hi, lo) {
				continue
			}
			related[[2]int64{lo, hi}] = true
			want--
			rels = append(rels, g.relation(r, int64(len(rels)+1), lo, hi))
		}
	}
	return rels
}

// relation draws one relation between work packages lo < hi.
func (g *generator) relation(r *rand.Rand, id, lo, hi int64) openproject.Relation {
	// Mostly relates, blocks and follows, as in real projects.
	names := []string{"relates", "blocks", "follows", "duplicates", "includes", "requires"}
	typ := names[pickWeighted(r, []weighted{{0, 35}, {1, 25}, {2, 25}, {3, 5}, {4, 5}, {5, 5}})]
	from, to := lo, hi
	// Earlier work packages block later ones; later ones follow earlier
	// ones; the other types point either way.
	if typ == "follows" || (typ != "blocks" && r.IntN(2) == 0) {
		from, to = hi, lo
	}
	rel := openproject.Relation{
		ID: id, Type: typ, ReverseType: openproject.ReverseRelationType(typ),
		From: openproject.Ref{ID: from, Href: "/api/v3/work_packages/" + strconv.FormatInt(from, 10)},
		To:   openproject.Ref{ID: to, Href: "/api/v3/work_packages/" + strconv.FormatInt(to, 10)},
	}
	if typ == "follows" {
		lag := 0
		if r.IntN(4) == 0 {
			lag = 1 + r.IntN(5)
		}
		rel.Lag = &lag
	}
	if r.IntN(5) == 0 {
		notes := []string{
			"Needs the API changes first.",
			"Same root cause.",
			"Found while testing the release candidate.",
			"Agreed in the weekly planning meeting.",
			"Blocked until the vendor answers.",
			"Schedule after the review.",
		}
		rel.Description = notes[r.IntN(len(notes))]
	}
	return rel
}

// ancestorOf reports whether work package a is an ancestor of d.
func ancestorOf(byID map[int64]*openproject.WorkPackage, a, d int64) bool {
	seen := map[int64]bool{}
	for cur := byID[d]; cur != nil && cur.Parent != nil && cur.Parent.ID != 0 && !seen[cur.ID]; cur = byID[cur.Parent.ID] {
		seen[cur.ID] = true
		if cur.Parent.ID == a {
			return true
		}
	}
	return false
}

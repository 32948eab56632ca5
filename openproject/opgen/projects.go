package opgen

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/optest"
)

// minProjects is the number of fixed projects: one shared by alice and bob,
// and the private project of each.
const minProjects = 3

// Identifiers of the fixed projects, which tests use to check visibility.
const (
	sharedProjectIdentifier = "website-relaunch"
	aliceProjectIdentifier  = "alice-private"
	bobProjectIdentifier    = "bob-private"
)

type projInfo struct {
	ref      openproject.Ref
	dom      *domain
	name     string
	codename string
	// alwaysCodename puts the codename into every work package description.
	alwaysCodename bool
	members        []int // user indices, ascending
	weight         int   // share of work packages, wiki pages and meetings
}

func (g *generator) genProjects() []optest.Project {
	r := Rand(g.o.Seed, streamProjects)
	n := g.o.Projects
	extras := make([]int, 0, g.o.Users) // user indices of the generated users
	for i := 3; i < len(g.users); i++ {
		extras = append(extras, i)
	}
	const alice, bob = AliceID - 1, BobID - 1
	pool := projectSpecs[minProjects:]
	projects := make([]optest.Project, n)
	g.projects = make([]projInfo, n)
	w := newWriter(g, r)
	spare := 0
	for i := range n {
		spec := projectSpecs[min(i, minProjects)]
		round := 0
		if i >= minProjects {
			j := i - minProjects
			spec, round = pool[j%len(pool)], j/len(pool)
		}
		name, ident, codename := spec.name, spec.identifier, spec.codename
		if round > 0 {
			suffix := phaseSuffixes[(round-1)%len(phaseSuffixes)]
			if round > len(phaseSuffixes) {
				suffix += " " + strconv.Itoa(round)
			}
			name += " " + suffix
			ident += "-" + slugify(suffix)
			codename = ""
			if spare < len(spareCodenames) {
				codename = spareCodenames[spare]
				spare++
			}
		}
		id := int64(i + 1)
		// Membership: the first six projects pin down the visibility cases
		// tests rely on; the rest are random.
		public := false
		withAlice, withBob := r.IntN(2) == 0, r.IntN(2) == 0
		others := true
		switch i {
		case 0: // shared by alice and bob
			withAlice, withBob = true, true
		case 1:
			withAlice, withBob, others = true, false, false
		case 2:
			withAlice, withBob, others = false, true, false
		case 3: // public, neither alice nor bob is a member
			public, withAlice, withBob = true, false, false
		case 4:
			withAlice, withBob = true, false
		case 5:
			withAlice, withBob = false, true
		default:
			public = r.IntN(4) == 0
		}
		var members []int
		if withAlice {
			members = append(members, alice)
		}
		if withBob {
			members = append(members, bob)
		}
		if others && len(extras) > 0 {
			k := min(len(extras), 2+r.IntN(10))
			for j := range k { // partial Fisher-Yates
				m := j + r.IntN(len(extras)-j)
				extras[j], extras[m] = extras[m], extras[j]
				members = append(members, extras[j])
			}
		}
		if len(members) == 0 {
			// Someone has to author the project's work packages.
			members = append(members, AdminID-1)
		}
		slices.Sort(members)
		memberIDs := make([]int64, len(members))
		for j, m := range members {
			memberIDs[j] = g.users[m].ID
		}
		weight := 1 + r.IntN(12)
		switch i {
		case 0:
			weight = 10
		case 1, 2:
			weight = 3
		}
		ref := openproject.Ref{ID: id, Href: "/api/v3/projects/" + strconv.FormatInt(id, 10), Title: name}
		g.projects[i] = projInfo{ref: ref, dom: spec.dom, name: name, codename: codename,
			alwaysCodename: i == 1 || i == 2, members: members, weight: weight}

		p := &projects[i]
		p.ID = id
		p.Identifier = ident
		p.Name = name
		p.Active = true
		p.Public = public
		p.Members = memberIDs
		p.CreatedAt = g.start.Add(20*time.Hour + time.Duration(r.Int64N(4*3600))*time.Second)
		p.UpdatedAt = p.CreatedAt.Add(time.Duration(r.Int64N(int64(g.end.Sub(p.CreatedAt)/time.Second))) * time.Second)
		w.setProject(&g.projects[i], 0)
		p.Description = w.projectDescription(spec.summary)
		if r.IntN(2) == 0 {
			p.StatusExplanation = w.text(statusExplanations[r.IntN(len(statusExplanations))])
		}
		// A few projects are subprojects of an earlier public one, so that
		// parent links are never undisclosed to members.
		if i > 5 && r.IntN(5) == 0 {
			var parents []int
			for j := 3; j < i; j++ {
				if projects[j].Public && projects[j].Parent == nil {
					parents = append(parents, j)
				}
			}
			if len(parents) > 0 {
				pr := g.projects[parents[r.IntN(len(parents))]].ref
				p.Parent = &pr
			}
		}
	}
	return projects
}

// pickProject picks a project index by weight, among those accepted by ok
// (nil accepts all); it returns -1 when none is accepted.
func (g *generator) pickProject(r *rand.Rand, ok func(int) bool) int {
	total := 0
	for i, p := range g.projects {
		if ok == nil || ok(i) {
			total += p.weight
		}
	}
	if total == 0 {
		return -1
	}
	x := r.IntN(total)
	for i, p := range g.projects {
		if ok == nil || ok(i) {
			if x < p.weight {
				return i
			}
			x -= p.weight
		}
	}
	return -1
}

func (w *writer) projectDescription(summary string) string {
	w.b.Reset()
	w.b.WriteString(summary)
	w.b.WriteString("\n\n")
	w.paragraph(2)
	w.b.WriteString("\n\n### Goals for this year\n\n")
	w.list(taskItems, 3, "- ")
	if w.p.codename != "" {
		w.b.WriteString("\nCodename: **")
		w.b.WriteString(w.p.codename)
		w.b.WriteString("**.")
	}
	return strings.TrimRight(w.b.String(), "\n")
}

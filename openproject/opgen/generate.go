package opgen

import (
	"cmp"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/opsearch/opsearch/fold"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/optest"
)

// GenOptions sizes a generated data set. A zero field selects its default;
// a negative count means none (except Projects, which never goes below the
// three fixed projects).
type GenOptions struct {
	// Seed selects the data set: the same options always produce the same
	// data, byte for byte once encoded.
	Seed int64
	// Projects is the number of projects, default 12, at least 3.
	Projects int
	// Users is the number of users besides admin, alice and bob, default 20.
	Users int
	// WorkPackages is the number of work packages, default 2000.
	WorkPackages int
	// Comments is the number of comment activities across all work
	// packages, default 3*WorkPackages. Every work package additionally gets
	// one change journal without a comment.
	Comments int
	// WikiPages is the number of wiki pages, default 60.
	WikiPages int
	// Meetings is the number of meetings, default 40.
	Meetings int
	// Start is the earliest timestamp; every timestamp lies in
	// [Start, Start+365 days]. Default 2025-01-06T09:00:00Z.
	Start time.Time
}

// Defaults of GenOptions.
const (
	DefaultProjects     = 12
	DefaultUsers        = 20
	DefaultWorkPackages = 2000
	DefaultWikiPages    = 60
	DefaultMeetings     = 40
)

// defaultStart is the default GenOptions.Start (a Monday morning).
var defaultStart = time.Date(2025, 1, 6, 9, 0, 0, 0, time.UTC)

// genSpan is the period all generated timestamps fall into.
const genSpan = 365 * 24 * time.Hour

// minProjects is the number of fixed projects: one shared by alice and bob,
// and the private project of each.
const minProjects = 3

// Identifiers of the fixed projects, which tests use to check visibility.
const (
	sharedProjectIdentifier = "website-relaunch"
	aliceProjectIdentifier  = "alice-private"
	bobProjectIdentifier    = "bob-private"
)

// Ids of the fixed users of every generated data set: the administrator,
// alice and bob, whose API keys are optest.AdminKey, AliceKey and BobKey.
const (
	AdminID = 1
	AliceID = 2
	BobID   = 3
)

// Ids of the fixed statuses, types and priorities (their position in the
// tables below plus one).
const (
	statusNew = iota + 1
	statusInProgress
	statusInReview
	statusOnHold
	statusClosed
	statusRejected
)

// Ids of the fixed types of generated and corpus data sets (fixedTypes).
// eval/querygen picks question templates by them.
const (
	TypeTask = iota + 1
	TypeBug
	TypeFeature
	TypeEpic
	TypeMilestone
	TypeStory
)

const (
	prioLow = iota + 1
	prioNormal
	prioHigh
	prioImmediate
)

func (o GenOptions) normalized() GenOptions {
	count := func(v, def int) int {
		switch {
		case v == 0:
			return def
		case v < 0:
			return 0
		}
		return v
	}
	o.Projects = max(count(o.Projects, DefaultProjects), minProjects)
	o.Users = count(o.Users, DefaultUsers)
	o.WorkPackages = count(o.WorkPackages, DefaultWorkPackages)
	o.Comments = count(o.Comments, 3*o.WorkPackages)
	if o.WorkPackages == 0 {
		o.Comments = 0 // nothing to comment on
	}
	o.WikiPages = count(o.WikiPages, DefaultWikiPages)
	o.Meetings = count(o.Meetings, DefaultMeetings)
	if o.Start.IsZero() {
		o.Start = defaultStart
	}
	// UTC so that the encoded timestamps do not depend on the caller's zone.
	o.Start = o.Start.UTC()
	return o
}

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

// Generate builds a deterministic, realistic data set: users with
// international names, projects with members (including a project shared by
// alice and bob and a private project for each), work packages with varied
// project-management text, comments (some of which carry facts found
// nowhere else), wiki pages with sparse ids, meetings with agenda items and
// outcomes, and a few saved queries. The result passes Validate.
//
// Texts mention each project's codename (a bird name found in no other
// text): every work package of the private projects of alice ("Nightingale")
// and bob ("Kestrel") does, so a search for it tells whether private data
// leaked.
func Generate(o GenOptions) *optest.Dataset {
	o = o.normalized()
	g := &generator{o: o, start: o.Start, end: o.Start.Add(genSpan)}
	d := &optest.Dataset{
		InstanceName: "OpenProject (opsearch fake)",
		Statuses:     fixedStatuses(),
		Types:        fixedTypes(),
		Priorities:   fixedPriorities(),
	}
	g.statusRefs = refsOf(d.Statuses, "/api/v3/statuses/", func(s openproject.Status) (int64, string) { return s.ID, s.Name })
	g.typeRefs = refsOf(d.Types, "/api/v3/types/", func(t openproject.Type) (int64, string) { return t.ID, t.Name })
	g.prioRefs = refsOf(d.Priorities, "/api/v3/priorities/", func(p openproject.Priority) (int64, string) { return p.ID, p.Name })
	d.Users = g.genUsers()
	d.Projects = g.genProjects()
	d.WorkPackages, d.Activities = g.genWorkPackages()
	d.WikiPages = g.genWikiPages()
	d.Meetings = g.genMeetings(d.WorkPackages)
	d.Queries = g.genQueries()
	return d
}

func fixedStatuses() []openproject.Status {
	return []openproject.Status{
		{ID: statusNew, Name: "New", IsDefault: true, Color: "#1A67A3", Position: 1},
		{ID: statusInProgress, Name: "In progress", Color: "#F08C00", Position: 2},
		{ID: statusInReview, Name: "In review", Color: "#9C36B5", Position: 3},
		{ID: statusOnHold, Name: "On hold", Color: "#868E96", Position: 4},
		{ID: statusClosed, Name: "Closed", IsClosed: true, Color: "#2F9E44", Position: 5},
		{ID: statusRejected, Name: "Rejected", IsClosed: true, Color: "#E03131", Position: 6},
	}
}

func fixedTypes() []openproject.Type {
	return []openproject.Type{
		{ID: TypeTask, Name: "Task", Color: "#1A67A3", Position: 1, IsDefault: true},
		{ID: TypeBug, Name: "Bug", Color: "#E03131", Position: 2},
		{ID: TypeFeature, Name: "Feature", Color: "#2F9E44", Position: 3},
		{ID: TypeEpic, Name: "Epic", Color: "#9C36B5", Position: 4},
		{ID: TypeMilestone, Name: "Milestone", Color: "#F08C00", Position: 5, IsMilestone: true},
		{ID: TypeStory, Name: "User story", Color: "#0CA678", Position: 6},
	}
}

func fixedPriorities() []openproject.Priority {
	return []openproject.Priority{
		{ID: prioLow, Name: "Low", Position: 1, IsActive: true},
		{ID: prioNormal, Name: "Normal", Position: 2, IsDefault: true, IsActive: true},
		{ID: prioHigh, Name: "High", Position: 3, IsActive: true},
		{ID: prioImmediate, Name: "Immediate", Position: 4, IsActive: true},
	}
}

// refsOf returns the refs of a fixed table, indexed by id (index 0 unused).
func refsOf[T any](items []T, prefix string, f func(T) (int64, string)) []openproject.Ref {
	refs := make([]openproject.Ref, len(items)+1)
	for _, it := range items {
		id, name := f(it)
		refs[id] = openproject.Ref{ID: id, Href: prefix + strconv.FormatInt(id, 10), Title: name}
	}
	return refs
}

// generator holds what later stages need from earlier ones. It is read-only
// while work packages are generated in parallel.
type generator struct {
	o          GenOptions
	start, end time.Time

	statusRefs, typeRefs, prioRefs []openproject.Ref

	users    []optest.User
	userRefs []openproject.Ref // by user index
	projects []projInfo

	// Work packages by project, in id order; filled before texts are written.
	wpByProject [][]int32
	wpCreated   []int64 // unix seconds, by work package index
}

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

// --- users ---

func (g *generator) genUsers() []optest.User {
	r := Rand(g.o.Seed, streamUsers)
	n := 3 + g.o.Users
	users := make([]optest.User, 0, n)
	refs := make([]openproject.Ref, 0, n)
	add := func(first, last, name, login, key string, admin bool, lang string, created time.Time) {
		id := int64(len(users) + 1)
		u := optest.User{APIKey: key}
		u.ID = id
		u.Name = name
		u.Login = login
		u.FirstName = first
		u.LastName = last
		u.Email = login + "@example.com"
		u.Admin = admin
		u.Status = "active"
		u.Language = lang
		u.CreatedAt = created
		u.UpdatedAt = created.Add(time.Duration(r.Int64N(int64(genSpan/2))) / time.Second * time.Second)
		users = append(users, u)
		refs = append(refs, openproject.Ref{ID: id, Href: "/api/v3/users/" + strconv.FormatInt(id, 10), Title: name})
	}
	add("OpenProject", "Admin", "OpenProject Admin", "admin", optest.AdminKey, true, "en", g.start)
	add("Alice", "Andersson", "Alice Andersson", "alice", optest.AliceKey, false, "en", g.start)
	add("Bob", "Brennan", "Bob Brennan", "bob", optest.BobKey, false, "en", g.start)
	seen := map[string]bool{"admin": true, "alice": true, "bob": true}
	for i := range g.o.Users {
		first := firstNames[r.IntN(len(firstNames))]
		// Every other user gets an accented last name, so that diacritics
		// are present however few users are asked for.
		var last string
		if i%2 == 0 {
			last = accentedLastNames[r.IntN(len(accentedLastNames))]
		} else {
			last = lastNames[r.IntN(len(lastNames))]
		}
		id := int64(len(users) + 1)
		login := loginFold(first) + "." + loginFold(last)
		if seen[login] {
			login += strconv.FormatInt(id, 10)
		}
		seen[login] = true
		created := g.start.Add(time.Duration(r.Int64N(20*3600)) * time.Second)
		add(first, last, first+" "+last, login, "opsearch-user-"+strconv.FormatInt(id, 10), false,
			languages[r.IntN(len(languages))], created)
	}
	g.users = users
	g.userRefs = refs
	return users
}

// --- projects ---

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

// --- work packages ---

// wpPlan is what the sequential pass decides about a work package; texts
// and activities are generated from it in parallel.
type wpPlan struct {
	project  int32
	comments int32
	actOff   int // index of the work package's first activity
}

func (g *generator) genWorkPackages() ([]openproject.WorkPackage, []openproject.Activity) {
	n := g.o.WorkPackages
	r := Rand(g.o.Seed, streamWorkPackages)
	wps := make([]openproject.WorkPackage, n)
	plans := make([]wpPlan, n)
	g.wpCreated = make([]int64, n)
	g.wpByProject = make([][]int32, len(g.projects))
	// One backing array per pointer field instead of one allocation per
	// work package.
	userPtrs := make([]openproject.Ref, 2*n)
	parentPtrs := make([]openproject.Ref, n)
	pcts := make([]int, n)
	// Earlier epics and features per project, candidates for parents.
	parents := make([][]int32, len(g.projects))

	first := g.start.Add(48 * time.Hour)
	window := int64(g.end.Sub(first)/time.Second) - 25*86400 // leave room for activity
	step := window / int64(max(n, 1))
	for i := range n {
		id := int64(i + 1)
		wp := &wps[i]
		pl := &plans[i]
		// The first work packages go round-robin so that every project,
		// including the private ones, has some.
		pi := i
		if i >= len(g.projects) {
			pi = g.pickProject(r, nil)
		}
		proj := &g.projects[pi]
		pl.project = int32(pi)
		g.wpByProject[pi] = append(g.wpByProject[pi], int32(i))

		typ := pickWeighted(r, typeWeights)
		// Older work packages are more often closed: the closed share falls
		// from 45% to 15% over the year, 30% overall.
		var status int
		if r.IntN(100) < 45-30*i/max(n, 1) {
			status = statusClosed
			if r.IntN(5) == 0 {
				status = statusRejected
			}
		} else {
			status = pickWeighted(r, openStatusWeights)
		}
		prio := pickWeighted(r, priorityWeights)

		wp.ID = id
		wp.LockVersion = r.IntN(11)
		wp.Project = proj.ref
		wp.Type = g.typeRefs[typ]
		wp.Status = g.statusRefs[status]
		wp.Closed = status == statusClosed || status == statusRejected
		wp.Priority = g.prioRefs[prio]
		wp.Author = g.userRefs[proj.members[r.IntN(len(proj.members))]]
		if r.IntN(5) != 0 {
			userPtrs[2*i] = g.userRefs[proj.members[r.IntN(len(proj.members))]]
			wp.Assignee = &userPtrs[2*i]
		}
		if r.IntN(5) < 2 {
			userPtrs[2*i+1] = g.userRefs[proj.members[r.IntN(len(proj.members))]]
			wp.Responsible = &userPtrs[2*i+1]
		}
		if typ != TypeEpic && typ != TypeMilestone && len(parents[pi]) > 0 && r.IntN(4) == 0 {
			c := parents[pi]
			// Prefer recent parents, as teams do.
			p := c[len(c)-1-r.IntN(min(len(c), 20))]
			// The title is filled in once the parent's subject is written.
			parentPtrs[i] = openproject.Ref{ID: int64(p) + 1, Href: "/api/v3/work_packages/" + strconv.Itoa(int(p)+1)}
			wp.Parent = &parentPtrs[i]
		}
		if typ == TypeEpic || typ == TypeFeature {
			parents[pi] = append(parents[pi], int32(i))
		}

		created := first.Add(time.Duration(int64(i)*step+r.Int64N(max(step, 1))) * time.Second)
		wp.CreatedAt = created
		g.wpCreated[i] = created.Unix()
		switch {
		case typ == TypeMilestone:
			d := g.clampDay(created.AddDate(0, 0, 7+r.IntN(60)))
			wp.StartDate, wp.DueDate = d, d
		case r.IntN(2) == 0:
			s := created.AddDate(0, 0, r.IntN(14))
			wp.StartDate = g.clampDay(s)
			wp.DueDate = g.clampDay(s.AddDate(0, 0, 1+r.IntN(30)))
		}
		switch {
		case wp.Closed:
			pcts[i] = 100
			wp.PercentageDone = &pcts[i]
		case status == statusNew:
			if r.IntN(2) == 0 {
				wp.PercentageDone = &pcts[i] // 0
			}
		case r.IntN(3) != 0:
			pcts[i] = 10 * (1 + r.IntN(9))
			wp.PercentageDone = &pcts[i]
		}
	}

	// Comments go to a minority of work packages, with a long tail: most
	// get none, a few get dozens.
	if n > 0 && g.o.Comments > 0 {
		cum := make([]uint64, n)
		var total uint64
		for i := range n {
			total += uint64(pickWeighted(r, commentWeightClasses))
			cum[i] = total
		}
		if total == 0 {
			total, cum[0] = 1, 1
			for i := 1; i < n; i++ {
				cum[i] = 1
			}
		}
		for range g.o.Comments {
			x := r.Uint64N(total)
			i, _ := slices.BinarySearch(cum, x+1)
			plans[i].comments++
		}
	}
	nacts := 0
	for i := range plans {
		plans[i].actOff = nacts
		nacts += int(plans[i].comments) + 1
	}
	acts := make([]openproject.Activity, nacts)

	// Texts and activities: each work package has its own random stream, so
	// the result does not depend on how the work is split across goroutines.
	workers := runtime.GOMAXPROCS(0)
	if n < 4096 {
		workers = 1
	}
	const chunk = 512
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			pcg := rand.NewPCG(0, 0)
			w := newWriter(g, rand.New(pcg))
			var times []int64
			for {
				lo := int(next.Add(chunk)) - chunk
				if lo >= n {
					return
				}
				for i := lo; i < min(lo+chunk, n); i++ {
					seedPCG(pcg, g.o.Seed, streamPerWorkPackage+uint64(i+1))
					pl := plans[i]
					times = g.fillWorkPackage(w, &wps[i], pl, acts[pl.actOff:pl.actOff+int(pl.comments)+1], times)
				}
			}
		})
	}
	wg.Wait()

	for i := range wps {
		if p := wps[i].Parent; p != nil {
			p.Title = wps[p.ID-1].Subject
		}
	}
	return wps, numberActivities(acts)
}

// fillWorkPackage writes the subject, description and activities of one
// work package and sets its updatedAt to its last activity. times is
// scratch space, returned for reuse.
func (g *generator) fillWorkPackage(w *writer, wp *openproject.WorkPackage, pl wpPlan, acts []openproject.Activity, times []int64) []int64 {
	proj := &g.projects[pl.project]
	w.setProject(proj, int(wp.ID))
	typ := int(wp.Type.ID)
	status := int(wp.Status.ID)
	wp.Subject = w.subject(typ)
	wp.Description = w.description(typ, wp.Closed)

	// Activity times: uniform over the work package's life, which is longer
	// the more it is discussed.
	r := w.r
	created := wp.CreatedAt
	room := int64(g.end.Sub(created) / time.Second)
	life := min(room, int64(7*86400)+int64(pl.comments)*5*86400)
	life = 600 + r.Int64N(max(life-600, 1))
	times = times[:0]
	for range len(acts) {
		times = append(times, r.Int64N(life+1))
	}
	slices.Sort(times)
	change := r.IntN(len(acts)) // which journal is the change without comment
	for k := range acts {
		a := &acts[k]
		a.WorkPackageID = wp.ID
		a.Version = k + 1
		a.CreatedAt = created.Add(time.Duration(times[k]) * time.Second)
		a.UpdatedAt = a.CreatedAt
		if k == change {
			a.Kind = "Activity"
			a.User = wp.Author
			if wp.Assignee != nil && r.IntN(2) == 0 {
				a.User = *wp.Assignee
			}
			a.Details = w.changeDetails(status, wp)
			continue
		}
		a.Kind = "Activity::Comment"
		switch {
		case wp.Assignee != nil && r.IntN(3) == 0:
			a.User = *wp.Assignee
		case r.IntN(4) == 0:
			a.User = wp.Author
		default:
			a.User = g.userRefs[proj.members[r.IntN(len(proj.members))]]
		}
		a.Comment = w.comment()
	}
	wp.UpdatedAt = created.Add(time.Duration(times[len(times)-1]) * time.Second)
	return times
}

// numberActivities gives activities ids in the order they happened, as
// journal ids are, and returns them in id order.
func numberActivities(acts []openproject.Activity) []openproject.Activity {
	type key struct {
		t   int64
		idx int32
	}
	keys := make([]key, len(acts))
	for i := range acts {
		keys[i] = key{acts[i].CreatedAt.Unix(), int32(i)}
	}
	// Ties keep generation order (work package, then version).
	slices.SortFunc(keys, func(a, b key) int {
		if c := cmp.Compare(a.t, b.t); c != 0 {
			return c
		}
		return cmp.Compare(a.idx, b.idx)
	})
	// Permute in place, cycle by cycle: position i receives the activity at
	// keys[i].idx. A second slice would double the largest allocation.
	for i := range keys {
		if keys[i].idx < 0 {
			continue
		}
		tmp := acts[i]
		j := i
		for {
			src := int(keys[j].idx)
			keys[j].idx = -1
			if src == i {
				acts[j] = tmp
				break
			}
			acts[j] = acts[src]
			j = src
		}
	}
	for i := range acts {
		acts[i].ID = int64(i + 1)
	}
	return acts
}

// clampDay formats t as a date, moved into the generated year.
func (g *generator) clampDay(t time.Time) string {
	if t.After(g.end) {
		t = g.end
	}
	return t.Format(time.DateOnly)
}

// weighted tables: value, weight.
type weighted struct{ v, w int }

var (
	typeWeights       = []weighted{{TypeTask, 40}, {TypeBug, 25}, {TypeFeature, 15}, {TypeStory, 10}, {TypeEpic, 5}, {TypeMilestone, 5}}
	openStatusWeights = []weighted{{statusNew, 35}, {statusInProgress, 35}, {statusInReview, 15}, {statusOnHold, 15}}
	priorityWeights   = []weighted{{prioLow, 20}, {prioNormal, 55}, {prioHigh, 20}, {prioImmediate, 5}}
	// Relative comment shares of work packages: 45% get none.
	commentWeightClasses = []weighted{{0, 45}, {1, 30}, {3, 15}, {8, 7}, {20, 2}, {60, 1}}
	meetingMinutes       = []weighted{{15, 1}, {30, 3}, {60, 8}, {90, 2}, {120, 1}}
)

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

// --- wiki pages ---

func (g *generator) genWikiPages() []openproject.WikiPage {
	n := g.o.WikiPages
	if n == 0 {
		return []openproject.WikiPage{}
	}
	r := Rand(g.o.Seed, streamWiki)
	ids := wikiIDs(r, n)
	pages := make([]openproject.WikiPage, n)
	w := newWriter(g, r)
	taken := map[string]bool{} // project id + slug: titles are unique per wiki
	first := g.start.Add(48 * time.Hour)
	step := int64(g.end.Sub(first)/time.Second) / int64(n)
	var attID int64
	adr := make([]int, len(g.projects))
	for i, id := range ids {
		pi := g.pickProject(r, nil)
		w.setProject(&g.projects[pi], len(g.wpCreated))
		kind := r.IntN(6)
		var title string
		switch kind {
		case 0:
			title = w.text(wikiGuideTitles[r.IntN(len(wikiGuideTitles))])
		case 1:
			title = wikiChecklistTitles[r.IntN(len(wikiChecklistTitles))]
		case 2:
			title = w.text(wikiRunbookTitles[r.IntN(len(wikiRunbookTitles))])
		case 3:
			adr[pi]++
			title = "Architecture Decision Record " + strconv.Itoa(adr[pi]) + ": " + adrTopics[r.IntN(len(adrTopics))]
		case 4:
			title = "Incident Postmortem " + g.start.AddDate(0, 0, r.IntN(365)).Format(time.DateOnly)
		default:
			title = w.text("{Meeting Notes|Retro Notes|Workshop Notes} {month} {city}")
		}
		slug := slugify(title)
		for k := 2; taken[strconv.Itoa(pi)+"/"+slug]; k++ {
			title2 := title + " (" + strconv.Itoa(k) + ")"
			if s := slugify(title2); !taken[strconv.Itoa(pi)+"/"+s] {
				title, slug = title2, s
			}
		}
		taken[strconv.Itoa(pi)+"/"+slug] = true

		created := first.Add(time.Duration(int64(i)*step+r.Int64N(max(step, 1))) * time.Second)
		updated := created.Add(time.Duration(r.Int64N(int64(g.end.Sub(created)/time.Second)+1)) * time.Second)
		p := &pages[i]
		p.ID = id
		p.Title = title
		p.Slug = slug
		p.Project = g.projects[pi].ref
		p.Text = w.wikiText(kind, title)
		p.HasText = true
		p.LockVersion = r.IntN(9)
		p.CreatedAt = created
		p.UpdatedAt = updated
		if r.IntN(5) == 0 {
			for range 1 + r.IntN(2) {
				attID++
				p.Attachments = append(p.Attachments, w.attachment(attID, p, created, updated))
			}
		}
	}
	return pages
}

// wikiIDs returns n ascending wiki page ids: most in 1..1.5n with holes,
// about one in twenty far above the rest (from 1000), as on instances
// where pages were deleted and others created much later.
func wikiIDs(r *rand.Rand, n int) []int64 {
	high := n / 20
	if high == 0 && n >= 2 {
		high = 1
	}
	low := n - high
	lowRange := low + low/2
	all := make([]int64, lowRange)
	for i := range all {
		all[i] = int64(i + 1)
	}
	for j := range low {
		m := j + r.IntN(lowRange-j)
		all[j], all[m] = all[m], all[j]
	}
	ids := all[:low:low]
	slices.Sort(ids)
	base := int64(1000)
	if lowRange >= 900 {
		base = int64(lowRange/1000+2) * 1000
	}
	gap := int64(max(2, 200/max(high, 1)))
	for j := range int64(high) {
		ids = append(ids, base+j*gap+r.Int64N(gap))
	}
	return ids
}

// --- meetings ---

func (g *generator) genMeetings(wps []openproject.WorkPackage) []openproject.Meeting {
	n := g.o.Meetings
	if n == 0 {
		return []openproject.Meeting{}
	}
	r := Rand(g.o.Seed, streamMeetings)
	w := newWriter(g, r)
	meetings := make([]openproject.Meeting, n)
	crowded := func(i int) bool { return len(g.projects[i].members) >= 2 }
	if g.pickProject(r, crowded) < 0 {
		crowded = nil
	}
	for i := range meetings {
		m := &meetings[i]
		pi := g.pickProject(r, crowded)
		proj := &g.projects[pi]
		w.setProject(proj, len(wps))

		// Meetings start on a weekday between 9:00 and 16:30.
		day := g.start.AddDate(0, 0, 2+r.IntN(355))
		switch day.Weekday() {
		case time.Saturday:
			day = day.AddDate(0, 0, 2)
		case time.Sunday:
			day = day.AddDate(0, 0, 1)
		}
		startTime := time.Date(day.Year(), day.Month(), day.Day(), 9+r.IntN(8), 30*r.IntN(2), 0, 0, time.UTC)
		if startTime.Before(g.start) {
			startTime = g.start
		}
		minutes := pickWeighted(r, meetingMinutes)
		endTime := startTime.Add(time.Duration(minutes) * time.Minute)
		if endTime.After(g.end) {
			endTime = g.end
			startTime = endTime.Add(-time.Duration(minutes) * time.Minute)
		}
		created := genLater(g.start, startTime.Add(-time.Duration(1+r.IntN(14*24))*time.Hour))
		updated := genEarlier(g.end, endTime.Add(time.Duration(r.IntN(48*60))*time.Minute))

		// Participants: 2-8 members, the author first.
		members := slices.Clone(proj.members)
		r.Shuffle(len(members), func(a, b int) { members[a], members[b] = members[b], members[a] })
		members = members[:min(len(members), 2+r.IntN(7))]
		slices.Sort(members)
		author := members[r.IntN(len(members))]
		w.people = members

		m.Title = w.text(meetingSeries[r.IntN(len(meetingSeries))])
		m.Location = meetingRooms[r.IntN(len(meetingRooms))]
		m.LockVersion = r.IntN(4)
		m.StartTime = startTime
		m.EndTime = endTime
		m.Duration = float64(minutes) / 60 // quarters of an hour: exact
		m.Project = proj.ref
		m.Author = g.userRefs[author]
		m.Participants = make([]openproject.Ref, len(members))
		for j, u := range members {
			m.Participants[j] = g.userRefs[u]
		}
		m.CreatedAt = created
		m.UpdatedAt = updated

		// Work packages that existed when the meeting took place.
		pw := g.wpByProject[pi]
		known := pw[:sort.Search(len(pw), func(k int) bool { return g.wpCreated[pw[k]] > startTime.Unix() })]
		items := 2 + r.IntN(6)
		m.AgendaItems = make([]openproject.AgendaItem, items)
		for k := range m.AgendaItems {
			a := &m.AgendaItems[k]
			a.Position = k + 1
			dm := []int{5, 10, 10, 15, 15, 20, 30}[r.IntN(7)]
			a.DurationMinutes = &dm
			by := g.userRefs[members[r.IntN(len(members))]]
			a.Author = &by
			if r.IntN(3) == 0 {
				pr := g.userRefs[members[r.IntN(len(members))]]
				a.Presenter = &pr
			}
			if len(known) > 0 && r.IntN(3) == 0 {
				wp := &wps[known[r.IntN(len(known))]]
				a.ItemType = "work_package"
				a.WorkPackage = &openproject.Ref{ID: wp.ID, Href: "/api/v3/work_packages/" + strconv.FormatInt(wp.ID, 10), Title: wp.Subject}
				a.Title = wp.Subject
			} else {
				a.ItemType = "simple"
				// A second draw makes repeated titles in one meeting rare.
				for try := 0; try < 2 && (a.Title == "" || hasAgendaTitle(m.AgendaItems[:k], a.Title)); try++ {
					a.Title = w.text(agendaTitles[r.IntN(len(agendaTitles))])
				}
			}
			if r.IntN(3) != 0 {
				a.Notes = w.text(agendaNotes[r.IntN(len(agendaNotes))])
			}
			for range r.IntN(3) {
				a.Outcomes = append(a.Outcomes, openproject.Outcome{Notes: w.text(outcomeTemplates[r.IntN(len(outcomeTemplates))])})
			}
			a.LockVersion = r.IntN(3)
			a.CreatedAt = created.Add(time.Duration(r.Int64N(int64(startTime.Sub(created)/time.Second)+1)) * time.Second)
			a.UpdatedAt = a.CreatedAt.Add(time.Duration(r.Int64N(int64(updated.Sub(a.CreatedAt)/time.Second)+1)) * time.Second)
		}
	}
	// Ids follow creation, as they do on a real server; agenda item and
	// outcome ids are global sequences in that order.
	slices.SortStableFunc(meetings, func(a, b openproject.Meeting) int { return a.CreatedAt.Compare(b.CreatedAt) })
	var itemID, outcomeID int64
	for i := range meetings {
		m := &meetings[i]
		m.ID = int64(i + 1)
		for k := range m.AgendaItems {
			a := &m.AgendaItems[k]
			itemID++
			a.ID = itemID
			a.MeetingID = m.ID
			for o := range a.Outcomes {
				outcomeID++
				a.Outcomes[o].ID = outcomeID
			}
		}
	}
	return meetings
}

func hasAgendaTitle(items []openproject.AgendaItem, title string) bool {
	for _, it := range items {
		if it.Title == title {
			return true
		}
	}
	return false
}

func genLater(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func genEarlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// --- queries ---

func (g *generator) genQueries() []openproject.Query {
	r := Rand(g.o.Seed, StreamQueries)
	qs := make([]openproject.Query, len(queryNames))
	for i, name := range queryNames {
		q := &qs[i]
		q.ID = int64(i + 1)
		q.Name = name
		q.Public = i%3 != 2
		q.Starred = i < 2
		if i%2 == 1 {
			pr := g.projects[r.IntN(len(g.projects))].ref
			q.Project = &pr
		}
		q.CreatedAt = g.start.Add(time.Duration(24+r.IntN(30*24)) * time.Hour)
		q.UpdatedAt = q.CreatedAt.Add(time.Duration(r.IntN(200*24)) * time.Hour)
	}
	return qs
}

// --- text ---

// writer expands templates into text. Each goroutine has its own.
type writer struct {
	g      *generator
	r      *rand.Rand
	b      strings.Builder
	p      *projInfo
	people []int // user indices for {u}, {uf} and {@}
	wpID   int   // {wp} refers to work packages with smaller ids
	num    []byte
}

func newWriter(g *generator, r *rand.Rand) *writer {
	return &writer{g: g, r: r, num: make([]byte, 0, 24)}
}

// setProject makes texts speak about p; wpID bounds {wp} references (the
// id of the work package being written, or one past the last).
func (w *writer) setProject(p *projInfo, wpID int) {
	w.p = p
	w.people = p.members
	w.wpID = wpID
}

// text expands one template into a new string.
func (w *writer) text(t string) string {
	w.b.Reset()
	w.b.Grow(2 * len(t))
	w.expand(t)
	return w.b.String()
}

func (w *writer) pick(list []string) string { return list[w.r.IntN(len(list))] }

// pickSkewed favours the start of a list (roughly a Zipf law), so that
// some words are common and the tail is rare, as in real text.
func (w *writer) pickSkewed(list []string) string {
	return list[w.r.IntN(w.r.IntN(len(list))+1)]
}

// dom is the domain a word comes from: mostly the project's own.
func (w *writer) dom() *domain {
	if w.r.IntN(7) == 0 {
		return domains[w.r.IntN(len(domains))]
	}
	return w.p.dom
}

func (w *writer) int(n int) {
	w.num = strconv.AppendInt(w.num[:0], int64(n), 10)
	w.b.Write(w.num)
}

func (w *writer) int2(n int) { // two digits
	w.b.WriteByte(byte('0' + n/10%10))
	w.b.WriteByte(byte('0' + n%10))
}

// writeCap writes s with its first letter upper-cased.
func (w *writer) writeCap(s string) {
	r, n := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError || unicode.IsUpper(r) {
		w.b.WriteString(s)
		return
	}
	w.b.WriteRune(unicode.ToUpper(r))
	w.b.WriteString(s[n:])
}

// writeUpperASCII writes an identifier root in upper case (ERR_ codes).
func (w *writer) writeUpperASCII(s string) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		w.b.WriteByte(c)
	}
}

// expand writes template t (syntax in words.go).
func (w *writer) expand(t string) {
	for len(t) > 0 {
		i := strings.IndexByte(t, '{')
		if i < 0 {
			w.b.WriteString(t)
			return
		}
		w.b.WriteString(t[:i])
		t = t[i:]
		end, alt := matchBrace(t)
		body := t[1:end]
		t = t[end+1:]
		if alt {
			w.expand(w.alternative(body))
		} else {
			w.slot(body)
		}
	}
}

// matchBrace returns the index of the brace closing t[0] and whether the
// braces hold alternatives.
func matchBrace(t string) (end int, alt bool) {
	depth := 0
	for i := 0; i < len(t); i++ {
		switch t[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return i, alt
			}
		case '|':
			if depth == 1 {
				alt = true
			}
		}
	}
	panic("opgen: unbalanced template " + strconv.Quote(t))
}

// alternative picks one of the top-level |-separated parts of body.
func (w *writer) alternative(body string) string {
	n, depth := 1, 0
	for i := 0; i < len(body); i++ {
		switch body[i] {
		case '{':
			depth++
		case '}':
			depth--
		case '|':
			if depth == 0 {
				n++
			}
		}
	}
	k, start := w.r.IntN(n), 0
	depth = 0
	for i := 0; i < len(body); i++ {
		switch body[i] {
		case '{':
			depth++
		case '}':
			depth--
		case '|':
			if depth == 0 {
				if k == 0 {
					return body[start:i]
				}
				k--
				start = i + 1
			}
		}
	}
	return body[start:]
}

func (w *writer) slot(name string) {
	r := w.r
	switch name {
	case "n":
		w.b.WriteString(w.pickSkewed(w.dom().nouns))
	case "N":
		w.writeCap(w.pickSkewed(w.dom().nouns))
	case "x": // a noun from anywhere
		w.b.WriteString(w.pick(domains[r.IntN(len(domains))].nouns))
	case "g":
		w.b.WriteString(w.pickSkewed(generalNouns))
	case "G":
		w.writeCap(w.pickSkewed(generalNouns))
	case "v":
		w.b.WriteString(w.pickSkewed(verbs))
	case "V":
		w.writeCap(w.pickSkewed(verbs))
	case "a":
		w.b.WriteString(w.pickSkewed(adjectives))
	case "A":
		w.writeCap(w.pickSkewed(adjectives))
	case "c", "C":
		w.b.WriteString(w.pick(w.dom().components))
	case "s":
		w.b.WriteString(w.pick(w.dom().screens))
	case "r":
		w.b.WriteString(w.pick(w.dom().roles))
	case "R":
		w.writeCap(w.pick(w.dom().roles))
	case "t", "T":
		w.b.WriteString(w.pickSkewed(techs))
	case "e":
		if r.IntN(4) == 0 {
			w.b.WriteString("ERR_")
			w.writeUpperASCII(w.pick(w.dom().idents))
			w.b.WriteByte('_')
			w.b.WriteString(w.pick(errorStates))
		} else {
			w.b.WriteString(w.pick(errorCodes))
		}
	case "h":
		w.host()
	case "ver":
		if r.IntN(3) != 0 {
			w.b.WriteByte('v')
		}
		w.int(1 + r.IntN(5))
		w.b.WriteByte('.')
		w.int(r.IntN(21))
		w.b.WriteByte('.')
		w.int(r.IntN(16))
	case "id":
		w.camel()
	case "sn":
		w.snake()
	case "path":
		w.b.WriteString(w.pick(srcDirs))
		w.b.WriteByte('/')
		w.b.WriteString(w.pick(w.dom().idents))
		w.b.WriteByte('/')
		w.snake()
		w.b.WriteString(w.pick(fileExts))
		w.b.WriteByte(':')
		w.int(1 + r.IntN(900))
	case "cfg":
		w.b.WriteString(w.p.dom.name)
		w.b.WriteByte('.')
		w.b.WriteString(w.pick(w.p.dom.idents))
		w.b.WriteByte('.')
		w.b.WriteString(w.pick(snakeSuffixes))
	case "num":
		w.int(2 + r.IntN(98))
	case "big":
		w.int(100 + r.IntN(99900))
	case "ms":
		if r.IntN(4) == 0 {
			w.int(1 + r.IntN(30))
			w.b.WriteByte('.')
			w.int(r.IntN(10))
			w.b.WriteString(" s")
		} else {
			w.int(5 + r.IntN(995))
			w.b.WriteString(" ms")
		}
	case "pct":
		w.int(1 + r.IntN(99))
		w.b.WriteByte('%')
	case "cur":
		w.money()
	case "u":
		w.b.WriteString(w.g.users[w.person()].Name)
	case "uf":
		w.b.WriteString(w.g.users[w.person()].FirstName)
	case "@":
		w.mention()
	case "date":
		w.b.WriteString(w.g.start.AddDate(0, 0, r.IntN(365)).Format(time.DateOnly))
	case "q":
		w.b.WriteString(w.pick(quarters))
	case "weekday":
		w.b.WriteString(w.pick(weekdays))
	case "month":
		w.b.WriteString(w.pick(months))
	case "hh":
		w.int2(r.IntN(24))
	case "mm":
		w.int2(r.IntN(60))
	case "city":
		w.b.WriteString(w.pick(cities))
	case "wp":
		w.wpRef()
	case "browser":
		w.b.WriteString(w.pick(browsers))
	case "os":
		w.b.WriteString(w.pick(systems))
	case "vendor":
		w.b.WriteString(w.pick(vendors))
	case "fail":
		w.b.WriteString(w.pick(failures))
	case "cond":
		w.b.WriteString(w.pick(conditions))
	case "adv":
		w.b.WriteString(w.pick(adverbs))
	case "env":
		w.b.WriteString(w.pick(environments))
	case "proj":
		w.b.WriteString(w.p.name)
	case "benefit":
		w.b.WriteString(w.pick(benefits))
	case "ct":
		w.b.WriteString(w.pick(commentTools))
	case "rc":
		w.expand(w.pick(rootCauses))
	case "vt":
		w.b.WriteString(w.pick(vendorTicketPrefixes))
		w.int(10000 + r.IntN(90000))
	case "lb":
		w.b.WriteByte('{')
	case "rb":
		w.b.WriteByte('}')
	default:
		panic("opgen: unknown template slot {" + name + "}")
	}
}

func (w *writer) person() int {
	if len(w.people) == 0 {
		return AdminID - 1
	}
	return w.people[w.r.IntN(len(w.people))]
}

// mention writes an @-mention, half of the time in the markup OpenProject
// stores when a mention is picked from the autocompleter.
func (w *writer) mention() {
	u := &w.g.users[w.person()]
	if w.r.IntN(2) == 0 {
		w.b.WriteByte('@')
		w.b.WriteString(u.Login)
		return
	}
	w.b.WriteString(`<mention class="mention" data-id="`)
	w.int(int(u.ID))
	w.b.WriteString(`" data-type="user" data-text="@`)
	w.b.WriteString(u.Name)
	w.b.WriteString(`">@`)
	w.b.WriteString(u.Name)
	w.b.WriteString(`</mention>`)
}

// wpRef writes "#id" of an earlier work package, preferably of the same
// project.
func (w *writer) wpRef() {
	limit := w.wpID - 1 // ids below the current one
	if limit < 1 {
		w.b.WriteString("the previous ticket")
		return
	}
	if pw := w.g.wpByProject[w.p.ref.ID-1]; len(pw) > 0 && w.r.IntN(10) < 7 {
		// Indices below limit are ids below the current one.
		k := sort.Search(len(pw), func(k int) bool { return int(pw[k]) >= limit })
		if k > 0 {
			w.b.WriteByte('#')
			w.int(int(pw[w.r.IntN(k)]) + 1)
			return
		}
	}
	w.b.WriteByte('#')
	w.int(1 + w.r.IntN(limit))
}

func (w *writer) host() {
	r := w.r
	if r.IntN(3) == 0 {
		w.b.WriteString(w.pick(hostRoles))
		w.b.WriteByte('-')
		w.int2(1 + r.IntN(40))
		w.b.WriteByte('.')
		w.b.WriteString(w.pick(regions))
		w.b.WriteString(".example.net")
		return
	}
	w.b.WriteString(w.pick(w.dom().components))
	w.b.WriteByte('-')
	w.int2(1 + r.IntN(24))
	w.b.WriteByte('.')
	w.b.WriteString(w.pick(envShort))
	w.b.WriteByte('.')
	w.b.WriteString(w.pick(hostDomains))
}

func (w *writer) camel() {
	d := w.dom()
	w.b.WriteString(w.pick(identPrefixes))
	w.writeCap(w.pick(d.idents))
	if w.r.IntN(3) == 0 {
		w.writeCap(w.pick(d.idents))
	}
	w.b.WriteString(w.pick(identSuffixes))
}

func (w *writer) snake() {
	d := w.dom()
	w.b.WriteString(w.pick(d.idents))
	if w.r.IntN(2) == 0 {
		w.b.WriteByte('_')
		w.b.WriteString(w.pick(d.idents))
	}
	w.b.WriteByte('_')
	w.b.WriteString(w.pick(snakeSuffixes))
}

func (w *writer) money() {
	r := w.r
	amount := (1 + r.IntN(500)) * 100
	if amount < 1000 {
		amount += r.IntN(100)
	}
	cur := [...]string{"€", "€", "€", "$", "CHF ", "£"}[r.IntN(6)]
	w.b.WriteString(cur)
	if amount >= 1000 {
		w.int(amount / 1000)
		w.b.WriteByte(',')
		w.b.WriteByte(byte('0' + amount/100%10))
		w.int2(amount % 100)
	} else {
		w.int(amount)
	}
}

// sentencesN writes a paragraph of n sentences.
func (w *writer) paragraph(n int) {
	for k := range n {
		if k > 0 {
			w.b.WriteByte(' ')
		}
		w.expand(w.pick(sentences))
	}
}

func (w *writer) list(items []string, n int, prefix string) {
	for range n {
		w.b.WriteString(prefix)
		w.expand(w.pick(items))
		w.b.WriteByte('\n')
	}
}

func (w *writer) checklist(items []string, n int, done bool) {
	for range n {
		if done || w.r.IntN(3) == 0 {
			w.b.WriteString("- [x] ")
		} else {
			w.b.WriteString("- [ ] ")
		}
		w.expand(w.pick(items))
		w.b.WriteByte('\n')
	}
}

func (w *writer) subject(typ int) string {
	var list []string
	switch typ {
	case TypeBug:
		list = bugSubjects
	case TypeFeature:
		list = featureSubjects
	case TypeEpic:
		list = epicSubjects
	case TypeMilestone:
		list = milestoneSubjects
	case TypeStory:
		list = storySubjects
	default:
		list = taskSubjects
	}
	return w.text(w.pick(list))
}

// description writes a markdown description in the shape people use for
// the type; a few work packages have none.
func (w *writer) description(typ int, closed bool) string {
	r := w.r
	if r.IntN(14) == 0 && !w.p.alwaysCodename {
		return ""
	}
	w.b.Reset()
	w.b.Grow(1024)
	switch typ {
	case TypeBug:
		w.paragraph(1 + r.IntN(2))
		w.b.WriteString("\n\n### Steps to reproduce\n\n")
		for k := range 2 + r.IntN(4) {
			w.int(k + 1)
			w.b.WriteString(". ")
			w.expand(w.pick(bugSteps))
			w.b.WriteByte('\n')
		}
		w.b.WriteString("\n### Expected behaviour\n\n")
		w.expand(w.pick(bugExpected))
		w.b.WriteString("\n\n### Actual behaviour\n\n")
		w.expand(w.pick(bugActual))
		if r.IntN(3) != 0 {
			w.b.WriteString("\n\n```\n")
			w.trace()
			w.b.WriteString("```")
		}
		w.b.WriteString("\n\n### Environment\n\n")
		w.expand("- Version: {ver}\n- Browser: {browser}\n- OS: {os}\n- Host: `{h}`\n")
	case TypeFeature:
		w.b.WriteString("### Motivation\n\n")
		w.paragraph(2 + r.IntN(2))
		w.b.WriteString("\n\n### Proposal\n\n")
		w.paragraph(1 + r.IntN(2))
		w.b.WriteString("\n\n")
		w.list(taskItems, 2+r.IntN(3), "- ")
		w.b.WriteString("\n### Acceptance criteria\n\n")
		w.checklist(acceptance, 2+r.IntN(4), closed)
		if r.IntN(3) == 0 {
			w.b.WriteString("\n### Out of scope\n\n")
			w.expand("The {x} and everything about {n} for {r}s.\n")
		}
	case TypeEpic:
		w.b.WriteString("### Goal\n\n")
		w.paragraph(2)
		w.b.WriteString("\n\n### Scope\n\n")
		w.list(taskItems, 3+r.IntN(3), "- ")
		w.b.WriteString("\n### Success metrics\n\n")
		w.list(successMetrics, 2, "- ")
		w.b.WriteString("\n### Risks\n\n")
		w.paragraph(1 + r.IntN(2))
	case TypeMilestone:
		w.paragraph(1 + r.IntN(2))
	case TypeStory:
		w.expand("As a {r}, I want to {v} the {n} so that {benefit}.\n\n### Acceptance criteria\n\n")
		w.checklist(acceptance, 2+r.IntN(4), closed)
		if r.IntN(2) == 0 {
			w.b.WriteString("\n")
			w.paragraph(1 + r.IntN(2))
		}
	default:
		w.paragraph(1 + r.IntN(3))
		w.b.WriteString("\n\n")
		w.checklist(taskItems, 2+r.IntN(5), closed)
	}
	if r.IntN(6) == 0 {
		w.blankLine()
		w.b.WriteString("### Decision\n\n")
		w.expand(w.pick(decisions))
	}
	if w.p.codename != "" && (w.p.alwaysCodename || r.IntN(4) == 0) {
		w.blankLine()
		w.b.WriteString("Part of project ")
		w.b.WriteString(w.p.codename)
		w.b.WriteByte('.')
	}
	return strings.TrimRight(w.b.String(), "\n")
}

// blankLine ends the text so far with exactly one empty line, to start a
// new markdown block.
func (w *writer) blankLine() {
	s := w.b.String()
	switch {
	case strings.HasSuffix(s, "\n\n"):
	case strings.HasSuffix(s, "\n"):
		w.b.WriteByte('\n')
	default:
		w.b.WriteString("\n\n")
	}
}

// trace writes a stack trace or log excerpt in one of several styles.
func (w *writer) trace() {
	r := w.r
	d := w.dom()
	root := w.pick(d.idents)
	switch r.IntN(4) {
	case 0:
		w.expand("{date}T{hh}:{mm}:{mm}Z ERROR [{c}] {e}\n")
		for range 2 + r.IntN(3) {
			w.b.WriteString("    at com.example.")
			w.b.WriteString(root)
			w.b.WriteByte('.')
			class := w.pick(javaClassSuffixes)
			w.writeCap(root)
			w.b.WriteString(class)
			w.b.WriteByte('.')
			w.camel()
			w.b.WriteByte('(')
			w.writeCap(root)
			w.b.WriteString(class)
			w.b.WriteString(".java:")
			w.int(10 + r.IntN(800))
			w.b.WriteString(")\n")
		}
	case 1:
		w.b.WriteString("panic: runtime error: invalid memory address or nil pointer dereference\n")
		w.expand("goroutine {num} [running]:\n")
		for range 2 + r.IntN(2) {
			w.b.WriteString("example.com/")
			w.b.WriteString(root)
			w.b.WriteByte('.')
			w.camel()
			w.b.WriteString("(...)\n\t/app/internal/")
			w.b.WriteString(root)
			w.b.WriteByte('/')
			w.snake()
			w.b.WriteString(".go:")
			w.int(10 + r.IntN(800))
			w.b.WriteByte('\n')
		}
	case 2:
		w.b.WriteString("Traceback (most recent call last):\n")
		for range 2 + r.IntN(2) {
			w.b.WriteString("  File \"/srv/app/")
			w.b.WriteString(root)
			w.b.WriteByte('/')
			w.snake()
			w.b.WriteString(".py\", line ")
			w.int(10 + r.IntN(800))
			w.b.WriteString(", in ")
			w.snake()
			w.b.WriteByte('\n')
		}
		w.expand("{e}: '{sn}'\n")
	default:
		for range 3 + r.IntN(4) {
			w.expand("{date} {hh}:{mm}:{mm} {INFO|WARN|ERROR|ERROR|DEBUG} {c} ")
			w.expand(w.pick(logMessages))
			w.b.WriteByte('\n')
		}
	}
}

// comment writes a work package comment: a discussion line, often with an
// extra fact that appears nowhere but in comments.
func (w *writer) comment() string {
	r := w.r
	w.b.Reset()
	w.b.Grow(256)
	if r.IntN(15) == 0 {
		w.b.WriteString("> ")
		w.expand(w.pick(sentences))
		w.b.WriteString("\n\n")
	}
	w.expand(w.pick(commentTemplates))
	if r.IntN(4) == 0 {
		w.b.WriteByte(' ')
		w.expand(w.pick(commentTemplates))
	}
	if r.IntN(2) == 0 {
		w.b.WriteByte(' ')
		w.expand(w.pick(commentFacts))
	}
	if r.IntN(12) == 0 {
		w.b.WriteString("\n\n```\n")
		w.trace()
		w.b.WriteString("```")
	}
	return w.b.String()
}

// changeDetails describes the change a journal without comment made.
func (w *writer) changeDetails(status int, wp *openproject.WorkPackage) []string {
	var from int
	switch status {
	case statusInProgress, statusRejected:
		from = statusNew
	case statusInReview, statusOnHold:
		from = statusInProgress
	case statusClosed:
		from = statusInReview
	}
	var out []string
	if from != 0 {
		out = append(out, "Status changed from "+w.g.statusRefs[from].Title+" to "+w.g.statusRefs[status].Title)
	} else {
		out = append(out, w.text(w.pick(changeDetails)))
	}
	if wp.Assignee != nil && w.r.IntN(2) == 0 {
		out = append(out, "Assignee set to "+wp.Assignee.Title)
	}
	return out
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

// wikiText writes a page body with headings, in the layout of its kind.
func (w *writer) wikiText(kind int, title string) string {
	r := w.r
	w.b.Reset()
	w.b.Grow(2048)
	w.b.WriteString("# ")
	w.b.WriteString(title)
	w.b.WriteString("\n\n")
	w.expand(w.pick(wikiParagraphs))
	w.b.WriteString("\n\n")
	switch kind {
	case 1: // checklist
		for _, h := range []string{"Before", "During", "After"} {
			w.b.WriteString("## ")
			w.b.WriteString(h)
			w.b.WriteString("\n\n")
			w.checklist(taskItems, 2+r.IntN(4), false)
			w.b.WriteByte('\n')
		}
	case 2: // runbook
		w.b.WriteString("## Symptoms\n\n")
		w.expand("Alerts fire when {c} reports `{e}` or when {n} is {a}.\n\n")
		w.b.WriteString("## Steps\n\n")
		for k := range 3 + r.IntN(4) {
			w.int(k + 1)
			w.b.WriteString(". ")
			w.expand(w.pick(runbookSteps))
			w.b.WriteByte('\n')
		}
		w.b.WriteString("\n## Escalation\n\n")
		w.expand("If this does not help within {num} minutes, call {u}.\n\n")
	case 3: // architecture decision record
		w.b.WriteString("## Status\n\n")
		w.expand("{Accepted|Proposed|Superseded|Accepted}, {date}.\n\n## Context\n\n")
		w.paragraph(2 + r.IntN(3))
		w.b.WriteString("\n\n## Decision\n\n")
		w.expand(w.pick(decisions))
		w.b.WriteString("\n\n## Consequences\n\n")
		w.list(sentences, 2+r.IntN(3), "- ")
		w.b.WriteByte('\n')
	case 4: // postmortem
		w.b.WriteString("## Summary\n\n")
		w.paragraph(2)
		w.b.WriteString("\n\n## Timeline (UTC)\n\n")
		for range 3 + r.IntN(4) {
			w.expand("- {hh}:{mm} {u} {noticed|acknowledged|mitigated|resolved|escalated} `{e}` on {h}\n")
		}
		w.b.WriteString("\n## Impact\n\n")
		w.expand("{pct} of requests to {c} failed for {num} minutes; {big} {r}s were affected.\n\n")
		w.b.WriteString("## Follow-ups\n\n")
		w.checklist(taskItems, 2+r.IntN(3), false)
		w.b.WriteByte('\n')
	case 5: // notes
		w.b.WriteString("## Attendees\n\n")
		for range 2 + r.IntN(4) {
			w.expand("- {u}\n")
		}
		w.b.WriteString("\n## Notes\n\n")
		w.paragraph(2 + r.IntN(2))
		w.b.WriteString("\n\n## Decisions\n\n")
		w.list(decisions, 1+r.IntN(2), "- ")
		w.b.WriteByte('\n')
	default: // guide
		for range 2 + r.IntN(3) {
			w.b.WriteString("## ")
			w.expand("{{G}|{N}}")
			w.b.WriteString("\n\n")
			w.paragraph(2 + r.IntN(3))
			w.b.WriteString("\n\n")
			if r.IntN(2) == 0 {
				w.list(wikiParagraphs, 2, "- ")
				w.b.WriteByte('\n')
			}
		}
	}
	return strings.TrimRight(w.b.String(), "\n")
}

func (w *writer) attachment(id int64, p *openproject.WikiPage, created, updated time.Time) openproject.Attachment {
	r := w.r
	files := []struct{ name, ctype string }{
		{"architecture-diagram.png", "image/png"}, {"screenshot.png", "image/png"}, {"export.csv", "text/csv"},
		{"contract-draft.pdf", "application/pdf"}, {"slides.pdf", "application/pdf"}, {"budget.xlsx",
			"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"}, {"notes.md", "text/markdown"},
	}
	f := files[r.IntN(len(files))]
	idStr := strconv.FormatInt(id, 10)
	return openproject.Attachment{
		ID:          id,
		FileName:    f.name,
		FileSize:    int64(1024 + r.IntN(4<<20)),
		ContentType: f.ctype,
		Description: w.text("{N} {for the {g}|as of {date}|}"),
		DownloadURL: "/api/v3/attachments/" + idStr + "/content",
		Container:   openproject.Ref{ID: p.ID, Href: "/api/v3/wiki_pages/" + strconv.FormatInt(p.ID, 10), Title: p.Title},
		Author:      w.g.userRefs[w.person()],
		CreatedAt:   created.Add(time.Duration(r.Int64N(int64(updated.Sub(created)/time.Second)+1)) * time.Second),
	}
}

// --- names ---

// asciiPart is r folded (package fold, the one fold the index and the
// scorer use) and reduced to ASCII letters and digits: "ł" → "l",
// "ß" → "ss", "α" → "".
func asciiPart(r rune) string {
	var buf [16]byte
	f := fold.AppendRune(buf[:0], r)
	out := f[:0]
	for _, c := range f {
		if 'a' <= c && c <= 'z' || '0' <= c && c <= '9' {
			out = append(out, c)
		}
	}
	return string(out)
}

// asciiFold lower-cases s and replaces letters with diacritics by their
// ASCII base; anything else outside [a-z0-9] becomes sep (dropped when sep
// is 0), with runs collapsed and no sep at either end.
func asciiFold(s string, sep byte) string {
	var b strings.Builder
	b.Grow(len(s))
	pending := false
	for _, r := range s {
		r = unicode.ToLower(r)
		var part string
		switch {
		case 'a' <= r && r <= 'z', '0' <= r && r <= '9':
			part = string(r)
		default:
			part = asciiPart(r)
		}
		if part == "" {
			pending = sep != 0 && b.Len() > 0
			continue
		}
		if pending {
			b.WriteByte(sep)
			pending = false
		}
		b.WriteString(part)
	}
	return b.String()
}

// loginFold turns a name into a login part: "Łukasz" -> "lukasz",
// "O'Brien" -> "obrien".
func loginFold(s string) string { return asciiFold(s, 0) }

// slugify turns a title into a URL slug the way OpenProject does:
// "Architecture Decision Record 7: Event Sourcing" ->
// "architecture-decision-record-7-event-sourcing".
func slugify(s string) string { return asciiFold(s, '-') }

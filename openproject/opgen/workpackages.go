package opgen

import (
	"cmp"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/opsearch/opsearch/openproject"
)

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

// Weights of the work packages' types, open statuses and priorities, and
// of how many comments they get.
var (
	typeWeights       = []weighted{{TypeTask, 40}, {TypeBug, 25}, {TypeFeature, 15}, {TypeStory, 10}, {TypeEpic, 5}, {TypeMilestone, 5}}
	openStatusWeights = []weighted{{statusNew, 35}, {statusInProgress, 35}, {statusInReview, 15}, {statusOnHold, 15}}
	priorityWeights   = []weighted{{prioLow, 20}, {prioNormal, 55}, {prioHigh, 20}, {prioImmediate, 5}}
	// Relative comment shares of work packages: 45% get none.
	commentWeightClasses = []weighted{{0, 45}, {1, 30}, {3, 15}, {8, 7}, {20, 2}, {60, 1}}
)

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

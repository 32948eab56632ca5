package optest

import (
	"cmp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/opsearch/opsearch/openproject"
)

// store is the server's state: the data set plus the indexes the handlers
// need to answer in time proportional to the page, not to the data set
// (except for list scans, which walk a slice kept sorted by id).
//
// All fields are guarded by mu. Handlers hold the read lock while they
// filter and render, so a rendered response never mixes two states.
type store struct {
	mu sync.RWMutex

	instanceName string

	users      map[int64]*User
	userOrder  []int64 // ascending ids
	usersByKey map[string]int64
	// tokens are the OAuth access tokens issued (IssueToken), by user.
	tokens map[string]int64

	projects     map[int64]*Project
	projectOrder []int64 // ascending ids
	identifiers  map[string]int64
	// perm is the permission model: memberships, roles, shares.
	perm perms

	statuses   []openproject.Status // data set order, as the real list
	types      []openproject.Type
	priorities []openproject.Priority

	wps      map[int64]*openproject.WorkPackage
	wpOrder  []*openproject.WorkPackage // ascending ids
	children map[int64][]int64          // parent id -> child ids, ascending
	// search holds the lower-cased text the "search" filter scans: subject,
	// description and the comments of public activities.
	search map[int64]string

	acts     map[int64]*openproject.Activity
	actsByWP map[int64][]*openproject.Activity // ascending ids

	wikis map[int64]*openproject.WikiPage

	// atts are the attachments of work packages, wiki pages and
	// meetings, by id; attsIn lists each container's, ascending ids. A
	// data set's inline WikiPage.Attachments are filed here too, so the
	// wiki pages of the store carry none.
	atts           map[int64]*storedAttachment
	attsIn         map[container][]int64
	nextAttachment int64

	meetings     map[int64]*openproject.Meeting
	meetingOrder []int64
	// agenda maps an agenda item id to its meeting.
	agenda map[int64]int64

	queries    map[int64]*openproject.Query
	queryOrder []int64

	timeEntries   map[int64]*openproject.TimeEntry
	teOrder       []int64           // ascending ids
	teByWP        map[int64][]int64 // work package id -> time entry ids, ascending
	versions      map[int64]*openproject.Version
	versionOrder  []int64
	customFields  []CustomField           // data set order
	customValues  map[int64][]CustomValue // by work package id
	relations     map[int64]*openproject.Relation
	relationOrder []int64 // ascending ids
	// relationsByWP maps a work package id to the relations it is at
	// either end of, ascending ids.
	relationsByWP map[int64][]int64
	nextRelation  int64

	nextActivity int64
	nextWiki     int64
	nextAgenda   int64
	// nextTimeEntry is the largest time entry id so far.
	nextTimeEntry int64
}

// newStore indexes a deep copy of d, so the caller's data set is never
// changed by mutations on the server.
func newStore(d *Dataset) *store {
	d = cloneDataset(d)
	s := &store{
		instanceName: d.InstanceName,
		users:        map[int64]*User{},
		usersByKey:   map[string]int64{},
		tokens:       map[string]int64{},
		projects:     map[int64]*Project{},
		identifiers:  map[string]int64{},
		statuses:     d.Statuses,
		types:        d.Types,
		priorities:   d.Priorities,
		wps:          make(map[int64]*openproject.WorkPackage, len(d.WorkPackages)),
		children:     map[int64][]int64{},
		search:       make(map[int64]string, len(d.WorkPackages)),
		acts:         make(map[int64]*openproject.Activity, len(d.Activities)),
		actsByWP:     make(map[int64][]*openproject.Activity, len(d.WorkPackages)),
		wikis:        map[int64]*openproject.WikiPage{},
		atts:         make(map[int64]*storedAttachment, len(d.Attachments)),
		attsIn:       map[container][]int64{},
		meetings:     map[int64]*openproject.Meeting{},
		agenda:       map[int64]int64{},
		queries:      map[int64]*openproject.Query{},
		timeEntries:  map[int64]*openproject.TimeEntry{},
		teByWP:       map[int64][]int64{},
		versions:     map[int64]*openproject.Version{},
		customFields: d.CustomFields,
		customValues: map[int64][]CustomValue{},
	}
	s.indexRelations(d.Relations)
	s.instanceName = cmp.Or(s.instanceName, "OpenProject")
	for i := range d.Users {
		u := &d.Users[i]
		s.users[u.ID] = u
		s.userOrder = append(s.userOrder, u.ID)
		s.usersByKey[u.APIKey] = u.ID
	}
	slices.Sort(s.userOrder)
	for i := range d.Projects {
		p := &d.Projects[i]
		s.projects[p.ID] = p
		s.projectOrder = append(s.projectOrder, p.ID)
		s.identifiers[p.Identifier] = p.ID
	}
	slices.Sort(s.projectOrder)
	for i := range d.WorkPackages {
		wp := &d.WorkPackages[i]
		s.wps[wp.ID] = wp
		s.wpOrder = append(s.wpOrder, wp)
	}
	sort.Slice(s.wpOrder, func(i, j int) bool { return s.wpOrder[i].ID < s.wpOrder[j].ID })
	s.perm = newPerms(d, func(id int64) (int64, bool) {
		wp, ok := s.wps[id]
		if !ok {
			return 0, false
		}
		return wp.Project.ID, true
	})
	for _, wp := range s.wpOrder {
		if wp.Parent != nil && wp.Parent.ID != 0 {
			s.children[wp.Parent.ID] = append(s.children[wp.Parent.ID], wp.ID)
		}
	}
	for i := range d.Activities {
		a := &d.Activities[i]
		s.acts[a.ID] = a
		s.actsByWP[a.WorkPackageID] = append(s.actsByWP[a.WorkPackageID], a)
		s.nextActivity = max(s.nextActivity, a.ID)
	}
	for _, list := range s.actsByWP {
		sort.Slice(list, func(i, j int) bool { return list[i].ID < list[j].ID })
	}
	for _, wp := range s.wpOrder {
		s.reindexSearch(wp.ID)
	}
	for i := range d.WikiPages {
		w := &d.WikiPages[i]
		s.wikis[w.ID] = w
		s.nextWiki = max(s.nextWiki, w.ID)
	}
	for i := range d.Meetings {
		m := &d.Meetings[i]
		s.meetings[m.ID] = m
		s.meetingOrder = append(s.meetingOrder, m.ID)
		for _, it := range m.AgendaItems {
			s.agenda[it.ID] = m.ID
			s.nextAgenda = max(s.nextAgenda, it.ID)
		}
	}
	slices.Sort(s.meetingOrder)
	for i := range d.Queries {
		q := &d.Queries[i]
		s.queries[q.ID] = q
		s.queryOrder = append(s.queryOrder, q.ID)
	}
	slices.Sort(s.queryOrder)
	tes := make([]*openproject.TimeEntry, len(d.TimeEntries))
	for i := range d.TimeEntries {
		tes[i] = &d.TimeEntries[i]
	}
	slices.SortFunc(tes, func(a, b *openproject.TimeEntry) int { return cmp.Compare(a.ID, b.ID) })
	for _, te := range tes {
		s.addTimeEntry(te)
		s.nextTimeEntry = max(s.nextTimeEntry, te.ID)
	}
	for i := range d.Versions {
		v := &d.Versions[i]
		s.versions[v.ID] = v
		s.versionOrder = append(s.versionOrder, v.ID)
	}
	slices.Sort(s.versionOrder)
	for _, cv := range d.CustomValues {
		s.customValues[cv.WorkPackageID] = append(s.customValues[cv.WorkPackageID], cv)
	}
	s.indexAttachments(d)
	return s
}

// indexAttachments files the data set's attachments, then the inline
// attachments of its wiki pages (the older form of a data set), which
// leaves the pages without. An attachment whose container cannot be
// read or whose id is taken is left out (Validate refuses both).
func (s *store) indexAttachments(d *Dataset) {
	for _, a := range d.Attachments {
		if c, ok := parseContainer(a.Container); ok && a.ID > 0 && s.atts[a.ID] == nil {
			s.addAttachment(newStoredAttachment(a, c))
		}
	}
	for i := range d.WikiPages {
		w := &d.WikiPages[i]
		for _, a := range w.Attachments {
			if a.ID > 0 && s.atts[a.ID] == nil {
				s.addAttachment(newStoredAttachment(Attachment{Attachment: a}, container{containerWiki, w.ID}))
			}
		}
		w.Attachments = nil
	}
}

// reindexSearch recomputes the full-text blob of one work package. Callers
// hold the write lock (or own the store exclusively).
func (s *store) reindexSearch(id int64) {
	wp, ok := s.wps[id]
	if !ok {
		delete(s.search, id)
		return
	}
	var b strings.Builder
	b.WriteString(wp.Subject)
	b.WriteByte('\n')
	b.WriteString(wp.Description)
	for _, a := range s.actsByWP[id] {
		if a.Comment != "" && !a.Internal {
			b.WriteByte('\n')
			b.WriteString(a.Comment)
		}
	}
	s.search[id] = strings.ToLower(b.String())
}

// statusByID returns the status with the given id.
func (s *store) statusByID(id int64) (openproject.Status, bool) {
	for _, st := range s.statuses {
		if st.ID == id {
			return st, true
		}
	}
	return openproject.Status{}, false
}

func (s *store) typeByID(id int64) (openproject.Type, bool) {
	for _, t := range s.types {
		if t.ID == id {
			return t, true
		}
	}
	return openproject.Type{}, false
}

func (s *store) priorityByID(id int64) (openproject.Priority, bool) {
	for _, p := range s.priorities {
		if p.ID == id {
			return p, true
		}
	}
	return openproject.Priority{}, false
}

// isClosed reports whether a status id is a closed status.
func (s *store) isClosed(statusID int64) bool {
	st, ok := s.statusByID(statusID)
	return ok && st.IsClosed
}

// visibleProjects returns the set of project ids u can see.
func (s *store) visibleProjects(u *User) map[int64]bool {
	out := make(map[int64]bool, len(s.projects))
	for _, id := range s.projectOrder {
		if s.canSee(u, id) {
			out[id] = true
		}
	}
	return out
}

// resolveProject finds a project by numeric id or identifier.
func (s *store) resolveProject(idOrIdent string) (*Project, bool) {
	if id, ok := parseID(idOrIdent); ok {
		p, found := s.projects[id]
		return p, found
	}
	id, ok := s.identifiers[idOrIdent]
	if !ok {
		return nil, false
	}
	return s.projects[id], true
}

// wpIndex returns the position of id in wpOrder, or -1.
func (s *store) wpIndex(id int64) int {
	i := sort.Search(len(s.wpOrder), func(i int) bool { return s.wpOrder[i].ID >= id })
	if i < len(s.wpOrder) && s.wpOrder[i].ID == id {
		return i
	}
	return -1
}

// ancestors returns the parent chain of a work package, root first.
func (s *store) ancestors(wp *openproject.WorkPackage) []*openproject.WorkPackage {
	var chain []*openproject.WorkPackage
	seen := map[int64]bool{wp.ID: true}
	for cur := wp; cur.Parent != nil && cur.Parent.ID != 0; {
		p, ok := s.wps[cur.Parent.ID]
		if !ok || seen[p.ID] {
			break
		}
		seen[p.ID] = true
		chain = append(chain, p)
		cur = p
	}
	slices.Reverse(chain)
	return chain
}

// projectAncestors returns the parent chain of a project, root first.
func (s *store) projectAncestors(p *Project) []*Project {
	var chain []*Project
	seen := map[int64]bool{p.ID: true}
	for cur := p; cur.Parent != nil && cur.Parent.ID != 0; {
		pp, ok := s.projects[cur.Parent.ID]
		if !ok || seen[pp.ID] {
			break
		}
		seen[pp.ID] = true
		chain = append(chain, pp)
		cur = pp
	}
	slices.Reverse(chain)
	return chain
}

// snapshot returns a deep copy of the current state as a Dataset, every
// list sorted by id.
func (s *store) snapshot() *Dataset {
	d := &Dataset{
		InstanceName: s.instanceName,
		Statuses:     slices.Clone(s.statuses),
		Types:        slices.Clone(s.types),
		Priorities:   slices.Clone(s.priorities),
	}
	for _, id := range s.userOrder {
		d.Users = append(d.Users, *s.users[id])
	}
	for _, id := range s.projectOrder {
		p := *s.projects[id]
		p.Members = slices.Clone(p.Members)
		p.Parent = cloneRef(p.Parent)
		d.Projects = append(d.Projects, p)
	}
	d.WorkPackages = make([]openproject.WorkPackage, 0, len(s.wpOrder))
	for _, wp := range s.wpOrder {
		c := cloneWP(*wp)
		c.Closed = s.isClosed(c.Status.ID)
		d.WorkPackages = append(d.WorkPackages, c)
	}
	d.Activities = make([]openproject.Activity, 0, len(s.acts))
	for _, wp := range s.wpOrder {
		for _, a := range s.actsByWP[wp.ID] {
			c := *a
			c.Details = slices.Clone(a.Details)
			d.Activities = append(d.Activities, c)
		}
	}
	sort.Slice(d.Activities, func(i, j int) bool { return d.Activities[i].ID < d.Activities[j].ID })
	wikiIDs := make([]int64, 0, len(s.wikis))
	for id := range s.wikis {
		wikiIDs = append(wikiIDs, id)
	}
	slices.Sort(wikiIDs)
	for _, id := range wikiIDs {
		d.WikiPages = append(d.WikiPages, cloneWiki(*s.wikis[id]))
	}
	for _, id := range s.meetingOrder {
		d.Meetings = append(d.Meetings, cloneMeeting(*s.meetings[id]))
	}
	for _, id := range s.queryOrder {
		q := *s.queries[id]
		q.Project = cloneRef(q.Project)
		d.Queries = append(d.Queries, q)
	}
	for _, id := range s.teOrder {
		d.TimeEntries = append(d.TimeEntries, cloneTimeEntry(*s.timeEntries[id]))
	}
	for _, id := range s.versionOrder {
		d.Versions = append(d.Versions, *s.versions[id])
	}
	d.CustomFields = slices.Clone(s.customFields)
	for _, wp := range s.wpOrder {
		for _, cv := range s.customValues[wp.ID] {
			cv.Values = slices.Clone(cv.Values)
			d.CustomValues = append(d.CustomValues, cv)
		}
	}
	for _, id := range s.relationOrder {
		d.Relations = append(d.Relations, cloneRelation(*s.relations[id]))
	}
	if len(s.atts) > 0 {
		ids := make([]int64, 0, len(s.atts))
		for id := range s.atts {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		d.Attachments = make([]Attachment, 0, len(ids))
		for _, id := range ids {
			a := cloneAttachment(s.atts[id].Attachment)
			a.Container.ID = s.atts[id].in.id
			d.Attachments = append(d.Attachments, a)
		}
	}
	d.Roles = cloneRoles(s.perm.roles)
	d.Memberships = cloneMemberships(s.perm.memberships)
	// Shares of deleted work packages went with them.
	for _, sh := range s.perm.shares {
		if _, ok := s.wps[sh.WorkPackageID]; ok {
			d.Shares = append(d.Shares, sh)
		}
	}
	if s.perm.nonMemberRole != nil {
		r := cloneRoles([]Role{*s.perm.nonMemberRole})[0]
		d.NonMemberRole = &r
	}
	return d
}

// cloneDataset deep-copies a data set.
func cloneDataset(d *Dataset) *Dataset {
	c := &Dataset{
		InstanceName: d.InstanceName,
		Users:        slices.Clone(d.Users),
		Statuses:     slices.Clone(d.Statuses),
		Types:        slices.Clone(d.Types),
		Priorities:   slices.Clone(d.Priorities),
	}
	c.Projects = make([]Project, len(d.Projects))
	for i, p := range d.Projects {
		p.Members = slices.Clone(p.Members)
		p.Parent = cloneRef(p.Parent)
		c.Projects[i] = p
	}
	c.WorkPackages = make([]openproject.WorkPackage, len(d.WorkPackages))
	for i, wp := range d.WorkPackages {
		c.WorkPackages[i] = cloneWP(wp)
	}
	c.Activities = make([]openproject.Activity, len(d.Activities))
	for i, a := range d.Activities {
		a.Details = slices.Clone(a.Details)
		c.Activities[i] = a
	}
	c.WikiPages = make([]openproject.WikiPage, len(d.WikiPages))
	for i, w := range d.WikiPages {
		c.WikiPages[i] = cloneWiki(w)
	}
	c.Meetings = make([]openproject.Meeting, len(d.Meetings))
	for i, m := range d.Meetings {
		c.Meetings[i] = cloneMeeting(m)
	}
	c.Queries = make([]openproject.Query, len(d.Queries))
	for i, q := range d.Queries {
		q.Project = cloneRef(q.Project)
		c.Queries[i] = q
	}
	if d.TimeEntries != nil {
		c.TimeEntries = make([]openproject.TimeEntry, len(d.TimeEntries))
		for i, te := range d.TimeEntries {
			c.TimeEntries[i] = cloneTimeEntry(te)
		}
	}
	c.Versions = slices.Clone(d.Versions)
	c.CustomFields = slices.Clone(d.CustomFields)
	c.CustomValues = make([]CustomValue, len(d.CustomValues))
	for i, cv := range d.CustomValues {
		cv.Values = slices.Clone(cv.Values)
		c.CustomValues[i] = cv
	}
	if d.CustomValues == nil {
		c.CustomValues = nil
	}
	if d.Relations != nil {
		c.Relations = make([]openproject.Relation, len(d.Relations))
		for i, r := range d.Relations {
			c.Relations[i] = cloneRelation(r)
		}
	}
	if d.Attachments != nil {
		c.Attachments = make([]Attachment, len(d.Attachments))
		for i, a := range d.Attachments {
			c.Attachments[i] = cloneAttachment(a)
		}
	}
	c.Roles = cloneRoles(d.Roles)
	c.Memberships = cloneMemberships(d.Memberships)
	c.Shares = slices.Clone(d.Shares)
	if d.NonMemberRole != nil {
		r := cloneRoles([]Role{*d.NonMemberRole})[0]
		c.NonMemberRole = &r
	}
	return c
}

func cloneRef(r *openproject.Ref) *openproject.Ref {
	if r == nil {
		return nil
	}
	c := *r
	return &c
}

func cloneWP(wp openproject.WorkPackage) openproject.WorkPackage {
	wp.Assignee = cloneRef(wp.Assignee)
	wp.Responsible = cloneRef(wp.Responsible)
	wp.Parent = cloneRef(wp.Parent)
	wp.Version = cloneRef(wp.Version)
	if wp.PercentageDone != nil {
		v := *wp.PercentageDone
		wp.PercentageDone = &v
	}
	return wp
}

func cloneWiki(w openproject.WikiPage) openproject.WikiPage {
	w.Attachments = slices.Clone(w.Attachments)
	return w
}

func cloneMeeting(m openproject.Meeting) openproject.Meeting {
	m.Participants = slices.Clone(m.Participants)
	items := make([]openproject.AgendaItem, len(m.AgendaItems))
	for i, it := range m.AgendaItems {
		it.WorkPackage = cloneRef(it.WorkPackage)
		it.Author = cloneRef(it.Author)
		it.Presenter = cloneRef(it.Presenter)
		it.Section = cloneRef(it.Section)
		it.Outcomes = slices.Clone(it.Outcomes)
		if it.DurationMinutes != nil {
			v := *it.DurationMinutes
			it.DurationMinutes = &v
		}
		items[i] = it
	}
	if m.AgendaItems == nil {
		items = nil
	}
	m.AgendaItems = items
	return m
}

package optest

import (
	"fmt"
	"slices"

	"github.com/opsearch/opsearch/openproject"
)

// OpenProject's names for the permissions the fake models, as the real
// server's scopes and specs spell them (opf/openproject: view_work_packages
// in WorkPackages::Scopes::AllowedTo, view_internal_comments in
// Journals::Scopes::InternalVisibleFor, add_internal_comments in
// docs/api/apiv3/components/schemas/activity_comment_write_model.yml).
// Roles of a data set may name any other permission too; the fake ignores
// what it does not model.
const (
	// PermViewWorkPackages shows a project's work packages: lists, GET,
	// activities and counts.
	PermViewWorkPackages = "view_work_packages"
	// PermEditWorkPackages lets a member change work packages and comment.
	PermEditWorkPackages = "edit_work_packages"
	// PermViewWikiPages shows a project's wiki pages.
	PermViewWikiPages = "view_wiki_pages"
	// PermViewMeetings shows a project's meetings and their agenda items.
	PermViewMeetings = "view_meetings"
	// PermViewInternalComments shows internal activities (comments).
	PermViewInternalComments = "view_internal_comments"
	// PermAddInternalComments lets a member write internal comments.
	PermAddInternalComments = "add_internal_comments"
)

// defaultNonMemberPermissions is what the Non member role grants when a
// data set does not set NonMemberRole: every view permission the fake
// models except view_internal_comments, which is what the fake showed
// non-members of public projects before it modelled roles. It is never
// modified.
var defaultNonMemberPermissions = []string{PermViewWorkPackages, PermViewWikiPages, PermViewMeetings}

// DefaultNonMemberPermissions returns the permissions of the Non member
// role of a data set without NonMemberRole (a fresh slice).
func DefaultNonMemberPermissions() []string { return slices.Clone(defaultNonMemberPermissions) }

// Role is a named set of permissions, given to users in a project by a
// Membership or on one work package by a Share. Permission names are
// OpenProject's (see the Perm constants).
type Role struct {
	ID          int64    `json:"id"`
	Name        string   `json:"name"`
	Permissions []string `json:"permissions"`
}

// Membership gives a user roles in a project. A user's permissions in a
// project are the union of the permissions of all their roles there.
type Membership struct {
	ProjectID int64   `json:"project"`
	UserID    int64   `json:"user"`
	RoleIDs   []int64 `json:"roles"`
}

// Share gives one user a role on one work package (OpenProject 13.3+
// "share work package"). With a role that has view_work_packages the user
// sees that work package and its activities, but no other work package of
// its project, unless their project permissions say otherwise.
type Share struct {
	WorkPackageID int64 `json:"workPackage"`
	UserID        int64 `json:"user"`
	RoleID        int64 `json:"role"`
}

// permSet is the permissions one user holds in one project. all marks the
// members of Project.Members, who hold every permission.
type permSet struct {
	all   bool
	perms map[string]bool
}

func (p permSet) has(perm string) bool { return p.all || p.perms[perm] }

func newPermSet(perms []string) permSet {
	s := permSet{perms: make(map[string]bool, len(perms))}
	for _, p := range perms {
		s.perms[p] = true
	}
	return s
}

// perms holds the permission model of a store, built once from the data
// set: memberships resolved to permission sets, and shares indexed by
// user.
type perms struct {
	// member maps project id -> user id -> permissions from Members and
	// memberships. A user present here is a member of the project.
	member    map[int64]map[int64]permSet
	nonMember permSet
	// sharedWPs maps user id -> the work packages shared with them with a
	// role that has view_work_packages.
	sharedWPs map[int64]map[int64]bool
	// shareProjects maps user id -> projects they hold any share in.
	shareProjects map[int64]map[int64]bool

	// What the data set said, kept for snapshots.
	roles         []Role
	memberships   []Membership
	shares        []Share
	nonMemberRole *Role
}

// newPerms builds the permission model of d. wpProject maps a work package
// id to its project.
func newPerms(d *Dataset, wpProject func(int64) (int64, bool)) perms {
	p := perms{
		member:        map[int64]map[int64]permSet{},
		sharedWPs:     map[int64]map[int64]bool{},
		shareProjects: map[int64]map[int64]bool{},
		roles:         cloneRoles(d.Roles),
		memberships:   cloneMemberships(d.Memberships),
		shares:        slices.Clone(d.Shares),
	}
	if d.NonMemberRole != nil {
		r := cloneRoles([]Role{*d.NonMemberRole})[0]
		p.nonMemberRole = &r
		p.nonMember = newPermSet(r.Permissions)
	} else {
		p.nonMember = newPermSet(defaultNonMemberPermissions)
	}
	roles := make(map[int64][]string, len(d.Roles))
	for _, r := range d.Roles {
		roles[r.ID] = r.Permissions
	}
	set := func(pid, uid int64) permSet {
		if p.member[pid] == nil {
			p.member[pid] = map[int64]permSet{}
		}
		ps, ok := p.member[pid][uid]
		if !ok {
			ps = permSet{perms: map[string]bool{}}
		}
		return ps
	}
	for _, pr := range d.Projects {
		for _, uid := range pr.Members {
			ps := set(pr.ID, uid)
			ps.all = true
			p.member[pr.ID][uid] = ps
		}
	}
	for _, m := range d.Memberships {
		ps := set(m.ProjectID, m.UserID)
		for _, rid := range m.RoleIDs {
			for _, perm := range roles[rid] {
				ps.perms[perm] = true
			}
		}
		p.member[m.ProjectID][m.UserID] = ps
	}
	for _, sh := range d.Shares {
		pid, ok := wpProject(sh.WorkPackageID)
		if !ok {
			continue
		}
		if p.shareProjects[sh.UserID] == nil {
			p.shareProjects[sh.UserID] = map[int64]bool{}
		}
		p.shareProjects[sh.UserID][pid] = true
		if slices.Contains(roles[sh.RoleID], PermViewWorkPackages) {
			if p.sharedWPs[sh.UserID] == nil {
				p.sharedWPs[sh.UserID] = map[int64]bool{}
			}
			p.sharedWPs[sh.UserID][sh.WorkPackageID] = true
		}
	}
	return p
}

func cloneRoles(rs []Role) []Role {
	if rs == nil {
		return nil
	}
	out := make([]Role, len(rs))
	for i, r := range rs {
		r.Permissions = slices.Clone(r.Permissions)
		out[i] = r
	}
	return out
}

func cloneMemberships(ms []Membership) []Membership {
	if ms == nil {
		return nil
	}
	out := make([]Membership, len(ms))
	for i, m := range ms {
		m.RoleIDs = slices.Clone(m.RoleIDs)
		out[i] = m
	}
	return out
}

// canSee reports whether u may see project pid. This follows
// Projects::Scopes::Visible.visible (app/models/projects/scopes/visible.rb,
// opf/openproject @4a54ae2d): administrators see every project, everyone
// else the public ones and those of which user.members holds a row. Those
// rows include work package shares (a share is a Member with entity_type
// WorkPackage and the project's id), so a user with only a shared work
// package in a private project sees that project in /projects and by GET.
func (s *store) canSee(u *User, pid int64) bool {
	p, ok := s.projects[pid]
	if !ok {
		return false
	}
	if u.Admin || p.Public {
		return true
	}
	if _, member := s.perm.member[pid][u.ID]; member {
		return true
	}
	return s.perm.shareProjects[u.ID][pid]
}

// allowed reports whether u holds perm in project pid. Administrators hold
// every permission. A member holds the union of their roles' permissions;
// a logged-in user without a project membership holds the Non member
// role's permissions in public projects. Work package shares do not make
// a user a member here: Projects::Scopes::AllowedTo (allowed_to.rb,
// allowed_to_no_member_exists_condition) only looks at memberships with
// entity_type nil, so a user with a share in a public project keeps the
// Non member role there.
func (s *store) allowed(u *User, pid int64, perm string) bool {
	p, ok := s.projects[pid]
	if !ok {
		return false
	}
	if u.Admin {
		return true
	}
	if ps, member := s.perm.member[pid][u.ID]; member {
		return ps.has(perm)
	}
	return p.Public && s.perm.nonMember.has(perm)
}

// canSeeWP reports whether u may see wp: with view_work_packages in its
// project, or through a share (WorkPackages::Scopes::AllowedTo, which ORs
// the project permission and work package memberships).
func (s *store) canSeeWP(u *User, wp *openproject.WorkPackage) bool {
	return s.allowed(u, wp.Project.ID, PermViewWorkPackages) || s.perm.sharedWPs[u.ID][wp.ID]
}

// canWrite reports whether u may change things in project pid: the fake
// gives administrators and the members of Project.Members every
// permission, and members through roles write when a role has
// edit_work_packages. Non-members never write.
func (s *store) canWrite(u *User, pid int64) bool {
	if _, ok := s.projects[pid]; !ok {
		return false
	}
	if u.Admin {
		return true
	}
	ps, member := s.perm.member[pid][u.ID]
	return member && ps.has(PermEditWorkPackages)
}

// seesAnyWP reports whether u may see any work package at all, the
// condition of the global list (authorize_in_any_work_package).
func (s *store) seesAnyWP(u *User) bool {
	if u.Admin || len(s.perm.sharedWPs[u.ID]) > 0 {
		return true
	}
	for _, pid := range s.projectOrder {
		if s.allowed(u, pid, PermViewWorkPackages) {
			return true
		}
	}
	return false
}

// seesWPsIn reports whether u may list the work packages of project pid:
// with view_work_packages there, or with a work package shared there.
func (s *store) seesWPsIn(u *User, pid int64) bool {
	if s.allowed(u, pid, PermViewWorkPackages) {
		return true
	}
	for id := range s.perm.sharedWPs[u.ID] {
		if wp, ok := s.wps[id]; ok && wp.Project.ID == pid {
			return true
		}
	}
	return false
}

// SetMembership gives user uid the roles in project pid, replacing what
// they held there (a Project.Members row or a membership). No roles
// removes the user from the project, as removing a member in OpenProject
// does; shares of the project's work packages stay. The change applies
// to the next request.
func (s *Server) SetMembership(pid, uid int64, roles []int64) error {
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	st := s.st
	p, ok := st.projects[pid]
	if !ok {
		return fmt.Errorf("set membership: project %d: %w", pid, ErrUnknownEntity)
	}
	if _, ok := st.users[uid]; !ok {
		return fmt.Errorf("set membership: user %d: %w", uid, ErrUnknownEntity)
	}
	for _, rid := range roles {
		if !slices.ContainsFunc(st.perm.roles, func(r Role) bool { return r.ID == rid }) {
			return fmt.Errorf("set membership: role %d: %w", rid, ErrUnknownEntity)
		}
	}
	p.Members = slices.DeleteFunc(p.Members, func(id int64) bool { return id == uid })
	ms := slices.DeleteFunc(cloneMemberships(st.perm.memberships), func(m Membership) bool { return m.ProjectID == pid && m.UserID == uid })
	if len(roles) > 0 {
		ms = append(ms, Membership{ProjectID: pid, UserID: uid, RoleIDs: slices.Clone(roles)})
	}
	d := &Dataset{Roles: st.perm.roles, Memberships: ms, Shares: st.perm.shares, NonMemberRole: st.perm.nonMemberRole}
	for _, id := range st.projectOrder {
		d.Projects = append(d.Projects, *st.projects[id])
	}
	st.perm = newPerms(d, func(id int64) (int64, bool) {
		wp, ok := st.wps[id]
		if !ok {
			return 0, false
		}
		return wp.Project.ID, true
	})
	return nil
}

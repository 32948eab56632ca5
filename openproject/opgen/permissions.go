package opgen

import (
	"slices"

	"github.com/opsearch/opsearch/openproject/optest"
)

// API keys of the users GenOptions.MixedPermissions adds after all others.
const (
	CarolKey = "opsearch-carol"
	DaveKey  = "opsearch-dave"
	ErinKey  = "opsearch-erin"
)

// Ids of the roles of a MixedPermissions data set.
const (
	RoleMember     = 1 // every view permission, internal comments, edits
	RoleReader     = 2 // work packages, wiki, meetings; no internal comments
	RoleNoWiki     = 3 // work packages and meetings
	RoleNoMeetings = 4 // work packages and wiki
	RoleWPViewer   = 5 // OpenProject's "Work package viewer" (shares)
	RoleWPComment  = 6 // "Work package commenter"
	RoleWPEditor   = 7 // "Work package editor"
	RoleNonMember  = 8 // the built-in Non member role
)

// mixedRoles are the roles of a MixedPermissions data set.
func mixedRoles() []optest.Role {
	return []optest.Role{
		{ID: RoleMember, Name: "Member", Permissions: []string{optest.PermViewWorkPackages, optest.PermEditWorkPackages, "add_work_package_comments",
			optest.PermViewWikiPages, optest.PermViewMeetings, optest.PermViewInternalComments, optest.PermAddInternalComments}},
		{ID: RoleReader, Name: "Reader", Permissions: []string{optest.PermViewWorkPackages, optest.PermViewWikiPages, optest.PermViewMeetings}},
		{ID: RoleNoWiki, Name: "Reader without wiki", Permissions: []string{optest.PermViewWorkPackages, optest.PermViewMeetings}},
		{ID: RoleNoMeetings, Name: "Reader without meetings", Permissions: []string{optest.PermViewWorkPackages, optest.PermViewWikiPages}},
		{ID: RoleWPViewer, Name: "Work package viewer", Permissions: []string{optest.PermViewWorkPackages}},
		{ID: RoleWPComment, Name: "Work package commenter", Permissions: []string{optest.PermViewWorkPackages, "add_work_package_comments"}},
		{ID: RoleWPEditor, Name: "Work package editor", Permissions: []string{optest.PermViewWorkPackages, "add_work_package_comments", optest.PermEditWorkPackages}},
	}
}

// genPermissions adds what GenOptions.MixedPermissions asks for to d:
//
//   - users carol, dave and erin (keys CarolKey, DaveKey, ErinKey), after
//     every other user;
//   - the roles above and a Non member role with view_work_packages and
//     view_meetings but not view_wiki_pages, so non-members of public
//     projects see no wiki;
//   - carol: Reader in alice-private (no internal comments there), and
//     one work package of bob-private shared with her as viewer;
//   - dave: Reader without wiki in website-relaunch and Reader without
//     meetings in the first public project, where the membership replaces
//     the Non member role;
//   - erin: no membership; three other work packages of bob-private
//     shared with her, as viewer, commenter and editor;
//   - about one comment in eight made internal, at least one in each of
//     the first four projects.
//
// Alice, bob and the generated users keep their Project.Members rows,
// which hold every permission.
func (g *generator) genPermissions(d *optest.Dataset) {
	r := Rand(g.o.Seed, streamPermissions)
	next := int64(len(d.Users) + 1)
	ids := map[string]int64{}
	for _, u := range []struct{ first, last, key string }{
		{"Carol", "Castillo", CarolKey}, {"Dave", "Dietrich", DaveKey}, {"Erin", "Eriksen", ErinKey},
	} {
		login := loginFold(u.first)
		nu := optest.User{APIKey: u.key}
		nu.ID, nu.Name, nu.Login = next, u.first+" "+u.last, login
		nu.FirstName, nu.LastName, nu.Email = u.first, u.last, login+"@example.com"
		nu.Status, nu.Language = "active", "en"
		nu.CreatedAt, nu.UpdatedAt = g.start, g.start
		d.Users = append(d.Users, nu)
		ids[u.key] = next
		next++
	}
	d.Roles = mixedRoles()
	d.NonMemberRole = &optest.Role{ID: RoleNonMember, Name: "Non member",
		Permissions: []string{optest.PermViewWorkPackages, optest.PermViewMeetings}}

	public := int64(0)
	for _, p := range d.Projects {
		if p.Public {
			public = p.ID
			break
		}
	}
	const shared, alicePrivate, bobPrivate = 1, 2, 3
	d.Memberships = []optest.Membership{
		{ProjectID: alicePrivate, UserID: ids[CarolKey], RoleIDs: []int64{RoleReader}},
		{ProjectID: shared, UserID: ids[DaveKey], RoleIDs: []int64{RoleNoWiki}},
	}
	if public != 0 {
		d.Memberships = append(d.Memberships, optest.Membership{ProjectID: public, UserID: ids[DaveKey], RoleIDs: []int64{RoleNoMeetings}})
	}

	byProject := map[int64][]int64{} // work package ids, ascending
	for _, wp := range d.WorkPackages {
		byProject[wp.Project.ID] = append(byProject[wp.Project.ID], wp.ID)
	}
	for _, list := range byProject {
		slices.Sort(list)
	}
	if l := slices.Clone(byProject[bobPrivate]); len(l) > 0 {
		r.Shuffle(len(l), func(i, j int) { l[i], l[j] = l[j], l[i] })
		erin := slices.Sorted(slices.Values(l[:min(3, len(l))]))
		for i, id := range erin {
			d.Shares = append(d.Shares, optest.Share{WorkPackageID: id, UserID: ids[ErinKey], RoleID: []int64{RoleWPViewer, RoleWPComment, RoleWPEditor}[i]})
		}
		if len(l) > 3 {
			d.Shares = append(d.Shares, optest.Share{WorkPackageID: l[3], UserID: ids[CarolKey], RoleID: RoleWPViewer})
		}
	}

	projectOf := make(map[int64]int64, len(d.WorkPackages))
	for _, wp := range d.WorkPackages {
		projectOf[wp.ID] = wp.Project.ID
	}
	marked := map[int64]bool{}
	for i := range d.Activities {
		a := &d.Activities[i]
		if a.Comment != "" && r.IntN(8) == 0 {
			a.Internal = true
			marked[projectOf[a.WorkPackageID]] = true
		}
	}
	for _, pid := range []int64{1, 2, 3, 4} {
		if marked[pid] {
			continue
		}
		for i := range d.Activities {
			if a := &d.Activities[i]; a.Comment != "" && projectOf[a.WorkPackageID] == pid {
				a.Internal = true
				break
			}
		}
	}
}

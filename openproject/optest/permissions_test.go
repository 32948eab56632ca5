package optest

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/opsearch/opsearch/openproject"
)

// Keys of the users permDataset adds.
const (
	permDaveKey = "opsearch-dave"
	permErinKey = "opsearch-erin"
)

// permDataset is srvDataset with roles, memberships, shares, a Non member
// role and more internal comments:
//
//	roles:       1 Reader (view_work_packages, view_meetings),
//	             2 Member (every view permission, internal comments, edit),
//	             3 Wiki only (view_wiki_pages), 10 Work package viewer
//	non member:  view_work_packages only (no wiki, no meetings)
//	memberships: bob Member in 2 (alice-private),
//	             dave Reader in 2 and Wiki only in 1 (demo, public)
//	shares:      work package 4 (bob-private) with erin
//	activities:  6 internal and 7 public on work package 3
//
// So dave, a member of demo, loses what non-members may do there and only
// reads its wiki; erin sees bob-private's project and work package 4 but
// nothing else of it.
func permDataset() *Dataset {
	d := srvDataset()
	d.Users = append(d.Users,
		User{User: openproject.User{ID: 5, Name: "Dave Moe", Login: "dave", CreatedAt: srvDay(1, 1), UpdatedAt: srvDay(1, 1)}, APIKey: permDaveKey},
		User{User: openproject.User{ID: 6, Name: "Erin Loe", Login: "erin", CreatedAt: srvDay(1, 1), UpdatedAt: srvDay(1, 1)}, APIKey: permErinKey},
	)
	d.Roles = []Role{
		{ID: 1, Name: "Reader", Permissions: []string{PermViewWorkPackages, PermViewMeetings}},
		{ID: 2, Name: "Member", Permissions: []string{PermViewWorkPackages, PermViewWikiPages, PermViewMeetings, PermViewInternalComments, PermAddInternalComments, PermEditWorkPackages}},
		{ID: 3, Name: "Wiki only", Permissions: []string{PermViewWikiPages}},
		{ID: 10, Name: "Work package viewer", Permissions: []string{PermViewWorkPackages}},
	}
	d.NonMemberRole = &Role{ID: 99, Name: "Non member", Permissions: []string{PermViewWorkPackages}}
	d.Memberships = []Membership{
		{ProjectID: 2, UserID: 3, RoleIDs: []int64{2}},
		{ProjectID: 2, UserID: 5, RoleIDs: []int64{1}},
		{ProjectID: 1, UserID: 5, RoleIDs: []int64{3}},
	}
	d.Shares = []Share{{WorkPackageID: 4, UserID: 6, RoleID: 10}}
	d.Activities = append(d.Activities,
		openproject.Activity{ID: 6, Version: 1, Comment: "Internal: budget is tight.", Internal: true, User: openproject.Ref{ID: 2}, WorkPackageID: 3, CreatedAt: srvDay(2, 1)},
		openproject.Activity{ID: 7, Version: 2, Comment: "Public note.", User: openproject.Ref{ID: 2}, WorkPackageID: 3, CreatedAt: srvDay(2, 2)},
	)
	return d
}

// bulkIDs are the ids of the bulk project's work packages.
func bulkIDs() []int64 {
	var ids []int64
	for i := int64(10); i < 60; i++ {
		ids = append(ids, i)
	}
	return ids
}

func ids(v ...int64) []int64 { return v }

// allIDs pages through a collection at the fake's maximum page size and
// returns every element id.
func allIDs(t *testing.T, base, path, key string) []int64 {
	t.Helper()
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	r := srvGet(t, base, path+sep+"pageSize=1000", key)
	if r.status != http.StatusOK {
		t.Fatalf("GET %s as %s: %d %s", path, key, r.status, r.raw)
	}
	if jnum(r.body["total"]) > 1000 {
		t.Fatalf("GET %s: total %v exceeds one page", path, r.body["total"])
	}
	return elementIDs(r.body)
}

func TestPermissionsVisibility(t *testing.T) {
	_, base := Start(t, permDataset(), Options{Now: func() time.Time { return srvClock }})
	all := "?" + srvQ("filters", "[]")[1:]
	tests := []struct {
		key                 string
		projects            []int64
		wps                 []int64
		meetings            []int64
		wikis               []int64 // visible; the others of 1, 2 are 404
		hiddenWPs           []int64
		wp1Acts, wp3Acts    []int64 // nil: 404
		wp4Acts             []int64
		agenda1, projectWPs int // status of /meetings/1/agenda_items, /projects/1/work_packages
	}{
		{key: AdminKey, projects: ids(1, 2, 3, 4), wps: append(ids(1, 2, 3, 4, 5), bulkIDs()...), meetings: ids(1, 2, 3), wikis: ids(1, 2),
			wp1Acts: ids(1, 2, 3, 4), wp3Acts: ids(6, 7), wp4Acts: ids(5), agenda1: 200, projectWPs: 200},
		{key: AliceKey, projects: ids(1, 2, 4), wps: append(ids(1, 2, 3, 5), bulkIDs()...), meetings: ids(1, 3), wikis: ids(1), hiddenWPs: ids(4),
			wp1Acts: ids(1, 2, 3, 4), wp3Acts: ids(6, 7), agenda1: 200, projectWPs: 200},
		// bob: Member in alice-private (internal comments there), a
		// non-member of demo, whose Non member role shows no meetings.
		{key: BobKey, projects: ids(1, 2, 3, 4), wps: append(ids(1, 2, 3, 4, 5), bulkIDs()...), meetings: ids(2), wikis: ids(2),
			wp1Acts: ids(1, 2, 3), wp3Acts: ids(6, 7), wp4Acts: ids(5), agenda1: 404, projectWPs: 200},
		{key: srvCarolKey, projects: ids(1, 4), wps: append(ids(1, 2, 5), bulkIDs()...), hiddenWPs: ids(3, 4),
			wp1Acts: ids(1, 2, 3), agenda1: 404, projectWPs: 200},
		// dave: a member of demo with a role that only reads the wiki,
		// so demo's work packages and meetings are gone; a Reader in
		// alice-private without internal comments; a non-member of bulk.
		{key: permDaveKey, projects: ids(1, 2, 4), wps: append(ids(3), bulkIDs()...), wikis: ids(1), hiddenWPs: ids(1, 2, 4, 5),
			wp3Acts: ids(7), agenda1: 404, projectWPs: 403},
		// erin: a non-member who got work package 4 shared; bob-private
		// shows in her projects, its other contents do not.
		{key: permErinKey, projects: ids(1, 3, 4), wps: append(ids(1, 2, 4, 5), bulkIDs()...), hiddenWPs: ids(3),
			wp1Acts: ids(1, 2, 3), wp4Acts: ids(5), agenda1: 404, projectWPs: 200},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			if got := allIDs(t, base, "/api/v3/projects", tt.key); !slices.Equal(got, tt.projects) {
				t.Errorf("projects = %v, want %v", got, tt.projects)
			}
			for _, pid := range ids(1, 2, 3, 4) {
				r := srvGet(t, base, fmt.Sprintf("/api/v3/projects/%d", pid), tt.key)
				if want := slices.Contains(tt.projects, pid); (r.status == 200) != want {
					t.Errorf("GET project %d = %d, visible %v", pid, r.status, want)
				}
			}
			if got := allIDs(t, base, "/api/v3/work_packages"+all, tt.key); !slices.Equal(got, tt.wps) {
				t.Errorf("work packages = %v, want %v", got, tt.wps)
			}
			for _, id := range tt.wps[:min(len(tt.wps), 6)] {
				if r := srvGet(t, base, fmt.Sprintf("/api/v3/work_packages/%d", id), tt.key); r.status != 200 {
					t.Errorf("GET work package %d = %d", id, r.status)
				}
			}
			for _, id := range tt.hiddenWPs {
				wantError(t, srvGet(t, base, fmt.Sprintf("/api/v3/work_packages/%d", id), tt.key), 404, "NotFound", msgWPNotFound)
				wantError(t, srvGet(t, base, fmt.Sprintf("/api/v3/work_packages/%d/activities", id), tt.key), 404, "NotFound", msgWPNotFound)
			}
			if got := allIDs(t, base, "/api/v3/meetings"+all, tt.key); !slices.Equal(got, tt.meetings) {
				t.Errorf("meetings = %v, want %v", got, tt.meetings)
			}
			for _, id := range ids(1, 2, 3) {
				r := srvGet(t, base, fmt.Sprintf("/api/v3/meetings/%d", id), tt.key)
				if slices.Contains(tt.meetings, id) {
					if r.status != 200 {
						t.Errorf("GET meeting %d = %d", id, r.status)
					}
				} else {
					wantError(t, r, 404, "NotFound", msgNotFound)
				}
			}
			if r := srvGet(t, base, "/api/v3/meetings/1/agenda_items", tt.key); r.status != tt.agenda1 {
				t.Errorf("agenda items of meeting 1 = %d, want %d", r.status, tt.agenda1)
			}
			if r := srvGet(t, base, "/api/v3/meeting_agenda_items/1", tt.key); r.status != tt.agenda1 {
				t.Errorf("agenda item 1 = %d, want %d", r.status, tt.agenda1)
			}
			for _, id := range ids(1, 2) {
				r := srvGet(t, base, fmt.Sprintf("/api/v3/wiki_pages/%d", id), tt.key)
				if slices.Contains(tt.wikis, id) {
					if r.status != 200 {
						t.Errorf("GET wiki page %d = %d", id, r.status)
					}
				} else {
					wantError(t, r, 404, "NotFound", msgNotFound)
				}
			}
			// The wiki page's attachment follows the page.
			if r := srvGet(t, base, "/api/v3/attachments/1", tt.key); (r.status == 200) != slices.Contains(tt.wikis, 1) {
				t.Errorf("attachment of wiki page 1 = %d", r.status)
			}
			for _, c := range []struct {
				wp   int64
				want []int64
			}{{1, tt.wp1Acts}, {3, tt.wp3Acts}, {4, tt.wp4Acts}} {
				r := srvGet(t, base, fmt.Sprintf("/api/v3/work_packages/%d/activities", c.wp), tt.key)
				if c.want == nil {
					wantError(t, r, 404, "NotFound", msgWPNotFound)
					continue
				}
				if got := elementIDs(r.body); !slices.Equal(got, c.want) || jnum(r.body["total"]) != len(c.want) {
					t.Errorf("activities of %d = %v (total %v), want %v", c.wp, got, r.body["total"], c.want)
				}
				for _, aid := range c.want {
					if r := srvGet(t, base, fmt.Sprintf("/api/v3/activities/%d", aid), tt.key); r.status != 200 {
						t.Errorf("GET activity %d = %d", aid, r.status)
					}
				}
			}
			for _, aid := range ids(4, 6) {
				visible := slices.Contains(tt.wp1Acts, aid) || slices.Contains(tt.wp3Acts, aid)
				if r := srvGet(t, base, fmt.Sprintf("/api/v3/activities/%d", aid), tt.key); (r.status == 200) != visible {
					t.Errorf("GET internal activity %d = %d, visible %v", aid, r.status, visible)
				}
			}
			r := srvGet(t, base, "/api/v3/projects/1/work_packages", tt.key)
			if r.status != tt.projectWPs {
				t.Errorf("project 1 work packages = %d, want %d", r.status, tt.projectWPs)
			}
			if tt.projectWPs == 403 {
				wantError(t, r, 403, "MissingPermission", msgProjectWPForbidden)
			}
		})
	}
}

// A share shows only the shared work package of its project, also in the
// project's own list, and its project's other contents stay hidden.
func TestPermissionsShare(t *testing.T) {
	_, base := Start(t, permDataset(), Options{Now: func() time.Time { return srvClock }})
	if got := allIDs(t, base, "/api/v3/projects/3/work_packages?"+srvQ("filters", "[]")[1:], permErinKey); !slices.Equal(got, ids(4)) {
		t.Errorf("erin's bob-private work packages = %v, want [4]", got)
	}
	wantError(t, srvGet(t, base, "/api/v3/projects/3/work_packages", srvCarolKey), 404, "NotFound", msgProjectMissing)
	wantError(t, srvGet(t, base, "/api/v3/wiki_pages/2", permErinKey), 404, "NotFound", msgNotFound)
	wantError(t, srvGet(t, base, "/api/v3/meetings/2", permErinKey), 404, "NotFound", msgNotFound)
	// A share gives no write permission here: the viewer role.
	r := srvDo(t, http.MethodPost, base+"/api/v3/work_packages/4/activities", permErinKey, map[string]any{"comment": map[string]any{"raw": "hi"}})
	wantError(t, r, 403, "MissingPermission", msgForbidden)
	// The agenda item linking work package 4 in meeting 1 is undisclosed
	// to alice, who cannot see it; the work package's link in an
	// activity is the same for erin as its own.
	r = srvGet(t, base, "/api/v3/activities/5", permErinKey)
	if got := jget(r.body, "_links", "workPackage", "href"); got != "/api/v3/work_packages/4" {
		t.Errorf("erin's activity links %v", got)
	}
}

// Internal comments are only written with add_internal_comments, and the
// rest of a role's permissions decide writes.
func TestPermissionsInternalCommentWrites(t *testing.T) {
	_, base := Start(t, permDataset(), Options{Now: func() time.Time { return srvClock }})
	body := map[string]any{"comment": map[string]any{"raw": "secret"}, "internal": true}
	// bob's Member role has add_internal_comments in alice-private.
	r := srvDo(t, http.MethodPost, base+"/api/v3/work_packages/3/activities", BobKey, body)
	if r.status != http.StatusCreated || jget(r.body, "internal") != true {
		t.Fatalf("bob's internal comment: %d %s", r.status, r.raw)
	}
	id := jnum(r.body["id"])
	// dave's Reader role neither writes nor sees it.
	wantError(t, srvDo(t, http.MethodPost, base+"/api/v3/work_packages/3/activities", permDaveKey, body), 403, "MissingPermission", "")
	if got := elementIDs(srvGet(t, base, "/api/v3/work_packages/3/activities", permDaveKey).body); slices.Contains(got, int64(id)) {
		t.Errorf("dave sees the new internal comment: %v", got)
	}
	if got := elementIDs(srvGet(t, base, "/api/v3/work_packages/3/activities", AliceKey).body); !slices.Contains(got, int64(id)) {
		t.Errorf("alice misses the new internal comment: %v", got)
	}
}

// Internal comments do not exist on legacy servers: every activity is
// public there, as before roles were modelled.
func TestPermissionsInternalLegacy(t *testing.T) {
	_, base := Start(t, permDataset(), Options{Profile: ProfileLegacy, Now: func() time.Time { return srvClock }})
	if got := elementIDs(srvGet(t, base, "/api/v3/work_packages/3/activities", permDaveKey).body); !slices.Equal(got, ids(6, 7)) {
		t.Errorf("legacy activities for dave = %v", got)
	}
}

func TestPermissionsValidate(t *testing.T) {
	tests := []struct {
		name string
		edit func(d *Dataset)
	}{
		{"duplicate role", func(d *Dataset) { d.Roles = append(d.Roles, Role{ID: 1}) }},
		{"role id 0", func(d *Dataset) { d.Roles = append(d.Roles, Role{}) }},
		{"membership project", func(d *Dataset) { d.Memberships[0].ProjectID = 99 }},
		{"membership user", func(d *Dataset) { d.Memberships[0].UserID = 99 }},
		{"membership role", func(d *Dataset) { d.Memberships[0].RoleIDs = []int64{42} }},
		{"share work package", func(d *Dataset) { d.Shares[0].WorkPackageID = 999 }},
		{"share user", func(d *Dataset) { d.Shares[0].UserID = 99 }},
		{"share role", func(d *Dataset) { d.Shares[0].RoleID = 42 }},
	}
	if err := permDataset().Validate(); err != nil {
		t.Fatalf("permDataset: %v", err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := permDataset()
			tt.edit(d)
			if err := d.Validate(); err == nil {
				t.Error("Validate accepted it")
			}
		})
	}
}

// Dataset round-trips the permission model, and drops the shares of
// deleted work packages.
func TestPermissionsSnapshot(t *testing.T) {
	s, _ := Start(t, permDataset(), Options{Now: func() time.Time { return srvClock }})
	got := s.Dataset()
	want := permDataset()
	if !jsonEqual(got.Roles, want.Roles) || !jsonEqual(got.Memberships, want.Memberships) ||
		!jsonEqual(got.Shares, want.Shares) || !jsonEqual(got.NonMemberRole, want.NonMemberRole) {
		t.Errorf("snapshot changed the permission model:\n%+v\n%+v\n%+v\n%+v", got.Roles, got.Memberships, got.Shares, got.NonMemberRole)
	}
	if err := s.DeleteWorkPackage(4); err != nil {
		t.Fatal(err)
	}
	if got := s.Dataset().Shares; len(got) != 0 {
		t.Errorf("shares after deleting work package 4 = %+v", got)
	}
	plain := srvDataset()
	s2, _ := Start(t, plain, Options{})
	d := s2.Dataset()
	if d.Roles != nil || d.Memberships != nil || d.Shares != nil || d.NonMemberRole != nil {
		t.Errorf("a data set without roles gained some: %+v %+v %+v %+v", d.Roles, d.Memberships, d.Shares, d.NonMemberRole)
	}
}

// SetMembership changes what a user sees at the next request: removed
// from a private project, dave no longer sees it; given a role again, he
// sees what it grants.
func TestPermissionsSetMembership(t *testing.T) {
	s, base := Start(t, permDataset(), Options{Now: func() time.Time { return srvClock }})
	if r := srvGet(t, base, "/api/v3/projects/2", permDaveKey); r.status != 200 {
		t.Fatalf("dave's alice-private before: status %d", r.status)
	}
	if err := s.SetMembership(2, 5, nil); err != nil {
		t.Fatal(err)
	}
	wantError(t, srvGet(t, base, "/api/v3/projects/2", permDaveKey), 404, "NotFound", msgNotFound)
	if err := s.SetMembership(2, 5, []int64{2}); err != nil {
		t.Fatal(err)
	}
	if r := srvGet(t, base, "/api/v3/projects/2", permDaveKey); r.status != 200 {
		t.Errorf("dave's alice-private after a new role: status %d", r.status)
	}
	for _, c := range []struct {
		pid, uid int64
		roles    []int64
	}{{99, 5, nil}, {2, 99, nil}, {2, 5, []int64{99}}} {
		if err := s.SetMembership(c.pid, c.uid, c.roles); !errors.Is(err, ErrUnknownEntity) {
			t.Errorf("SetMembership(%d, %d, %v) = %v, want ErrUnknownEntity", c.pid, c.uid, c.roles, err)
		}
	}
}

package mcp_test

import (
	"slices"
	"testing"

	"github.com/opsearch/opsearch/mcp"
	"github.com/opsearch/opsearch/openproject/optest"
)

// TestGolden_ListVersions pins openproject_list_versions over the live
// harness (the fake on loopback, the real client, the go-sdk client):
// a project's versions by status, all visible open versions, one version
// with its work packages, bad arguments, a version alice may not see,
// and an upstream fault. It also pins get_work_package's custom fields.
func TestGolden_ListVersions(t *testing.T) {
	l := newGoldenHarness(t, mcp.LiveHarnessOptions{}) // the administrator
	alice := newGoldenHarness(t, mcp.LiveHarnessOptions{Key: optest.AliceKey})
	d := l.Data()
	p0 := d.Projects[0]
	ok := func(tool string, args map[string]any) goldenCall {
		t.Helper()
		return goldenCall{Tool: tool, Arguments: args, Result: l.OK(tool, args)}
	}
	fail := func(tool string, args map[string]any, want string) goldenCall {
		t.Helper()
		return goldenCall{Tool: tool, Arguments: args, Error: l.Fail(tool, args, want)}
	}
	// As alice: versions are visible by sharing, not only by project.
	asAlice := func(args map[string]any, want string) goldenCall {
		t.Helper()
		const tool, label = "openproject_list_versions", "openproject_list_versions (as alice)"
		if want == "" {
			return goldenCall{Tool: label, Arguments: args, Result: alice.OK(tool, args)}
		}
		return goldenCall{Tool: label, Arguments: args, Error: alice.Fail(tool, args, want)}
	}

	// A version of the first project with work packages, and one alice
	// cannot see: defined by a project she is no member of, not shared.
	planned := map[int64]int{}
	for _, wp := range d.WorkPackages {
		if wp.Version != nil {
			planned[wp.Version.ID]++
		}
	}
	var withWPs, hidden int64
	aliceID := userByKey(t, d, optest.AliceKey)
	for _, v := range d.Versions {
		p := projectByID(t, d, v.Project.ID)
		if withWPs == 0 && v.Project.ID == p0.ID && planned[v.ID] > 0 {
			withWPs = v.ID
		}
		// No project has a parent here (checked below), so a version not
		// shared system-wide is usable in its own project only.
		if hidden == 0 && v.Sharing != "system" && !p.Public && !slices.Contains(p.Members, aliceID) {
			hidden = v.ID
		}
	}
	for _, p := range d.Projects {
		if p.Parent != nil {
			t.Fatalf("project %d has a parent; pick the hidden version differently", p.ID)
		}
	}
	if withWPs == 0 || hidden == 0 {
		t.Fatalf("data set lacks a planned version of project %d (%d) or a hidden one (%d)", p0.ID, withWPs, hidden)
	}

	calls := []goldenCall{
		ok("openproject_list_versions", map[string]any{"projectId": p0.Identifier}),
		ok("openproject_list_versions", map[string]any{"projectId": p0.ID, "status": "closed"}),
		ok("openproject_list_versions", map[string]any{"status": "locked"}),
		ok("openproject_list_versions", map[string]any{"versionId": withWPs}),
		fail("openproject_list_versions", map[string]any{"status": "finished"}, "invalid argument status"),
		fail("openproject_list_versions", map[string]any{"versionId": 0}, "invalid argument versionId"),
		fail("openproject_list_versions", map[string]any{"projectId": "a/b"}, "projectId"),
		asAlice(map[string]any{}, ""),
		asAlice(map[string]any{"versionId": hidden}, "not found"),
		fail("openproject_list_versions", map[string]any{"versionId": 999999}, "not found"),
		fail("openproject_list_versions", map[string]any{"projectId": "no-such-project"}, "not found"),
	}
	l.Fake().SetFaults(optest.Faults{FailNext: 100, FailStatus: 503})
	calls = append(calls, fail("openproject_list_versions", map[string]any{"projectId": p0.Identifier}, "unavailable"))
	l.Fake().SetFaults(optest.Faults{})
	checkLiveGolden(t, l, "list_versions", calls...)

	// A work package of the first project with several custom fields.
	values := map[int64]int{}
	for _, cv := range d.CustomValues {
		values[cv.WorkPackageID]++
	}
	var wpID int64
	for _, wp := range d.WorkPackages {
		if wp.Project.ID == p0.ID && values[wp.ID] >= 3 {
			wpID = wp.ID
			break
		}
	}
	if wpID == 0 {
		t.Fatalf("no work package of project %d has 3 custom fields", p0.ID)
	}
	checkLiveGolden(t, l, "get_work_package_custom_fields",
		ok("openproject_get_work_package", map[string]any{"workPackageId": wpID}))
}

func userByKey(t *testing.T, d *optest.Dataset, key string) int64 {
	t.Helper()
	for _, u := range d.Users {
		if u.APIKey == key {
			return u.ID
		}
	}
	t.Fatalf("no user with key %s", key)
	return 0
}

func projectByID(t *testing.T, d *optest.Dataset, id int64) optest.Project {
	t.Helper()
	for _, p := range d.Projects {
		if p.ID == id {
			return p
		}
	}
	t.Fatalf("no project %d", id)
	return optest.Project{}
}

package opgen_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/opsearch/opsearch/internal/optesting"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
)

var mixedOpts = opgen.GenOptions{Seed: 11, WorkPackages: 400, Comments: 600, WikiPages: 60, Meetings: 30, MixedPermissions: true}

// Without MixedPermissions nothing changes: the mixed data set minus its
// additions is the plain one, byte for byte.
func TestMixedPermissionsIsAnAddition(t *testing.T) {
	plainOpts := mixedOpts
	plainOpts.MixedPermissions = false
	plain := opgen.Generate(plainOpts)
	if plain.Roles != nil || plain.Memberships != nil || plain.Shares != nil || plain.NonMemberRole != nil {
		t.Fatal("a plain data set has permissions")
	}
	mixed := opgen.Generate(mixedOpts)
	again, _ := json.Marshal(opgen.Generate(mixedOpts))
	if b, _ := json.Marshal(mixed); !bytes.Equal(b, again) {
		t.Fatal("MixedPermissions is not deterministic")
	}
	stripped := *mixed
	stripped.Users = stripped.Users[:len(stripped.Users)-3]
	stripped.Roles, stripped.Memberships, stripped.Shares, stripped.NonMemberRole = nil, nil, nil, nil
	stripped.Activities = slices.Clone(stripped.Activities)
	internal := 0
	for i := range stripped.Activities {
		if stripped.Activities[i].Internal {
			internal++
		}
		stripped.Activities[i].Internal = false
	}
	a, _ := json.Marshal(plain)
	b, _ := json.Marshal(&stripped)
	if !bytes.Equal(a, b) {
		t.Error("MixedPermissions changed more than it adds")
	}
	if internal == 0 || len(mixed.Shares) < 3 {
		t.Errorf("%d internal comments, %d shares", internal, len(mixed.Shares))
	}
}

func TestMixedPermissionsOverHTTP(t *testing.T) {
	ctx := context.Background()
	d := opgen.Generate(mixedOpts)
	_, base := optesting.Start(t, d, optest.Options{})
	client := func(key string) *openproject.Client {
		c, err := openproject.New(openproject.Config{BaseURL: base, APIKey: key})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	const shared, alicePrivate, bobPrivate, public = 1, 2, 3, 4
	if !d.Projects[public-1].Public || d.Projects[alicePrivate-1].Public {
		t.Fatal("unexpected project layout")
	}
	all := openproject.Filters{openproject.StatusAll()}
	wpsOf := func(pid int64) (ids []int64) {
		for _, wp := range d.WorkPackages {
			if wp.Project.ID == pid {
				ids = append(ids, wp.ID)
			}
		}
		return ids
	}
	wikiOf := func(pid int64) int64 {
		for _, w := range d.WikiPages {
			if w.Project.ID == pid {
				return w.ID
			}
		}
		t.Fatalf("no wiki page in project %d", pid)
		return 0
	}
	meetingOf := func(pid int64) int64 {
		for _, m := range d.Meetings {
			if m.Project.ID == pid {
				return m.ID
			}
		}
		t.Fatalf("no meeting in project %d", pid)
		return 0
	}
	shares := map[string][]int64{}
	for _, s := range d.Shares {
		key := d.Users[s.UserID-1].APIKey
		shares[key] = append(shares[key], s.WorkPackageID)
	}
	erinShares := shares[opgen.ErinKey]

	visible := map[string][]int64{}
	for _, key := range []string{optest.AliceKey, optest.BobKey, opgen.CarolKey, opgen.DaveKey, opgen.ErinKey} {
		c := client(key)
		ids, err := c.WorkPackageIDs(ctx, all)
		if err != nil {
			t.Fatal(err)
		}
		visible[key] = ids
		// Grouped counts equal the user's list.
		counts, err := c.WorkPackageCountsByProject(ctx, all)
		if err != nil {
			t.Fatal(err)
		}
		if counts.Total != len(ids) {
			t.Errorf("%s: counted %d, listed %d", key, counts.Total, len(ids))
		}
		perProject := map[int64]int{}
		for _, id := range ids {
			perProject[d.WorkPackages[slices.IndexFunc(d.WorkPackages, func(w openproject.WorkPackage) bool { return w.ID == id })].Project.ID]++
		}
		if fmt.Sprint(perProject) != fmt.Sprint(counts.ByProject) {
			t.Errorf("%s: counts %v, list %v", key, counts.ByProject, perProject)
		}
	}
	for i, a := range []string{optest.AliceKey, optest.BobKey, opgen.CarolKey, opgen.DaveKey, opgen.ErinKey} {
		for _, b := range []string{optest.AliceKey, optest.BobKey, opgen.CarolKey, opgen.DaveKey, opgen.ErinKey}[i+1:] {
			if slices.Equal(visible[a], visible[b]) {
				t.Errorf("%s and %s see the same work packages", a, b)
			}
		}
	}
	inProject := func(key string, pid int64) (ids []int64) {
		for _, id := range visible[key] {
			if slices.Contains(wpsOf(pid), id) {
				ids = append(ids, id)
			}
		}
		return ids
	}
	// erin: only her shares of bob-private, which shows in her projects.
	if got := inProject(opgen.ErinKey, bobPrivate); !slices.Equal(got, erinShares) || len(got) != 3 {
		t.Errorf("erin's bob-private work packages = %v, want her shares %v", got, erinShares)
	}
	if _, err := client(opgen.ErinKey).Project(ctx, "bob-private"); err != nil {
		t.Errorf("erin cannot see bob-private: %v", err)
	}
	if got := inProject(opgen.ErinKey, alicePrivate); len(got) != 0 {
		t.Errorf("erin sees alice-private work packages %v", got)
	}
	if got := inProject(opgen.CarolKey, bobPrivate); !slices.Equal(got, shares[opgen.CarolKey]) || len(got) != 1 {
		t.Errorf("carol's bob-private work packages = %v, want her share %v", got, shares[opgen.CarolKey])
	}
	// dave: website-relaunch without its wiki, the public project
	// without its meetings (his membership replaces the Non member role).
	dave := client(opgen.DaveKey)
	if got := inProject(opgen.DaveKey, shared); !slices.Equal(got, wpsOf(shared)) {
		t.Errorf("dave sees %d of website-relaunch's %d work packages", len(got), len(wpsOf(shared)))
	}
	if _, err := dave.WikiPage(ctx, wikiOf(shared)); !errors.Is(err, openproject.ErrNotFound) {
		t.Errorf("dave reads website-relaunch's wiki: %v", err)
	}
	if _, err := dave.Meeting(ctx, meetingOf(shared)); err != nil {
		t.Errorf("dave cannot read website-relaunch's meeting: %v", err)
	}
	if _, err := dave.WikiPage(ctx, wikiOf(public)); err != nil {
		t.Errorf("dave cannot read the public wiki: %v", err)
	}
	if _, err := dave.Meeting(ctx, meetingOf(public)); !errors.Is(err, openproject.ErrNotFound) {
		t.Errorf("dave reads the public project's meeting: %v", err)
	}
	// carol, a non-member there, gets the Non member role: no wiki.
	carol := client(opgen.CarolKey)
	if _, err := carol.WikiPage(ctx, wikiOf(public)); !errors.Is(err, openproject.ErrNotFound) {
		t.Errorf("carol reads the public wiki as a non-member: %v", err)
	}
	if _, err := carol.Meeting(ctx, meetingOf(public)); err != nil {
		t.Errorf("carol cannot read the public meeting: %v", err)
	}
	// Internal comments: alice (a member with every permission) sees
	// them in alice-private, carol (a Reader there) does not.
	alice := client(optest.AliceKey)
	seenInternal := 0
	for _, a := range d.Activities {
		if !a.Internal || !slices.Contains(wpsOf(alicePrivate), a.WorkPackageID) {
			continue
		}
		for key, c := range map[string]*openproject.Client{optest.AliceKey: alice, opgen.CarolKey: carol} {
			acts, err := c.Activities(ctx, a.WorkPackageID)
			if err != nil {
				t.Fatal(err)
			}
			has := slices.ContainsFunc(acts, func(x openproject.Activity) bool { return x.ID == a.ID })
			if has != (key == optest.AliceKey) {
				t.Errorf("%s sees internal activity %d: %v", key, a.ID, has)
			}
		}
		if seenInternal++; seenInternal == 3 {
			break
		}
	}
	if seenInternal == 0 {
		t.Error("no internal comment in alice-private")
	}
}

package mcp_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/opsearch/opsearch/internal/optesting"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
)

// TestStdio_KeyMustOwnTheIndex: the administrator syncs into a data
// directory; then bob's key serves on the same directory. Whether
// OpenProject is down, hanging or up, no search answers bob from the
// administrator's index: until OpenProject confirms whose key it is, the
// local index answers only for a key it remembers (a salted verifier in
// the store), and then bob gets his own index. The administrator's key is
// still served offline, which shows the private items are there to leak.
func TestStdio_KeyMustOwnTheIndex(t *testing.T) {
	// One of the package's long tests: they run beside each other (two
	// at once on two cores, go test's -parallel), not one after another.
	t.Parallel()
	bin := buildOpsearch(t)
	data := opgen.Generate(searchGen)
	fake, base := optesting.Start(t, data, optest.Options{})
	dataDir := t.TempDir()
	var alicePrivate int64
	for _, p := range data.Projects {
		if p.Identifier == "alice-private" {
			alicePrivate = p.ID
		}
	}
	const secret = "Nightingale" // the codename in every work package of alice's private project
	leaks := func(a answer) int {
		n := 0
		for _, r := range a.Results {
			if r.Project != nil && r.Project.ID == alicePrivate {
				n++
			}
		}
		return n
	}
	search := func(t *testing.T, p *proc) (answer, string) {
		t.Helper()
		res := call(t, p.cs, "openproject_search", map[string]any{"query": secret, "pageSize": 50})
		var a answer
		raw, _ := json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(raw, &a)
		return a, resultText(res)
	}
	env := func(key string) []string { return opsearchEnv(base, dataDir, "OPENPROJECT_API_KEY="+key) }

	// The administrator's index, synced while OpenProject is up.
	admin := startServe(t, bin, env(optest.AdminKey))
	waitIndexed(t, admin.cs, 2*time.Minute)
	if a, _ := search(t, admin); leaks(a) == 0 || a.Index.User == nil || a.Index.User.Login != "admin" {
		t.Fatalf("the administrator does not find alice's private items, or the answer does not say whose index it is: %+v", a.Index)
	}
	admin.closeStdin(t)

	// bob while OpenProject is down, then while it hangs: never an answer
	// from the administrator's index.
	for _, fault := range []struct {
		name   string
		faults optest.Faults
	}{
		{"down", optest.Faults{FailNext: 1 << 30, FailStatus: 503}},
		{"hanging", optest.Faults{HangNext: 1 << 30}},
	} {
		t.Run("bob while OpenProject is "+fault.name, func(t *testing.T) {
			fake.SetFaults(fault.faults)
			defer fake.SetFaults(optest.Faults{})
			bob := startServe(t, bin, env(optest.BobKey))
			deadline := time.Now().Add(3 * time.Second)
			notVerified := false
			for time.Now().Before(deadline) {
				a, text := search(t, bob)
				if n := leaks(a); n > 0 || a.Index.Ready {
					t.Fatalf("bob's key got an answer from the administrator's index (%d private items, ready %v)", n, a.Index.Ready)
				}
				notVerified = notVerified || strings.Contains(text, "not yet verified")
				time.Sleep(100 * time.Millisecond)
			}
			if !notVerified {
				t.Error("the answers never said the key is not yet verified")
			}
			_ = bob.cmd.Process.Kill()
		})
	}

	// bob while OpenProject is up: his own index, never alice's items.
	t.Run("bob while OpenProject is up", func(t *testing.T) {
		fake.SetFaults(optest.Faults{})
		bob := startServe(t, bin, env(optest.BobKey))
		waitIndexed(t, bob.cs, 2*time.Minute)
		a, _ := search(t, bob)
		if leaks(a) > 0 || a.Index.User == nil || a.Index.User.Login != "bob" {
			t.Errorf("bob: %d of alice's private items, index of %+v", leaks(a), a.Index.User)
		}
		bob.closeStdin(t)
	})

	// The administrator's key is remembered: served offline.
	t.Run("administrator while OpenProject is down", func(t *testing.T) {
		fake.SetFaults(optest.Faults{FailNext: 1 << 30, FailStatus: 503})
		defer fake.SetFaults(optest.Faults{})
		admin := startServe(t, bin, env(optest.AdminKey))
		deadline := time.Now().Add(30 * time.Second)
		for {
			a, _ := search(t, admin)
			if a.Index.Ready {
				if leaks(a) == 0 || a.Index.User == nil || a.Index.User.Login != "admin" {
					t.Errorf("the administrator's remembered key: %d private items, index of %+v", leaks(a), a.Index.User)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the administrator's index was not served offline")
			}
			time.Sleep(50 * time.Millisecond)
		}
		admin.closeStdin(t)
	})
}

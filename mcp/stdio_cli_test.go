package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/opsearch/opsearch/internal/optesting"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
)

// runCLI runs one opsearch command to its end and returns its exit code,
// stdout and stderr. The bound only keeps a hung command from hanging
// the test run; it is not a speed assertion.
func runCLI(t *testing.T, bin string, env []string, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	var out, errb lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("opsearch %s hung (killed after 2 minutes); stderr:\n%s", strings.Join(args, " "), errb.String())
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run opsearch %s: %v", strings.Join(args, " "), err)
	}
	return code, out.String(), errb.String()
}

// TestStdio_CommandsBesideServe: while `opsearch serve` holds a user's
// index (as every MCP client keeps it running), `opsearch search`,
// `status` and `sync` on the same data directory succeed through the
// serving process, and a sync asked for there picks up a change the
// server had not seen. Commands that need the files themselves say
// which process holds them. The server keeps answering throughout.
func TestStdio_CommandsBesideServe(t *testing.T) {
	bin := buildOpsearch(t)
	data := opgen.Generate(searchGen)
	fake, base := optesting.Start(t, data, optest.Options{})
	dataDir := t.TempDir()
	env := opsearchEnv(base, dataDir)
	p := startServe(t, bin, env, "serve")
	waitIndexed(t, p.cs, 2*time.Minute)
	pid := p.cmd.Process.Pid

	var target openproject.WorkPackage
	for _, wp := range data.WorkPackages {
		if wp.Project.ID == 1 {
			target = wp
		}
	}
	code, out, errOut := runCLI(t, bin, env, "search", target.Subject, "--limit", "5")
	if code != 0 || !strings.Contains(out, target.Subject) {
		t.Fatalf("search beside serve: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}

	code, out, errOut = runCLI(t, bin, env, "status")
	if code != 0 || !strings.Contains(out, fmt.Sprintf("served by: pid %d, opsearch serve (stdio)", pid)) || !strings.Contains(out, "work_package") {
		t.Fatalf("status beside serve: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}

	// A change only a new sync can see: the server syncs hourly.
	word := fmt.Sprintf("quokka%d", time.Now().UnixNano()%100000)
	if err := fake.UpdateWorkPackage(target.ID, func(wp *openproject.WorkPackage) { wp.Subject = "Feed the " + word }); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runCLI(t, bin, env, "sync")
	if code != 0 || !strings.Contains(errOut, "syncing in the opsearch process that holds") || !strings.Contains(out, "work_package") {
		t.Fatalf("sync beside serve: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, bin, env, "search", word, "--json")
	var resp struct {
		Results []struct{ ID int64 }
	}
	if code != 0 || json.Unmarshal([]byte(out), &resp) != nil || len(resp.Results) != 1 || resp.Results[0].ID != target.ID {
		t.Fatalf("search after the sync: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	// And the server itself answers with the change it synced.
	if a := callOK[answer](t, p.cs, "openproject_search", map[string]any{"query": word}); len(a.Results) != 1 {
		t.Errorf("the server does not find what the sync it ran indexed: %+v", a.Results)
	}
	code, out, errOut = runCLI(t, bin, env, "sync", "--json")
	var sum struct {
		Kinds map[string]struct{ Fetched int }
	}
	if code != 0 || json.Unmarshal([]byte(out), &sum) != nil || len(sum.Kinds) != 5 {
		t.Fatalf("sync --json beside serve: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}

	// export needs the files: a clear refusal naming the holder, at once.
	code, _, errOut = runCLI(t, bin, env, "export", "--out", t.TempDir())
	if code != 1 || !strings.Contains(errOut, fmt.Sprintf("pid %d, opsearch serve (stdio)", pid)) || !strings.Contains(errOut, "stop that process first") {
		t.Fatalf("export beside serve: exit %d, stderr:\n%s", code, errOut)
	}

	if code := p.closeStdin(t); code != 0 {
		t.Fatalf("serve exit code %d", code)
	}
	// With the server gone the commands open the files themselves.
	code, out, errOut = runCLI(t, bin, env, "search", word)
	if code != 0 || !strings.Contains(out, word) {
		t.Fatalf("search after serve stopped: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

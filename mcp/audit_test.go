package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/opsearch/opsearch/audit"
	"github.com/opsearch/opsearch/openproject/optest"
	"github.com/opsearch/opsearch/store"
)

// TestAudit_HTTP makes tool calls of every sort (search, live, write; ok,
// failed, refused arguments, an unknown tool) over Streamable HTTP, SSE
// and the REST bridge, with the go-sdk client, and reads the user's
// audit log: one line per call, naming the tool, the outcome and the
// request id the server gave the failure; no API key and no argument
// text anywhere in it; intact by audit.Verify; and one byte changed in
// the middle is named by its line. With an index per user and with the
// shared index, where the log is still in the user's own directory.
func TestAudit_HTTP(t *testing.T) {
	for _, team := range []string{"", "single"} {
		name := team
		if name == "" {
			name = "per-user"
		}
		t.Run(name, func(t *testing.T) { testAuditHTTP(t, team) })
	}
}

func testAuditHTTP(t *testing.T, team string) {
	dataDir := t.TempDir()
	e := newHTTPEnv(t, httpEnvOpts{team: team, dataDir: dataDir, audit: &audit.Options{}})
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	hdr := map[string]string{"Authorization": "Bearer " + optest.AliceKey}

	// Argument text that must not reach the log, each distinctive.
	const (
		secretQuery   = "zebraquartz7731 payroll of the board"
		secretComment = "ultraviolet4242 the vault code is 1234"
		secretParam   = "marmalade9090"
		secretTool    = "openproject_exfiltrate_heliotrope5151"
		restQuery     = "periwinkle6262 restructuring"
	)
	var wp int64
	for _, w := range e.data.WorkPackages {
		if w.Project.ID == e.alice {
			wp = w.ID
			break
		}
	}
	var aliceID int64
	for _, u := range e.data.Users {
		if u.APIKey == optest.AliceKey {
			aliceID = u.ID
		}
	}

	cs, err := e.connectStreamable(ctx, "/mcp", hdr)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	type want struct {
		tool, outcome, category string
		args                    map[string]any
	}
	var wants []want
	callTool := func(cs *sdk.ClientSession, w want) *sdk.CallToolResult {
		t.Helper()
		wants = append(wants, w)
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: w.tool, Arguments: w.args})
		if w.tool == secretTool {
			if err == nil {
				t.Fatalf("unknown tool answered %+v", res)
			}
			return nil
		}
		if err != nil {
			t.Fatalf("%s: %v", w.tool, err)
		}
		if res.IsError != (w.outcome == "error") {
			t.Fatalf("%s: isError %v: %s", w.tool, res.IsError, contentText(res))
		}
		return res
	}
	callTool(cs, want{"openproject_search", "ok", "", map[string]any{"query": secretQuery}})
	notFound := callTool(cs, want{"openproject_get_work_package", "error", "not_found", map[string]any{"workPackageId": 987654321}})
	callTool(cs, want{"openproject_add_comment", "ok", "", map[string]any{"workPackageId": wp, "comment": secretComment}})
	callTool(cs, want{"openproject_search", "error", "invalid_argument", map[string]any{"query": "x", "nope": secretParam}})
	callTool(cs, want{secretTool, "error", "invalid_request", map[string]any{"query": secretQuery}})
	sse, err := e.connectSSE(ctx, "/sse", hdr)
	if err != nil {
		t.Fatal(err)
	}
	defer sse.Close()
	callTool(sse, want{"openproject_list_projects", "ok", "", map[string]any{}})
	wants = append(wants, want{"openproject_search", "ok", "", map[string]any{"query": restQuery}})
	if code, out := e.rest("/api/tools/openproject_search", hdr, fmt.Sprintf(`{"query":%q}`, restQuery)); code != 200 {
		t.Fatalf("REST: %d %v", code, out)
	}

	inst, err := store.InstanceName(e.base)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(dataDir, inst, fmt.Sprint(aliceID), audit.DirName)
	rep, err := audit.Verify(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Lines != len(wants) || rep.NoHead {
		t.Fatalf("report %+v (problem %v); want %d intact lines", rep, rep.Problem, len(wants))
	}
	lines, err := audit.Tail(dir, 100)
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range wants {
		l := lines[i]
		tool := w.tool
		if tool == secretTool {
			tool = "(unknown)"
		}
		args, _ := json.Marshal(w.args)
		if l.Kind != audit.KindCall || l.Tool != tool || l.Outcome != w.outcome || l.Error != w.category ||
			l.User == nil || l.User.ID != aliceID || l.User.Login != "alice" || l.RequestID == "" || l.DurationMS <= 0 ||
			l.ArgsSHA256 != audit.ArgsDigest(args) {
			t.Errorf("line %d: %s\nwant %s %s %s for alice (%d), args digest %s", i+1, l.Raw, tool, w.outcome, w.category, aliceID, audit.ArgsDigest(args))
		}
	}
	// The failed call's line has the request id its answer and the
	// server's log name.
	m := regexp.MustCompile(`request id ([0-9a-f]+)`).FindStringSubmatch(contentText(notFound))
	if m == nil || lines[1].RequestID != m[1] || !strings.Contains(e.logs.String(), "request_id="+m[1]) {
		t.Errorf("the failed call's request id: answer %q, audit %q", contentText(notFound), lines[1].RequestID)
	}

	// Nothing in the log's directory holds a key or argument text.
	var all []byte
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range ents {
		b, err := os.ReadFile(filepath.Join(dir, de.Name()))
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	for _, secret := range []string{optest.AliceKey, secretQuery, "zebraquartz7731", secretComment, "ultraviolet4242", secretParam, secretTool, "heliotrope5151", restQuery, "periwinkle6262"} {
		if bytes.Contains(all, []byte(secret)) {
			t.Errorf("the audit log holds %q", secret)
		}
	}

	// One byte changed in the middle of the log: Verify names its line.
	path := rep.Files[len(rep.Files)-1]
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	at := bytes.Index(data[len(data)/2:], []byte(`"request_id":"`)) + len(data)/2 + len(`"request_id":"`)
	if data[at] == '0' {
		data[at] = '1'
	} else {
		data[at] = '0'
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	line := bytes.Count(data[:at], []byte("\n")) + 1
	rep, err = audit.Verify(dir)
	if err != nil {
		t.Fatal(err)
	}
	if p := rep.Problem; p == nil || p.File != path || p.Line != line || p.Kind != audit.Altered {
		t.Errorf("after one byte changed at line %d: problem %v", line, p)
	}
}

// TestAudit_Off: without UserIndexOptions.Audit, calls leave no log.
func TestAudit_Off(t *testing.T) {
	dataDir := t.TempDir()
	e := newHTTPEnv(t, httpEnvOpts{dataDir: dataDir})
	cs, err := e.connectStreamable(t.Context(), "/mcp", map[string]string{"X-OpenProject-Api-Key": optest.AliceKey})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "openproject_list_projects", Arguments: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	if found, err := audit.Find(dataDir); err != nil || len(found) != 0 {
		t.Errorf("audit logs without auditing: %v, %v", found, err)
	}
}

// TestAudit_ReadOnly: a write refused by a read-only server (by a
// middleware, before any tool runs) is recorded with its category.
func TestAudit_ReadOnly(t *testing.T) {
	dataDir := t.TempDir()
	e := newHTTPEnv(t, httpEnvOpts{dataDir: dataDir, readOnly: true, audit: &audit.Options{}})
	cs, err := e.connectStreamable(t.Context(), "/mcp", map[string]string{"X-OpenProject-Api-Key": optest.AliceKey})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "openproject_add_comment", Arguments: map[string]any{"workPackageId": 1, "comment": "x"}})
	if err != nil || !res.IsError {
		t.Fatalf("write on a read-only server: %+v, %v", res, err)
	}
	found, err := audit.Find(dataDir)
	if err != nil || len(found) != 1 {
		t.Fatalf("audit logs %v, %v", found, err)
	}
	lines, err := audit.Tail(found[0].Dir, 10)
	if err != nil || len(lines) != 1 {
		t.Fatalf("lines %v, %v", lines, err)
	}
	if l := lines[0]; l.Tool != "openproject_add_comment" || l.Outcome != "error" || l.Error != "read_only" {
		t.Errorf("refused write recorded as %s", l.Raw)
	}
}

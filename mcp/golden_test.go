package mcp_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/opsearch/opsearch/internal/optesting"
	"github.com/opsearch/opsearch/mcp"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
)

// update rewrites the golden files: go test ./mcp/ -run Golden -update
var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// volatileKeys are answer fields that change from run to run (clocks,
// durations, counters of syncs); golden files show a placeholder.
var volatileKeys = map[string]bool{
	"tookMs": true, "lastSync": true, "last_sync": true, "last_attempt": true,
	"startedAt": true, "durationMs": true, "requests": true,
}

// requestIDRe matches the random request id that tool errors end with.
var requestIDRe = regexp.MustCompile(`request id [0-9a-f]{12}\b`)

// normalizeJSON replaces volatile values, random request ids and
// machine-specific strings (the fake's random port, the temp data dir) and
// indents the result.
func normalizeJSON(t testing.TB, raw []byte, replace map[string]string) []byte {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("normalize %s: %v", raw, err)
	}
	var walk func(any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if volatileKeys[k] && e != nil {
					x[k] = "<" + k + ">"
					continue
				}
				x[k] = walk(e)
			}
		case []any:
			for i, e := range x {
				x[i] = walk(e)
			}
		case string:
			for from, to := range replace {
				x = strings.ReplaceAll(x, from, to)
			}
			return requestIDRe.ReplaceAllString(x, "request id <requestId>")
		}
		return v
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // keep "<tookMs>" readable
	enc.SetIndent("", "  ")
	if err := enc.Encode(walk(v)); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// checkGolden compares got with testdata/<name>.golden, or rewrites it
// under -update.
func checkGolden(t testing.TB, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (run with -update after checking the change):\n--- got\n%s", path, got)
	}
}

// TestGolden_ToolsList pins the whole tools/list answer: names,
// descriptions, schemas and annotations are the agent's interface.
func TestGolden_ToolsList(t *testing.T) {
	for _, ro := range []bool{false, true} {
		data := opgen.Generate(opgen.GenOptions{Seed: 1, WorkPackages: 10})
		_, base := optesting.Start(t, data, optest.Options{})
		cs := connectInMemory(t, mcp.NewServer(testClient(t, base, optest.AliceKey), mcp.NewUserIndex(mcp.UserIndexOptions{}), mcp.Options{ReadOnly: ro}))
		res, err := cs.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		name := "tools_list"
		if ro {
			name += "_read_only"
		}
		checkGolden(t, name, normalizeJSON(t, raw, nil))
	}
}

// TestGolden_SearchOutputs pins representative answers of each search
// tool and of sync_status over a fixed generated data set.
func TestGolden_SearchOutputs(t *testing.T) {
	if testing.Short() {
		t.Skip(skipShort)
	}
	e := newSearchEnv(t, mcp.Options{})
	replace := map[string]string{e.base: "http://openproject.test", e.user.Dir: "<dataDir>"}
	wps := e.storedWPs(t)
	meetings := e.storedMeetings(t)
	wiki := e.storedWiki(t)
	var agendaItem string
	for _, m := range meetings {
		if len(m.AgendaItems) > 0 {
			agendaItem = m.AgendaItems[0].Title
			break
		}
	}
	cases := []struct {
		name, tool string
		args       map[string]any
	}{
		{"search", "openproject_search", map[string]any{"query": firstWords(wps[7].Subject, 3), "pageSize": 5}},
		{"search_project_kinds", "openproject_search", map[string]any{"query": firstWords(wps[9].Subject, 2), "projectId": "website-relaunch", "kinds": []string{"work_package", "meeting"}, "pageSize": 3}},
		{"search_work_packages", "openproject_search_work_packages", map[string]any{"query": firstWords(wps[12].Subject, 3), "status": "open", "pageSize": 3}},
		{"search_wiki_pages", "openproject_search_wiki_pages", map[string]any{"query": wiki[2].Title, "limit": 3, "refreshCache": true}},
		{"search_meetings", "openproject_search_meetings", map[string]any{"query": agendaItem, "pageSize": 3}},
		{"sync_status", "openproject_sync_status", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := call(t, e.cs, c.tool, c.args)
			if res.IsError {
				t.Fatalf("%s: %s", c.tool, resultText(res))
			}
			raw, err := json.Marshal(map[string]any{"tool": c.tool, "arguments": c.args, "result": res.StructuredContent})
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, c.name, normalizeJSON(t, raw, replace))
		})
	}

	t.Run("errors", func(t *testing.T) {
		var out []map[string]any
		for _, c := range []struct {
			tool string
			args map[string]any
		}{
			{"openproject_search", map[string]any{"query": ""}},
			{"openproject_search", map[string]any{"query": "x", "kinds": []string{"task"}}},
			{"openproject_search_work_packages", map[string]any{"query": "x", "projectId": "nope"}},
			{"openproject_search_meetings", map[string]any{"query": "x", "pageSize": 500}},
		} {
			out = append(out, map[string]any{"tool": c.tool, "arguments": c.args, "error": callErr(t, e.cs, c.tool, c.args)})
		}
		raw, _ := json.Marshal(out)
		checkGolden(t, "search_errors", normalizeJSON(t, raw, replace))
	})

	t.Run("not ready", func(t *testing.T) {
		cs := connectInMemory(t, mcp.NewServer(e.client, mcp.NewUserIndex(mcp.UserIndexOptions{}), mcp.Options{OpenWait: -1}))
		res := call(t, cs, "openproject_search", map[string]any{"query": "budget"})
		raw, _ := json.Marshal(res.StructuredContent)
		checkGolden(t, "search_not_ready", normalizeJSON(t, raw, replace))
	})
}

// goldenNow is the fake's clock in the live golden tests, in the middle of
// the generated year so that meetings are both past and upcoming.
var goldenNow = time.Date(2025, 7, 1, 12, 0, 0, 0, time.UTC)

// goldenCall is one call in a live golden file: its answer or its error.
type goldenCall struct {
	Tool      string          `json:"tool"`
	Arguments map[string]any  `json:"arguments"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     string          `json:"error,omitempty"`
}

// checkLiveGolden writes calls to testdata/live_<name>.golden.
func checkLiveGolden(t *testing.T, l *mcp.LiveHarness, name string, calls ...goldenCall) {
	t.Helper()
	raw, err := json.Marshal(calls)
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "live_"+name, normalizeJSON(t, raw, map[string]string{l.Base(): "http://fake"}))
}

func newGoldenHarness(t *testing.T, o mcp.LiveHarnessOptions) *mcp.LiveHarness {
	o.Now = func() time.Time { return goldenNow }
	return mcp.NewLiveHarness(t, o)
}

// TestGolden_LiveTools pins a representative answer of each live read
// tool over the seeded data set of the live harness, with a fixed clock.
func TestGolden_LiveTools(t *testing.T) {
	l := newGoldenHarness(t, mcp.LiveHarnessOptions{})
	d := l.Data()
	wp := l.CommentedWP()
	meeting := l.MeetingWithAgenda()
	ok := func(tool string, args map[string]any) goldenCall {
		t.Helper()
		return goldenCall{Tool: tool, Arguments: args, Result: l.OK(tool, args)}
	}
	var scopedQuery int64
	for _, q := range d.Queries {
		if q.Project != nil {
			scopedQuery = q.ID
			break
		}
	}
	// A comment with distinctive words, for the activity query.
	if _, err := l.Fake().AddComment(wp.ID, 1, "The flux capacitor calibration is finished"); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		calls []goldenCall
	}{
		{"list_projects", []goldenCall{ok("openproject_list_projects", map[string]any{"pageSize": 2, "offset": 2, "sortBy": "name:asc"})}},
		{"get_project", []goldenCall{ok("openproject_get_project", map[string]any{"projectId": d.Projects[0].Identifier})}},
		{"list_work_packages", []goldenCall{ok("openproject_list_work_packages", map[string]any{"projectId": d.Projects[0].Identifier, "status": "open", "pageSize": 3})}},
		{"get_work_package", []goldenCall{ok("openproject_get_work_package", map[string]any{"workPackageId": wp.ID})}},
		{"list_work_package_activities", []goldenCall{
			ok("openproject_list_work_package_activities", map[string]any{"workPackageId": wp.ID}),
			ok("openproject_list_work_package_activities", map[string]any{"workPackageId": wp.ID, "query": "capacitr calibration"}),
		}},
		{"list_queries", []goldenCall{ok("openproject_list_queries", map[string]any{"pageSize": 3})}},
		{"get_query", []goldenCall{ok("openproject_get_query", map[string]any{"queryId": scopedQuery, "pageSize": 2})}},
		{"list_types", []goldenCall{ok("openproject_list_types", map[string]any{})}},
		{"list_statuses", []goldenCall{ok("openproject_list_statuses", map[string]any{})}},
		{"list_priorities", []goldenCall{ok("openproject_list_priorities", map[string]any{})}},
		{"list_users", []goldenCall{ok("openproject_list_users", map[string]any{"pageSize": 3, "status": "active"})}},
		{"get_openapi_spec", []goldenCall{ok("openproject_get_openapi_spec", map[string]any{})}},
		{"list_meetings", []goldenCall{ok("openproject_list_meetings", map[string]any{"time": "past", "pageSize": 3})}},
		{"get_meeting", []goldenCall{ok("openproject_get_meeting", map[string]any{"id": meeting.ID})}},
		{"get_wiki_page", []goldenCall{ok("openproject_get_wiki_page", map[string]any{"id": d.WikiPages[0].ID})}},
		{"list_time_entries", []goldenCall{
			ok("openproject_list_time_entries", map[string]any{"workPackageId": d.TimeEntries[0].WorkPackage.ID}),
			ok("openproject_list_time_entries", map[string]any{"projectId": d.Projects[0].Identifier, "from": "2025-03-01", "to": "2025-03-31", "pageSize": 3}),
		}},
		{"list_wiki_page_links", []goldenCall{{
			Tool: "openproject_list_wiki_page_links", Arguments: map[string]any{"workPackageId": wp.ID},
			Error: l.Fail("openproject_list_wiki_page_links", map[string]any{"workPackageId": wp.ID}, "not supported"),
		}}},
	}
	for _, c := range cases {
		checkLiveGolden(t, l, c.name, c.calls...)
	}

	// The relations of a follows relation's target, seen from there
	// (precedes: the reverse type), and filtered by type.
	rel := d.Relations[0]
	for _, r := range d.Relations {
		if r.Type == "follows" && r.Lag != nil && *r.Lag > 0 {
			rel = r
			break
		}
	}
	checkLiveGolden(t, l, "list_relations",
		ok("openproject_list_relations", map[string]any{"workPackageId": rel.To.ID}),
		ok("openproject_list_relations", map[string]any{"workPackageId": rel.To.ID, "type": openproject.ReverseRelationType(rel.Type)}))
}

// TestGolden_WriteTools pins the answers of the write tools, and the
// conflict error of a stale update.
func TestGolden_WriteTools(t *testing.T) {
	l := newGoldenHarness(t, mcp.LiveHarnessOptions{})
	d := l.Data()
	ok := func(tool string, args map[string]any) goldenCall {
		t.Helper()
		return goldenCall{Tool: tool, Arguments: args, Result: l.OK(tool, args)}
	}

	checkLiveGolden(t, l, "create_work_package", ok("openproject_create_work_package", map[string]any{
		"projectId": d.Projects[0].Identifier, "subject": "Migrate the build to Go 1.26", "description": "Because **speed**.",
		"typeId": 2, "priorityId": 3, "assigneeId": 2, "parentId": d.WorkPackages[0].ID, "startDate": "2025-03-01", "dueDate": "2025-03-15",
	}))

	wp := d.WorkPackages[1]
	updated := ok("openproject_update_work_package", map[string]any{
		"workPackageId": wp.ID, "lockVersion": wp.LockVersion, "subject": "Renamed by the agent", "statusId": 2, "dueDate": "2025-12-24",
	})
	stale := map[string]any{"workPackageId": wp.ID, "lockVersion": wp.LockVersion, "subject": "Stale edit", "statusId": 1}
	conflict := goldenCall{Tool: "openproject_update_work_package", Arguments: stale,
		Error: l.Fail("openproject_update_work_package", stale, "conflict")}
	checkLiveGolden(t, l, "update_work_package", updated, conflict)

	checkLiveGolden(t, l, "add_comment", ok("openproject_add_comment", map[string]any{
		"workPackageId": d.WorkPackages[2].ID, "comment": "Looked into it: the **cache** is stale.",
	}))

	logged := map[string]any{"workPackageId": d.WorkPackages[2].ID, "hours": 1.75, "spentOn": "2025-06-30", "comment": "Profiled the cache", "activityId": 4}
	tooMuch := map[string]any{"workPackageId": d.WorkPackages[2].ID, "hours": 23, "spentOn": "2025-06-30"}
	checkLiveGolden(t, l, "log_time", ok("openproject_log_time", logged),
		goldenCall{Tool: "openproject_log_time", Arguments: tooMuch, Error: l.Fail("openproject_log_time", tooMuch, "24 hours per day")})
	// A relation, then the same again (refused by OpenProject) and one to
	// itself (refused before asking).
	from := d.WorkPackages[3].ID
	args := map[string]any{"workPackageId": from, "toId": l.UnrelatedTo(from), "type": "follows", "lag": 3, "description": "Starts once the rollout is done."}
	self := map[string]any{"workPackageId": from, "toId": from, "type": "relates"}
	checkLiveGolden(t, l, "create_relation", ok("openproject_create_relation", args),
		goldenCall{Tool: "openproject_create_relation", Arguments: args, Error: l.Fail("openproject_create_relation", args, "already related")},
		goldenCall{Tool: "openproject_create_relation", Arguments: self, Error: l.Fail("openproject_create_relation", self, "invalid argument toId")})
}

// TestGolden_LiveErrors pins one error of each class the live tools
// report: a bad argument, not found, a rejected key, an unavailable
// server and rate limiting.
func TestGolden_LiveErrors(t *testing.T) {
	l := newGoldenHarness(t, mcp.LiveHarnessOptions{MaxRetryAfter: time.Second})
	bad := newGoldenHarness(t, mcp.LiveHarnessOptions{Key: "not-a-valid-key-123"})
	wp := map[string]any{"workPackageId": l.CommentedWP().ID}
	fail := func(l *mcp.LiveHarness, tool string, args map[string]any, want string) goldenCall {
		t.Helper()
		return goldenCall{Tool: tool, Arguments: args, Error: l.Fail(tool, args, want)}
	}
	var calls []goldenCall
	calls = append(calls,
		fail(l, "openproject_list_work_packages", map[string]any{"status": "sleeping"}, "invalid argument status"),
		fail(l, "openproject_get_work_package", map[string]any{"workPackageId": 999999}, "not found"),
		fail(bad, "openproject_get_work_package", wp, "rejected the API key"))
	l.Fake().SetFaults(optest.Faults{FailNext: 100, FailStatus: 503})
	calls = append(calls, fail(l, "openproject_get_work_package", wp, "unavailable"))
	l.Fake().SetFaults(optest.Faults{RateLimitNext: 100, RetryAfter: 30 * time.Second})
	calls = append(calls, fail(l, "openproject_get_work_package", wp, "rate limiting"))
	l.Fake().SetFaults(optest.Faults{})
	checkLiveGolden(t, l, "errors", calls...)
}

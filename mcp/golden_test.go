package mcp_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opsearch/opsearch/mcp"
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

// normalizeJSON replaces volatile values and machine-specific strings
// (the fake's random port, the temp data dir) and indents the result.
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
			return x
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
		data := optest.Generate(optest.GenOptions{Seed: 1, WorkPackages: 10})
		_, base := optest.Start(t, data, optest.Options{})
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
		cs := connectInMemory(t, mcp.NewServer(e.client, mcp.NewUserIndex(mcp.UserIndexOptions{}), mcp.Options{}))
		res := call(t, cs, "openproject_search", map[string]any{"query": "budget"})
		raw, _ := json.Marshal(res.StructuredContent)
		checkGolden(t, "search_not_ready", normalizeJSON(t, raw, replace))
	})
}

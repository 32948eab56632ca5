package main

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/opsearch/opsearch/internal/optesting"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
	"github.com/opsearch/opsearch/sync"
)

// TestCommands_SyncSearchStatus runs sync, search and status as a user
// would, against the fake over HTTP, with real files in a temp dir.
func TestCommands_SyncSearchStatus(t *testing.T) {
	d := opgen.Generate(opgen.GenOptions{Seed: 21, WorkPackages: 120, Comments: 150, WikiPages: 10, Meetings: 6})
	_, url := optesting.Start(t, d, optest.Options{})
	dataDir := t.TempDir()
	t.Setenv("OPENPROJECT_BASE_URL", url)
	t.Setenv("OPENPROJECT_API_KEY", optest.AliceKey)
	t.Setenv("OPSEARCH_DATA_DIR", dataDir)
	ctx := context.Background()

	runOK := func(args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		if code := run(ctx, args, &out, &errb); code != 0 {
			t.Fatalf("opsearch %s: exit %d: %s", strings.Join(args, " "), code, errb.String())
		}
		if strings.Contains(errb.String(), optest.AliceKey) || strings.Contains(out.String(), optest.AliceKey) {
			t.Fatalf("opsearch %s printed the API key", strings.Join(args, " "))
		}
		return out.String()
	}

	out := runOK("sync")
	if !strings.Contains(out, "work_package") || strings.Contains(out, "work_packages") || !strings.Contains(out, "synced in") {
		t.Errorf("sync summary: %s", out)
	}
	// Each kind's row gives its requests, how long they took on average,
	// at the median and the 90th percentile, and its time: a first crawl
	// makes one projects request and more for the work packages.
	lat := `(?:[0-9.]+(?:µs|ms|s)|0s)`
	if !regexp.MustCompile(`(?m)^KIND +FETCHED +UPDATED +DELETED +REQUESTS +MEAN +MEDIAN +P90 +TIME +RESULT$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^project +\d+ +\d+ +0 +1 +`+lat+` +`+lat+` +`+lat+` +[0-9.]+m?s +ok$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^work_package +\d+ +\d+ +0 +[1-9]\d+ +`+lat+` +`+lat+` +`+lat+` +[0-9.]+m?s +ok$`).MatchString(out) {
		t.Errorf("sync summary lacks the kinds' requests, their latency and time:\n%s", out)
	}

	// Search works offline: point the base URL elsewhere and drop the key.
	t.Setenv("OPENPROJECT_API_KEY", "")
	var sr struct {
		Results []struct {
			Kind          string   `json:"kind"`
			ID            int64    `json:"id"`
			Title         string   `json:"title"`
			Project       any      `json:"project"`
			Score         float64  `json:"score"`
			MatchedFields []string `json:"matchedFields"`
			Snippet       string   `json:"snippet"`
		} `json:"results"`
		Index map[string]any `json:"index"`
	}
	// Project 1 is shared by alice and bob in every generated data set.
	var subject string
	for _, wp := range d.WorkPackages {
		if wp.Project.ID == 1 {
			subject = wp.Subject
			break
		}
	}
	q := strings.Join(strings.Fields(subject)[:3], " ")
	if err := json.Unmarshal([]byte(runOK("search", q, "--kind", "work_package", "--json", "--limit", "5")), &sr); err != nil {
		t.Fatal(err)
	}
	if len(sr.Results) == 0 || sr.Results[0].Kind != "work_package" || sr.Results[0].Score <= 0 || len(sr.Results[0].MatchedFields) == 0 {
		t.Errorf("search %q: %+v", q, sr.Results)
	}
	if sr.Index["kinds"] == nil {
		t.Errorf("search JSON has no index freshness: %v", sr.Index)
	}
	// The plural, as earlier versions printed kinds, is an alias.
	plural := sr.Results
	if err := json.Unmarshal([]byte(runOK("search", q, "--kind", "work_packages", "--json", "--limit", "5")), &sr); err != nil {
		t.Fatal(err)
	}
	if len(sr.Results) != len(plural) || len(plural) > 0 && sr.Results[0].ID != plural[0].ID {
		t.Errorf("--kind work_packages: %+v, --kind work_package: %+v", sr.Results, plural)
	}

	var st struct {
		Kinds map[string]struct {
			Store     int     `json:"store"`
			Index     *int    `json:"index"`
			LastSync  *string `json:"last_sync"`
			Complete  bool    `json:"complete"`
			LastError *string `json:"last_error"`
		} `json:"kinds"`
	}
	if err := json.Unmarshal([]byte(runOK("status", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"work_package", "wiki_page", "meeting", "project", "activity", "attachment"} {
		ks, ok := st.Kinds[k]
		if !ok || ks.Index == nil || ks.LastSync == nil || !ks.Complete || ks.LastError != nil {
			t.Errorf("status %s = %+v", k, ks)
		}
	}
	if len(st.Kinds) != 6 {
		t.Errorf("status kinds %v", st.Kinds)
	}
	if wp := st.Kinds["work_package"]; wp.Store == 0 || *wp.Index != wp.Store {
		t.Errorf("work packages: store %d, index %v", wp.Store, wp.Index)
	}
	if out := runOK("status"); !strings.Contains(out, "work_package") || strings.Contains(out, "work_packages") {
		t.Errorf("status table does not spell work_package: %s", out)
	}
}

func TestCommands_Errors(t *testing.T) {
	t.Setenv("OPENPROJECT_BASE_URL", "")
	t.Setenv("OPENPROJECT_API_KEY", "")
	t.Setenv("OPSEARCH_DATA_DIR", t.TempDir())
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"sync"}, "OPENPROJECT_BASE_URL is not set"},
		{[]string{"sync", "--base-url", "http://127.0.0.1:1"}, "OPENPROJECT_API_KEY is not set"},
		{[]string{"search"}, "expected one query argument"},
		{[]string{"search", "a", "b"}, "expected one query argument"},
		{[]string{"search", "x", "--limit", "0"}, "--limit must be between 1 and 100"},
		{[]string{"search", "x"}, "no opsearch data"},
		{[]string{"status", "extra"}, `unexpected argument "extra"`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := run(context.Background(), tt.args, &out, &errb); code == 0 {
				t.Fatalf("exit 0, want failure; stdout %s", out.String())
			}
			if !strings.Contains(errb.String(), tt.want) {
				t.Errorf("stderr %q does not say %q", errb.String(), tt.want)
			}
		})
	}
}

// TestCommands_SyncJSONReportsFailure: a sync in which one kind fails
// still prints its report with --json, the failure in it, and exits 1.
func TestCommands_SyncJSONReportsFailure(t *testing.T) {
	if testing.Short() {
		t.Skip(skipShort)
	}
	d := opgen.Generate(opgen.GenOptions{Seed: 21, WorkPackages: 30, WikiPages: 3, Meetings: 3})
	fake, url := optesting.Start(t, d, optest.Options{})
	// Meetings fail for good; the other kinds do not.
	fake.SetFaults(optest.Faults{PathPrefix: "/api/v3/meetings", FailNext: 1 << 30, FailStatus: 500})
	t.Setenv("OPENPROJECT_BASE_URL", url)
	t.Setenv("OPENPROJECT_API_KEY", optest.AliceKey)
	t.Setenv("OPSEARCH_DATA_DIR", t.TempDir())
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"sync", "--json"}, &out, &errb)
	var rep struct {
		Kinds map[string]struct {
			Fetched int    `json:"fetched"`
			Error   string `json:"error"`
		} `json:"kinds"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("sync --json printed no report (exit %d): %v\nstdout: %q\nstderr: %s", code, err, out.String(), errb.String())
	}
	if code != 1 || rep.Kinds["meeting"].Error == "" || rep.Kinds["work_package"].Fetched == 0 {
		t.Errorf("exit %d, report %+v; want exit 1, the meetings failure and the work packages fetched", code, rep)
	}
}

// TestSyncHeapLimit checks which commands set the soft memory limit a
// sync keeps its heap under: sync and stdio serve do, unless GOMEMLIMIT
// is set; commands that run no sync and the many-user HTTP server do
// not.
func TestSyncHeapLimit(t *testing.T) {
	d := opgen.Generate(opgen.GenOptions{Seed: 21, WorkPackages: 20, WikiPages: 2, Meetings: 2})
	_, url := optesting.Start(t, d, optest.Options{})
	t.Setenv("OPENPROJECT_BASE_URL", url)
	t.Setenv("OPENPROJECT_API_KEY", optest.AliceKey)
	t.Setenv("OPSEARCH_DATA_DIR", t.TempDir())
	tests := []struct {
		name     string
		args     []string
		memlimit string
		want     int64 // 0: none set
	}{
		{"sync", []string{"sync"}, "", sync.HeapLimit},
		{"sync with GOMEMLIMIT", []string{"sync"}, "1GiB", 0},
		{"search", []string{"search", "anything"}, "", 0},
		{"status", []string{"status"}, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("GOMEMLIMIT", tt.memlimit)
			var got int64
			var out, errb bytes.Buffer
			if code := runEnv(t.Context(), tt.args, &out, &errb, func(n int64) int64 { got = n; return 0 }); code != 0 {
				t.Fatalf("opsearch %v: exit %d: %s", tt.args, code, errb.String())
			}
			if got != tt.want {
				t.Errorf("opsearch %v set a memory limit of %d, want %d", tt.args, got, tt.want)
			}
		})
	}
}

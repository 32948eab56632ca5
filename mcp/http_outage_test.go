package mcp_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/opsearch/opsearch/internal/optesting"
	"github.com/opsearch/opsearch/mcp"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
	"github.com/opsearch/opsearch/sync"
)

// TestHTTPSearchDuringOutage: on the team server, a key OpenProject
// confirmed keeps its index answering while OpenProject is down or
// hangs, long after the key check's cache expired, and every answer says
// since when OpenProject is unreachable.
func TestHTTPSearchDuringOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("runs in the full suite (go test ./...); waits out real upstream timeouts: 42 s under -race -short on a slow 2 vCPU machine")
	}
	// One of the package's long tests: they run beside each other (two
	// at once on two cores, go test's -parallel), not one after another.
	t.Parallel()
	data := opgen.Generate(httpGen)
	op, base := optesting.Start(t, data, optest.Options{})
	up := &sync.UpstreamTracker{}
	mgr, err := sync.NewManager(sync.ManagerOptions[*mcp.HTTPUser]{
		DataDir: t.TempDir(),
		NewClient: func(key string) (sync.UserAPI, error) {
			return openproject.New(openproject.Config{BaseURL: base, APIKey: key, Timeout: 20 * time.Second, MaxAttempts: 1})
		},
		Upstream: up,
		Attach: mcp.HTTPAttach(mcp.UserIndexOptions{Schedule: "@every 1h", Upstream: up},
			mcp.HTTPUserHooks{}),
		Schedule: "@every 1h",
		// Every request after the first would ask /users/me again.
		KeyCacheTTL: time.Nanosecond,
		KeyGrace:    time.Hour,
	})
	if err != nil {
		t.Fatal(err)
	}
	h, err := mcp.NewHTTPHandler(mcp.HTTPOptions{BaseURL: base, Manager: mgr})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		ts.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = mgr.Close(ctx)
	})
	ctx := t.Context()
	cs := connectSyncedAlice(ctx, t, ts.URL+"/mcp")
	subject := projectOneSubject(data)
	type answerOut = outageAnswer
	for _, fault := range []struct {
		name   string
		faults optest.Faults
	}{
		{"down", optest.Faults{FailNext: 1 << 30, FailStatus: 503}},
		{"hanging", optest.Faults{HangNext: 1 << 30}},
	} {
		t.Run(fault.name, func(t *testing.T) {
			op.SetFaults(fault.faults)
			defer op.SetFaults(optest.Faults{})
			if fault.name == "down" {
				// Within the key's grace a request whose cached check
				// expired goes on at once and the check runs behind it,
				// so the answers can name the outage only once such a
				// check has failed. Counting on five quick searches to
				// outlast it failed on a loaded 2 vCPU machine.
				for i := 0; !mgr.Upstream().Down; i++ {
					if i == 500 {
						t.Fatal("the manager never saw OpenProject down")
					}
					var a answerOut
					if err := httpCall(ctx, cs, "openproject_search", map[string]any{"query": subject}, &a); err != nil {
						t.Fatalf("search while OpenProject is down: %v", err)
					}
					time.Sleep(10 * time.Millisecond)
				}
			}
			for range 5 {
				var a answerOut
				if err := httpCall(ctx, cs, "openproject_search", map[string]any{"query": subject}, &a); err != nil {
					t.Fatalf("search while OpenProject is %s: %v", fault.name, err)
				}
				if len(a.Results) == 0 {
					t.Fatalf("no results while OpenProject is %s", fault.name)
				}
				note := strings.Contains(a.Index.Note, "OpenProject unreachable since") && strings.Contains(a.Index.Note, "answers come from the local index as of ")
				if fault.name == "down" && !note {
					t.Errorf("an answer while OpenProject is known to be down does not say so: %q", a.Index.Note)
				}
			}
			// Live tools fail at once with since when, instead of waiting
			// out timeouts and retries (a hanging request would take the
			// client's whole timeout and fail differently).
			var res *sdk.CallToolResult
			for range 2 {
				if res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "openproject_get_project", Arguments: map[string]any{"projectId": 1}}); err != nil {
					t.Fatal(err)
				}
			}
			if !res.IsError || !strings.Contains(contentText(res), "OpenProject unreachable since") {
				t.Errorf("live tool while OpenProject is %s: %s", fault.name, contentText(res))
			}
		})
	}
	// Recovery without a restart: once OpenProject answers a key check
	// again, live tools go through.
	ok := false
	for i := 0; i < 300 && !ok; i++ {
		var a answerOut
		_ = httpCall(ctx, cs, "openproject_search", map[string]any{"query": subject}, &a)
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "openproject_get_project", Arguments: map[string]any{"projectId": 1}})
		ok = err == nil && !res.IsError
		if !ok {
			time.Sleep(100 * time.Millisecond)
		}
	}
	if !ok {
		t.Error("live tools did not recover after OpenProject came back")
	}
	if up := mgr.Upstream(); up.Down {
		t.Errorf("upstream still down after recovery: %+v", up)
	}
}

// outageAnswer is the part of a search answer the outage tests read.
type outageAnswer struct {
	Results []struct{ Title string }
	Index   struct{ Note string }
}

// connectSyncedAlice opens a Streamable HTTP session as alice at endpoint
// and waits for her first sync; the session closes when the test ends.
func connectSyncedAlice(ctx context.Context, t *testing.T, endpoint string) *sdk.ClientSession {
	t.Helper()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "0"}, nil).Connect(ctx,
		&sdk.StreamableClientTransport{Endpoint: endpoint, HTTPClient: httpClient(map[string]string{"Authorization": "Bearer " + optest.AliceKey})}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	waitSynced(ctx, t, cs)
	return cs
}

// projectOneSubject is the subject of a work package of project 1, which
// alice sees: a query with a known answer.
func projectOneSubject(data *optest.Dataset) string {
	var subject string
	for _, wp := range data.WorkPackages {
		if wp.Project.ID == 1 {
			subject = wp.Subject
		}
	}
	return subject
}

package mcp

import (
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/opsearch/opsearch/internal/optesting"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/optest"
	"github.com/opsearch/opsearch/sync"
)

// TestLiveCallBoundedWhileHanging: when OpenProject starts hanging, the
// first live call ends at LiveTimeout with a plain answer instead of
// waiting out every retry's timeout, and the next one fails at once
// without a request.
func TestLiveCallBoundedWhileHanging(t *testing.T) {
	op, base := optesting.Start(t, testDataset(), optest.Options{})
	// Four attempts of 400 ms each, with backoff, take longer than the
	// live deadline of one second.
	client, err := openproject.New(openproject.Config{BaseURL: base, APIKey: optest.AdminKey, Timeout: 400 * time.Millisecond, MaxAttempts: 4, RetryBase: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	up := &sync.UpstreamTracker{}
	srv := NewServer(client, &testIndex{}, Options{Upstream: up, LiveTimeout: time.Second})
	st, ct := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "0"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	call := func() (*sdk.CallToolResult, string) {
		res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "openproject_get_project", Arguments: map[string]any{"projectId": 1}})
		if err != nil {
			t.Fatal(err)
		}
		return res, contentText(res)
	}
	if res, text := call(); res.IsError {
		t.Fatalf("before the hang: %s", text)
	}

	op.SetFaults(optest.Faults{HangNext: 1 << 30})
	defer op.SetFaults(optest.Faults{})
	before := op.TotalRequests()
	res, text := call()
	if !res.IsError || !strings.Contains(text, "OpenProject did not answer within 1s") {
		t.Fatalf("first call into the hang: %s", text)
	}
	if n := op.TotalRequests() - before; n >= 4 {
		t.Errorf("the call made %d attempts: the deadline did not cut the retries", n)
	}
	if u := up.Upstream(); !u.Down {
		t.Errorf("the timeout was not recorded as an outage: %+v", u)
	}
	before = op.TotalRequests()
	if res, text := call(); !res.IsError || !strings.Contains(text, "OpenProject unreachable since") {
		t.Errorf("second call: %s", text)
	}
	if n := op.TotalRequests() - before; n != 0 {
		t.Errorf("the second call made %d requests, want none", n)
	}
}

func contentText(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

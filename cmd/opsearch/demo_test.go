package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/opsearch/opsearch/openproject/optest"
)

// headerTransport adds the demo API key to every request.
type headerTransport struct{ key string }

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-OpenProject-Api-Key", h.key)
	return http.DefaultTransport.RoundTrip(r)
}

// TestRun_DemoPortTaken: a taken port fails at once, before any data is
// generated, and says how to pick a free one.
func TestRun_DemoPortTaken(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var out, errb bytes.Buffer
	code := run(t.Context(), []string{"demo", "--addr", l.Addr().String()}, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "--addr 127.0.0.1:0") || strings.Contains(errb.String(), "generating") {
		t.Errorf("exit %d, stderr %q; want 1 at once, naming --addr 127.0.0.1:0", code, errb.String())
	}
}

func TestRun_Demo(t *testing.T) {
	for _, extra := range [][]string{nil, {"--per-user-index"}} {
		t.Run(strings.Join(append([]string{"demo"}, extra...), " "), func(t *testing.T) {
			if extra != nil && testing.Short() {
				t.Skip(skipShort)
			}
			testDemo(t, extra...)
		})
	}
}

// testDemo runs the demo with extra flags, as a user would, and checks
// what it prints and serves.
func testDemo(t *testing.T, extra ...string) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, append([]string{"demo", "--addr", "127.0.0.1:0", "--work-packages", "300"}, extra...), &out, &errb)
	}()

	urlRE := regexp.MustCompile(`MCP URL \(Streamable HTTP\): (http://\S+/mcp)`)
	var mcpURL string
	deadline := time.After(2 * time.Minute)
	for mcpURL == "" || !strings.Contains(out.String(), "Press Ctrl-C to stop.") {
		select {
		case code := <-done:
			t.Fatalf("demo exited early with %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
		case <-deadline:
			t.Fatalf("no MCP URL printed\nstdout:\n%s\nstderr:\n%s", out.String(), errb.String())
		case <-time.After(50 * time.Millisecond):
		}
		if m := urlRE.FindStringSubmatch(out.String()); m != nil {
			mcpURL = m[1]
		}
	}
	stdout := out.String()
	// The test binary is a "go build" file, so the stdio configuration
	// runs opsearch from this checkout with go run.
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	for _, want := range []string{optest.AdminKey, optest.AliceKey, optest.BobKey, `"X-OpenProject-Api-Key"`, `"command": "go"`, `"-C",
        "` + root + `",`,
		"1. typos:", "2. a fact only a comment mentions:", "3. a meeting outcome:"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout does not mention %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "no results") || strings.Contains(stdout, "search failed") {
		t.Errorf("an example search found nothing:\n%s", stdout)
	}
	if !strings.Contains(errb.String(), "work_package  300") {
		t.Errorf("stderr shows no sync summary:\n%s", errb.String())
	}
	dirRE := regexp.MustCompile(`data directory: +(\S+)`)
	m := dirRE.FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("no data directory printed:\n%s", stdout)
	}
	dataDir := m[1]

	// One MCP call over Streamable HTTP with the go-sdk client, as the
	// admin whose index the demo synced before serving (another user's
	// first request starts their first sync).
	client := sdk.NewClient(&sdk.Implementation{Name: "demo-test", Version: "1"}, nil)
	cctx, ccancel := context.WithTimeout(ctx, 30*time.Second)
	defer ccancel()
	cs, err := client.Connect(cctx, &sdk.StreamableClientTransport{
		Endpoint: mcpURL, HTTPClient: &http.Client{Transport: headerTransport{optest.AdminKey}},
	}, nil)
	if err != nil {
		t.Fatalf("connect %s: %v", mcpURL, err)
	}
	res, err := cs.CallTool(cctx, &sdk.CallToolParams{Name: "openproject_search", Arguments: map[string]any{"query": "deploy", "pageSize": 3}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || len(res.Content) == 0 {
		t.Fatalf("openproject_search failed: %+v", res.Content)
	}
	var answer struct {
		Results []struct {
			ID int64 `json:"id"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(res.Content[0].(*sdk.TextContent).Text), &answer); err != nil {
		t.Fatal(err)
	}
	if len(answer.Results) == 0 {
		t.Errorf("openproject_search over HTTP found nothing: %s", res.Content[0].(*sdk.TextContent).Text)
	}
	cs.Close()

	// The user's syncs reach the metrics (the HTTPAttach hooks).
	metricsURL := strings.TrimSuffix(mcpURL, "/mcp") + "/metrics"
	for {
		body := ""
		if resp, err := http.Get(metricsURL); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			body = string(b)
		}
		if strings.Contains(body, "opsearch_documents{") && strings.Contains(body, "opsearch_syncs_total{") {
			break
		}
		select {
		case <-deadline:
			t.Fatalf("/metrics never showed the user's sync and documents:\n%s", body)
		case <-time.After(50 * time.Millisecond):
		}
	}

	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit code %d after cancel, want 0\nstderr:\n%s", code, errb.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the demo did not stop after cancel")
	}
	if _, err := os.Stat(dataDir); !os.IsNotExist(err) {
		t.Errorf("the temporary data directory %s is still there (%v)", dataDir, err)
	}
}

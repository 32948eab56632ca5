package mcp_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/opsearch/opsearch/internal/optesting"
	"github.com/opsearch/opsearch/mcp"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
)

// The protocol revisions, over every transport: the 2026-07-28 handshake
// (server/discover, no session) and each earlier revision the SDK speaks
// negotiate as asked, list the tools in the same order with their cache
// hints, and answer a search with its index block in _meta too.

// connector opens a client session asking for protocol version v ("":
// the client's newest).
type connector func(t *testing.T, v string) *sdk.ClientSession

func protocolTransports(t *testing.T) map[string]connector {
	e := newHTTPEnv(t, httpEnvOpts{})
	e.syncUsers(t.Context())
	key := map[string]string{"X-OpenProject-Api-Key": optest.AliceKey}
	client := func() *sdk.Client {
		return sdk.NewClient(&sdk.Implementation{Name: "protocol-test", Version: "0"}, nil)
	}
	connect := func(t *testing.T, tr sdk.Transport, v string) *sdk.ClientSession {
		t.Helper()
		cs, err := client().Connect(t.Context(), tr, &sdk.ClientSessionOptions{ProtocolVersion: v})
		if err != nil {
			t.Fatalf("connect asking for %q: %v", v, err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		return cs
	}
	out := map[string]connector{
		"streamable": func(t *testing.T, v string) *sdk.ClientSession {
			return connect(t, &sdk.StreamableClientTransport{Endpoint: e.ts.URL + "/mcp", HTTPClient: httpClient(key)}, v)
		},
		"sse": func(t *testing.T, v string) *sdk.ClientSession {
			return connect(t, &sdk.SSEClientTransport{Endpoint: e.ts.URL + "/sse", HTTPClient: httpClient(key)}, v)
		},
	}
	if !testing.Short() {
		bin := buildOpsearch(t)
		data := opgen.Generate(searchGen)
		_, base := optesting.Start(t, data, optest.Options{})
		out["stdio"] = func(t *testing.T, v string) *sdk.ClientSession {
			p := startServeRaw(t, bin, opsearchEnv(base, t.TempDir()), "serve")
			return connect(t, &sdk.IOTransport{Reader: p.stdout, Writer: p.stdin}, v)
		}
	}
	return out
}

func TestProtocolRevisions(t *testing.T) {
	if testing.Short() {
		t.Skip(skipShort)
	}
	versions := append([]string{""}, sdk.SupportedProtocolVersions()...)
	for name, open := range protocolTransports(t) {
		t.Run(name, func(t *testing.T) {
			var first []byte
			for _, v := range versions {
				cs := open(t, v)
				want := v
				if want == "" {
					want = "2026-07-28"
				}
				got := cs.InitializeResult().ProtocolVersion
				if name == "sse" && want == "2026-07-28" {
					// The deprecated transport has no part in the
					// stateless revision: the client falls back to
					// initialize at the revision before it.
					want = "2025-11-25"
				}
				if got != want {
					t.Errorf("asking for %q negotiated %q, want %q", v, got, want)
				}
				res, err := cs.ListTools(t.Context(), nil)
				if err != nil {
					t.Fatalf("%s: tools/list: %v", got, err)
				}
				if res.TTLMs != int(mcp.ListTTL/time.Millisecond) || res.CacheScope != "public" {
					t.Errorf("%s: tools/list ttlMs %d, cacheScope %q; want %d, public", got, res.TTLMs, res.CacheScope, mcp.ListTTL/time.Millisecond)
				}
				names := make([]string, len(res.Tools))
				for i, tool := range res.Tools {
					names[i] = tool.Name
				}
				if !slices.IsSorted(names) {
					t.Errorf("%s: tools/list is not in name order: %v", got, names)
				}
				raw, _ := json.Marshal(res.Tools)
				if first == nil {
					first = raw
					t.Logf("tools/list: %d tools, %d bytes", len(names), len(raw))
				} else if string(raw) != string(first) {
					t.Errorf("%s: tools/list differs from the first listing", got)
				}
				out, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "openproject_search", Arguments: map[string]any{"query": "release"}})
				if err != nil || out.IsError {
					t.Fatalf("%s: search: %v %s", got, err, contentText(out))
				}
				if idx, ok := out.Meta[mcp.MetaIndexKey].(map[string]any); !ok || idx["ready"] == nil {
					t.Errorf("%s: the search answer's _meta has no index block: %v", got, out.Meta)
				}
				var structured map[string]any
				b, _ := json.Marshal(out.StructuredContent)
				_ = json.Unmarshal(b, &structured)
				if mb, _ := json.Marshal(out.Meta[mcp.MetaIndexKey]); string(mb) != mustJSON(t, structured["index"]) {
					t.Errorf("%s: _meta's index block %s differs from the answer's %s", got, mb, mustJSON(t, structured["index"]))
				}
			}
		})
	}
}

// TestToolsListAcrossRestarts: two processes list the same tools in the
// same order, byte for byte.
func TestToolsListAcrossRestarts(t *testing.T) {
	bin := buildOpsearch(t)
	_, base := optesting.Start(t, opgen.Generate(searchGen), optest.Options{})
	var lists []string
	for range 2 {
		p := startServe(t, bin, opsearchEnv(base, t.TempDir()), "serve")
		res, err := p.cs.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(res)
		lists = append(lists, string(raw))
		_ = p.closeStdin(t)
	}
	if lists[0] != lists[1] {
		t.Errorf("tools/list differs between two runs:\n%.400s\n%.400s", lists[0], lists[1])
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// rawProc is a running opsearch whose stdio the test connects itself.
type rawProc struct {
	stdin  io.WriteCloser
	stdout io.ReadCloser
}

// startServeRaw starts bin and returns its stdio unconnected, so the test
// can choose the protocol version it connects with.
func startServeRaw(t *testing.T, bin string, env []string, args ...string) rawProc {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = stdin.Close()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			cancel()
			<-done
		}
		cancel()
		if t.Failed() && strings.TrimSpace(stderr.String()) != "" {
			t.Logf("opsearch stderr:\n%s", stderr.String())
		}
	})
	return rawProc{stdin: stdin, stdout: stdout}
}

// TestStandardHeaders: under 2026-07-28 the Mcp-Method and Mcp-Name
// headers are checked against the body (the go-sdk client, which sends
// them, passes in TestProtocolRevisions); a request whose headers say
// something else is refused before any tool runs.
func TestStandardHeaders(t *testing.T) {
	e := newHTTPEnv(t, httpEnvOpts{})
	// A stateless request carries the client's facts in _meta.
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"openproject_sync_status","arguments":{},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"0"},` +
		`"io.modelcontextprotocol/clientCapabilities":{}}}}`
	for _, c := range []struct {
		name   string
		header map[string]string
	}{
		{"headers agree", map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": "openproject_sync_status"}},
		{"method differs", map[string]string{"Mcp-Method": "tools/list", "Mcp-Name": "openproject_sync_status"}},
		{"name differs", map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": "openproject_search"}},
		{"name missing", map[string]string{"Mcp-Method": "tools/call"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, e.ts.URL+"/mcp", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
			req.Header.Set("X-OpenProject-Api-Key", optest.AliceKey)
			for k, v := range c.header {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if c.name == "headers agree" {
				if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"result"`) {
					t.Errorf("%d %s; want the tool's answer", resp.StatusCode, b)
				}
				return
			}
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "Mcp-") {
				t.Errorf("%d %s; want 400 naming the header", resp.StatusCode, b)
			}
		})
	}
}

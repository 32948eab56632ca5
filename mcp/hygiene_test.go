package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/opsearch/opsearch/mcp"
	"github.com/opsearch/opsearch/openproject/optest"
	"github.com/opsearch/opsearch/store"
)

// These tests guard issue 11's hygiene items: what the HTTP server tells
// its users and its log, over the real listener and the go-sdk client.

// TestHTTPSyncStatusHidesDataDir: openproject_sync_status tells a user
// whose data is indexed and how fresh it is, never where the server keeps
// it: the directory is the operator's business, and any authenticated
// user may call the tool.
func TestHTTPSyncStatusHidesDataDir(t *testing.T) {
	dataDir := t.TempDir()
	e := newHTTPEnv(t, httpEnvOpts{dataDir: dataDir})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := e.connectStreamable(ctx, "/mcp", map[string]string{"X-OpenProject-Api-Key": optest.AliceKey})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	var st map[string]any
	if err := httpCall(ctx, cs, "openproject_sync_status", nil, &st); err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(st)
	if _, ok := st["dataDir"]; ok {
		t.Errorf("sync status has a dataDir: %s", raw)
	}
	if strings.Contains(string(raw), dataDir) {
		t.Errorf("sync status names the data directory %s: %s", dataDir, raw)
	}
	if st["user"] == nil {
		t.Errorf("sync status no longer says whose data it is: %s", raw)
	}
	code, out := e.rest("/api/tools/openproject_sync_status", map[string]string{"X-OpenProject-Api-Key": optest.AliceKey}, "{}")
	raw, _ = json.Marshal(out)
	if code != 200 || strings.Contains(string(raw), dataDir) {
		t.Errorf("REST sync status: HTTP %d, %s", code, raw)
	}
}

// TestHTTPUserLockedIsUnavailable: while another opsearch process (a CLI
// `opsearch sync`) holds a user's files, the server answers that user
// 503 with Retry-After and the reason, naming the directory: the state
// is temporary and OpenProject is not at fault, so not 502.
func TestHTTPUserLockedIsUnavailable(t *testing.T) {
	dataDir := t.TempDir()
	e := newHTTPEnv(t, httpEnvOpts{dataDir: dataDir, lockTimeout: 50 * time.Millisecond})
	var alice int64
	for _, u := range e.data.Users {
		if u.Login == "alice" {
			alice = u.ID
		}
	}
	dir, err := store.UserDir(dataDir, e.base, alice)
	if err != nil {
		t.Fatal(err)
	}
	// The other process: it holds the store for the whole test.
	st, err := store.Open(dir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	for _, tc := range []struct{ name, path, body string }{
		{"rest", "/api/tools/openproject_search", `{"query":"budget"}`},
		{"mcp", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, e.ts.URL+tc.path, strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("X-OpenProject-Api-Key", optest.AliceKey)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var out struct {
				Error string `json:"error"`
			}
			_ = json.NewDecoder(resp.Body).Decode(&out)
			if resp.StatusCode != http.StatusServiceUnavailable {
				t.Errorf("HTTP %d (%s), want 503", resp.StatusCode, out.Error)
			}
			if resp.Header.Get("Retry-After") == "" {
				t.Error("no Retry-After")
			}
			if !strings.Contains(out.Error, dir) || !strings.Contains(out.Error, "another opsearch process") {
				t.Errorf("error %q does not say which directory is in use by whom", out.Error)
			}
		})
	}
}

// goWords are signs of an error message written in Go's words, not the
// user's.
var goWords = []string{"Go struct", "Go value", "reflect", "mcp.", "interface {", "map[string]", "int64", "validating /", "unmarshal"}

// TestHTTPArgumentErrorsInPlainWords: a bad argument is answered in the
// caller's words, naming the parameter, the same over MCP (an error
// result) and REST (400), whether the schema or the Go field would have
// refused it: an offset too large for an int was 200/isError on REST,
// with "Go struct field mcp.searchAllIn.offset" in the text.
func TestHTTPArgumentErrorsInPlainWords(t *testing.T) {
	e := newHTTPEnv(t, httpEnvOpts{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	key := map[string]string{"X-OpenProject-Api-Key": optest.AliceKey}
	cs, err := e.connectStreamable(ctx, "/mcp", key)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	cases := []struct {
		name, tool, args string
		// want are words the message must hold, the parameter first.
		want []string
	}{
		{"offset overflows int", "openproject_search", `{"query":"budget","offset":100000000000000000000}`, []string{"offset", "too large"}},
		{"offset overflows, exponent", "openproject_search_work_packages", `{"query":"budget","offset":1e20}`, []string{"offset", "too large"}},
		{"id underflows", "openproject_get_work_package", `{"workPackageId":-1e30}`, []string{"workPackageId", "too small"}},
		{"query null", "openproject_search", `{"query":null}`, []string{"query", "string", "null"}},
		{"kinds item null", "openproject_search", `{"query":"x","kinds":[null]}`, []string{"kinds[0]", "null"}},
		{"offset fraction", "openproject_search", `{"query":"x","offset":1.5}`, []string{"offset", "whole number", "1.5"}},
		{"offset text", "openproject_search", `{"query":"x","offset":"two"}`, []string{"offset", "whole number", `"two"`}},
		{"pageSize too big", "openproject_search_meetings", `{"query":"x","pageSize":500}`, []string{"pageSize", "100 or less"}},
		{"kind not known", "openproject_search", `{"query":"x","kinds":["task"]}`, []string{"kinds[0]", "work_package", `"task"`}},
		{"unknown parameter", "openproject_search", `{"query":"x","limit":3}`, []string{"limit", "not a parameter", "pageSize"}},
		{"missing query", "openproject_search", `{}`, []string{"query", "required"}},
		{"boolean as text", "openproject_get_openapi_spec", `{"full":"yes"}`, []string{"full", "true or false"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: c.tool, Arguments: json.RawMessage(c.args)})
			if err != nil {
				t.Fatalf("MCP: protocol error %v", err)
			}
			mcpText := contentText(res)
			if !res.IsError {
				t.Fatalf("MCP: not an error: %s", mcpText)
			}
			checkPlain(t, "MCP", mcpText, "invalid argument "+c.want[0], c.want[1:]...)

			code, out := e.rest("/api/tools/"+c.tool, key, c.args)
			raw, _ := json.Marshal(out)
			if code != http.StatusBadRequest {
				t.Fatalf("REST: HTTP %d, want 400: %s", code, raw)
			}
			var msg string
			if d, ok := out["details"].([]any); ok && len(d) > 0 {
				msg, _ = d[0].(map[string]any)["message"].(string)
			}
			if msg != mcpText {
				t.Errorf("REST says %q, MCP %q", msg, mcpText)
			}
		})
	}
	// An optional parameter given as null is left out, as many agents
	// mean it, over MCP and REST alike.
	for _, args := range []string{`{"query":"budget","offset":null,"kinds":null}`, `{"query":"budget","pageSize":null}`} {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "openproject_search", Arguments: json.RawMessage(args)})
		if err != nil || res.IsError {
			t.Errorf("MCP %s: %v %s", args, err, contentText(res))
		}
		if code, out := e.rest("/api/tools/openproject_search", key, args); code != http.StatusOK || out["isError"] != false {
			t.Errorf("REST %s: HTTP %d %v", args, code, out)
		}
	}
	// A body that is JSON but no object of arguments.
	code, out := e.rest("/api/tools/openproject_search", key, `["budget"]`)
	msg, _ := out["error"].(string)
	if code != http.StatusBadRequest {
		t.Errorf("array body: HTTP %d", code)
	}
	checkPlain(t, "REST array body", msg, "Invalid JSON body", "object")
	// A tool's own check of a JSON-in-a-string parameter.
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "openproject_list_projects", Arguments: map[string]any{"filters": `{"id":1}`}})
	if err != nil {
		t.Fatal(err)
	}
	checkPlain(t, "filters object", contentText(res), "invalid argument filters", "array of filter objects")
}

// checkPlain fails unless msg starts with prefix, holds every want, and
// has none of goWords.
func checkPlain(t *testing.T, where, msg, prefix string, want ...string) {
	t.Helper()
	if !strings.HasPrefix(msg, prefix) {
		t.Errorf("%s: %q does not start with %q", where, msg, prefix)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("%s: %q does not say %q", where, msg, w)
		}
	}
	for _, g := range goWords {
		if strings.Contains(msg, g) {
			t.Errorf("%s: %q speaks Go (%q)", where, msg, g)
		}
	}
}

// TestHTTPLogRedactsCredentialParams: the access log shows the query
// string, but never the value of a parameter that looks like a
// credential, whatever a client calls it (only apiKey is a credential
// here; the others are what other servers use, and clients send them).
func TestHTTPLogRedactsCredentialParams(t *testing.T) {
	e := newHTTPEnv(t, httpEnvOpts{})
	params := []string{"apiKey", "api_key", "API-KEY", "token", "key", "access_token", "Access_Token", "auth_token", "password", "secret"}
	for _, path := range []string{"/health", "/nowhere", "/api/tools/openproject_sync_status"} {
		q := url.Values{"page": {"visible-" + strings.Trim(path, "/")}}
		for i, p := range params {
			q.Set(p, fmt.Sprintf("s3cr3t-%d-%s", i, strings.Trim(path, "/")))
		}
		req, _ := http.NewRequest(http.MethodPost, e.ts.URL+path+"?"+q.Encode(), strings.NewReader("{}"))
		if path == "/health" {
			req.Method = http.MethodGet
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
	}
	logs := e.logs.String()
	if strings.Contains(logs, "s3cr3t") {
		t.Errorf("a credential-like query value reached the log:\n%s", logs)
	}
	for _, path := range []string{"health", "nowhere"} {
		if !strings.Contains(logs, "visible-"+path) {
			t.Errorf("the access line of /%s lost the rest of its query:\n%s", path, logs)
		}
	}
	if got := mcp.RedactURL(&url.URL{Scheme: "http", Host: "h", Path: "/p", RawQuery: "access_token=s3cr3t&a=1"}); strings.Contains(got, "s3cr3t") || !strings.Contains(got, "a=1") {
		t.Errorf("RedactURL = %s", got)
	}
}

// hostRT sends every request with a given Host header, as a browser
// would for the name in its address bar.
type hostRT struct {
	base http.RoundTripper
	host string
	hdr  map[string]string
}

func (h hostRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Host = h.host
	for k, v := range h.hdr {
		r.Header.Set(k, v)
	}
	return h.base.RoundTrip(r)
}

// TestHTTPHostCheck: the DNS-rebinding check refuses a Host naming a
// foreign domain whatever address the connection arrived on (in a
// container that is a non-loopback one, and the check used to be
// skipped), accepts loopback names in any case on every route (the SDK
// refused "LOCALHOST" on /mcp while REST allowed it) and IP addresses,
// and --allowed-hosts lets other names in.
func TestHTTPHostCheck(t *testing.T) {
	if testing.Short() {
		t.Skip(skipShort)
	}
	container := &net.TCPAddr{IP: net.IPv4(172, 17, 0, 2), Port: 8080}
	cases := []struct {
		name    string
		local   net.Addr // nil: the loopback listener as it is
		allowed []string
		host    string
		want    bool
	}{
		{"container, foreign name", container, nil, "evil.example:8080", false},
		{"container, bare foreign name", container, nil, "rebind.attacker.test", false},
		{"container, service name not listed", container, nil, "opsearch:8080", false},
		{"container, service name listed", container, []string{"opsearch"}, "opsearch:8080", true},
		{"container, listed with port", container, []string{"opsearch:8080"}, "OPSEARCH:8080", true},
		{"container, other port than listed", container, []string{"opsearch:9090"}, "opsearch:8080", false},
		{"container, any host", container, []string{"*"}, "whatever.example", true},
		{"container, published loopback", container, nil, "127.0.0.1:8080", true},
		{"container, its own address", container, nil, "172.17.0.2:8080", true},
		{"container, IPv6 literal", container, nil, "[fd00::2]:8080", true},
		{"container, LOCALHOST", container, nil, "LOCALHOST:8080", true},
		{"loopback, foreign name", nil, nil, "evil.example", false},
		{"loopback, LOCALHOST", nil, nil, "LOCALHOST", true},
		{"loopback, Localhost with port", nil, nil, "Localhost:8080", true},
		{"loopback, localhost", nil, nil, "localhost:8080", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newHTTPEnv(t, httpEnvOpts{localAddr: c.local, allowedHosts: c.allowed})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			key := map[string]string{"X-OpenProject-Api-Key": optest.AliceKey}
			client := &http.Client{Transport: hostRT{http.DefaultTransport, c.host, key}}

			// REST.
			resp, err := client.Post(e.ts.URL+"/api/tools/openproject_sync_status", "application/json", strings.NewReader("{}"))
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			if got := resp.StatusCode == http.StatusOK; got != c.want {
				t.Errorf("REST: HTTP %d, want allowed=%v", resp.StatusCode, c.want)
			} else if !c.want && resp.StatusCode != http.StatusForbidden {
				t.Errorf("REST: HTTP %d, want 403", resp.StatusCode)
			}

			// MCP, with the SDK's client.
			cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "0"}, nil).Connect(ctx,
				&sdk.StreamableClientTransport{Endpoint: e.ts.URL + "/mcp", HTTPClient: client}, nil)
			if !c.want {
				if err == nil {
					cs.Close()
					t.Error("MCP: connected")
				}
				return
			}
			if err != nil {
				t.Fatalf("MCP: %v", err)
			}
			defer cs.Close()
			var st map[string]any
			if err := httpCall(ctx, cs, "openproject_sync_status", nil, &st); err != nil {
				t.Errorf("MCP: %v", err)
			}
		})
	}
}

// TestSearchTools_NothingToSearch: every search tool answers a query of
// punctuation only with an error saying there is nothing to search for,
// not with whatever the index lists first, nor with an empty page while
// the index is being built (over MCP with the SDK client, and REST,
// which passes the tool's answer on).
func TestSearchTools_NothingToSearch(t *testing.T) {
	e := newHTTPEnv(t, httpEnvOpts{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	key := map[string]string{"X-OpenProject-Api-Key": optest.AliceKey}
	cs, err := e.connectStreamable(ctx, "/mcp", key)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	// No wait for the first sync: the answer must not depend on it (a
	// not-ready index answers an empty page, no error, which is wrong
	// here too).
	tools := []string{"openproject_search", "openproject_search_work_packages", "openproject_search_wiki_pages", "openproject_search_meetings"}
	for _, tool := range tools {
		for _, q := range []string{":", "#", " #: ", "--"} {
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: map[string]any{"query": q}})
			if err != nil {
				t.Fatalf("%s(%q): %v", tool, q, err)
			}
			text := contentText(res)
			if !res.IsError {
				t.Errorf("%s(%q) answered results: %.200s", tool, q, text)
				continue
			}
			checkPlain(t, tool, text, "invalid argument query", "nothing to search for", "letters or digits")
		}
		body, _ := json.Marshal(map[string]any{"query": "#"})
		code, out := e.rest("/api/tools/"+tool, key, string(body))
		if code != 200 || out["isError"] != true {
			t.Errorf("REST %s(#): HTTP %d, %v", tool, code, out)
		}
	}
	// A query with a word among the symbols still searches.
	if res := call(t, cs, "openproject_search", map[string]any{"query": "#1"}); res.IsError {
		t.Errorf("#1: %s", contentText(res))
	}
}

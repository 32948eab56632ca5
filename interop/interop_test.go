// Package interop runs third-party MCP clients against opsearch: the
// official TypeScript SDK (v1, and the v2 client package) and MCP
// Inspector's CLI, from npm, pinned in ts/package-lock.json, over
// Streamable HTTP and stdio, against the real binary and the fake
// OpenProject. It needs Node.js and npm (and the npm registry, or npm's
// cache); without them it skips, except under CI=true.
package interop_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	gosync "sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/opsearch/opsearch/internal/optesting"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
)

// tool finds a program on the PATH, or skips (fails under CI).
func tool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is needed for the interop tests: %v", name, err)
		}
		t.Skipf("no %s on the PATH: the TypeScript clients cannot run", name)
	}
	return p
}

// buildBinary builds the opsearch command into a temporary directory.
func buildBinary(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "opsearch")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/opsearch/opsearch/cmd/opsearch").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// install copies ts/ into a new directory and installs the pinned
// packages there, so the checkout stays clean.
func install(t testing.TB) string {
	t.Helper()
	npm := tool(t, "npm")
	dir := t.TempDir()
	for _, f := range []string{"package.json", "package-lock.json", "client.mjs", "stdio-bench.mjs"} {
		b, err := os.ReadFile(filepath.Join("ts", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.CommandContext(t.Context(), npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("npm ci: %v\n%s", err, out)
		}
		t.Skipf("npm ci failed (no registry?): %v\n%s", err, out)
	}
	return dir
}

// recorder is a reverse proxy in front of an HTTP server that notes the
// protocol versions clients send (the MCP-Protocol-Version header every
// request after the handshake carries).
type recorder struct {
	mu       gosync.Mutex
	versions []string
	// trace notes every proxied request, for the log of a failed run:
	// when it came, its JSON-RPC method, the status opsearch answered
	// and when the proxy was done with it.
	trace []string
}

func (r *recorder) handler(target string) http.Handler {
	u, _ := url.Parse(target)
	p := httputil.NewSingleHostReverseProxy(u)
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if v := req.Header.Get("Mcp-Protocol-Version"); v != "" {
			r.mu.Lock()
			if !slices.Contains(r.versions, v) {
				r.versions = append(r.versions, v)
			}
			r.mu.Unlock()
		}
		start := time.Now()
		method := req.Method
		if req.Body != nil && req.Method == http.MethodPost {
			body, _ := io.ReadAll(req.Body)
			req.Body = io.NopCloser(bytes.NewReader(body))
			var m struct {
				Method string `json:"method"`
			}
			_ = json.Unmarshal(body, &m)
			method += " " + m.Method
		}
		sw := &statusRecorder{ResponseWriter: w}
		p.ServeHTTP(sw, req)
		r.mu.Lock()
		r.trace = append(r.trace, fmt.Sprintf("%s %s: %d after %v (client gone: %v)",
			start.Format("15:04:05.000"), method, sw.status, time.Since(start).Round(time.Microsecond), req.Context().Err() != nil))
		r.mu.Unlock()
	})
}

// statusRecorder notes the status a handler wrote; it flushes, as the
// proxy does for event streams.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// traced returns the requests proxied so far.
func (r *recorder) traced() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.trace, "\n")
}

// take returns the versions seen since the last call.
func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	v := r.versions
	r.versions = nil
	return v
}

type outcome struct {
	Package         string `json:"package"`
	Version         string `json:"version"`
	ProtocolVersion string `json:"protocolVersion"`
	Tools           int    `json:"tools"`
	Results         int    `json:"results"`
	Meta            bool   `json:"meta"`
}

// servingAddr waits for opsearch serve --http to log the address it
// listens on, then for that address to answer /health.
func servingAddr(t *testing.T, stderr *lockedBuffer) string {
	t.Helper()
	logged := regexp.MustCompile(`msg="opsearch serving MCP over HTTP".* addr=(\S+)`)
	// A minute bounds a failure; the server listens within milliseconds.
	deadline := time.Now().Add(time.Minute)
	for ; ; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("opsearch serve --http did not start:\n%s", stderr.String())
		}
		m := logged.FindStringSubmatch(stderr.String())
		if m == nil {
			continue
		}
		if resp, err := http.Get("http://" + m[1] + "/health"); err == nil {
			_ = resp.Body.Close()
			return m[1]
		}
	}
}

func TestTypeScriptClients(t *testing.T) {
	if testing.Short() {
		t.Skip("installs npm packages and runs Node.js clients")
	}
	node := tool(t, "node")
	dir := install(t)
	bin := buildBinary(t)
	data := opgen.Generate(opgen.GenOptions{Seed: 5, WorkPackages: 200})
	_, base := optesting.Start(t, data, optest.Options{})
	query := data.WorkPackages[7].Subject

	// The team server, as its own process, on a port it picks itself
	// and logs: a port picked here and closed for it to take could be
	// taken by another test's server meanwhile, and then the clients
	// would talk to that one.
	srv := exec.Command(bin, "serve", "--http", "127.0.0.1:0")
	srv.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "OPENPROJECT_BASE_URL=" + base, "OPSEARCH_DATA_DIR=" + t.TempDir(),
		// Every request and its status, for the log of a failed run.
		"OPSEARCH_LOG_LEVEL=debug"}
	var srvErr lockedBuffer
	srv.Stderr = &srvErr
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = srv.Process.Kill()
		_ = srv.Wait()
		if t.Failed() {
			t.Logf("opsearch serve --http:\n%s", srvErr.String())
		}
	})
	addr := servingAddr(t, &srvErr)
	rec := &recorder{}
	proxy := httptest.NewServer(rec.handler("http://" + addr))
	t.Cleanup(proxy.Close)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("requests through the proxy:\n%s", rec.traced())
		}
	})
	stdioData := t.TempDir()
	stdioEnv := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "OPENPROJECT_BASE_URL=" + base,
		"OPENPROJECT_API_KEY=" + optest.AliceKey, "OPSEARCH_DATA_DIR=" + stdioData, "OPSEARCH_BIN=" + bin,
	}

	// What the Go SDK's own listing says, to compare counts with.
	want := goToolCount(t, "http://"+addr+"/mcp")

	try := func(env []string, args ...string) ([]byte, error) {
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, node, args...)
		cmd.Dir, cmd.Env = dir, env
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return out, fmt.Errorf("node %v: %w\n%s%s", args, err, out, stderr.String())
		}
		return out, nil
	}
	run := func(t *testing.T, env []string, args ...string) []byte {
		t.Helper()
		out, err := try(env, args...)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	var report []string
	for _, c := range []struct{ sdk, mode string }{{"v1", "http"}, {"v2", "http"}, {"v1", "stdio"}, {"v2", "stdio"}} {
		t.Run(c.sdk+"/"+c.mode, func(t *testing.T) {
			env := append(slices.Clone(stdioEnv), "OPSEARCH_URL="+proxy.URL+"/mcp", "OPSEARCH_KEY="+optest.AliceKey, "OPSEARCH_QUERY="+query)
			out := run(t, env, "client.mjs", c.sdk, c.mode)
			var o outcome
			if err := json.Unmarshal(bytes.TrimSpace(out), &o); err != nil {
				t.Fatalf("client output %q: %v", out, err)
			}
			seen := rec.take()
			if c.mode == "http" && !slices.Equal(seen, []string{o.ProtocolVersion}) {
				t.Errorf("the client says it negotiated %q; its requests said %v", o.ProtocolVersion, seen)
			}
			if !slices.Contains(sdk.SupportedProtocolVersions(), o.ProtocolVersion) {
				t.Errorf("negotiated %q, not a revision opsearch speaks", o.ProtocolVersion)
			}
			if o.Tools != want || o.Results == 0 || !o.Meta {
				t.Errorf("%+v: want %d tools, search results, and the index block in _meta", o, want)
			}
			report = append(report, o.Package+" "+o.Version+" over "+c.mode+": "+o.ProtocolVersion)
		})
	}

	inspector := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "inspector")
	version := packageVersion(t, inspector)
	cli := filepath.Join(dir, "node_modules", ".bin", "mcp-inspector")
	inspect := func(t *testing.T, target []string, extra ...string) map[string]any {
		t.Helper()
		args := append(append([]string{cli, "--cli"}, target...), extra...)
		out, err := try(stdioEnv, args...)
		if err != nil && strings.Contains(err.Error(), "Request timed out") {
			// Twice in about thirty runs, both with mcp's tests beside
			// this one, the Inspector's request after logging/setLevel
			// went unanswered for its minute; it was never seen alone,
			// in over twenty runs under load, and the logs of those two
			// runs did not say where it stopped. One more try, with the
			// first one's trail in the log; a second timeout fails.
			t.Logf("the Inspector timed out; trying once more. Requests through the proxy so far:\n%s\n%v", rec.traced(), err)
			out, err = try(stdioEnv, args...)
		}
		if err != nil {
			t.Fatal(err)
		}
		var v map[string]any
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatalf("inspector output %.300q: %v", out, err)
		}
		return v
	}
	search := []string{"--method", "tools/call", "--tool-name", "openproject_search", "--tool-arg", "query=" + query}
	for _, c := range []struct {
		mode   string
		target []string
	}{
		{"http", []string{proxy.URL + "/mcp", "--header", "X-OpenProject-Api-Key: " + optest.AliceKey}},
		// The v1 stdio run above synced this data directory: each CLI
		// call starts a new server on it.
		{"stdio", []string{bin, "serve", "-e", "OPENPROJECT_BASE_URL=" + base, "-e", "OPENPROJECT_API_KEY=" + optest.AliceKey, "-e", "OPSEARCH_DATA_DIR=" + stdioData}},
	} {
		t.Run("inspector/"+c.mode, func(t *testing.T) {
			list := inspect(t, c.target, "--method", "tools/list")
			if tools, _ := list["tools"].([]any); len(tools) != want {
				t.Errorf("tools/list: %d tools, want %d", len(tools), want)
			}
			res := inspect(t, c.target, search...)
			structured, _ := res["structuredContent"].(map[string]any)
			results, _ := structured["results"].([]any)
			meta, _ := res["_meta"].(map[string]any)
			if len(results) == 0 || meta["opsearch/index"] == nil {
				t.Errorf("search: %d results, _meta %v; want results and the index block", len(results), meta)
			}
			negotiated := "not observable over stdio"
			if c.mode == "http" {
				negotiated = strings.Join(rec.take(), ", ")
				if negotiated == "" {
					t.Error("the inspector's requests carried no protocol version")
				}
			}
			report = append(report, "@modelcontextprotocol/inspector "+version+" (CLI) over "+c.mode+": "+negotiated)
		})
	}
	nodeVersion, _ := exec.Command(node, "--version").Output()
	t.Logf("Node.js %s", strings.TrimSpace(string(nodeVersion)))
	for _, line := range report {
		t.Log(line)
	}
}

// goToolCount lists the tools with the Go SDK's client.
func goToolCount(t *testing.T, endpoint string) int {
	t.Helper()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "interop", Version: "0"}, nil).Connect(t.Context(),
		&sdk.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: keyRT{optest.AliceKey}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cs.Close() }()
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return len(res.Tools)
}

type keyRT struct{ key string }

func (k keyRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-OpenProject-Api-Key", k.key)
	return http.DefaultTransport.RoundTrip(r)
}

func packageVersion(t *testing.T, dir string) string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var p struct {
		Version string `json:"version"`
	}
	if err := json.NewDecoder(bufio.NewReader(f)).Decode(&p); err != nil {
		t.Fatal(err)
	}
	return p.Version
}

// TestDemoConfigs runs the demo as a new user would and connects the
// official TypeScript SDK's clients with the two MCP client
// configurations it prints, exactly as printed: Streamable HTTP (URL and
// header) and stdio (command, arguments and environment).
func TestDemoConfigs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the demo and Node.js clients")
	}
	node := tool(t, "node")
	dir := install(t)
	bin := buildBinary(t)
	demo := exec.Command(bin, "demo", "--addr", "127.0.0.1:0", "--work-packages", "200")
	demo.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	var stdout, stderr lockedBuffer
	demo.Stdout, demo.Stderr = &stdout, &stderr
	if err := demo.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = demo.Process.Signal(os.Interrupt)
		_ = demo.Wait()
		if t.Failed() {
			t.Logf("demo stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
		}
	})
	// Two minutes bound a failure; the demo is ready in seconds.
	for deadline := time.Now().Add(2 * time.Minute); !strings.Contains(stdout.String(), "Press Ctrl-C to stop."); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the demo did not get ready")
		}
	}
	for _, c := range []struct{ name, heading string }{
		{"http", "MCP client configuration, Streamable HTTP:"},
		{"stdio", "MCP client configuration, stdio"},
	} {
		cfg := printedConfig(t, stdout.String(), c.heading)
		for _, sdkName := range []string{"v1", "v2"} {
			t.Run(c.name+"/"+sdkName, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
				defer cancel()
				cmd := exec.CommandContext(ctx, node, "client.mjs", sdkName, "config")
				cmd.Dir = dir
				cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "OPSEARCH_CONFIG=" + cfg, "OPSEARCH_QUERY=deploy"}
				var errb bytes.Buffer
				cmd.Stderr = &errb
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("node: %v\n%s%s\nconfiguration: %s", err, out, errb.String(), cfg)
				}
				var o outcome
				if err := json.Unmarshal(bytes.TrimSpace(out), &o); err != nil {
					t.Fatalf("client output %q: %v", out, err)
				}
				if o.Tools == 0 || o.Results == 0 {
					t.Errorf("%+v: want the tools listed and search results", o)
				}
			})
		}
	}
}

// printedConfig is the mcpServers entry of the JSON block after heading
// in the demo's output.
func printedConfig(t *testing.T, out, heading string) string {
	t.Helper()
	i := strings.Index(out, heading)
	if i < 0 {
		t.Fatalf("the demo printed no %q", heading)
	}
	rest := out[i:]
	start := strings.Index(rest, "\n{")
	end := strings.Index(rest, "\n}\n")
	if start < 0 || end < start {
		t.Fatalf("no JSON block after %q", heading)
	}
	var doc struct {
		Servers map[string]json.RawMessage `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(rest[start:end+2]), &doc); err != nil {
		t.Fatalf("the configuration after %q: %v", heading, err)
	}
	for _, v := range doc.Servers {
		return string(v)
	}
	t.Fatalf("no server in the configuration after %q", heading)
	return ""
}

// lockedBuffer is an io.Writer safe to read while a process writes it.
type lockedBuffer struct {
	mu gosync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

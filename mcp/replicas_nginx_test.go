package mcp_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/opsearch/opsearch/internal/optesting"
	"github.com/opsearch/opsearch/internal/optesting/pgtest"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
)

// nginxConf is deploy/replicas/nginx.conf as it runs outside Docker:
// the upstreams are the replicas' addresses instead of the compose
// service's name (which Docker's DNS resolves), it listens on addr, and
// keeps its files in dir.
func nginxConf(t *testing.T, replicas []string, addr, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "deploy", "replicas", "nginx.conf"))
	if err != nil {
		t.Fatal(err)
	}
	conf := string(b)
	var servers strings.Builder
	for _, r := range replicas {
		fmt.Fprintf(&servers, "server %s;\n    ", r)
	}
	for _, edit := range []struct{ re, with string }{
		{`(?m)^\s*resolver .*;\n`, ""},
		{`server opsearch:8080 resolve;`, servers.String()},
		{`listen 8080;`, "listen " + addr + ";"},
		{`(?m)^http \{`, "http {\n  access_log off;\n  client_body_temp_path " + dir + "/body;\n  proxy_temp_path " + dir + "/proxy;"},
	} {
		re := regexp.MustCompile(edit.re)
		if !re.MatchString(conf) {
			t.Fatalf("nginx.conf no longer has %q: update the test's edits", edit.re)
		}
		conf = re.ReplaceAllLiteralString(conf, edit.with)
	}
	path := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestReplicasBehindNginx runs deploy/replicas/nginx.conf in front of
// three replica processes sharing a PostgreSQL store: MCP over
// Streamable HTTP and the legacy SSE transport (whose session lives in
// one replica) work through it, requests reach every replica, and a
// replica killed with SIGKILL costs no request.
func TestReplicasBehindNginx(t *testing.T) {
	nginx, err := exec.LookPath("nginx")
	if err != nil {
		nginx, err = exec.LookPath("/usr/sbin/nginx")
	}
	if err != nil {
		t.Skip("no nginx on this machine (Debian: apt-get install nginx-light); .ci/run installs it")
	}
	bin := buildOpsearch(t)
	dsn := pgtest.Schema(t)
	data := opgen.Generate(opgen.GenOptions{Seed: 21, WorkPackages: 300})
	_, base := optesting.Start(t, data, optest.Options{})
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"OPENPROJECT_BASE_URL=" + base,
		"OPSEARCH_STORE_URL=" + dsn,
		// As in compose.yaml: nginx passes Host: opsearch.
		"OPSEARCH_ALLOWED_HOSTS=opsearch,localhost",
	}
	replicas := []*replicaProc{startReplica(t, bin, env), startReplica(t, bin, env), startReplica(t, bin, env)}
	var addrs []string
	for _, r := range replicas {
		waitFor(t, time.Minute, "replica "+r.addr+" serves", func() bool { return r.health() != nil })
		addrs = append(addrs, r.addr)
	}

	dir := t.TempDir()
	front := freeAddr(t)
	proxy := exec.Command(nginx, "-p", dir, "-c", nginxConf(t, addrs, front, dir),
		"-g", "daemon off; master_process off; pid "+dir+"/nginx.pid; error_log "+dir+"/error.log;")
	proxyErr := &lockedBuffer{}
	proxy.Stdout, proxy.Stderr = proxyErr, proxyErr
	if err := proxy.Start(); err != nil {
		t.Fatal(err)
	}
	proxyDone := make(chan struct{})
	go func() { _ = proxy.Wait(); close(proxyDone) }()
	t.Cleanup(func() {
		_ = proxy.Process.Signal(syscall.SIGTERM)
		<-proxyDone
		if t.Failed() {
			log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Logf("nginx:\n%s%s", proxyErr.String(), log)
		}
	})
	url := "http://" + front
	waitFor(t, 30*time.Second, "nginx answers", func() bool {
		select {
		case <-proxyDone:
			t.Fatalf("nginx exited: %s", proxyErr.String())
		default:
		}
		return (&replicaProc{addr: front}).health() != nil
	})

	key := map[string]string{"X-OpenProject-Api-Key": optest.AliceKey}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "0"}, nil).Connect(t.Context(),
		&sdk.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: httpClient(key)}, nil)
	if err != nil {
		t.Fatalf("connect through nginx: %v", err)
	}
	defer func() { _ = cs.Close() }()
	waitSynced(t.Context(), t, cs)
	query := map[string]any{"query": data.WorkPackages[5].Subject}
	searchThrough := func(cs *sdk.ClientSession, what string) {
		t.Helper()
		var out searchOut
		if err := httpCall(t.Context(), cs, "openproject_search", query, &out); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if len(out.Results) == 0 {
			t.Fatalf("%s: searching %q found nothing", what, query["query"])
		}
	}
	for i := range 9 {
		searchThrough(cs, fmt.Sprintf("Streamable HTTP search %d", i))
	}
	// Round robin: every replica has served alice.
	for _, r := range replicas {
		if h := r.health(); h == nil || h["activeUsers"] != float64(1) {
			t.Errorf("replica %s: /health %v; want alice active there too", r.addr, h)
		}
	}

	sse, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "0"}, nil).Connect(t.Context(),
		&sdk.SSEClientTransport{Endpoint: url + "/sse", HTTPClient: httpClient(key)}, nil)
	if err != nil {
		t.Fatalf("SSE through nginx: %v", err)
	}
	defer func() { _ = sse.Close() }()
	for i := range 5 {
		searchThrough(sse, fmt.Sprintf("SSE search %d", i))
	}

	// One replica dies: nginx tries the next for every request it would
	// have sent there.
	if err := replicas[0].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-replicas[0].done
	for i := range 9 {
		searchThrough(cs, fmt.Sprintf("search %d after a replica was killed", i))
	}
}

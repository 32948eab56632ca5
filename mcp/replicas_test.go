package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/opsearch/opsearch/internal/optesting"
	"github.com/opsearch/opsearch/internal/optesting/pgtest"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
)

// replicaProc is one `opsearch serve --http --store` process.
type replicaProc struct {
	cmd  *exec.Cmd
	addr string
	errb *lockedBuffer
	done chan struct{}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func startReplica(t *testing.T, bin string, env []string) *replicaProc {
	t.Helper()
	r := &replicaProc{errb: &lockedBuffer{}, done: make(chan struct{})}
	// The replica picks its port and logs it: a port picked here and
	// closed for it could be taken meanwhile by another test's server,
	// which the test would then talk to.
	r.cmd = exec.Command(bin, "serve", "--http", "127.0.0.1:0")
	r.cmd.Env = append(slices.Clone(env), "OPSEARCH_DATA_DIR="+t.TempDir(), "HOME="+t.TempDir())
	r.cmd.Stdout, r.cmd.Stderr = io.Discard, r.errb
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = r.cmd.Wait(); close(r.done) }()
	t.Cleanup(func() {
		_ = r.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-r.done:
		case <-time.After(20 * time.Second):
			_ = r.cmd.Process.Kill()
			<-r.done
		}
		if t.Failed() {
			t.Logf("replica %s stderr:\n%s", r.addr, r.errb.String())
		}
	})
	logged := regexp.MustCompile(`msg="opsearch serving MCP over HTTP".* addr=(\S+)`)
	waitFor(t, time.Minute, "a replica logs its address", func() bool {
		if m := logged.FindStringSubmatch(r.errb.String()); m != nil {
			r.addr = m[1]
		}
		return r.addr != ""
	})
	return r
}

// health returns the replica's /health answer, or nil while it does not
// answer 200.
func (r *replicaProc) health() map[string]any {
	resp, err := http.Get("http://" + r.addr + "/health")
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	var h map[string]any
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&h) != nil {
		return nil
	}
	return h
}

// call runs a tool over REST as key and returns its text answer.
func (r *replicaProc) call(t *testing.T, key, tool string, args map[string]any) string {
	t.Helper()
	body, _ := json.Marshal(args)
	req, _ := http.NewRequest(http.MethodPost, "http://"+r.addr+"/api/tools/"+tool, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-OpenProject-Api-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Content []struct{ Text string } `json:"content"`
		IsError bool                    `json:"isError"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK || out.IsError || len(out.Content) == 0 {
		t.Fatalf("%s on %s: status %d, %v, %+v", tool, r.addr, resp.StatusCode, err, out)
	}
	return out.Content[0].Text
}

// aliceProject is a project alice is a member of.
func aliceProject(t *testing.T, d *optest.Dataset) int64 {
	t.Helper()
	var alice int64
	for _, u := range d.Users {
		if u.APIKey == optest.AliceKey {
			alice = u.ID
		}
	}
	for _, p := range d.Projects {
		if slices.Contains(p.Members, alice) {
			return p.ID
		}
	}
	for _, m := range d.Memberships {
		if m.UserID == alice {
			return m.ProjectID
		}
	}
	t.Fatal("alice is a member of no project")
	return 0
}

// search runs openproject_search over REST as key and returns the result
// ids in order.
func (r *replicaProc) search(t *testing.T, key, query string) []string {
	t.Helper()
	var res struct {
		Results []struct {
			Kind string `json:"kind"`
			ID   int64  `json:"id"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(r.call(t, key, "openproject_search", map[string]any{"query": query})), &res); err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(res.Results))
	for i, h := range res.Results {
		ids[i] = h.Kind + ":" + strconv.FormatInt(h.ID, 10)
	}
	return ids
}

// waitFor polls cond until it holds or the bound passes; the bound is the
// issue's acceptance limit or a hang guard, never a speed measurement.
func waitFor(t *testing.T, bound time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > bound {
			t.Fatalf("%s: not within %s", what, bound)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return time.Since(start)
}

// Three replica processes share one PostgreSQL store in front of the
// fake. The one holding the crawl's lease is SIGKILLed mid-crawl; another
// takes over within 30 s and completes the crawl (every work package
// stored once, the sync state complete); every replica then answers a
// user's searches alike, and so does a fourth started afterwards.
func TestReplicas_KillTheCrawler(t *testing.T) {
	// One of the package's long tests: they run beside each other (two
	// at once on two cores, go test's -parallel), not one after another.
	t.Parallel()
	bin := buildOpsearch(t)
	dsn := pgtest.Schema(t)
	data := opgen.Generate(opgen.GenOptions{Seed: 21, WorkPackages: 3000})
	// Slow enough that the crawl is still running when it is killed.
	_, base := optesting.Start(t, data, optest.Options{Latency: 10 * time.Millisecond})
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"OPENPROJECT_BASE_URL=" + base,
		"OPSEARCH_STORE_URL=" + dsn,
		"OPSEARCH_CRAWL_API_KEY=" + optest.AdminKey,
	}
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	storedWPs := func() int {
		var n int
		_ = conn.QueryRow(ctx, `SELECT count(*) FROM opsearch_kv WHERE bucket = 'work_packages'::bytea AND value IS NOT NULL`).Scan(&n)
		return n
	}
	crawlLease := func() (holder string, held bool) {
		_ = conn.QueryRow(ctx, `SELECT holder, expires_at >= clock_timestamp() FROM opsearch_leases WHERE name LIKE 'sync/user/%'`).Scan(&holder, &held)
		return holder, held
	}

	replicas := []*replicaProc{startReplica(t, bin, env), startReplica(t, bin, env), startReplica(t, bin, env)}
	// The crawl is under way: some work packages are stored, not all.
	waitFor(t, 60*time.Second, "the crawl starts", func() bool { n := storedWPs(); return n > 0 && n < len(data.WorkPackages) })
	holder, _ := crawlLease()
	pid, err := strconv.Atoi(strings.Split(holder, "/")[1])
	if err != nil {
		t.Fatalf("lease holder %q names no pid", holder)
	}
	var victim *replicaProc
	for _, r := range replicas {
		if r.cmd.Process.Pid == pid {
			victim = r
		}
	}
	if victim == nil {
		t.Fatalf("no replica has the lease holder's pid %d", pid)
	}
	before := storedWPs()
	if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-victim.done
	t.Logf("killed the crawling replica (pid %d) with %d of %d work packages stored", pid, before, len(data.WorkPackages))
	took := waitFor(t, 30*time.Second, "another replica takes the crawl over", func() bool {
		h, held := crawlLease()
		return held && h != holder
	})
	t.Logf("taken over %s after the kill", took.Round(100*time.Millisecond))
	waitFor(t, 2*time.Minute, "the crawl completes", func() bool { return storedWPs() == len(data.WorkPackages) })
	var alive []*replicaProc
	for _, r := range replicas {
		if r != victim {
			alive = append(alive, r)
		}
	}
	caughtUp := func(r *replicaProc) bool {
		h := r.health()
		if h == nil {
			return false
		}
		st, _ := h["store"].(map[string]any)
		crawl, _ := h["crawl"].(map[string]any)
		// The crawl's report: a whole sync finished (its last pass,
		// attachments, included), not only its work packages stored.
		return st != nil && st["behind"] == float64(0) && crawl != nil && crawl["ok"] == true
	}
	for _, r := range alive {
		waitFor(t, time.Minute, "replica "+r.addr+" catches up", func() bool { return caughtUp(r) })
	}
	alive = append(alive, startReplica(t, bin, env)) // a fourth, after the crawl
	waitFor(t, time.Minute, "the fourth replica builds and catches up", func() bool { return caughtUp(alive[len(alive)-1]) })

	queries := []string{data.WorkPackages[3].Subject, data.WorkPackages[400].Subject, "deployment pipeline", "database migration"}
	for _, q := range queries {
		want := alive[0].search(t, optest.AliceKey, q)
		if len(want) == 0 && q == queries[0] {
			t.Errorf("search %q finds nothing", q)
		}
		for _, r := range alive[1:] {
			if got := r.search(t, optest.AliceKey, q); !slices.Equal(got, want) {
				t.Errorf("search %q: replica %s answers %v, %s answers %v", q, r.addr, got, alive[0].addr, want)
			}
		}
	}
	// Read-your-writes: a work package alice creates through one replica
	// is found by her next search on another, on the first try.
	var created struct {
		WorkPackage struct {
			ID int64 `json:"id"`
		} `json:"workPackage"`
	}
	raw := alive[0].call(t, optest.AliceKey, "openproject_create_work_package",
		map[string]any{"projectId": aliceProject(t, data), "subject": "Quarterly walrus inventory for the ice depot"})
	if err := json.Unmarshal([]byte(raw), &created); err != nil || created.WorkPackage.ID == 0 {
		t.Fatalf("create through %s: %v %s", alive[0].addr, err, raw)
	}
	for _, r := range alive[1:] {
		got := r.search(t, optest.AliceKey, "walrus inventory ice depot")
		if len(got) == 0 || got[0] != "work_package:"+strconv.FormatInt(created.WorkPackage.ID, 10) {
			t.Errorf("replica %s, right after the create through %s: %v, want work package %d first", r.addr, alive[0].addr, got, created.WorkPackage.ID)
		}
	}

	var dup int
	if err := conn.QueryRow(ctx, `SELECT count(*) - count(DISTINCT key) FROM opsearch_kv WHERE bucket = 'work_packages'::bytea`).Scan(&dup); err != nil || dup != 0 {
		t.Errorf("duplicate work package rows: %d (%v)", dup, err)
	}
}

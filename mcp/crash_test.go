package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	gosync "sync"
	"syscall"
	"testing"
	"time"

	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
	"github.com/opsearch/opsearch/store"
	bolt "go.etcd.io/bbolt"
)

// The crash test runs `opsearch sync` and SIGKILLs it at points chosen by
// request count, not by wall clock: a kill after the Nth request lands
// at the same place of the crawl whatever the machine's speed, so a
// failure can be replayed from the seed.

// crashGen is big enough that a sync spans many commits of every kind:
// with the fake's page size capped at 100 (crashPageSize), alice's work
// packages arrive in 9 pages, each committed on its own, and the
// first wiki probe walks 1000 ids past the highest page.
var crashGen = opgen.GenOptions{Seed: 31, Projects: 8, Users: 12, WorkPackages: 1500, Comments: 1500, WikiPages: 40, Meetings: 30}

const (
	crashPageSize = 100
	crashKills    = 20
	crashSeed     = 11
	// crashJitter bounds a delay between the Nth answer and the kill, so
	// kills also land inside the commit that follows an answer and not
	// only while the process waits for the network. Requests after the
	// Nth are held until the kill, so the delay never lets the sync
	// get further than N requests: it moves the kill point within the
	// work that the Nth answer starts.
	crashJitter = 15 * time.Millisecond
)

// killSwitch wraps the fake OpenProject. It counts the requests of the
// current run and, when armed, kills the process after answering the
// killAt-th one; later requests of that run wait for the kill and get no
// answer, so the run cannot finish whatever the scheduling.
type killSwitch struct {
	h http.Handler

	mu     gosync.Mutex
	n      int           // requests of the current run
	killAt int           // 0: never kill
	delay  time.Duration // between answering request killAt and the kill
	kill   func()        // kills the current run's process
	dead   chan struct{} // closed once kill has been called
	last   string        // "METHOD path" of request killAt
}

func (k *killSwitch) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	k.mu.Lock()
	k.n++
	i, at, dead := k.n, k.killAt, k.dead
	if i == at {
		k.last = r.Method + " " + r.URL.Path
	}
	k.mu.Unlock()
	if at > 0 && i > at {
		select {
		case <-dead:
		case <-r.Context().Done():
		}
		return
	}
	k.h.ServeHTTP(w, r)
	if at > 0 && i == at {
		// The answer goes out in full before the kill, so the process
		// acts on it (decodes, commits) until the signal arrives.
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		k.mu.Lock()
		kill, delay := k.kill, k.delay
		k.mu.Unlock()
		time.AfterFunc(delay, func() {
			kill()
			close(dead)
		})
	}
}

// arm resets the count for a new run; killAt 0 lets the run finish.
func (k *killSwitch) arm(killAt int, delay time.Duration, kill func()) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.n, k.killAt, k.delay, k.kill, k.last = 0, killAt, delay, kill, ""
	k.dead = make(chan struct{})
}

// served returns the requests of the current run and the path of the
// one the kill followed.
func (k *killSwitch) served() (int, string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.n, k.last
}

// TestCrash_KillDuringSyncs: twenty syncs in a row into one data
// directory are SIGKILLed at random points (none completes), then one
// sync runs to the end. The store and the index must then equal those of
// a clean sync into a fresh directory: every entity byte for byte, the
// sync states, the per-kind counts of store and index, and the ids, in
// order, of a sample of searches. The store file must pass bbolt's
// consistency check after every kill.
//
// Each kill point is drawn uniformly from the requests the interrupted
// sync would still make. That number is measured, not guessed: before
// each kill the directory is copied and the copy synced to the end with
// the requests counted. That sync from a crashed state must itself equal
// the clean sync, so the test checks twenty recoveries from twenty
// different crash points on top of the recovery from all of them.
func TestCrash_KillDuringSyncs(t *testing.T) {
	// One of the package's long tests: they run beside each other (two
	// at once on two cores, go test's -parallel), not one after another.
	t.Parallel()
	bin := buildOpsearch(t)
	data := opgen.Generate(crashGen)
	if err := data.Validate(); err != nil {
		t.Fatal(err)
	}
	fake := optest.NewServer(data, optest.Options{MaxPageSize: crashPageSize, Latency: time.Millisecond})
	ks := &killSwitch{h: fake}
	ks.arm(0, 0, nil)
	ts := httptest.NewUnstartedServer(ks)
	ts.Config.ErrorLog = log.New(io.Discard, "", 0) // killed clients make net/http log
	ts.Start()
	t.Cleanup(func() {
		fake.Close()
		ts.Close()
	})
	env := func(dir string) []string {
		return []string{
			"PATH=" + os.Getenv("PATH"), "HOME=" + dir,
			"OPENPROJECT_BASE_URL=" + ts.URL, "OPENPROJECT_API_KEY=" + optest.AliceKey,
			"OPSEARCH_DATA_DIR=" + dir,
		}
	}

	// The reference: one sync into a fresh directory.
	cleanDir := t.TempDir()
	ks.arm(0, 0, nil)
	if code, _, errOut := runCLI(t, bin, env(cleanDir), "sync"); code != 0 {
		t.Fatalf("clean sync: exit %d\n%s", code, errOut)
	}
	fullRequests, _ := ks.served()
	clean := snapshotData(t, bin, env(cleanDir), cleanDir, data)
	for kind, c := range clean.counts {
		if c.Store == 0 {
			t.Fatalf("the clean sync stored no %s", kind)
		}
	}
	hits := 0
	for _, ids := range clean.searches {
		if ids != "" {
			hits++
		}
	}
	if hits < len(clean.searches)*3/4 {
		t.Fatalf("only %d of %d sample searches find anything: a weak comparison", hits, len(clean.searches))
	}
	t.Logf("clean sync: %d requests; store/index counts %v; %d of %d sample searches find something", fullRequests, clean.counts, hits, len(clean.searches))

	// The kill points sweep the whole sync: targets are sorted random
	// positions in the clean sync's requests. A run that starts with
	// remaining requests left is where the clean sync was at request
	// fullRequests-remaining, so it is killed that much before the
	// target. Drawing each kill from the remaining requests alone would
	// crowd the later kills into the last few dozen requests, as every
	// kill halves what is left on average.
	rng := rand.New(rand.NewPCG(crashSeed, crashSeed))
	// One target falls among the first requests (identity, projects) and
	// one among the last (meetings and their agenda items), phases too
	// short for uniform draws to hit.
	targets := []int{1 + rng.IntN(4), fullRequests - 1 - rng.IntN(10)}
	for len(targets) < crashKills {
		targets = append(targets, 1+rng.IntN(fullRequests-1))
	}
	slices.Sort(targets)
	dir := t.TempDir()
	remaining := fullRequests // the first run starts from nothing, like the clean one
	for i, target := range targets {
		if i > 0 {
			remaining = probeRemaining(t, bin, ks, env, dir, clean, data)
		}
		if remaining < 2 {
			t.Fatalf("kill %d: the sync left needs %d requests; nothing to interrupt", i+1, remaining)
		}
		// Never the last request: request at+1 exists and is held, so
		// the run cannot finish before the kill.
		at := min(max(target-(fullRequests-remaining), 1), remaining-1)
		delay := time.Duration(rng.Int64N(int64(crashJitter)))
		path := killedSync(t, bin, ks, env(dir), at, delay)
		t.Logf("kill %2d: target %4d: after request %4d of %4d (%s), +%s", i+1, target, at, remaining, path, delay.Round(time.Microsecond))
		checkBolt(t, dir)
	}

	ks.arm(0, 0, nil)
	if code, _, errOut := runCLI(t, bin, env(dir), "sync"); code != 0 {
		t.Fatalf("sync after %d kills: exit %d\n%s", crashKills, code, errOut)
	}
	n, _ := ks.served()
	t.Logf("the sync after %d kills made %d requests", crashKills, n)
	got := snapshotData(t, bin, env(dir), dir, data)
	compareData(t, "after the kills", clean, got)
	if !slices.Equal(clean.searches, got.searches) {
		for q, want := range clean.searches {
			if got.searches[q] != want {
				t.Errorf("search %q after the kills:\n got %s\nwant %s", clean.queries[q], got.searches[q], want)
			}
		}
	}
}

// killedSync runs `opsearch sync` with the switch armed to kill it after
// request at, and asserts that SIGKILL, not the sync's end, stopped it.
// It returns the killed-after request's path.
func killedSync(t *testing.T, bin string, ks *killSwitch, env []string, at int, delay time.Duration) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute) // a hang guard, not a speed limit
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "sync")
	cmd.Env = env
	var errb lockedBuffer
	cmd.Stdout, cmd.Stderr = io.Discard, &errb
	// Armed before the start, so the count includes the first request;
	// the kill gets the process through a channel, as it runs on a
	// server goroutine.
	started := make(chan *os.Process, 1)
	ks.arm(at, delay, func() { _ = (<-started).Signal(syscall.SIGKILL) })
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	started <- cmd.Process
	err := cmd.Wait()
	_, path := ks.served()
	ks.arm(0, 0, nil)
	if ctx.Err() != nil {
		t.Fatalf("sync to be killed after request %d hung; stderr:\n%s", at, errb.String())
	}
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("sync to be killed after request %d ended otherwise (%v); stderr:\n%s", at, err, errb.String())
	}
	return path
}

// probeRemaining copies dir and syncs the copy to its end, returning the
// requests that took. The copy's result must equal the clean sync's.
func probeRemaining(t *testing.T, bin string, ks *killSwitch, env func(string) []string, dir string, clean dataSnapshot, data *optest.Dataset) int {
	t.Helper()
	probe := t.TempDir()
	copyTree(t, dir, probe)
	ks.arm(0, 0, nil)
	if code, _, errOut := runCLI(t, bin, env(probe), "sync"); code != 0 {
		t.Fatalf("sync of a crashed copy: exit %d\n%s", code, errOut)
	}
	n, _ := ks.served()
	// The searches are left to the final comparison: twenty rounds of
	// them would add minutes and test the index the counts already cover.
	got := snapshotStore(t, probe)
	got.counts = statusCounts(t, bin, env(probe))
	compareData(t, "synced once after a kill", clean, got)
	return n
}

// dataSnapshot is what the comparison looks at.
type dataSnapshot struct {
	// entities maps bucket name to key to value, for the entity buckets
	// and the key counts.
	entities map[string]map[string]string
	// states are the per-kind sync states without run timestamps.
	states map[string]syncStateCore
	// pending is the store's pending-index marker ("" or "null": none).
	pending string
	// counts is status --json's per-kind store and index counts.
	counts map[string]kindCounts
	// queries and searches: search --json result ids per query.
	queries, searches []string
}

type kindCounts struct {
	Store int  `json:"store"`
	Index *int `json:"index"`
}

func (c kindCounts) String() string {
	if c.Index == nil {
		return fmt.Sprintf("%d/-", c.Store)
	}
	return fmt.Sprintf("%d/%d", c.Store, *c.Index)
}

// syncStateCore is the part of store.SyncState two syncs of the same data
// must agree on. Timestamps of runs, items seen in the last run and the
// wiki re-check position depend on how many runs there were.
type syncStateCore struct {
	Cursor      time.Time
	Complete    bool
	LastError   string
	Unsupported bool
	Note        string
	HighestID   int64
	FullListing bool // LastFullListing is set
}

func snapshotData(t *testing.T, bin string, env []string, dir string, data *optest.Dataset) dataSnapshot {
	t.Helper()
	s := snapshotStore(t, dir)
	s.counts = statusCounts(t, bin, env)
	s.queries = crashQueries(data)
	for _, q := range s.queries {
		code, out, errOut := runCLI(t, bin, env, "search", q, "--json", "--limit", "20")
		var resp struct {
			Results []struct {
				Kind string
				ID   int64
			}
		}
		if code != 0 || json.Unmarshal([]byte(out), &resp) != nil {
			t.Fatalf("search %q: exit %d\n%s\n%s", q, code, out, errOut)
		}
		var ids []string
		for _, r := range resp.Results {
			ids = append(ids, fmt.Sprintf("%s#%d", r.Kind, r.ID))
		}
		s.searches = append(s.searches, strings.Join(ids, " "))
	}
	return s
}

// crashQueries is the search sample: subjects of a few work packages
// alice can see, words of wiki pages and meetings, a typo and a prefix.
func crashQueries(data *optest.Dataset) []string {
	qs := []string{"release planning", "migration", "login bug", "dashbord", "perf", "review meeting", "database"}
	for i, wp := range data.WorkPackages {
		if i%500 == 7 {
			qs = append(qs, wp.Subject)
		}
	}
	for i, w := range data.WikiPages {
		if i%10 == 3 {
			qs = append(qs, w.Title)
		}
	}
	for i, m := range data.Meetings {
		if i%10 == 5 {
			qs = append(qs, m.Title)
		}
	}
	return qs
}

func statusCounts(t *testing.T, bin string, env []string) map[string]kindCounts {
	t.Helper()
	code, out, errOut := runCLI(t, bin, env, "status", "--json")
	var f struct {
		Complete bool                  `json:"complete"`
		Kinds    map[string]kindCounts `json:"kinds"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &f) != nil {
		t.Fatalf("status --json: exit %d\n%s\n%s", code, out, errOut)
	}
	if !f.Complete {
		t.Errorf("status after a finished sync is not complete:\n%s", out)
	}
	return f.Kinds
}

// storePath is the only user's store file under the data directory dir.
func storePath(t *testing.T, dir string) string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*", "*", store.FileName))
	if err != nil || len(m) != 1 {
		t.Fatalf("store files under %s: %v %v", dir, m, err)
	}
	return m[0]
}

// checkBolt opens the store file read-only and runs bbolt's consistency
// check over every page. No process holds the file at this point.
func checkBolt(t *testing.T, dir string) {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, "*", "*", store.FileName))
	if len(m) == 0 {
		return // killed before the store was created
	}
	// Killed between creating the file and bbolt writing its first
	// pages: an empty file, which the next read-write open initialises.
	// bbolt would try to initialise it here too, and fail, as this
	// open is read-only.
	if fi, err := os.Stat(m[0]); err != nil {
		t.Fatalf("stat the store after a kill: %v", err)
	} else if fi.Size() == 0 {
		return
	}
	db, err := bolt.Open(m[0], 0o600, &bolt.Options{ReadOnly: true, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("open the store after a kill: %v", err)
	}
	defer db.Close()
	if err := db.View(func(tx *bolt.Tx) error {
		var errs []error
		for err := range tx.Check() {
			errs = append(errs, err)
		}
		return errors.Join(errs...)
	}); err != nil {
		t.Fatalf("bbolt check after a kill: %v", err)
	}
}

// snapshotStore reads the store file directly (after checking it), so
// the comparison sees every byte and not only what the commands print.
func snapshotStore(t *testing.T, dir string) dataSnapshot {
	t.Helper()
	checkBolt(t, dir)
	db, err := bolt.Open(storePath(t, dir), 0o600, &bolt.Options{ReadOnly: true, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s := dataSnapshot{entities: map[string]map[string]string{}, states: map[string]syncStateCore{}}
	// The entity buckets by their names in the file (store/kind.go),
	// which are the file format and never change with the kinds' names.
	buckets := []string{"counts", "projects", "work_packages", "activities", "wiki_pages", "meetings"}
	err = db.View(func(tx *bolt.Tx) error {
		for _, name := range buckets {
			b := tx.Bucket([]byte(name))
			if b == nil {
				return fmt.Errorf("no bucket %s", name)
			}
			m := map[string]string{}
			if err := b.ForEach(func(k, v []byte) error {
				m[string(k)] = string(v)
				return nil
			}); err != nil {
				return err
			}
			s.entities[name] = m
		}
		if err := tx.Bucket([]byte("sync")).ForEach(func(k, v []byte) error {
			var st store.SyncState
			if err := json.Unmarshal(v, &st); err != nil {
				return err
			}
			s.states[string(k)] = syncStateCore{
				Cursor: st.Cursor, Complete: st.Complete, LastError: st.LastError, Unsupported: st.Unsupported,
				Note: st.Note, HighestID: st.HighestID, FullListing: !st.LastFullListing.IsZero(),
			}
			return nil
		}); err != nil {
			return err
		}
		// The worker's marker of documents whose index entry may lag.
		s.pending = string(tx.Bucket([]byte("extra")).Get([]byte("sync.pending_index")))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// compareData asserts that got holds what want does (searches aside).
func compareData(t *testing.T, what string, want, got dataSnapshot) {
	t.Helper()
	for name, w := range want.entities {
		g := got.entities[name]
		if len(g) != len(w) {
			t.Errorf("%s: bucket %s has %d keys, the clean sync's %d", what, name, len(g), len(w))
		}
		diff := 0
		for k, v := range w {
			if gv, ok := g[k]; !ok || !bytes.Equal([]byte(gv), []byte(v)) {
				diff++
			}
		}
		if diff > 0 {
			t.Errorf("%s: %d of %d entries of bucket %s are missing or differ", what, diff, len(w), name)
		}
	}
	for k, w := range want.states {
		if g := got.states[k]; g != w {
			t.Errorf("%s: sync state of %s = %+v, the clean sync's %+v", what, k, g, w)
		}
	}
	if got.pending != "" && got.pending != "null" {
		t.Errorf("%s: index work left pending: %.200s", what, got.pending)
	}
	for k, w := range want.counts {
		if g := got.counts[k]; g.String() != w.String() {
			t.Errorf("%s: %s store/index = %s, the clean sync's %s", what, k, g, w)
		}
	}
}

// copyTree copies the regular files and directories of src into dst
// (sockets and the like are skipped: nothing runs on src).
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(to, info.Mode().Perm())
		case info.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(to, b, info.Mode().Perm())
		}
		return nil
	})
	if err != nil {
		t.Fatalf("copy %s: %v", src, err)
	}
}

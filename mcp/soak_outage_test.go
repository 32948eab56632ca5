package mcp_test

import (
	"bufio"
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strings"
	gosync "sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
)

// outageSwitch stands between opsearch and the fake OpenProject and takes
// it away: "down" closes every connection without an answer (what a
// stopped server behind a proxy or a refused connection looks like to a
// client), "hanging" accepts requests and never answers them.
type outageSwitch struct {
	h http.Handler

	mu      gosync.Mutex
	mode    string
	release chan struct{} // closed when a hang ends
}

func (o *outageSwitch) set(mode string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.mode == "hanging" {
		close(o.release)
	}
	o.mode = mode
	if mode == "hanging" {
		o.release = make(chan struct{})
	}
}

func (o *outageSwitch) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	o.mu.Lock()
	mode, release := o.mode, o.release
	o.mu.Unlock()
	switch mode {
	case "down":
		if hj, ok := w.(http.Hijacker); ok {
			if c, _, err := hj.Hijack(); err == nil {
				_ = c.Close()
				return
			}
		}
		w.WriteHeader(http.StatusBadGateway)
	case "hanging":
		select {
		case <-release:
		case <-r.Context().Done():
		}
	default:
		o.h.ServeHTTP(w, r)
	}
}

// TestSoak_Outage runs the real binary, `opsearch serve --http` with its
// default key cache (1 minute) and grace (30 minutes), and takes
// OpenProject away for $OPSEARCH_SOAK_OUTAGE per phase: down, then
// hanging. Throughout, a client searches every two seconds; every search
// must answer from the index, and once OpenProject has been unreachable
// for a while the answers must say so. Live tools must fail with that
// message rather than wait. After each phase OpenProject comes back and
// live tools must work again without a restart. It takes real time, so it
// runs only when asked:
//
//	OPSEARCH_SOAK_OUTAGE=5m go test ./mcp -run TestSoak_Outage -v -timeout 30m
func TestSoak_Outage(t *testing.T) {
	phase, err := time.ParseDuration(os.Getenv("OPSEARCH_SOAK_OUTAGE"))
	if err != nil || phase <= 0 {
		t.Skip("set OPSEARCH_SOAK_OUTAGE to a duration (e.g. 5m) to run the outage soak")
	}
	if phase < time.Minute {
		// A hang is noticed only when a call runs out of its deadline
		// (45 s for a live tool, 30 s for a key check): a shorter phase
		// would end before anything could say OpenProject is unreachable.
		t.Fatalf("OPSEARCH_SOAK_OUTAGE=%s: a phase must last at least 1m", phase)
	}
	bin := buildOpsearch(t)
	data := opgen.Generate(httpGen)
	fake := optest.NewServer(data, optest.Options{})
	sw := &outageSwitch{h: fake}
	ts := httptest.NewUnstartedServer(sw)
	ts.Config.ErrorLog = log.New(io.Discard, "", 0)
	ts.Start()
	t.Cleanup(func() {
		sw.set("")
		fake.Close()
		ts.Close()
	})

	dir := t.TempDir()
	cmd := exec.Command(bin, "serve", "--http", "127.0.0.1:0")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "OPENPROJECT_BASE_URL=" + ts.URL, "OPSEARCH_DATA_DIR=" + dir}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	})
	addrRE := regexp.MustCompile(`addr=(127\.0\.0\.1:\d+)`)
	addr := make(chan string, 1)
	var logMu gosync.Mutex
	var logTail []string
	var problems []string // the server's warnings and errors, all of them
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			if m := addrRE.FindStringSubmatch(line); m != nil {
				select {
				case addr <- m[1]:
				default:
				}
			}
			logMu.Lock()
			if strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR") {
				problems = append(problems, line)
			}
			logTail = append(logTail, line)
			if len(logTail) > 200 {
				logTail = logTail[1:]
			}
			logMu.Unlock()
		}
	}()
	var base string
	select {
	case base = <-addr:
	case <-time.After(time.Minute):
		t.Fatal("serve --http did not say where it listens")
	}
	t.Cleanup(func() {
		logMu.Lock()
		defer logMu.Unlock()
		if len(problems) > 0 {
			t.Logf("server warnings and errors (%d):\n%s", len(problems), strings.Join(problems[:min(len(problems), 40)], "\n"))
		}
		if t.Failed() {
			t.Logf("server log (tail):\n%s", strings.Join(logTail, "\n"))
		}
	})

	ctx := t.Context()
	cs := connectSyncedAlice(ctx, t, "http://"+base+"/mcp")
	subject := projectOneSubject(data)
	type answer = outageAnswer
	liveOK := func() (bool, string) {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		start := time.Now()
		res, err := cs.CallTool(cctx, &sdk.CallToolParams{Name: "openproject_get_project", Arguments: map[string]any{"projectId": 1}})
		if err != nil {
			return false, err.Error()
		}
		took := time.Since(start).Round(time.Millisecond)
		return !res.IsError, contentText(res) + " (after " + took.String() + ")"
	}

	for _, mode := range []string{"down", "hanging"} {
		t.Run(mode, func(t *testing.T) {
			sw.set(mode)
			var searches, errs, noted int
			var firstErr string
			var slowestLive time.Duration
			end := time.Now().Add(phase)
			for time.Now().Before(end) {
				var a answer
				searches++
				if err := httpCall(ctx, cs, "openproject_search", map[string]any{"query": subject}, &a); err != nil || len(a.Results) == 0 {
					errs++
					if firstErr == "" {
						firstErr = strings.TrimSpace(a.Index.Note)
						if err != nil {
							firstErr = err.Error()
						}
					}
				} else if strings.Contains(a.Index.Note, "OpenProject unreachable since") {
					noted++
				}
				if searches%15 == 1 {
					start := time.Now()
					ok, text := liveOK()
					slowestLive = max(slowestLive, time.Since(start))
					if ok {
						t.Errorf("a live tool answered while OpenProject is %s: %s", mode, text)
					}
				}
				time.Sleep(2 * time.Second)
			}
			t.Logf("%s for %s: %d searches, %d errors, %d said OpenProject is unreachable; slowest failing live call %s",
				mode, phase, searches, errs, noted, slowestLive.Round(time.Millisecond))
			if errs > 0 {
				t.Errorf("%d of %d searches failed while OpenProject was %s; first: %s", errs, searches, mode, firstErr)
			}
			if noted == 0 {
				t.Errorf("no answer said OpenProject is unreachable while it was %s", mode)
			}
			sw.set("")
			recovered := time.Now()
			for {
				ok, text := liveOK()
				if ok {
					t.Logf("live tools answer again %s after OpenProject came back", time.Since(recovered).Round(time.Millisecond))
					break
				}
				if time.Since(recovered) > 2*time.Minute {
					t.Fatalf("live tools still fail two minutes after OpenProject came back: %s", text)
				}
				time.Sleep(time.Second)
			}
		})
	}
}

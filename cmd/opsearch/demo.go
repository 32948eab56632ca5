package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode"

	"github.com/opsearch/opsearch/internal/spread"
	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
	"github.com/opsearch/opsearch/search"
	"github.com/opsearch/opsearch/sync"
)

// runDemo starts a fake OpenProject with a realistic data set in-process,
// syncs it for the demo admin with progress on stderr, serves MCP over
// HTTP, prints how to connect and three example searches on stdout, and
// runs until ctx is cancelled (SIGINT, SIGTERM).
func runDemo(ctx context.Context, e env, args []string) error {
	fs := newFlagSet("demo")
	addr := fs.String("addr", "127.0.0.1:8080", "MCP HTTP listen address (host:port; port 0 picks a free one)")
	wps := fs.Int("work-packages", 3000, "number of generated work packages")
	seed := fs.Int64("seed", 1, "generator seed; the same seed gives the same data")
	dataDir := fs.String("data-dir", "", "where the demo's indexes are kept (default: a temporary directory removed on exit)")
	perUser := fs.Bool("per-user-index", false, "serve every user from an index of their own (serve --per-user-index) instead of one shared index")
	shared := fs.Bool("shared-index", false, "serve every user from one shared index (the default)")
	if err := noArgs(e, fs, args); err != nil {
		return err
	}
	if *shared && *perUser {
		return errors.New("--shared-index and --per-user-index exclude each other")
	}
	if *wps < 1 {
		return fmt.Errorf("--work-packages must be at least 1, not %d", *wps)
	}
	log := e.logger.With("subsystem", "demo")
	// The port first: a taken one fails now, not after the sync.
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w (another process has it? pass --addr 127.0.0.1:0 for a free port)", *addr, err)
	}
	defer func() { _ = ln.Close() }() // closed by the server once serving; this is for the early returns

	if *dataDir == "" {
		d, err := os.MkdirTemp("", "opsearch-demo-")
		if err != nil {
			return fmt.Errorf("create a temporary data directory: %w", err)
		}
		defer func() {
			if err := os.RemoveAll(d); err != nil {
				log.Warn("remove the temporary data directory", "dir", d, "error", err)
			}
		}()
		*dataDir = d
	}

	// The fake OpenProject on a free loopback port.
	start := time.Now()
	fmt.Fprintf(e.stderr, "generating a fake OpenProject with %d work packages (seed %d) ...\n", *wps, *seed)
	data := opgen.Generate(opgen.GenOptions{
		Seed:         *seed,
		WorkPackages: *wps,
		WikiPages:    max(opgen.DefaultWikiPages, *wps/30),
		Meetings:     max(opgen.DefaultMeetings, *wps/40),
	})
	fmt.Fprintf(e.stderr, "generated %d work packages, %d comments and changes, %d wiki pages, %d meetings in %s\n",
		len(data.WorkPackages), len(data.Activities), len(data.WikiPages), len(data.Meetings), time.Since(start).Round(time.Millisecond))
	fake, err := optest.Listen("127.0.0.1:0", data, optest.Options{})
	if err != nil {
		return fmt.Errorf("listen for the fake OpenProject: %w", err)
	}
	defer func() {
		// Shutdown releases hanging requests first, so it can drain.
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = fake.Shutdown(sctx)
	}()
	baseURL := fake.URL
	fmt.Fprintf(e.stderr, "fake OpenProject at %s\n", baseURL)

	// Sync the admin's view, with progress.
	client, err := openproject.New(openproject.Config{BaseURL: baseURL, APIKey: optest.AdminKey, Logger: e.logger})
	if err != nil {
		return err
	}
	prog := newProgress(e.stderr)
	uo := sync.UserOptions{
		Logger:        e.logger,
		WorkerOptions: sync.Options{Logger: e.logger, Progress: func(k kind.Kind, done, total int) { prog.update(string(k), done, total) }},
	}
	u, worker, err := openDemoIndex(ctx, *dataDir, client, uo, !*perUser)
	if err != nil {
		return fmt.Errorf("open the demo index: %w", err)
	}
	owned := true // u is closed here until the serving step takes it
	defer func() {
		if owned {
			_ = u.Close()
		}
	}()
	if err := u.WaitRebuild(ctx); err != nil {
		return err
	}
	fmt.Fprintln(e.stderr, "syncing the demo admin's view of OpenProject ...")
	rep, err := worker.Sync(ctx)
	prog.finish()
	if err != nil {
		return fmt.Errorf("sync: %w", err)
	}
	printSyncReport(e.stderr, rep, u.Dir)
	if err := rep.Err(); err != nil {
		return fmt.Errorf("sync: %w", err)
	}

	// The example searches run on the admin's index now: serving reopens
	// it through the multi-user manager, and bbolt allows one opener.
	eng := search.New(u.Store, u.Index, search.Options{BaseURL: baseURL, Rebuilding: u.Rebuilding, Crew: spread.NewCrew()})
	examples := renderExamples(ctx, demoExamples(data), eng)
	owned = false
	if err := u.Close(); err != nil {
		return fmt.Errorf("close the demo index: %w", err)
	}
	conn := &connConfig{baseURL: baseURL, dataDir: *dataDir, timeout: 30 * time.Second}
	return runServeHTTP(ctx, e, httpServe{
		conn: conn, flags: &httpFlags{addr: *addr, idleTimeout: sync.DefaultIdleTimeout, maxUsers: sync.DefaultMaxUsers, maxSyncs: sync.DefaultMaxConcurrentSyncs, keyGrace: sync.DefaultKeyGrace,
			sharedIndex: !*perUser, perUserIndex: *perUser, viewRefresh: sync.DefaultViewRefresh},
		spec:     sync.DefaultSpec,
		listener: ln,
		ready: func(addr string) {
			printDemo(e.stdout, "http://"+addr+"/mcp", baseURL, *dataDir, examples)
		},
	})
}

// demoExample is one example search of the demo.
type demoExample struct {
	title string
	query search.Query
}

// demoExamples derives three searches from the data set, so they find
// something whatever the seed and size: a subject with typos, a fact that
// appears only in a comment, and a meeting outcome.
func demoExamples(d *optest.Dataset) []demoExample {
	var out []demoExample
	for _, wp := range d.WorkPackages {
		var long []string
		for _, w := range strings.Fields(wp.Subject) {
			if len(w) >= 7 && strings.IndexFunc(w, func(r rune) bool { return !unicode.IsLetter(r) || r > unicode.MaxASCII }) < 0 {
				long = append(long, strings.ToLower(w))
			}
		}
		if len(long) >= 2 {
			q := typo(long[0]) + " " + typo(long[1])
			out = append(out, demoExample{
				title: fmt.Sprintf("typos: %q (for work package #%d %q)", q, wp.ID, wp.Subject),
				query: search.Query{Text: q, Kinds: []kind.Kind{kind.WorkPackage}, PageSize: 3},
			})
			break
		}
	}
	for _, a := range d.Activities {
		if a.Internal {
			continue
		}
		const marker = "Incident reference: "
		if i := strings.Index(a.Comment, marker); i >= 0 {
			ref := strings.TrimSuffix(strings.Fields(a.Comment[i+len(marker):])[0], ".")
			out = append(out, demoExample{
				title: fmt.Sprintf("a fact only a comment mentions: %q (on work package #%d)", ref, a.WorkPackageID),
				query: search.Query{Text: ref, PageSize: 3},
			})
			break
		}
	}
outcomes:
	for _, m := range d.Meetings {
		for _, it := range m.AgendaItems {
			for _, o := range it.Outcomes {
				if n, ok := strings.CutPrefix(o.Notes, "Decision: "); ok {
					q := strings.Join(strings.Fields(strings.TrimSuffix(n, "."))[:min(6, len(strings.Fields(n)))], " ")
					q = strings.TrimRight(q, ".,")
					out = append(out, demoExample{
						title: fmt.Sprintf("a meeting outcome: %q (in meeting #%d %q)", q, m.ID, m.Title),
						query: search.Query{Text: q, Kinds: []kind.Kind{kind.Meeting}, PageSize: 3},
					})
					break outcomes
				}
			}
		}
	}
	return out
}

// typo swaps two inner letters of a word: "certificate" → "certifciate".
func typo(w string) string {
	r := []rune(w)
	i := len(r) / 2
	r[i], r[i+1] = r[i+1], r[i]
	return string(r)
}

// printDemo writes the demo's instructions and examples to w (stdout).
func printDemo(w io.Writer, mcpURL, baseURL, dataDir, examples string) {
	fmt.Fprintf(w, "\nopsearch demo is ready.\n\n")
	fmt.Fprintf(w, "MCP URL (Streamable HTTP): %s\n", mcpURL)
	fmt.Fprintf(w, "fake OpenProject:          %s\n", baseURL)
	fmt.Fprintf(w, "data directory:            %s\n\n", dataDir)
	fmt.Fprintf(w, "Demo API keys (send one as X-OpenProject-Api-Key or Authorization: Bearer):\n")
	fmt.Fprintf(w, "  admin  %s  (sees everything)\n", optest.AdminKey)
	fmt.Fprintf(w, "  alice  %s  (public projects, hers, alice-private)\n", optest.AliceKey)
	fmt.Fprintf(w, "  bob    %s  (public projects, his, bob-private)\n", optest.BobKey)

	httpCfg := map[string]any{"mcpServers": map[string]any{"opsearch-demo": map[string]any{
		"type": "http", "url": mcpURL, "headers": map[string]string{"X-OpenProject-Api-Key": optest.AliceKey},
	}}}
	command, cmdArgs := selfCommand()
	stdioCfg := map[string]any{"mcpServers": map[string]any{"opsearch-demo": map[string]any{
		"command": command, "args": append(cmdArgs, "serve"),
		"env": map[string]string{"OPENPROJECT_BASE_URL": baseURL, "OPENPROJECT_API_KEY": optest.BobKey, "OPSEARCH_DATA_DIR": dataDir},
	}}}
	fmt.Fprintf(w, "\nMCP client configuration, Streamable HTTP:\n%s\n", indentJSON(httpCfg))
	fmt.Fprintf(w, "\nMCP client configuration, stdio (runs its own opsearch against the demo's fake OpenProject):\n%s\n", indentJSON(stdioCfg))

	fmt.Fprintf(w, "\nExample searches (openproject_search, the admin's index):\n%s", examples)
	fmt.Fprintf(w, "\nTry it: curl -s -X POST %s -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' "+
		"-H 'X-OpenProject-Api-Key: %s' -d '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"curl\",\"version\":\"1\"}}}'\n",
		mcpURL, optest.AliceKey)
	fmt.Fprintf(w, "\nPress Ctrl-C to stop.\n")
}

// selfCommand is how an MCP client starts this same opsearch, as it must
// appear in a client configuration: the absolute path of the running
// binary, or, when it is a "go run" build (a temporary file that is gone
// once it exits), "go -C <module dir> run ./cmd/opsearch" from the
// checkout the demo was started in.
func selfCommand() (string, []string) {
	exe, err := os.Executable()
	if err != nil {
		return "opsearch", nil
	}
	if !strings.Contains(exe, string(filepath.Separator)+"go-build") {
		if abs, err := filepath.EvalSymlinks(exe); err == nil {
			exe = abs
		}
		return exe, nil
	}
	if wd, err := os.Getwd(); err == nil {
		// The checkout: the working directory or one above it.
		for dir := wd; ; dir = filepath.Dir(dir) {
			if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.Contains(string(b), "module github.com/opsearch/opsearch\n") {
				return "go", []string{"-C", dir, "run", "./cmd/opsearch"}
			}
			if filepath.Dir(dir) == dir {
				break
			}
		}
	}
	return "go", []string{"run", "github.com/opsearch/opsearch/cmd/opsearch@latest"}
}

// renderExamples runs the example searches and formats their top results.
func renderExamples(ctx context.Context, examples []demoExample, eng *search.Engine) string {
	var b strings.Builder
	w := &b
	for i, ex := range examples {
		fmt.Fprintf(w, "\n%d. %s\n", i+1, ex.title)
		resp, err := eng.Search(ctx, ex.query)
		if err != nil {
			fmt.Fprintf(w, "   search failed: %v\n", err)
			continue
		}
		if len(resp.Results) == 0 {
			fmt.Fprintln(w, "   no results")
		}
		for j, r := range resp.Results {
			fmt.Fprintf(w, "   %d) [%s #%d] %s  (score %.2f; matched %s)\n", j+1, r.Kind, r.ID, r.Title, r.Score, strings.Join(r.MatchedFields, ", "))
			switch {
			case r.MatchedComment != nil:
				fmt.Fprintf(w, "      comment by %s: %s\n", r.MatchedComment.Author, oneLine(r.MatchedComment.Snippet))
			case len(r.MatchedAgendaItems) > 0 || r.Snippet != "":
				fmt.Fprintf(w, "      %s\n", oneLine(r.Snippet))
			}
		}
		fmt.Fprintf(w, "   (%d results in %.1f ms)\n", resp.Total, resp.TookMS)
	}
	return b.String()
}

func indentJSON(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// openDemoIndex opens the index the demo admin's sync fills before
// serving: the admin's own, or the instance's shared one, crawled with
// the admin's key (an administrator's crawl vouches for every wiki id,
// so the other demo users' first crawls are cheap).
func openDemoIndex(ctx context.Context, dataDir string, client *openproject.Client, uo sync.UserOptions, shared bool) (*sync.User, *sync.Worker, error) {
	if !shared {
		u, err := sync.OpenUser(ctx, dataDir, client, uo)
		if err != nil {
			return nil, nil, err
		}
		return u, u.Worker, nil
	}
	me, err := client.Me(ctx)
	if err != nil {
		return nil, nil, err
	}
	u, err := sync.OpenShared(ctx, dataDir, client.BaseURL(), uo)
	if err != nil {
		return nil, nil, err
	}
	w, err := u.SharedWorker(client, sync.Shared{Owner: me.ID, Admin: me.Admin}, uo.WorkerOptions)
	if err != nil {
		_ = u.Close()
		return nil, nil, err
	}
	return u, w, nil
}

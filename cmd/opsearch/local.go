package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/opsearch/opsearch/control"
	"github.com/opsearch/opsearch/internal/spread"
	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/search"
	"github.com/opsearch/opsearch/store"
	"github.com/opsearch/opsearch/sync"
)

func newClient(c *connConfig, e env) (*openproject.Client, error) {
	return openproject.New(openproject.Config{
		// OPENPROJECT_API_KEY may hold an OAuth access token too.
		BaseURL: c.baseURL, APIKey: c.apiKey, Bearer: c.bearer, EitherScheme: true, Timeout: c.timeout, Logger: e.logger,
	})
}

// runSync runs one sync for the configured user and prints a summary.
func runSync(ctx context.Context, e env, args []string) error {
	fs := newFlagSet("sync")
	conn := bindConn(fs, e, withAPI|withSync)
	jsonOut := fs.Bool("json", false, "print the summary as JSON")
	if err := noArgs(e, fs, args); err != nil {
		return err
	}
	if err := conn.finish(e, true); err != nil {
		return err
	}
	e.limitSyncHeap()
	client, err := newClient(conn, e)
	if err != nil {
		return err
	}
	uo := conn.userOptions(e)
	uo.Holder = "opsearch sync"
	rep, dir, err := syncUser(ctx, e, conn, client, uo)
	if err != nil && rep.Kinds == nil {
		return err
	}
	if *jsonOut {
		if perr := printJSON(e.stdout, rep.Summary()); perr != nil {
			return perr
		}
	} else {
		printSyncReport(e.stdout, rep, dir)
	}
	if err != nil {
		return err
	}
	return rep.Err()
}

// syncUser syncs the key's user: in the opsearch process that holds the
// user's files, if one does, or here.
func syncUser(ctx context.Context, e env, conn *connConfig, client *openproject.Client, uo sync.UserOptions) (sync.Report, string, error) {
	me, err := client.Me(ctx)
	if err != nil {
		return sync.Report{}, "", fmt.Errorf("resolve user: %w", err)
	}
	dir, err := store.UserDir(conn.dataDir, client.BaseURL(), me.ID)
	if err != nil {
		return sync.Report{}, "", err
	}
	if rc, err := dialHolder(ctx, e, dir); err != nil {
		return sync.Report{}, "", err
	} else if rc != nil {
		defer rc.Close()
		fmt.Fprintf(e.stderr, "syncing in the opsearch process that holds %s (%s)\n", dir, rc.Holder())
		rep, err := rc.Sync(ctx)
		return rep, dir, err
	}
	prog := newProgress(e.stderr)
	uo.WorkerOptions.Progress = func(k kind.Kind, done, total int) { prog.update(string(k), done, total) }
	u, err := sync.OpenUser(ctx, conn.dataDir, meClient{client, me}, uo)
	if err != nil {
		return sync.Report{}, "", err
	}
	defer u.Close()
	if err := u.WaitRebuild(ctx); err != nil {
		return sync.Report{}, "", err
	}
	rep, err := u.Worker.Sync(ctx)
	prog.finish()
	return rep, u.Dir, err
}

// meClient answers /users/me from the answer already fetched.
type meClient struct {
	*openproject.Client
	me openproject.User
}

func (c meClient) Me(context.Context) (openproject.User, error) { return c.me, nil }

// dialHolder connects to the opsearch process serving the user directory
// dir, if one does; nil when none does, so the caller opens the files.
func dialHolder(ctx context.Context, e env, dir string) (*control.Client, error) {
	rc, err := control.Dial(ctx, dir)
	switch {
	case errors.Is(err, control.ErrNoServer):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reach the opsearch process using %s: %w", dir, err)
	}
	e.logger.Debug("answering through the opsearch process holding the files", "dir", dir, "holder", rc.Holder())
	return rc, nil
}

func printSyncReport(w io.Writer, rep sync.Report, dir string) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KIND\tFETCHED\tUPDATED\tDELETED\tREQUESTS\tMEAN\tMEDIAN\tP90\tTIME\tRESULT")
	for _, k := range kind.All() {
		kr := rep.Kinds[k]
		if kr == nil {
			continue
		}
		result := "ok"
		switch {
		case kr.Err != nil:
			result = "failed: " + kr.Err.Error()
		case kr.Unsupported:
			result = "not supported by this server"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\n", k, kr.Fetched, kr.Updated, kr.Deleted, kr.Requests,
			requestLatency(kr.Latency.Mean), requestLatency(kr.Latency.Median), requestLatency(kr.Latency.P90),
			kr.Duration.Round(time.Millisecond), result)
	}
	tw.Flush()
	fmt.Fprintf(w, "synced in %s with %d requests into %s\n", rep.Duration.Round(time.Millisecond), rep.Requests, dir)
	if rep.Merge > 0 {
		fmt.Fprintf(w, "index merged into one segment in %s, after the writes\n", rep.Merge.Round(time.Millisecond))
	}
	if rep.Concurrency > 0 {
		fmt.Fprintf(w, "per-item requests: %d in parallel at the end, %d at most, %d backoffs\n", rep.Concurrency, rep.PeakConcurrency, rep.Backoffs)
	}
}

// requestLatency prints a request's latency in the sync table: "-" for a
// kind that made no request.
func requestLatency(d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	return d.Round(100 * time.Microsecond).String()
}

// localIndex is a user's index as the offline commands see it: through
// the opsearch process that holds the files, or opened here.
type localIndex interface {
	Search(ctx context.Context, q search.Query) (search.Response, error)
	Freshness(ctx context.Context) (search.Freshness, error)
	Close()
}

// localUser is a user's data opened in this process.
type localUser struct {
	u   *sync.User
	eng *search.Engine
}

func (l localUser) Search(ctx context.Context, q search.Query) (search.Response, error) {
	return l.eng.Search(ctx, q)
}
func (l localUser) Freshness(ctx context.Context) (search.Freshness, error) {
	return l.eng.Freshness(ctx)
}
func (l localUser) Close() { _ = l.u.Close() }

// remoteUser is a user's data held by another opsearch process.
type remoteUser struct{ *control.Client }

// openLocal opens the configured user's index without the network: in
// the opsearch process that holds it if one does (opsearch serve), here
// otherwise. It returns the index, its user directory and identity.
func openLocal(ctx context.Context, e env, conn *connConfig, userID int64, holder string) (localIndex, string, store.Identity, error) {
	lu, err := sync.FindLocalUser(conn.dataDir, conn.baseURL, userID)
	if err != nil {
		return nil, "", store.Identity{}, err
	}
	rc, err := dialHolder(ctx, e, lu.Dir)
	if err != nil {
		return nil, "", store.Identity{}, err
	}
	if rc != nil {
		st := rc.Status
		return remoteUser{rc}, lu.Dir, store.Identity{BaseURL: st.BaseURL, Instance: lu.Instance, UserID: st.UserID, Login: st.Login}, nil
	}
	uo := conn.userOptions(e)
	uo.Holder = holder
	u, err := sync.OpenLocal(ctx, conn.dataDir, conn.baseURL, userID, uo)
	if err != nil {
		return nil, "", store.Identity{}, err
	}
	eng := search.New(u.Store, u.Index, search.Options{BaseURL: u.Identity.BaseURL, Rebuilding: u.Rebuilding, Crew: spread.NewCrew()})
	return localUser{u, eng}, u.Dir, u.Identity, nil
}

// openFiles opens the configured user's data in this process, for the
// commands that need the files themselves (eval, export): they cannot
// run while another process holds them.
func openFiles(ctx context.Context, e env, conn *connConfig, userID int64, holder string) (*sync.User, error) {
	uo := conn.userOptions(e)
	uo.Holder = holder
	u, err := sync.OpenLocal(ctx, conn.dataDir, conn.baseURL, userID, uo)
	if errors.Is(err, sync.ErrLocked) {
		return nil, fmt.Errorf("%w: %s needs the files themselves; stop that process first (search, status and sync work beside it)", err, holder)
	}
	return u, err
}

// runSearch searches the local index; it makes no API calls.
func runSearch(ctx context.Context, e env, args []string) error {
	fs := newFlagSet("search")
	conn := bindConn(fs, e, 0)
	kindName := fs.String("kind", "", "restrict to one kind: work_package, wiki_page, meeting or project")
	project := fs.String("project", "", "restrict to a project, by id or identifier (an unknown one is an error)")
	limit := fs.Int("limit", 10, "number of results (1-100)")
	exact := fs.Bool("exact", false, "match the query as written: no typos, no prefixes")
	jsonOut := fs.Bool("json", false, "print results as JSON")
	userID := fs.Int64("user", 0, "user id whose index to search, when the data dir holds several")
	pos, err := parseFlags(e, fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return errors.New(`expected one query argument (quote multi-word queries), e.g. opsearch search "tls certificate"`)
	}
	if err := conn.finish(e, false); err != nil {
		return err
	}
	q := search.Query{Text: pos[0], Exact: *exact, PageSize: *limit}
	if *limit < 1 || *limit > search.MaxPageSize {
		return fmt.Errorf("--limit must be between 1 and %d, not %d", search.MaxPageSize, *limit)
	}
	if strings.TrimSpace(q.Text) == "" {
		return errors.New("the query is empty")
	}
	if *kindName != "" {
		// The plural ("work_packages"), as status printed kinds before,
		// is accepted too; search.Query.Validate refuses the rest.
		k, ok := kind.Parse(*kindName)
		if !ok {
			k = kind.Kind(*kindName)
		}
		q.Kinds = []kind.Kind{k}
	}
	q.Project = *project
	li, _, _, err := openLocal(ctx, e, conn, *userID, "opsearch search")
	if err != nil {
		return err
	}
	defer li.Close()
	resp, err := li.Search(ctx, q)
	if err != nil {
		return err
	}
	if *jsonOut {
		return printJSON(e.stdout, resp)
	}
	printResults(e.stdout, resp)
	return nil
}

func printResults(w io.Writer, resp search.Response) {
	if len(resp.Results) == 0 {
		fmt.Fprintln(w, "no results")
	}
	for i, r := range resp.Results {
		project := ""
		if r.Project != nil && r.Project.Name != "" {
			project = " · " + r.Project.Name
		}
		status := ""
		if r.Status != "" {
			status = " · " + r.Status
		}
		why := fmt.Sprintf("score %.2f", r.Score)
		if len(r.MatchedWords) > 0 {
			why += ", matched " + strings.Join(r.MatchedWords, " ")
		}
		if len(r.MatchedFields) > 0 {
			why += " in " + strings.Join(r.MatchedFields, ", ")
		}
		if r.Match == search.MatchPartial {
			why += ", partial"
		}
		fmt.Fprintf(w, "%2d. [%s #%d] %s%s%s  (%s)\n", i+1, r.Kind, r.ID, r.Title, project, status, why)
		if r.Snippet != "" {
			fmt.Fprintf(w, "    %s\n", oneLine(r.Snippet))
		}
		if r.URL != "" {
			fmt.Fprintf(w, "    %s\n", r.URL)
		}
	}
	more := ""
	if resp.TotalIsLowerBound {
		more = " or more"
	}
	fmt.Fprintf(w, "%d of %d%s result(s) in %.1f ms\n", len(resp.Results), resp.Total, more, resp.TookMS)
	if resp.Match == search.MatchPartial {
		fmt.Fprintln(w, "only partial matches: each result holds little of the query, so nothing here may be what you are looking for")
	}
	if resp.Index.Note != "" {
		fmt.Fprintf(w, "note: %s\n", resp.Index.Note)
	}
}

// runStatus prints the local index's state per kind.
func runStatus(ctx context.Context, e env, args []string) error {
	fs := newFlagSet("status")
	conn := bindConn(fs, e, 0)
	jsonOut := fs.Bool("json", false, "print as JSON")
	userID := fs.Int64("user", 0, "user id whose data to show, when the data dir holds several")
	if err := noArgs(e, fs, args); err != nil {
		return err
	}
	if err := conn.finish(e, false); err != nil {
		return err
	}
	li, dir, id, err := openLocal(ctx, e, conn, *userID, "opsearch status")
	if err != nil {
		return err
	}
	defer li.Close()
	f, err := li.Freshness(ctx)
	if err != nil {
		return err
	}
	if *jsonOut {
		return printJSON(e.stdout, f)
	}
	fmt.Fprintf(e.stdout, "user %d (%s) at %s\ndata: %s\n", id.UserID, id.Login, id.BaseURL, dir)
	if rc, ok := li.(remoteUser); ok {
		fmt.Fprintf(e.stdout, "served by: %s, since %s\n", rc.Holder(), rc.Status.Since.Local().Format(time.DateTime))
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KIND\tSTORE\tINDEX\tLAST SYNC\tCOMPLETE\tLAST ERROR")
	for _, k := range kind.All() {
		kf := f.Kinds[k]
		idx, last, lastErr := "-", "never", "-"
		if kf.Index != nil {
			idx = strconv.Itoa(*kf.Index)
		}
		if kf.LastSync != nil {
			last = kf.LastSync.Local().Format(time.DateTime)
		}
		if kf.LastError != nil {
			lastErr = *kf.LastError
		}
		complete := strconv.FormatBool(kf.Complete)
		if kf.Unsupported {
			complete = "n/a: " + kf.Note
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\n", k, kf.Store, idx, last, complete, lastErr)
	}
	tw.Flush()
	if f.Note != "" {
		fmt.Fprintf(e.stdout, "note: %s\n", f.Note)
	}
	return nil
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// newFlagSet is a command's flag set. It prints nothing itself:
// parseFlags prints the usage to stdout for -h, and run turns a parse
// error into one line on stderr.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parseFlags parses flags that may stand before or after positional
// arguments ("opsearch search QUERY --kind meeting"), which the flag
// package alone stops at, and returns the positional arguments. -h
// prints the command's usage to stdout and returns flag.ErrHelp (exit
// 0); a bad flag's error says where the usage is.
func parseFlags(e env, fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
			commandUsage(e.stdout, fs)
			return nil, err
		} else if err != nil {
			return nil, fmt.Errorf("%w (run \"opsearch %s -h\" for its usage)", err, fs.Name())
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if rest[0] == "--" {
			return append(pos, rest[1:]...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// noArgs parses flags for commands without positional arguments.
func noArgs(e env, fs *flag.FlagSet, args []string) error {
	pos, err := parseFlags(e, fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("unexpected argument %q (run \"opsearch %s -h\" for its usage)", pos[0], fs.Name())
	}
	return nil
}

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/robfig/cron/v3"

	"github.com/opsearch/opsearch/mcp"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/sync"
)

// version is reported to MCP clients; release builds set it with
// -ldflags "-X main.version=...".
var version = "0.1.0-dev"

// shutdownTimeout bounds the wait for the sync to reach a safe point and
// the files to close after stdin closed or a signal arrived. A sync
// checks its context between requests and commits, so it normally stops
// within one request timeout; past this the process exits anyway (the
// store and index recover from an interrupted commit).
const shutdownTimeout = 20 * time.Second

// runServe speaks MCP on stdin/stdout until stdin closes or ctx is
// cancelled (SIGINT, SIGTERM). stdout carries only the protocol: every log
// line goes to stderr.
//
// The MCP server starts at once, so tools/list and the live tools answer
// before the index is open; the search tools say the index is not ready
// until a background goroutine has opened it (the existing local index
// first, without the network) and started the sync scheduler.
func runServe(ctx context.Context, e env, args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	conn := bindConn(fs, e)
	spec := fs.String("sync-schedule", envOr(e, "OPSEARCH_SYNC_SCHEDULE", sync.DefaultSpec),
		`sync schedule: a 5-field cron spec or a descriptor such as "@every 2m" (env OPSEARCH_SYNC_SCHEDULE)`)
	hf := bindHTTP(fs, e)
	logQueries := fs.Bool("log-queries", envBool(e.getenv("OPSEARCH_LOG_QUERIES")),
		"record search tool calls and their results in each user's data directory (queries.jsonl), to build labelled sets (env OPSEARCH_LOG_QUERIES)")
	if err := noArgs(fs, args); err != nil {
		return err
	}
	// Over HTTP every request brings its own key; OPENPROJECT_API_KEY is
	// then only the optional fallback.
	if err := conn.finish(e, hf.addr == ""); err != nil {
		return err
	}
	*spec = strings.TrimSpace(*spec)
	if _, err := cron.ParseStandard(*spec); err != nil {
		return fmt.Errorf("invalid sync schedule %q (--sync-schedule or OPSEARCH_SYNC_SCHEDULE): %v", *spec, err)
	}
	if hf.addr != "" {
		return runServeHTTP(ctx, e, httpServe{conn: conn, flags: hf, spec: *spec, logQueries: *logQueries})
	}
	client, err := newClient(conn, e)
	if err != nil {
		return err
	}
	log := e.logger.With("subsystem", "serve")

	idx := mcp.NewUserIndex(mcp.UserIndexOptions{Schedule: *spec, LogQueries: *logQueries, Logger: e.logger})
	srv := mcp.NewServer(client, idx, mcp.Options{ReadOnly: conn.readOnly, Logger: e.logger, Version: version})
	log.Info("opsearch serving MCP on stdio", "version", version, "base_url", conn.baseURL, "data_dir", conn.dataDir,
		"read_only", conn.readOnly, "sync_schedule", *spec)

	bgCtx, stopBg := context.WithCancel(ctx)
	bgDone := make(chan struct{})
	o := &opener{e: e, log: log, conn: conn, client: client, idx: idx, spec: *spec}
	go func() {
		defer close(bgDone)
		o.run(bgCtx)
	}()

	runErr := srv.Run(ctx, stdioTransport(e))
	switch {
	case ctx.Err() != nil:
		log.Info("shutting down: signal received")
		runErr = nil
	case runErr == nil || errors.Is(runErr, io.EOF):
		log.Info("shutting down: stdin closed")
		runErr = nil
	default:
		log.Error("MCP session failed", "error", runErr)
	}

	stopBg()
	select {
	case <-bgDone:
	case <-time.After(shutdownTimeout):
		return fmt.Errorf("shutdown: the sync did not stop within %s", shutdownTimeout)
	}
	if err := idx.Close(); err != nil {
		return fmt.Errorf("close the local index: %w", err)
	}
	log.Info("stopped")
	return runErr
}

// stdioTransport is the MCP transport over the command's stdin and
// stdout. stdin is closed with the session, which unblocks its reader on
// shutdown by signal.
func stdioTransport(e env) sdk.Transport {
	r, ok := e.stdin.(io.ReadCloser)
	if !ok {
		r = io.NopCloser(e.stdin)
	}
	return &sdk.IOTransport{Reader: r, Writer: nopWriteCloser{e.stdout}}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

func envOr(e env, key, def string) string {
	if v := strings.TrimSpace(e.getenv(key)); v != "" {
		return v
	}
	return def
}

// opener opens the user's data in the background and runs the sync
// scheduler until its context ends.
type opener struct {
	e      env
	log    *slog.Logger
	conn   *connConfig
	client *openproject.Client
	idx    *mcp.UserIndex
	spec   string
}

// Retry pauses of the background open: a network or server failure is
// retried with a growing pause, a store held by another process every
// lockedRetry.
const (
	retryMin    = 2 * time.Second
	retryMax    = time.Minute
	lockedRetry = 30 * time.Second
)

func (o *opener) userOptions() sync.UserOptions {
	return o.conn.userOptions(o.e)
}

// run opens the user, waits for a rebuild of the index if one runs, and
// syncs on schedule until ctx ends; the scheduler is stopped (the running
// sync cancelled at a safe point) before it returns. The user itself is
// closed by the caller through the UserIndex.
func (o *opener) run(ctx context.Context) {
	u := o.open(ctx)
	if u == nil {
		return
	}
	// A sync would be skipped while the index is rebuilt from the store;
	// start the schedule after, so the first sync runs at once.
	if err := u.WaitRebuild(ctx); err != nil {
		if ctx.Err() != nil {
			return
		}
		o.log.Error("index rebuild failed; syncing anyway", "error", err)
	}
	sch, err := sync.NewScheduler(u.Worker, sync.SchedulerOptions{Spec: o.spec, Logger: o.e.logger, OnSync: o.idx.RecordSync})
	if err != nil { // validated in runServe
		o.log.Error("sync scheduler", "error", err)
		return
	}
	sch.Start(ctx) // runs one sync right away
	o.log.Info("sync scheduler started", "user_id", u.Identity.UserID, "dir", u.Dir)
	<-ctx.Done()
	sch.Stop()
	o.log.Info("sync stopped")
}

// open returns the user's data with a Worker, or nil when ctx ended or
// opening cannot succeed (a rejected API key). The existing local index
// is searchable as soon as it is open, before /users/me confirms whose
// key this is.
func (o *opener) open(ctx context.Context) *sync.User {
	if u := o.openLocal(ctx); u != nil || ctx.Err() != nil {
		return u
	}
	for attempt := 0; ; attempt++ {
		u, err := sync.OpenUser(ctx, o.conn.dataDir, o.client, o.userOptions())
		if err == nil {
			if err := u.Store.RememberKey(o.conn.apiKey); err != nil {
				o.log.Warn("cannot remember the key for offline use", "error", err)
			}
			o.idx.SetUser(u)
			o.log.Info("index open", "user_id", u.Identity.UserID, "login", u.Identity.Login, "dir", u.Dir)
			return u
		}
		if ctx.Err() != nil {
			return nil
		}
		o.idx.SetOpenError(err)
		if !o.retryable(err) {
			o.log.Error("cannot open the index; search tools will report this", "error", err)
			return nil
		}
		d := o.retryPause(err, attempt)
		o.log.Warn("cannot open the index yet; retrying", "error", err, "retry_in", d)
		if !sleepCtx(ctx, d) {
			return nil
		}
	}
}

// openLocal opens the one local user of this instance without the
// network, publishes it, then checks with /users/me that the API key
// belongs to that user. It returns the user with a Worker attached, or nil
// when there is no single local user or it belongs to someone else (the
// caller then opens the key's user), or when ctx ended.
func (o *opener) openLocal(ctx context.Context) *sync.User {
	var u *sync.User
	var keyUser int64
	for attempt := 0; u == nil; attempt++ {
		// The user whose store remembers this key, if any; otherwise
		// the one local user, which waits for OpenProject.
		var err error
		keyUser, err = sync.LocalUserForKey(o.conn.dataDir, o.conn.baseURL, o.conn.apiKey, o.userOptions())
		if err == nil {
			u, err = sync.OpenLocal(ctx, o.conn.dataDir, o.conn.baseURL, keyUser, o.userOptions())
		}
		switch {
		case err == nil:
		case errors.Is(err, sync.ErrNoLocalUser) || ctx.Err() != nil:
			return nil
		case errors.Is(err, sync.ErrLocked):
			o.idx.SetOpenError(err)
			o.log.Warn("the local index is in use by another opsearch process; retrying", "error", err, "retry_in", lockedRetry)
			if !sleepCtx(ctx, lockedRetry) {
				return nil
			}
		default:
			// A damaged or foreign directory: OpenUser decides with the
			// identity from the API, and reports its own error.
			o.log.Warn("cannot open the local index without the network", "error", err)
			return nil
		}
	}
	// The index answers before OpenProject confirms the key only if
	// OpenProject confirmed this very key for this user before (the
	// store keeps a slow salted verifier, never the key): another key on
	// the same data directory waits for /users/me.
	verified := keyUser != 0
	publish := func() {
		o.idx.SetUser(u)
		o.log.Info("local index open", "user_id", u.Identity.UserID, "login", u.Identity.Login, "dir", u.Dir, "key_verified_offline", verified)
	}
	if verified {
		publish()
	} else {
		o.idx.SetOpenError(sync.ErrKeyNotVerified)
	}
	drop := func() {
		if verified {
			o.closeUser()
		} else if err := u.Close(); err != nil {
			o.log.Error("close local index", "error", err)
		}
	}
	for attempt := 0; ; attempt++ {
		me, err := o.client.Me(ctx)
		switch {
		case err == nil && me.ID == u.Identity.UserID:
			if err := u.Store.RememberKey(o.conn.apiKey); err != nil {
				o.log.Warn("cannot remember the key for offline use", "error", err)
			}
			if !verified {
				publish()
			}
			o.idx.SetWorker(sync.New(o.client, u.Store, u.Index, o.userOptions().WorkerOptions))
			return u
		case err == nil:
			o.log.Info("the API key belongs to another user than the local index; opening theirs", "local_user", u.Identity.UserID, "key_user", me.ID)
			drop()
			return nil
		case ctx.Err() != nil:
			if !verified {
				_ = u.Close()
			}
			return nil
		case !o.retryable(err):
			// A rejected key must not keep serving the data it was
			// trusted with, and no remembered key is trusted offline
			// until OpenProject confirms one again.
			if err := u.Store.ForgetKeys(); err != nil {
				o.log.Error("forget the remembered keys", "error", err)
			}
			drop()
			o.idx.SetOpenError(err)
			o.log.Error("OpenProject rejected the API key; search tools will report this", "error", err)
			return nil
		}
		d := o.retryPause(err, attempt)
		if verified {
			o.log.Warn("cannot reach OpenProject; searching the local index meanwhile", "error", err, "retry_in", d)
		} else {
			o.log.Warn("cannot reach OpenProject; the local index waits until it confirms the key", "error", err, "retry_in", d)
		}
		if !sleepCtx(ctx, d) {
			if !verified {
				_ = u.Close()
			}
			return nil
		}
	}
}

func (o *opener) closeUser() {
	if old := o.idx.SetUser(nil); old != nil {
		if err := old.Close(); err != nil {
			o.log.Error("close local index", "error", err)
		}
	}
}

// retryable tells failures that may pass (network, server, rate limit,
// another process holding the files) from those that will not while this
// process runs with the same configuration.
func (o *opener) retryable(err error) bool {
	switch {
	case errors.Is(err, openproject.ErrUnauthenticated), errors.Is(err, openproject.ErrPermission),
		errors.Is(err, sync.ErrIdentityMismatch):
		return false
	case errors.Is(err, sync.ErrLocked), errors.Is(err, openproject.ErrNetwork), errors.Is(err, openproject.ErrServer),
		errors.Is(err, openproject.ErrRateLimited), errors.Is(err, openproject.ErrMalformed), errors.Is(err, context.DeadlineExceeded):
		return true
	}
	return false
}

func (o *opener) retryPause(err error, attempt int) time.Duration {
	if errors.Is(err, sync.ErrLocked) {
		return lockedRetry
	}
	return min(retryMin<<min(attempt, 10), retryMax)
}

// sleepCtx sleeps for d and reports whether ctx is still live.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

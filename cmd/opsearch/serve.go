package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/opsearch/opsearch/control"
	"github.com/opsearch/opsearch/internal/spread"
	"github.com/opsearch/opsearch/mcp"
	"github.com/opsearch/opsearch/sync"
)

// defaultVersion is the version of a build that says nothing else.
const defaultVersion = "0.1.0-dev"

// version is reported to MCP clients and by "opsearch version"; release
// builds set it with -ldflags "-X main.version=..." (a var for that
// reason alone: nothing assigns it at run time).
var version = defaultVersion

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
	fs := newFlagSet("serve")
	conn := bindConn(fs, e, withAPI|withSync|withTools)
	spec := fs.String("sync-schedule", envOr(e, "OPSEARCH_SYNC_SCHEDULE", sync.DefaultSpec),
		`sync schedule: a 5-field cron spec or a descriptor such as "@every 2m" (env OPSEARCH_SYNC_SCHEDULE)`)
	hf := bindHTTP(fs, e)
	logQueries := fs.Bool("log-queries", envBool(e.getenv("OPSEARCH_LOG_QUERIES")),
		"record search tool calls and their results in each user's data directory (queries.jsonl), to build labelled sets (env OPSEARCH_LOG_QUERIES)")
	af := bindAudit(fs, e)
	if err := noArgs(e, fs, args); err != nil {
		return err
	}
	// Over HTTP every request brings its own key; OPENPROJECT_API_KEY is
	// then only the optional fallback.
	if err := conn.finish(e, hf.addr == ""); err != nil {
		return err
	}
	*spec = strings.TrimSpace(*spec)
	if _, err := sync.ParseSpec(*spec); err != nil {
		return fmt.Errorf("invalid sync schedule %q (--sync-schedule or OPSEARCH_SYNC_SCHEDULE): %v", *spec, err)
	}
	auditOpts, err := af.options(hf.addr != "")
	if err != nil {
		return err
	}
	if hf.addr != "" {
		return runServeHTTP(ctx, e, httpServe{conn: conn, flags: hf, spec: *spec, logQueries: *logQueries, audit: auditOpts})
	}
	e.limitSyncHeap()
	client, err := newClient(conn, e)
	if err != nil {
		return err
	}
	log := e.logger.With("subsystem", "serve")

	up := &sync.UpstreamTracker{} // what the runner and the tools learn about reaching OpenProject
	idx := mcp.NewUserIndex(mcp.UserIndexOptions{Schedule: *spec, LogQueries: *logQueries, Logger: e.logger, Upstream: up, Audit: auditOpts, Crew: spread.NewCrew()})
	srv := mcp.NewServer(client, idx, mcp.Options{ReadOnly: conn.readOnly, ConfirmWrites: conn.confirmWrites, Extract: conn.extractOptions(), Logger: e.logger, Version: readBuildInfo().version, Upstream: up,
		LiveTimeout: conn.liveTimeout()})
	log.Info("opsearch serving MCP on stdio", "version", version, "base_url", conn.baseURL, "data_dir", conn.dataDir,
		"read_only", conn.readOnly, "sync_schedule", *spec, "audit", auditOpts != nil)

	uo := conn.userOptions(e)
	uo.Holder = "opsearch serve (stdio)"
	runner, err := sync.NewRunner(sync.RunnerOptions{
		DataDir: conn.dataDir, Client: client, Key: conn.apiKey, UserOptions: uo, Schedule: *spec,
		Publish: idx, Upstream: up, Logger: e.logger,
		OnOpen: control.Attach(control.Options{Command: uo.Holder, Logger: e.logger}),
	})
	if err != nil {
		return err
	}
	bgCtx, stopBg := context.WithCancel(ctx)
	bgDone := make(chan struct{})
	go func() {
		defer close(bgDone)
		if err := runner.Run(bgCtx); err != nil {
			log.Error("background sync", "error", err)
		}
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
	// The runner closed the user it opened; this closes what is left.
	if err := idx.Close(); err != nil {
		return fmt.Errorf("close the local index: %w", err)
	}
	log.Info("stopped")
	return runErr
}

// stdioTransport is the MCP transport over the command's stdin and
// stdout (mcp.StdioTransport). stdin is closed with the session, which
// unblocks its reader on shutdown by signal.
func stdioTransport(e env) sdk.Transport {
	r, ok := e.stdin.(io.ReadCloser)
	if !ok {
		r = io.NopCloser(e.stdin)
	}
	return mcp.StdioTransport(r, nopWriteCloser{e.stdout})
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

func envOr(e env, key, def string) string {
	if v := strings.TrimSpace(e.getenv(key)); v != "" {
		return v
	}
	return def
}

// Command opsearch indexes OpenProject for fast, typo-tolerant search and
// serves it to AI agents over MCP.
//
// This package owns flags, environment variables, subcommands, signals and
// the wiring between packages, and nothing else: what a sync, a search or
// a server does is decided in the packages it wires (sync, search, mcp,
// control), so the same policy holds for every command and for tests.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"syscall"

	"github.com/opsearch/opsearch/internal/heapfloor"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/sync"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if os.Getenv("GOGC") == "" {
		// An operator's GOGC is theirs; otherwise a small heap is not
		// collected over and over (heapfloor).
		defer heapfloor.Keep(heapfloor.DefaultHeadroom).Stop()
	}
	os.Exit(profiled(os.Getenv("OPSEARCH_CPU_PROFILE"), func() int {
		return runEnv(ctx, os.Args[1:], os.Stdout, os.Stderr, debug.SetMemoryLimit)
	}))
}

// profiled runs f, writing a CPU profile of the whole process to path
// when set (OPSEARCH_CPU_PROFILE, for measuring a command as it runs:
// "go tool pprof opsearch PATH").
func profiled(path string, f func() int) int {
	if path == "" {
		return f()
	}
	out, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "opsearch: OPSEARCH_CPU_PROFILE: %v\n", err)
		return 1
	}
	defer out.Close()
	if err := pprof.StartCPUProfile(out); err != nil {
		fmt.Fprintf(os.Stderr, "opsearch: OPSEARCH_CPU_PROFILE: %v\n", err)
		return 1
	}
	defer pprof.StopCPUProfile()
	return f()
}

// env gives a command its process environment; tests pass their own.
type env struct {
	// stdin is read only by serve, as the MCP stream.
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	logger         *slog.Logger
	// limitHeap sets the process's soft memory limit; nil (in tests,
	// which run commands inside the test process) sets none.
	limitHeap func(limit int64) int64
}

// limitSyncHeap applies sync.HeapLimit for a command that runs one
// user's syncs, unless GOMEMLIMIT already says what the operator wants.
func (e env) limitSyncHeap() {
	if e.limitHeap != nil && strings.TrimSpace(e.getenv("GOMEMLIMIT")) == "" {
		e.limitHeap(sync.HeapLimit)
	}
}

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, e env, args []string) error
	// operands are the positional arguments, as the usage line names
	// them ("" for none).
	operands string
}

func commands() []command {
	return []command{
		{"serve", "speak MCP on stdin/stdout, syncing in the background (the default command); --http ADDR serves many users over HTTP", runServe, ""},
		{"sync", "sync the configured user's OpenProject data into the local index once", runSync, ""},
		{"search", "search the local index (no network)", runSearch, "QUERY"},
		{"status", "show what the local index holds, how fresh and complete it is", runStatus, ""},
		{"fakeop", "run a fake OpenProject server with generated data (for demos and tests)", runFakeOp, ""},
		{"eval", "measure search quality on labelled queries, ranker variants side by side (no network)", runEval, ""},
		{"export", "write the local store as JSONL per kind, for experiments outside opsearch", runExport, ""},
		{"bench", "benchmark opsearch against the reference's live search on a fake server", runBench, ""},
		{"demo", "run a fake OpenProject, sync it and serve MCP over HTTP, printing how to connect", runDemo, ""},
		{"healthcheck", "exit 0 if the HTTP server's /health answers 200 (for container health checks)", runHealthcheck, ""},
		{"audit", "verify the audit logs of tool calls (names the first altered line), or show a log's last lines", runAudit, "verify|tail"},
		{"doctor", "check the setup end to end (configuration, OpenProject, the key, the index, the data directory) and say what to do about each problem", runDoctor, ""},
		{"version", "print the version, commit, build date and Go version", runVersion, ""},
	}
}

// commandUsage prints the usage of the command fs parses for: its line
// with operands, what it does, and its flags.
func commandUsage(w io.Writer, fs *flag.FlagSet) {
	for _, c := range commands() {
		if c.name != fs.Name() {
			continue
		}
		line := "usage: opsearch " + c.name + " [flags]"
		if c.operands != "" {
			line += " " + c.operands
		}
		fmt.Fprintf(w, "%s\n\n%s\n", line, c.summary)
	}
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n > 0 {
		fmt.Fprintln(w, "\nflags:")
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
}

// run dispatches to a subcommand and turns its error into one line on
// stderr and an exit code. No arguments at all means serve: MCP clients
// are often configured with the bare command.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runEnv(ctx, args, stdout, stderr, nil)
}

// runEnv is run for the process itself, which may set its memory limit
// (limitHeap: runtime/debug.SetMemoryLimit).
func runEnv(ctx context.Context, args []string, stdout, stderr io.Writer, limitHeap func(int64) int64) int {
	e := env{
		stdin: os.Stdin, stdout: stdout, stderr: stderr, getenv: os.Getenv,
		logger:    newLogger(stderr, os.Getenv("OPSEARCH_LOG_LEVEL"), os.Getenv("OPSEARCH_LOG_FORMAT")),
		limitHeap: limitHeap,
	}
	if len(args) == 0 {
		args = []string{"serve"}
	}
	switch args[0] {
	case "-h", "--help", "help":
		if len(args) > 1 && args[0] == "help" {
			// help COMMAND is COMMAND -h.
			args = []string{args[1], "-h"}
			break
		}
		usage(stdout)
		return 0
	case "-v", "--version":
		args = []string{"version"}
	}
	for _, c := range commands() {
		if c.name == args[0] {
			err := c.run(ctx, e, args[1:])
			switch {
			case err == nil, errors.Is(err, flag.ErrHelp):
				return 0
			case errors.Is(err, context.Canceled) && ctx.Err() != nil:
				return 130
			default:
				fmt.Fprintf(stderr, "opsearch %s: %v\n", c.name, err)
				if hint := openproject.Hint(err); hint != "" {
					fmt.Fprintf(stderr, "opsearch %s: %s\n", c.name, hint)
				}
				return 1
			}
		}
	}
	fmt.Fprintf(stderr, "opsearch: unknown command %q (run \"opsearch help\")\n", args[0])
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: opsearch [command] [flags]   (no command: serve)\n\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-11s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nserve --http ADDR (or env PORT) serves MCP over HTTP for many users on ADDR (a bare port binds 127.0.0.1):")
	fmt.Fprintln(w, "  /mcp Streamable HTTP, /sse legacy SSE, POST /api/tools/{name}, GET /health; each request brings its key")
	fmt.Fprintln(w, "  (Authorization: Bearer, X-OpenProject-Api-Key or ?apiKey=).")
	fmt.Fprintln(w, "\nRun \"opsearch help <command>\" (or \"opsearch <command> -h\") for a command's usage and flags.")
}

// newLogger is the process's logger on w (stderr: stdout is the MCP
// stream): level debug, info (default), warn or error; format text
// (default) or json, one object per line for log collectors.
func newLogger(w io.Writer, level, format string) *slog.Logger {
	opts := &slog.HandlerOptions{Level: logLevel(level)}
	if strings.EqualFold(strings.TrimSpace(format), "json") {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

func logLevel(s string) slog.Level {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return slog.LevelInfo
	}
	return l
}

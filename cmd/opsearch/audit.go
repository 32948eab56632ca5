package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/opsearch/opsearch/audit"
	"github.com/opsearch/opsearch/store"
)

// auditFlags configure the audit log of serve: off on stdio, on with
// --http, unless --audit says otherwise.
type auditFlags struct {
	on       optBool
	maxBytes int64
	keep     int
}

// bindAudit registers serve's audit flags, with defaults from the
// environment.
func bindAudit(fs *flag.FlagSet, e env) *auditFlags {
	a := &auditFlags{}
	if v := strings.TrimSpace(e.getenv("OPSEARCH_AUDIT")); v != "" {
		_ = a.on.Set(v) // a bad value is named by finish
	}
	fs.Var(&a.on, "audit", "record every tool call in the user's data directory (<user dir>/audit/: JSON lines chained by SHA-256, never argument text; see opsearch audit): on by default with --http, off on stdio; --audit=false turns it off (env OPSEARCH_AUDIT)")
	fs.Int64Var(&a.maxBytes, "audit-max-bytes", envInt64(e, "OPSEARCH_AUDIT_MAX_BYTES", audit.DefaultMaxBytes), "start a new audit file past this many bytes (env OPSEARCH_AUDIT_MAX_BYTES)")
	fs.IntVar(&a.keep, "audit-keep", audit.DefaultKeep, "old audit files kept per user besides the current one; older ones are deleted, which the log records (0: none)")
	return a
}

// options are the audit.Options the server keeps the log with, nil when
// it keeps none. http says whether this is the team server.
func (a *auditFlags) options(http bool) (*audit.Options, error) {
	if a.on.bad != "" {
		return nil, fmt.Errorf("--audit (or OPSEARCH_AUDIT) must be true or false, not %q", a.on.bad)
	}
	if on := a.on.value(http); !on {
		return nil, nil
	}
	if a.maxBytes <= 0 {
		return nil, fmt.Errorf("--audit-max-bytes (or OPSEARCH_AUDIT_MAX_BYTES) must be a number of bytes above 0, not %d", a.maxBytes)
	}
	if a.keep < 0 {
		return nil, fmt.Errorf("--audit-keep must be 0 or more, not %d", a.keep)
	}
	keep := a.keep
	if keep == 0 {
		keep = -1 // audit.Options: none
	}
	return &audit.Options{MaxBytes: a.maxBytes, Keep: keep}, nil
}

// optBool is a boolean flag that knows whether it was given, so its
// default can depend on other flags.
type optBool struct {
	set, v bool
	// bad is a value that is not a boolean, from the environment (a
	// flag's is refused by the flag package).
	bad string
}

var _ flag.Value = (*optBool)(nil)

func (b *optBool) Set(s string) error {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "1", "yes", "on":
		b.set, b.v, b.bad = true, true, ""
	case "false", "0", "no", "off":
		b.set, b.v, b.bad = true, false, ""
	default:
		b.bad = s
		return errors.New("must be true or false")
	}
	return nil
}

func (b *optBool) String() string {
	if b == nil || !b.set {
		return ""
	}
	return strconv.FormatBool(b.v)
}

// IsBoolFlag lets --audit stand alone for --audit=true.
func (b *optBool) IsBoolFlag() bool { return true }

// value is the flag's value, or def when it was not given.
func (b *optBool) value(def bool) bool {
	if !b.set {
		return def
	}
	return b.v
}

// envInt64 reads a whole number from the environment; a malformed value
// is kept as -1 so the check after parsing names it.
func envInt64(e env, key string, def int64) int64 {
	v := strings.TrimSpace(e.getenv(key))
	if v == "" {
		return def
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// runAudit reads the audit logs the servers keep: verify checks their
// chains, tail shows their last lines.
func runAudit(_ context.Context, e env, args []string) error {
	fs := newFlagSet("audit")
	conn := bindConn(fs, e, 0)
	userID := fs.Int64("user", 0, "the user whose log to read, when the data dir holds several (verify reads them all)")
	dir := fs.String("dir", "", "read the audit log in this directory instead of a user's in the data dir")
	n := fs.Int("n", 20, "tail: how many lines")
	jsonOut := fs.Bool("json", false, "verify: the reports as JSON; tail: the lines as written")
	pos, err := parseFlags(e, fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || pos[0] != "verify" && pos[0] != "tail" {
		return errors.New(`say what to do: "opsearch audit verify" or "opsearch audit tail" (run "opsearch audit -h" for its usage)`)
	}
	if err := conn.finish(e, false); err != nil {
		return err
	}
	logs, err := auditLogs(conn, *userID, *dir)
	if err != nil {
		return err
	}
	if pos[0] == "verify" {
		return auditVerify(e.stdout, logs, *jsonOut)
	}
	if len(logs) > 1 {
		names := make([]string, len(logs))
		for i, l := range logs {
			names[i] = l.String()
		}
		return fmt.Errorf("%d users have audit logs under %s (%s): choose one with --user ID", len(logs), conn.dataDir, strings.Join(names, ", "))
	}
	return auditTail(e.stdout, logs[0], *n, *jsonOut)
}

// auditLogs are the logs the flags name: --dir, or those under the data
// dir of the --base-url instance and the --user user, if given.
func auditLogs(conn *connConfig, userID int64, dir string) ([]audit.Found, error) {
	if dir != "" {
		return []audit.Found{{Dir: dir}}, nil
	}
	all, err := audit.Find(conn.dataDir)
	if err != nil {
		return nil, err
	}
	inst := ""
	if conn.baseURL != "" {
		if inst, err = store.InstanceName(conn.baseURL); err != nil {
			return nil, err
		}
	}
	var out []audit.Found
	for _, f := range all {
		if (inst == "" || f.Instance == inst) && (userID == 0 || f.UserID == userID) {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		what := ""
		if userID != 0 {
			what = fmt.Sprintf(" of user %d", userID)
		}
		return nil, fmt.Errorf("no audit log%s under %s: the server records calls with --audit (the default with --http)", what, conn.dataDir)
	}
	return out, nil
}

// auditReport is one log's verification, as --json prints it.
type auditReport struct {
	User string `json:"user,omitempty"`
	audit.Report
}

// auditVerify verifies every log, printing a line each, and fails when
// one is broken, naming the first line that breaks it.
func auditVerify(w io.Writer, logs []audit.Found, jsonOut bool) error {
	var (
		reports []auditReport
		broken  []string
	)
	for _, l := range logs {
		name := l.String()
		if l.Instance == "" {
			name = l.Dir
		}
		rep, err := audit.Verify(l.Dir)
		if err != nil {
			return err
		}
		reports = append(reports, auditReport{User: name, Report: rep})
		if p := rep.Problem; p != nil {
			broken = append(broken, fmt.Sprintf("%s: %v", name, p))
		}
		if !jsonOut {
			printAuditReport(w, name, rep)
		}
	}
	if jsonOut {
		if err := printJSON(w, reports); err != nil {
			return err
		}
	}
	switch len(broken) {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("the audit log of %s", broken[0])
	}
	return fmt.Errorf("%d of %d audit logs are broken; %s", len(broken), len(logs), strings.Join(broken, "; "))
}

func printAuditReport(w io.Writer, name string, rep audit.Report) {
	if p := rep.Problem; p != nil {
		fmt.Fprintf(w, "BROKEN  %s: %s line %d: %s: %s\n", name, p.File, p.Line, p.Kind, p.Detail)
		fmt.Fprintf(w, "        %d lines intact before it\n", rep.Lines)
	} else {
		files := "1 file"
		if len(rep.Files) != 1 {
			files = fmt.Sprintf("%d files", len(rep.Files))
		}
		fmt.Fprintf(w, "ok      %s: %d lines in %s, seq %d to %d, head %s\n", name, rep.Lines, files, rep.First, rep.Last, rep.Head)
	}
	for _, r := range rep.Repairs {
		fmt.Fprintf(w, "        repaired (%s) at %s:%d: %s\n", r.Category, r.File, r.Line, r.Note)
	}
	if rep.NoHead {
		fmt.Fprintf(w, "        no %s: lines cut from the end of the log would not show\n", audit.HeadFile)
	}
}

// auditTail prints the last n lines of one log.
func auditTail(w io.Writer, l audit.Found, n int, jsonOut bool) error {
	lines, err := audit.Tail(l.Dir, n)
	if err != nil {
		return err
	}
	for _, ln := range lines {
		if jsonOut || ln.Seq == 0 {
			if ln.Seq == 0 && !jsonOut {
				fmt.Fprint(w, "unreadable: ")
			}
			fmt.Fprintf(w, "%s\n", ln.Raw)
			continue
		}
		fmt.Fprintf(w, "%s  #%d  ", ln.Time, ln.Seq)
		switch ln.Kind {
		case audit.KindCall:
			user := ""
			if ln.User != nil {
				user = fmt.Sprintf("%s (%d)", ln.User.Login, ln.User.ID)
			}
			result := ln.Outcome
			if ln.Error != "" {
				result += ": " + ln.Error
			}
			fmt.Fprintf(w, "%s  %s  %s  %gms  request %s\n", user, ln.Tool, result, ln.DurationMS, ln.RequestID)
		case audit.KindRepair:
			fmt.Fprintf(w, "repair (%s): %s\n", ln.Error, ln.Note)
		default:
			fmt.Fprintf(w, "%s: %s\n", ln.Kind, ln.Note)
		}
	}
	return nil
}

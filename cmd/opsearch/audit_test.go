package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opsearch/opsearch/audit"
	"github.com/opsearch/opsearch/store"
)

// TestAuditFlags: the audit log is off on stdio and on with --http
// unless --audit or OPSEARCH_AUDIT say otherwise.
func TestAuditFlags(t *testing.T) {
	tests := []struct {
		args    []string
		env     string
		http    bool
		want    bool
		wantErr string
	}{
		{nil, "", false, false, ""},
		{nil, "", true, true, ""},
		{[]string{"--audit"}, "", false, true, ""},
		{[]string{"--audit=false"}, "", true, false, ""},
		{[]string{"--audit=true"}, "", true, true, ""},
		{nil, "false", true, false, ""},
		{nil, "yes", false, true, ""},
		{[]string{"--audit=false"}, "true", false, false, ""},
		{nil, "maybe", true, false, `--audit (or OPSEARCH_AUDIT) must be true or false, not "maybe"`},
		{[]string{"--audit-max-bytes", "0"}, "", true, false, "--audit-max-bytes (or OPSEARCH_AUDIT_MAX_BYTES) must be a number of bytes above 0"},
		{[]string{"--audit-keep", "-1"}, "", true, false, "--audit-keep must be 0 or more"},
		{[]string{"--audit-max-bytes", "0"}, "", false, false, ""}, // off: not checked
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.args, tt.env, tt.http), func(t *testing.T) {
			fs := flag.NewFlagSet("serve", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			e := env{getenv: func(k string) string {
				if k == "OPSEARCH_AUDIT" {
					return tt.env
				}
				return ""
			}}
			a := bindAudit(fs, e)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			opts, err := a.options(tt.http)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || (opts != nil) != tt.want {
				t.Errorf("options %+v, %v; want on %v", opts, err, tt.want)
			}
		})
	}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	a := bindAudit(fs, env{getenv: func(string) string { return "" }})
	if err := fs.Parse([]string{"--audit-max-bytes", "4096", "--audit-keep", "0"}); err != nil {
		t.Fatal(err)
	}
	if opts, _ := a.options(true); opts == nil || opts.MaxBytes != 4096 || opts.Keep >= 0 {
		t.Errorf("options %+v; want 4096 bytes, no old file kept", opts)
	}
}

// TestServeHTTPAudit: the team server says at start whether it keeps
// audit logs: by default it does.
func TestServeHTTPAudit(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "audit=true"},
		{[]string{"--audit=false"}, "audit=false"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			t.Setenv("OPENPROJECT_API_KEY", "")
			t.Setenv("OPSEARCH_AUDIT", "")
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			var out, errb syncBuffer
			done := make(chan int, 1)
			args := append([]string{"serve", "--base-url", "http://127.0.0.1:1", "--http", "127.0.0.1:0", "--data-dir", t.TempDir()}, tc.args...)
			go func() { done <- run(ctx, args, &out, &errb) }()
			for !strings.Contains(errb.String(), "opsearch serving MCP over HTTP") {
				select {
				case code := <-done:
					t.Fatalf("serve exited with %d before listening: %s", code, errb.String())
				case <-time.After(10 * time.Millisecond):
				}
			}
			cancel()
			if code := <-done; code != 0 {
				t.Errorf("serve exited with %d: %s", code, errb.String())
			}
			if !strings.Contains(errb.String(), tc.want) {
				t.Errorf("the start line does not say %s:\n%s", tc.want, errb.String())
			}
		})
	}
}

// TestRun_Audit: audit verify passes untouched logs, and after a byte
// changed exits 1 naming the file and line; tail shows a log's last
// lines.
func TestRun_Audit(t *testing.T) {
	const base = "https://op.example.com"
	data := t.TempDir()
	inst, err := store.InstanceName(base)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []int64{5, 7} {
		l, err := audit.Open(filepath.Join(data, inst, fmt.Sprint(id), audit.DirName), audit.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 6 {
			e := audit.Entry{User: audit.User{ID: id, Login: fmt.Sprintf("user%d", id)}, Tool: "openproject_search",
				ArgsSHA256: audit.ArgsDigest([]byte(`{"query":"x"}`)), Outcome: audit.OutcomeOK, Duration: time.Millisecond, RequestID: fmt.Sprintf("r%d", i)}
			if err := l.Record(t.Context(), e); err != nil {
				t.Fatal(err)
			}
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("OPENPROJECT_BASE_URL", "")
	t.Setenv("OPSEARCH_DATA_DIR", data)
	runAuditCmd := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := run(t.Context(), append([]string{"audit"}, args...), &out, &errb)
		return code, out.String(), errb.String()
	}

	code, out, errs := runAuditCmd("verify")
	if code != 0 || errs != "" || !strings.Contains(out, "ok      op.example.com/5: 6 lines in 1 file, seq 1 to 6") || !strings.Contains(out, "ok      op.example.com/7: ") {
		t.Errorf("verify: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	code, out, _ = runAuditCmd("tail", "--user", "7", "-n", "2")
	if code != 0 || strings.Count(out, "\n") != 2 || !strings.Contains(out, "#6  user7 (7)  openproject_search  ok  1ms  request r5") {
		t.Errorf("tail: exit %d, stdout %q", code, out)
	}
	code, out, _ = runAuditCmd("tail", "--user", "5", "-n", "1", "--json")
	if l, err := audit.ParseLine([]byte(strings.TrimSpace(out))); code != 0 || err != nil || l.RequestID != "r5" {
		t.Errorf("tail --json: exit %d, stdout %q (%v)", code, out, err)
	}

	// One byte changed in user 7's log.
	path := filepath.Join(data, inst, "7", audit.DirName, "audit-00000000000000000001.jsonl")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.Replace(b, []byte(`"request_id":"r3"`), []byte(`"request_id":"r9"`), 1)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runAuditCmd("verify", "--base-url", base)
	if code != 1 || !strings.Contains(errs, path+":4: altered") || !strings.Contains(out, "BROKEN  op.example.com/7: "+path+" line 4: altered") ||
		!strings.Contains(out, "ok      op.example.com/5") {
		t.Errorf("verify after a change: exit %d, stdout %q, stderr %q; want 1 and line 4 named", code, out, errs)
	}
	code, out, _ = runAuditCmd("verify", "--json", "--user", "7")
	var reps []struct {
		User    string
		Problem *audit.Problem
	}
	if err := json.Unmarshal([]byte(out), &reps); code != 1 || err != nil || len(reps) != 1 || reps[0].Problem == nil || reps[0].Problem.Line != 4 {
		t.Errorf("verify --json: exit %d, %v, stdout %q", code, err, out)
	}

	for _, tc := range []struct {
		args    []string
		wantErr string
	}{
		{nil, `say what to do: "opsearch audit verify" or "opsearch audit tail"`},
		{[]string{"frobnicate"}, `say what to do`},
		{[]string{"tail"}, "2 users have audit logs under " + data + " (op.example.com/5, op.example.com/7): choose one with --user ID"},
		{[]string{"verify", "--user", "99"}, "no audit log of user 99 under " + data},
		{[]string{"verify", "--dir", t.TempDir()}, "no audit log"},
	} {
		code, _, errs := runAuditCmd(tc.args...)
		if code != 1 || !strings.Contains(errs, tc.wantErr) {
			t.Errorf("audit %v: exit %d, stderr %q; want 1 and %q", tc.args, code, errs, tc.wantErr)
		}
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer lets the test read what a running command has printed.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestRun_Usage(t *testing.T) {
	tests := []struct {
		args    []string
		code    int
		wantErr string
	}{
		{nil, 1, "opsearch serve: OPENPROJECT_BASE_URL is not set"}, // no arguments: serve
		{[]string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{[]string{"fakeop", "--profile", "ancient"}, 1, "--profile must be current or legacy"},
		{[]string{"fakeop", "--error-rate", "2"}, 1, "--error-rate must be between 0 and 1"},
		{[]string{"fakeop", "--max-page-size", "0"}, 1, "--max-page-size must be at least 1"},
		{[]string{"fakeop", "--error-statuses", "500,404"}, 1, `--error-statuses must list 5xx statuses, not "404"`},
		{[]string{"fakeop", "--not-found-rate", "-1"}, 1, "--not-found-rate must be between 0 and 1"},
		{[]string{"fakeop", "--data", "/nonexistent/data.json"}, 1, "read dataset"},
		{[]string{"fakeop", "--addr", "not-an-address"}, 1, "listen on not-an-address"},
		{[]string{"fakeop", "extra"}, 1, `unexpected argument "extra"`},
		{[]string{"fakeop", "--no-such-flag"}, 1, "flag provided but not defined"},
		{[]string{"search", "--synonyms", "/nonexistent/synonyms.txt", "x"}, 1, "--synonyms: open synonyms"},
		{[]string{"search", "--synonyms", "testdata/bad-synonyms.txt", "x"}, 1, "thesaurus line 2: a group needs at least two words"},
		{[]string{"sync", "--max-delete-share", "0", "--base-url", "http://127.0.0.1:1", "--api-key", "k"}, 1, "--max-delete-share (or OPSEARCH_MAX_DELETE_SHARE) must be a number above 0"},
		{[]string{"search", "--max-delete-share", "0", "x"}, 1, "flag provided but not defined: -max-delete-share"},
		{[]string{"serve", "--base-url", "http://127.0.0.1:1", "--http", "127.0.0.1:0", "--shared-index", "--per-user-index"}, 1, "--shared-index and --per-user-index exclude each other"},
		{[]string{"serve", "--base-url", "http://127.0.0.1:1", "--http", "127.0.0.1:0", "--shared-index", "--view-refresh", "0s"}, 1, "invalid --view-refresh 0s: it must be positive"},
		{[]string{"serve", "--base-url", "http://127.0.0.1:1", "--http", "127.0.0.1:0", "--per-user-index", "--crawl-api-key", "k"}, 1, "--crawl-api-key (OPSEARCH_CRAWL_API_KEY) crawls the shared index, not with --per-user-index"},
		{[]string{"serve", "--base-url", "http://127.0.0.1:1", "--http", "127.0.0.1:0", "--per-user-index", "--store", "postgres://x@127.0.0.1/db"}, 1, "--store (OPSEARCH_STORE_URL) holds the shared index's store, not with --per-user-index"},
		{[]string{"serve", "--base-url", "http://127.0.0.1:1", "--http", "127.0.0.1:0", "--store", "postgres://opsearch:s3cr3t-pw@127.0.0.1:1/db?connect_timeout=1"}, 1, "127.0.0.1:1/db"},
		{[]string{"demo", "--shared-index", "--per-user-index"}, 1, "--shared-index and --per-user-index exclude each other"},
		{[]string{"sync", "--base-url", "http://127.0.0.1:1", "--api-key", "k", "--data-dir", "testdata/no-such-dir"}, 1, "check OPENPROJECT_BASE_URL and that the server is up"},
	}
	t.Setenv("OPENPROJECT_BASE_URL", "")
	t.Setenv("OPENPROJECT_API_KEY", "")
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(context.Background(), tt.args, &out, &errb)
			if code != tt.code {
				t.Errorf("exit code %d, want %d (stderr %q)", code, tt.code, errb.String())
			}
			if !strings.Contains(errb.String(), tt.wantErr) {
				t.Errorf("stderr %q does not mention %q", errb.String(), tt.wantErr)
			}
			if strings.Contains(errb.String(), "goroutine ") {
				t.Errorf("stderr has a stack trace: %s", errb.String())
			}
		})
	}
}

// TestRun_FakeOp starts the fake as a user would, finds its URL on
// stdout, and calls it with a key it printed; the mixed-permission set
// adds its own users.
func TestRun_FakeOp(t *testing.T) {
	tests := []struct {
		name, key, login, listed string
		extra                    []string
	}{
		{"generated", "opsearch-alice", "alice", "opsearch-bob", nil},
		{"mixed permissions", "opsearch-erin", "erin", "dave=opsearch-dave", []string{"--mixed-permissions"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var out, errb syncBuffer
			done := make(chan int, 1)
			go func() {
				args := append([]string{"fakeop", "--addr", "127.0.0.1:0", "--work-packages", "50", "--seed", "3"}, tt.extra...)
				done <- run(ctx, args, &out, &errb)
			}()
			re := regexp.MustCompile(`at (http://127\.0\.0\.1:\d+)`)
			var base string
			for base == "" {
				select {
				case code := <-done:
					t.Fatalf("fakeop exited early with %d: %s", code, errb.String())
				case <-time.After(10 * time.Millisecond):
				}
				if m := re.FindStringSubmatch(out.String()); m != nil {
					base = m[1]
				}
			}
			req, _ := http.NewRequest("GET", base+"/api/v3/users/me", nil)
			req.SetBasicAuth("apikey", tt.key)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || !strings.Contains(string(body), `"login":"`+tt.login+`"`) {
				t.Errorf("GET /users/me as %s = %d %s", tt.login, resp.StatusCode, body)
			}
			if !strings.Contains(out.String(), tt.listed) {
				t.Errorf("stdout does not list %s: %s", tt.listed, out.String())
			}
			cancel()
			if code := <-done; code != 0 {
				t.Errorf("exit code after cancel = %d, want 0", code)
			}
		})
	}
}

// TestRun_HelpAndVersion: help, a command's usage and the version go to
// stdout with exit 0, nothing on stderr; a command's usage names its
// arguments and flags.
func TestRun_HelpAndVersion(t *testing.T) {
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"help"}, []string{"usage: opsearch [command]", "fakeop", "opsearch help <command>"}},
		{[]string{"--help"}, []string{"usage: opsearch [command]"}},
		{[]string{"help", "search"}, []string{"usage: opsearch search [flags] QUERY", "search the local index", "-kind", "-project"}},
		{[]string{"search", "-h"}, []string{"usage: opsearch search [flags] QUERY"}},
		{[]string{"sync", "--help"}, []string{"usage: opsearch sync [flags]\n", "-base-url"}},
		{[]string{"version"}, []string{"opsearch ", "commit:", "commit date:", "go:          go1."}},
		{[]string{"--version"}, []string{"opsearch ", "go:"}},
		{[]string{"-v"}, []string{"opsearch ", "go:"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := run(context.Background(), tt.args, &out, &errb); code != 0 {
				t.Errorf("exit code %d, want 0 (stderr %q)", code, errb.String())
			}
			if errb.Len() != 0 {
				t.Errorf("stderr %q, want nothing", errb.String())
			}
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("stdout does not have %q:\n%s", w, out.String())
				}
			}
		})
	}
	// Every command's -h: its usage line on stdout, exit 0.
	for _, c := range commands() {
		var out, errb bytes.Buffer
		code := run(context.Background(), []string{c.name, "-h"}, &out, &errb)
		if code != 0 || errb.Len() != 0 || !strings.HasPrefix(out.String(), "usage: opsearch "+c.name+" [flags]") {
			t.Errorf("%s -h: exit %d, stdout %.80q, stderr %q; want its usage on stdout and 0", c.name, code, out.String(), errb.String())
		}
	}
	// Each command lists only the flags it uses.
	for cmd, c := range map[string]struct{ has, lacks []string }{
		"search": {[]string{"-base-url", "-data-dir", "-project"}, []string{"-api-key", "-read-only", "-confirm-writes", "-max-delete-share", "-timeout"}},
		"status": {[]string{"-data-dir"}, []string{"-api-key", "-read-only", "-max-delete-share"}},
		"sync":   {[]string{"-api-key", "-max-delete-share"}, []string{"-read-only", "-confirm-writes"}},
		"serve":  {[]string{"-api-key", "-read-only", "-confirm-writes", "-max-delete-share"}, nil},
		"doctor": {[]string{"-api-key"}, []string{"-read-only", "-max-delete-share"}},
	} {
		var out, errb bytes.Buffer
		run(context.Background(), []string{cmd, "-h"}, &out, &errb)
		for _, f := range c.has {
			if !strings.Contains(out.String(), "  "+f+" ") && !strings.Contains(out.String(), "  "+f+"\n") {
				t.Errorf("%s -h does not list %s", cmd, f)
			}
		}
		for _, f := range c.lacks {
			if strings.Contains(out.String(), "  "+f+" ") || strings.Contains(out.String(), "  "+f+"\n") {
				t.Errorf("%s -h lists %s, which it does not use", cmd, f)
			}
		}
	}
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"help", "frobnicate"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), `unknown command "frobnicate"`) {
		t.Errorf("help frobnicate: exit %d, stderr %q; want 2 and the unknown command named", code, errb.String())
	}
	if code := run(context.Background(), []string{"search", "--nope"}, &out, &errb); code != 1 || !strings.Contains(errb.String(), `run "opsearch search -h"`) {
		t.Errorf("search --nope: exit %d, stderr %q; want 1 and where the usage is", code, errb.String())
	}
}

// TestNewLogger: OPSEARCH_LOG_FORMAT=json gives one JSON object per line,
// anything else text; the level is OPSEARCH_LOG_LEVEL's.
func TestNewLogger(t *testing.T) {
	var b bytes.Buffer
	l := newLogger(&b, "warn", "JSON")
	l.Info("hidden")
	l.Warn("shown", "n", 1)
	var rec map[string]any
	if err := json.Unmarshal(b.Bytes(), &rec); err != nil || rec["msg"] != "shown" || rec["level"] != "WARN" {
		t.Errorf("json log %q (%v): want one WARN object", b.String(), err)
	}
	b.Reset()
	newLogger(&b, "", "").Info("plain")
	if !strings.Contains(b.String(), "level=INFO msg=plain") {
		t.Errorf("text log %q", b.String())
	}
}

package audit_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/opsearch/opsearch/audit"
)

// entry is the n-th test call.
func entry(n int) audit.Entry {
	e := audit.Entry{
		Time:       time.Date(2026, 12, 4, 10, 0, n, 0, time.UTC),
		User:       audit.User{ID: 5, Login: "alice", Name: "Alice Example"},
		Tool:       "openproject_search",
		ArgsSHA256: audit.ArgsDigest([]byte(fmt.Sprintf(`{"query":"call %d"}`, n))),
		Outcome:    audit.OutcomeOK,
		Duration:   time.Duration(n) * 1500 * time.Microsecond,
		RequestID:  fmt.Sprintf("req%04d", n),
	}
	if n%4 == 3 {
		e.Outcome, e.Error = audit.OutcomeError, "not_found"
	}
	return e
}

// writeLog records n calls in dir with opts, and closes the log.
func writeLog(t *testing.T, dir string, n int, opts audit.Options) {
	t.Helper()
	l, err := audit.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= n; i++ {
		if err := l.Record(t.Context(), entry(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

// files lists the log's files, oldest first.
func files(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "audit-*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// readLines reads a file's lines, without newlines; a last line without
// one is kept as it is.
func readLines(t *testing.T, path string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) == 0 {
		return nil
	}
	return bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
}

func writeLines(t *testing.T, path string, lines [][]byte) {
	t.Helper()
	var b []byte
	for _, l := range lines {
		b = append(append(b, l...), '\n')
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// rehash rewrites a line's content with f and gives it a hash that
// matches, as someone who knows the format would.
func rehash(t *testing.T, line []byte, f func(m map[string]any)) []byte {
	t.Helper()
	i := bytes.LastIndex(line, []byte(`,"hash":"`))
	body := append(append([]byte{}, line[:i]...), '}')
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	f(m)
	// The fields in the log's order, so the line stays well formed.
	var nb bytes.Buffer
	nb.WriteByte('{')
	for j, k := range []string{"seq", "time", "kind", "user", "tool", "args_sha256", "outcome", "error", "duration_ms", "request_id", "note", "pruned", "prev"} {
		v, ok := m[k]
		if !ok {
			continue
		}
		if j > 0 {
			nb.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		vb, _ := json.Marshal(v)
		nb.Write(kb)
		nb.WriteByte(':')
		nb.Write(vb)
	}
	nb.WriteByte('}')
	sum := sha256.Sum256(nb.Bytes())
	out := append([]byte{}, nb.Bytes()[:nb.Len()-1]...)
	return append(out, fmt.Sprintf(`,"hash":"%s"}`, hex.EncodeToString(sum[:]))...)
}

func hashOf(t *testing.T, line []byte) string {
	t.Helper()
	l, err := audit.ParseLine(line)
	if err != nil {
		t.Fatal(err)
	}
	return l.Hash
}

func TestLog_RecordVerify(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "audit")
	writeLog(t, dir, 20, audit.Options{})
	rep, err := audit.Verify(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Lines != 20 || rep.First != 1 || rep.Last != 20 || rep.NoHead || len(rep.Repairs) != 0 {
		t.Fatalf("report %+v (problem %v), want 20 intact lines", rep, rep.Problem)
	}
	fs := files(t, dir)
	if len(fs) != 1 || filepath.Base(fs[0]) != "audit-00000000000000000001.jsonl" {
		t.Fatalf("files %v", fs)
	}
	lines := readLines(t, fs[0])
	if rep.Head != hashOf(t, lines[19]) {
		t.Errorf("head %s, want the last line's hash", rep.Head)
	}
	// Private: the log says which tools a user called and when.
	for _, p := range []string{dir, fs[0], filepath.Join(dir, audit.HeadFile)} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s has mode %v, want private", p, fi.Mode().Perm())
		}
	}
	// The lines say what was called, and link up.
	first, _ := audit.ParseLine(lines[0])
	third, _ := audit.ParseLine(lines[2])
	if first.Prev != "" || first.Kind != audit.KindCall || first.User == nil || first.User.Login != "alice" ||
		first.Tool != "openproject_search" || first.Outcome != "ok" || first.DurationMS != 1.5 || first.RequestID != "req0001" ||
		first.Time != "2026-12-04T10:00:01Z" {
		t.Errorf("first line %+v", first)
	}
	if third.Outcome != "error" || third.Error != "not_found" {
		t.Errorf("third line %+v, want a not_found error", third)
	}
	second, _ := audit.ParseLine(lines[1])
	if second.Prev != first.Hash {
		t.Errorf("line 2 links to %s, want line 1's hash %s", second.Prev, first.Hash)
	}
	// Reopened, the log goes on where it stopped.
	writeLog(t, dir, 3, audit.Options{})
	if rep, err := audit.Verify(dir); err != nil || !rep.OK() || rep.Last != 23 {
		t.Fatalf("after reopening: %+v, %v (problem %v)", rep, err, rep.Problem)
	}
}

// TestVerify_Tampering changes an intact log of 20 lines in one way each
// and checks that Verify names the first line that shows it.
func TestVerify_Tampering(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T, lines [][]byte) [][]byte
		// head, if set, changes the head file instead of the log.
		head     func(t *testing.T, dir string)
		kind     audit.ProblemKind
		line     int
		wantText string
	}{
		{"one byte of a field", func(t *testing.T, ls [][]byte) [][]byte {
			ls[4] = bytes.Replace(ls[4], []byte("openproject_search"), []byte("openproject_seArch"), 1)
			return ls
		}, nil, audit.Altered, 5, "does not match its hash"},
		{"one digit of the hash", func(t *testing.T, ls [][]byte) [][]byte {
			b := ls[9]
			c := &b[len(b)-3]
			if *c == '0' {
				*c = '1'
			} else {
				*c = '0'
			}
			return ls
		}, nil, audit.Altered, 10, "does not match its hash"},
		{"a space added", func(t *testing.T, ls [][]byte) [][]byte {
			ls[6] = bytes.Replace(ls[6], []byte(`"seq":`), []byte(`"seq": `), 1)
			return ls
		}, nil, audit.Altered, 7, "does not match its hash"},
		{"line deleted", func(t *testing.T, ls [][]byte) [][]byte {
			return append(ls[:4], ls[5:]...)
		}, nil, audit.Removed, 5, "line seq 5 is missing"},
		{"lines deleted", func(t *testing.T, ls [][]byte) [][]byte {
			return append(ls[:4], ls[7:]...)
		}, nil, audit.Removed, 5, "lines seq 5 to 7 are missing"},
		{"first line deleted", func(t *testing.T, ls [][]byte) [][]byte {
			return ls[1:]
		}, nil, audit.Removed, 1, "starts at seq 1, its first line is seq 2"},
		{"lines swapped", func(t *testing.T, ls [][]byte) [][]byte {
			ls[4], ls[5] = ls[5], ls[4]
			return ls
		}, nil, audit.Reordered, 5, "seq 6 stands before seq 5"},
		{"line repeated", func(t *testing.T, ls [][]byte) [][]byte {
			return append(ls[:6], append([][]byte{ls[4]}, ls[6:]...)...)
		}, nil, audit.Reordered, 7, "seq 5 comes after seq 6"},
		{"bad JSON", func(t *testing.T, ls [][]byte) [][]byte {
			ls[7] = []byte(`{"seq":8,"time":`)
			return ls
		}, nil, audit.Malformed, 8, "not an audit line"},
		{"JSON without the hash", func(t *testing.T, ls [][]byte) [][]byte {
			ls[7] = []byte(`{"seq":8,"kind":"call","prev":""}`)
			return ls
		}, nil, audit.Malformed, 8, "hash field"},
		{"line rewritten with a matching hash", func(t *testing.T, ls [][]byte) [][]byte {
			ls[4] = rehash(t, ls[4], func(m map[string]any) { m["tool"] = "openproject_add_comment" })
			return ls
		}, nil, audit.Altered, 6, "does not link to the line before it (audit-00000000000000000001.jsonl:5)"},
		{"last lines cut off", func(t *testing.T, ls [][]byte) [][]byte {
			return ls[:17]
		}, nil, audit.Truncated, 18, "ends at seq 17, but lines through seq 20 were written"},
		{"file cut in a line", func(t *testing.T, ls [][]byte) [][]byte {
			ls[19] = ls[19][:40]
			return ls
		}, nil, audit.Torn, 20, "incomplete (40 bytes without a newline)"},
		{"end rewritten with matching hashes", func(t *testing.T, ls [][]byte) [][]byte {
			prev := hashOf(t, ls[16])
			for i := 17; i < 20; i++ {
				ls[i] = rehash(t, ls[i], func(m map[string]any) {
					m["prev"] = prev
					m["outcome"] = "ok"
					delete(m, "error")
					m["tool"] = "openproject_list_users"
				})
				prev = hashOf(t, ls[i])
			}
			return ls
		}, nil, audit.Altered, 20, "the last line is not the one written"},
		{"head rewritten", nil, func(t *testing.T, dir string) {
			err := os.WriteFile(filepath.Join(dir, audit.HeadFile), fmt.Appendf(nil, `{"seq":12,"hash":"%s"}`, strings.Repeat("ab", 32)), 0o600)
			if err != nil {
				t.Fatal(err)
			}
		}, audit.Altered, 12, "not the one written"},
		{"head not JSON", nil, func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, audit.HeadFile), []byte("nonsense"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, audit.Malformed, 1, "is not a head"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeLog(t, dir, 20, audit.Options{})
			path := files(t, dir)[0]
			if tt.change != nil {
				ls := tt.change(t, readLines(t, path))
				writeLines(t, path, ls)
				if tt.kind == audit.Torn {
					b, _ := os.ReadFile(path)
					os.WriteFile(path, bytes.TrimSuffix(b, []byte("\n")), 0o600)
				}
			}
			if tt.head != nil {
				tt.head(t, dir)
			}
			rep, err := audit.Verify(dir)
			if err != nil {
				t.Fatal(err)
			}
			p := rep.Problem
			if p == nil {
				t.Fatalf("Verify passed a changed log: %+v", rep)
			}
			wantFile := path
			if tt.kind == audit.Malformed && tt.head != nil {
				wantFile = filepath.Join(dir, audit.HeadFile)
			}
			if p.Kind != tt.kind || p.Line != tt.line || p.File != wantFile || !strings.Contains(p.Detail, tt.wantText) {
				t.Errorf("problem %v;\nwant %s:%d: %s: …%s…", p, wantFile, tt.line, tt.kind, tt.wantText)
			}
		})
	}
}

func TestVerify_NoHead(t *testing.T) {
	dir := t.TempDir()
	writeLog(t, dir, 3, audit.Options{})
	if err := os.Remove(filepath.Join(dir, audit.HeadFile)); err != nil {
		t.Fatal(err)
	}
	rep, err := audit.Verify(dir)
	if err != nil || !rep.OK() || !rep.NoHead {
		t.Errorf("without a head: %+v, %v; want intact, NoHead", rep, err)
	}
}

func TestVerify_NoLog(t *testing.T) {
	for _, dir := range []string{t.TempDir(), filepath.Join(t.TempDir(), "missing")} {
		if _, err := audit.Verify(dir); !errors.Is(err, audit.ErrNoLog) {
			t.Errorf("Verify(%s): %v, want ErrNoLog", dir, err)
		}
		if _, err := audit.Tail(dir, 3); !errors.Is(err, audit.ErrNoLog) {
			t.Errorf("Tail(%s): %v, want ErrNoLog", dir, err)
		}
	}
}

// TestLog_Rotation: the chain runs on across files, old files are
// deleted past Keep with a prune line each, and a file deleted or cut
// short by anyone else shows.
func TestLog_Rotation(t *testing.T) {
	opts := audit.Options{MaxBytes: 1500, Keep: 2}
	dir := t.TempDir()
	writeLog(t, dir, 40, opts)
	fs := files(t, dir)
	if len(fs) != 3 {
		t.Fatalf("%d files, want 3 (Keep 2 and the current one): %v", len(fs), fs)
	}
	rep, err := audit.Verify(dir)
	if err != nil || !rep.OK() {
		t.Fatalf("after rotation: %+v, %v (problem %v)", rep, err, rep.Problem)
	}
	if rep.First <= 1 {
		t.Errorf("first seq %d: old files were not deleted", rep.First)
	}
	prunes := 0
	for i, f := range fs {
		fi, _ := os.Stat(f)
		if fi.Size() > opts.MaxBytes {
			t.Errorf("%s has %d bytes, more than MaxBytes", f, fi.Size())
		}
		ls := readLines(t, f)
		for _, b := range ls {
			if l, _ := audit.ParseLine(b); l.Kind == audit.KindPrune {
				prunes++
			}
		}
		if i > 0 {
			// The first line of a file links to the last of the one before.
			prev := readLines(t, fs[i-1])
			if first, _ := audit.ParseLine(ls[0]); first.Prev != hashOf(t, prev[len(prev)-1]) {
				t.Errorf("%s does not link to %s", f, fs[i-1])
			}
		}
	}
	if prunes == 0 {
		t.Error("no prune line among the files kept")
	}
	// Reopened, rotation goes on from the files there.
	writeLog(t, dir, 20, opts)
	if rep, err := audit.Verify(dir); err != nil || !rep.OK() || rep.Last <= 40 {
		t.Fatalf("after reopening: %+v, %v (problem %v)", rep, err, rep.Problem)
	}

	tests := []struct {
		name   string
		change func(t *testing.T, fs []string)
		file   int // index in fs
		line   int
		kind   audit.ProblemKind
	}{
		{"oldest file deleted", func(t *testing.T, fs []string) { os.Remove(fs[0]) }, 1, 1, audit.Removed},
		{"middle file deleted", func(t *testing.T, fs []string) { os.Remove(fs[1]) }, 2, 1, audit.Removed},
		{"old file cut short", func(t *testing.T, fs []string) {
			ls := readLines(t, fs[0])
			writeLines(t, fs[0], ls[:len(ls)-2])
		}, 1, 1, audit.Removed},
		{"old file cut in a line", func(t *testing.T, fs []string) {
			b, _ := os.ReadFile(fs[1])
			os.WriteFile(fs[1], b[:len(b)-10], 0o600)
		}, 1, -1, audit.Truncated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeLog(t, dir, 40, opts)
			fs := files(t, dir)
			tt.change(t, fs)
			rep, err := audit.Verify(dir)
			if err != nil {
				t.Fatal(err)
			}
			p := rep.Problem
			want := tt.line
			if want < 0 {
				want = len(readLines(t, fs[tt.file]))
			}
			if p == nil || p.Kind != tt.kind || p.File != fs[tt.file] || p.Line != want {
				t.Errorf("problem %v, want %s at %s:%d", p, tt.kind, fs[tt.file], want)
			}
		})
	}
}

// TestOpen_TornTail: a crash in the middle of a write leaves a torn last
// line. Verify reports it; Open cuts it off, records that, and appends
// after it; the log then verifies, the repair listed.
func TestOpen_TornTail(t *testing.T) {
	dir := t.TempDir()
	writeLog(t, dir, 10, audit.Options{})
	path := files(t, dir)[0]
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"seq":11,"time":"2026-12-04T10:00:11Z","kind":"ca`)
	f.Close()

	rep, err := audit.Verify(dir)
	if err != nil || rep.Problem == nil || rep.Problem.Kind != audit.Torn || rep.Problem.Line != 11 {
		t.Fatalf("torn tail: problem %v, %v; want torn at line 11", rep.Problem, err)
	}
	if !strings.Contains(rep.Problem.Error(), path+":11: torn: ") {
		t.Errorf("problem %q does not name the file and line", rep.Problem.Error())
	}
	writeLog(t, dir, 2, audit.Options{})
	rep, err = audit.Verify(dir)
	if err != nil || !rep.OK() {
		t.Fatalf("after reopening: %+v, %v (problem %v)", rep, err, rep.Problem)
	}
	if rep.Lines != 13 || len(rep.Repairs) != 1 || rep.Repairs[0].Category != audit.RepairTorn || rep.Repairs[0].Line != 11 ||
		!strings.Contains(rep.Repairs[0].Note, "torn last line of 50 bytes") {
		t.Errorf("report %+v; want 13 lines, the cut recorded at line 11", rep)
	}
}

// TestOpen_Tampered: what Open finds wrong with the head is recorded
// before the next line overwrites the head, so Verify still shows it.
func TestOpen_Tampered(t *testing.T) {
	tests := []struct {
		name     string
		change   func(t *testing.T, path string)
		category string
		kind     audit.ProblemKind
		line     int
	}{
		{"last lines cut off", func(t *testing.T, path string) {
			ls := readLines(t, path)
			writeLines(t, path, ls[:7])
		}, audit.RepairMissing, audit.Removed, 8},
		{"last line rewritten", func(t *testing.T, path string) {
			ls := readLines(t, path)
			ls[9] = rehash(t, ls[9], func(m map[string]any) { m["tool"] = "openproject_log_time" })
			writeLines(t, path, ls)
		}, audit.RepairRewritten, audit.Altered, 11},
		{"older lines rewritten while the head lagged", func(t *testing.T, path string) {
			ls := readLines(t, path)
			head := fmt.Sprintf(`{"seq":8,"hash":%q}`, hashOf(t, ls[7]))
			if err := os.WriteFile(filepath.Join(filepath.Dir(path), audit.HeadFile), []byte(head), 0o600); err != nil {
				t.Fatal(err)
			}
			prev := hashOf(t, ls[6])
			for i := 7; i < 10; i++ {
				ls[i] = rehash(t, ls[i], func(m map[string]any) { m["prev"] = prev; m["request_id"] = "forged" })
				prev = hashOf(t, ls[i])
			}
			writeLines(t, path, ls)
		}, audit.RepairRewritten, audit.Altered, 11},
		{"unreadable last line", func(t *testing.T, path string) {
			ls := readLines(t, path)
			ls[9] = []byte("garbage")
			writeLines(t, path, ls)
		}, audit.RepairUnreadable, audit.Malformed, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeLog(t, dir, 10, audit.Options{})
			path := files(t, dir)[0]
			tt.change(t, path)
			writeLog(t, dir, 2, audit.Options{})
			rep, err := audit.Verify(dir)
			if err != nil {
				t.Fatal(err)
			}
			if p := rep.Problem; p == nil || p.Kind != tt.kind || p.Line != tt.line {
				t.Errorf("problem %v, want %s at line %d", p, tt.kind, tt.line)
			}
			var found bool
			for _, b := range readLines(t, path) {
				if l, _ := audit.ParseLine(b); l.Kind == audit.KindRepair && l.Error == tt.category {
					found = true
				}
			}
			if !found {
				t.Errorf("no %q repair line in the log", tt.category)
			}
		})
	}
}

// TestLog_Concurrent: calls recorded at once each get one line, in one
// unbroken chain.
func TestLog_Concurrent(t *testing.T) {
	dir := t.TempDir()
	l, err := audit.Open(dir, audit.Options{MaxBytes: 8 << 10, Keep: 100})
	if err != nil {
		t.Fatal(err)
	}
	const workers, each = 8, 40
	var wg gosync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				if err := l.Record(t.Context(), entry(w*each+i)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Record(t.Context(), entry(1)); !errors.Is(err, audit.ErrClosed) {
		t.Errorf("Record after Close: %v, want ErrClosed", err)
	}
	rep, err := audit.Verify(dir)
	if err != nil || !rep.OK() || rep.Lines != workers*each {
		t.Fatalf("report %+v, %v (problem %v); want %d intact lines", rep, err, rep.Problem, workers*each)
	}
}

// TestRecord_NoText: an entry's fields are tokens; a message or argument
// text is refused, not written.
func TestRecord_NoText(t *testing.T) {
	dir := t.TempDir()
	l, err := audit.Open(dir, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	tests := []struct {
		name   string
		change func(e *audit.Entry)
	}{
		{"error message", func(e *audit.Entry) { e.Outcome, e.Error = audit.OutcomeError, "invalid argument query: secret words" }},
		{"error on success", func(e *audit.Entry) { e.Error = "internal" }},
		{"tool with text", func(e *audit.Entry) { e.Tool = "search for my password" }},
		{"no tool", func(e *audit.Entry) { e.Tool = "" }},
		{"arguments for a digest", func(e *audit.Entry) { e.ArgsSHA256 = `{"query":"secret"}` }},
		{"unknown outcome", func(e *audit.Entry) { e.Outcome = "maybe" }},
		{"request id with text", func(e *audit.Entry) { e.RequestID = "id with spaces" }},
	}
	for _, tt := range tests {
		e := entry(1)
		tt.change(&e)
		if err := l.Record(t.Context(), e); err == nil {
			t.Errorf("%s: recorded", tt.name)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := l.Record(ctx, entry(1)); !errors.Is(err, context.Canceled) {
		t.Errorf("Record with a cancelled context: %v", err)
	}
	if rep, err := audit.Verify(dir); err != nil || !rep.OK() || rep.Lines != 0 {
		t.Errorf("something was written: %+v, %v", rep, err)
	}
}

func TestArgsDigest(t *testing.T) {
	digest := func(s string) string {
		sum := sha256.Sum256([]byte(s))
		return hex.EncodeToString(sum[:])
	}
	tests := []struct {
		raw, canonical string
	}{
		{`{"query":"x","pageSize":5}`, `{"pageSize":5,"query":"x"}`},
		{" {\n \"b\" : [1, 2.50, {\"d\":1,\"c\":null}] ,\"a\":true}", `{"a":true,"b":[1,2.50,{"c":null,"d":1}]}`},
		{``, `{}`},
		{`null`, `{}`},
		{`  `, `{}`},
		{`{}`, `{}`},
		{`{"q":"<a&b>"}`, `{"q":"<a&b>"}`},
		{`{"id":12345678901234567890}`, `{"id":12345678901234567890}`},
		{`{"q":"\u00e9"}`, `{"q":"é"}`},
		{`{not json`, `{not json`},
	}
	for _, tt := range tests {
		if got, want := audit.ArgsDigest([]byte(tt.raw)), digest(tt.canonical); got != want {
			t.Errorf("ArgsDigest(%q) is not the digest of %q", tt.raw, tt.canonical)
		}
	}
}

func TestTail(t *testing.T) {
	dir := t.TempDir()
	writeLog(t, dir, 30, audit.Options{MaxBytes: 2000, Keep: 100})
	if len(files(t, dir)) < 3 {
		t.Fatal("want several files")
	}
	got, err := audit.Tail(dir, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 5 {
		t.Fatalf("%d lines, want 5", len(got))
	}
	for i, l := range got {
		if l.Seq != uint64(26+i) || l.RequestID != fmt.Sprintf("req%04d", 26+i) || len(l.Raw) == 0 {
			t.Errorf("line %d: seq %d, request %s", i, l.Seq, l.RequestID)
		}
	}
	all, err := audit.Tail(dir, 1000)
	if err != nil || len(all) != 30 || all[0].Seq != 1 {
		t.Errorf("tail of more than the log: %d lines, %v", len(all), err)
	}
}

func TestFind(t *testing.T) {
	data := t.TempDir()
	for _, d := range []string{"op.example.com/7/audit", "op.example.com/12/audit", "a.example/3/audit", "op.example.com/shared/audit", "op.example.com/9"} {
		if err := os.MkdirAll(filepath.Join(data, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	got, err := audit.Find(data)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range got {
		names = append(names, f.String())
		if f.Dir != filepath.Join(data, f.Instance, fmt.Sprint(f.UserID), audit.DirName) {
			t.Errorf("%s: dir %s", f, f.Dir)
		}
	}
	if strings.Join(names, " ") != "a.example/3 op.example.com/7 op.example.com/12" {
		t.Errorf("found %v", names)
	}
	if got, err := audit.Find(filepath.Join(data, "none")); err != nil || len(got) != 0 {
		t.Errorf("missing data dir: %v, %v", got, err)
	}
}

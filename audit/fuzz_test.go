package audit

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// seedLines are lines as Record writes them, and near misses.
func seedLines(t interface{ Fatal(...any) }) [][]byte {
	var out [][]byte
	prev := ""
	for i, l := range []Line{
		{Kind: KindCall, User: &User{ID: 5, Login: "alice", Name: "Alice"}, Tool: "openproject_search", ArgsSHA256: ArgsDigest([]byte(`{"query":"x"}`)), Outcome: OutcomeOK, DurationMS: 1.25, RequestID: "3f2a9c01b7de"},
		{Kind: KindCall, User: &User{ID: 5}, Tool: "openproject_get_work_package", Outcome: OutcomeError, Error: "not_found", RequestID: "ab"},
		{Kind: KindRepair, Error: RepairTorn, Note: "cut a torn last line of 12 bytes"},
		{Kind: KindPrune, Note: "rotation deleted audit-1.jsonl", Pruned: &Link{Seq: 2, Hash: string(bytes.Repeat([]byte("a"), 64))}},
	} {
		l.Seq, l.Prev, l.Time = uint64(i+1), prev, formatTime(time.Date(2026, 12, 4, 10, 0, i, 0, time.UTC))
		b, h, err := encodeLine(l)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, bytes.TrimSuffix(b, []byte("\n")))
		prev = h
	}
	return out
}

// FuzzParseLine: the line parser never panics, and whatever it accepts
// as intact is written back the same way: the bytes it checked are the
// bytes encodeLine writes for what it parsed, or the hash would differ.
func FuzzParseLine(f *testing.F) {
	for _, l := range seedLines(f) {
		f.Add(l)
		f.Add(l[:len(l)/2])
		f.Add(bytes.Replace(l, []byte(`"seq":`), []byte(`"seq": `), 1))
	}
	f.Add([]byte(`{"seq":1,"hash":"` + string(bytes.Repeat([]byte("0"), 64)) + `"}`))
	f.Add([]byte(`{}`))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := ParseLine(b)
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrHashMismatch) {
				t.Fatalf("error %v is neither malformed nor a hash mismatch", err)
			}
			return
		}
		if l.Seq == 0 || !isHex(l.Hash) {
			t.Fatalf("accepted %q as %+v", b, l)
		}
		// Parsed again from its own encoding, the line says the same.
		enc, h, err := encodeLine(l)
		if err != nil {
			t.Fatal(err)
		}
		l2, err := ParseLine(bytes.TrimSuffix(enc, []byte("\n")))
		if err != nil {
			t.Fatalf("re-encoded %q: %v", enc, err)
		}
		l.Hash, l2.Hash = "", ""
		if !reflect.DeepEqual(l, l2) || !isHex(h) {
			t.Fatalf("round trip changed the line:\n%+v\n%+v", l, l2)
		}
	})
}

// FuzzOpenVerify: whatever a log file holds, Verify does not panic, and
// Open takes it up and appends a line that links to what it found.
func FuzzOpenVerify(f *testing.F) {
	var log []byte
	for _, l := range seedLines(f) {
		log = append(append(log, l...), '\n')
	}
	f.Add(log)
	f.Add(log[:len(log)-7])
	f.Add([]byte("garbage\n"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, fileName(1))
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := Verify(dir); err != nil {
			t.Fatal(err)
		}
		l, err := Open(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		e := Entry{Tool: "openproject_search", Outcome: OutcomeOK, User: User{ID: 1}}
		if err := l.Record(t.Context(), e); err != nil {
			t.Fatal(err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		rep, err := Verify(dir)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Problem != nil && rep.Problem.Kind == Torn {
			t.Fatalf("Open left a torn line: %v", rep.Problem)
		}
		last, err := Tail(dir, 1)
		if err != nil || len(last) != 1 || last[0].Kind != KindCall {
			t.Fatalf("the last line is not the call recorded: %+v, %v", last, err)
		}
	})
}

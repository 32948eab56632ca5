package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// recordingConn is an sdk.Connection that records what it is asked to
// write.
type recordingConn struct {
	sdk.Connection // nil: only Write is called
	wrote          []jsonrpc.Message
}

func (c *recordingConn) Write(_ context.Context, msg jsonrpc.Message) error {
	c.wrote = append(c.wrote, msg)
	return nil
}

type bufCloser struct{ bytes.Buffer }

func (*bufCloser) Close() error { return nil }

// TestStdioConnWritesResultsItself checks which messages stdioConn writes
// itself, with the result as the SDK encoded it, and which it leaves to
// the SDK's connection.
func TestStdioConnWritesResultsItself(t *testing.T) {
	id := func(v any) jsonrpc.ID {
		i, err := jsonrpc.MakeID(v)
		if err != nil {
			t.Fatal(err)
		}
		return i
	}
	result := json.RawMessage(`{"content":[{"type":"text","text":"{\"a\":\"\\u003c\"}"}],"structuredContent":{"a":"\u003c"}}`)
	req := &jsonrpc.Request{Method: "notifications/message", Params: json.RawMessage(`{}`)}
	for _, c := range []struct {
		name   string
		msg    jsonrpc.Message
		batch  bool
		direct string // the line written directly; empty: the SDK's connection writes
	}{
		{name: "a result", msg: &jsonrpc.Response{ID: id(float64(7)), Result: result},
			direct: `{"jsonrpc":"2.0","id":7,"result":` + string(result) + "}\n"},
		{name: "a string id", msg: &jsonrpc.Response{ID: id("x\"y"), Result: json.RawMessage(`{}`)},
			direct: `{"jsonrpc":"2.0","id":"x\"y","result":{}}` + "\n"},
		{name: "after a batch", msg: &jsonrpc.Response{ID: id(float64(7)), Result: result}, batch: true},
		{name: "an error", msg: &jsonrpc.Response{ID: id(float64(7)), Error: &jsonrpc.Error{Code: -32602, Message: "bad"}}},
		{name: "a result across lines", msg: &jsonrpc.Response{ID: id(float64(7)), Result: json.RawMessage("{\n}")}},
		{name: "a notification", msg: req},
	} {
		t.Run(c.name, func(t *testing.T) {
			inner := &recordingConn{}
			out := &bufCloser{}
			conn := &stdioConn{Connection: inner, r: &batchWatcher{r: io.NopCloser(nil)}, w: &lockedWriter{w: out}}
			conn.r.sawBatch.Store(c.batch)
			if err := conn.Write(t.Context(), c.msg); err != nil {
				t.Fatal(err)
			}
			if c.direct == "" {
				if len(inner.wrote) != 1 || out.Len() != 0 {
					t.Errorf("the SDK's connection wrote %d messages and stdioConn %q; want the SDK's to write it", len(inner.wrote), out.String())
				}
				return
			}
			if len(inner.wrote) != 0 || out.String() != c.direct {
				t.Errorf("wrote %q (the SDK's connection %d messages), want %q written directly", out.String(), len(inner.wrote), c.direct)
			}
		})
	}
}

// TestBatchWatcher checks which input counts as a batch: a '[' that
// begins a line, after blanks, however the reads split it.
func TestBatchWatcher(t *testing.T) {
	for _, c := range []struct {
		in    string
		batch bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":[1]}}` + "\n", false},
		{"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]\n", true},
		{"{\"id\":1}\n  \t[{\"id\":2}]\n", true},
		{"{\"id\":1}\r\n[{\"id\":2}]\r\n", true},
		{"{\"id\":1,\n\"p\":[1]}\n", false},
	} {
		for _, chunk := range []int{1, 3, len(c.in)} {
			w := &batchWatcher{r: io.NopCloser(&chunkReader{s: c.in, n: chunk}), lineStart: true}
			if _, err := io.ReadAll(w); err != nil {
				t.Fatal(err)
			}
			if got := w.sawBatch.Load(); got != c.batch {
				t.Errorf("%q read %d bytes at a time: batch %v, want %v", c.in, chunk, got, c.batch)
			}
		}
	}
}

// chunkReader reads s at most n bytes at a time.
type chunkReader struct {
	s string
	n int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if r.s == "" {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), r.n)], r.s)
	r.s = r.s[k:]
	return k, nil
}

// FuzzBatchWatcher checks batchWatcher against the rule it implements,
// read whole: a batch is a line whose first byte other than a blank is
// '['; how the reads split the input must not matter.
func FuzzBatchWatcher(f *testing.F) {
	f.Add("[{\"id\":1}]\n", uint8(1))
	f.Add("{\"id\":1}\n \t[", uint8(2))
	f.Add("{\"a\":[1]}\r\n{\"b\":\n[2]}", uint8(5))
	f.Fuzz(func(t *testing.T, in string, chunk uint8) {
		want := false
		for _, line := range strings.Split(in, "\n") {
			if l := strings.TrimLeft(line, " \t\r"); strings.HasPrefix(l, "[") {
				want = true
			}
		}
		w := &batchWatcher{r: io.NopCloser(&chunkReader{s: in, n: max(1, int(chunk))}), lineStart: true}
		if _, err := io.ReadAll(w); err != nil {
			t.Fatal(err)
		}
		if got := w.sawBatch.Load(); got != want {
			t.Errorf("%q read %d bytes at a time: batch %v, want %v", in, chunk, got, want)
		}
	})
}

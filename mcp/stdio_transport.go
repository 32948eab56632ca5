package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	gosync "sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// StdioTransport is go-sdk's IOTransport over r and w (newline-delimited
// JSON-RPC, as MCP's stdio transport is), with one change: a response is
// written with the result the SDK has already encoded, instead of
// encoding the whole message once more.
//
// The SDK encodes a tool's result with encoding/json, which compacts
// the JSON a json.RawMessage holds again at every level it is nested
// in. For a search answer (structured content and its JSON text copy,
// about 28 KB at 20 results), the last of those passes, over the whole
// message, took 0.38 ms of the 1.5 ms stdio added per call on a 2 vCPU
// AMD EPYC (CPU profile of opsearch serve under BenchmarkStdioSearch10k).
// The result is already compact JSON on one line: only the envelope
// around it is written here.
//
// Everything else (requests and notifications the server sends, error
// responses, a result that is somehow not on one line) goes through the
// SDK's connection as before, and so does every response once the
// client has sent a JSON-RPC batch (protocol versions before
// 2025-06-18): its answers must go back as one batch, which only the
// SDK's connection assembles.
func StdioTransport(r io.ReadCloser, w io.WriteCloser) sdk.Transport {
	return &stdioTransport{r: r, w: w}
}

type stdioTransport struct {
	r io.ReadCloser
	w io.WriteCloser
}

// Connect implements sdk.Transport.
func (t *stdioTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	r := &batchWatcher{r: t.r, lineStart: true}
	w := &lockedWriter{w: t.w}
	inner, err := (&sdk.IOTransport{Reader: r, Writer: w}).Connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("connect stdio: %w", err)
	}
	return &stdioConn{Connection: inner, r: r, w: w}, nil
}

// stdioConn is the SDK's connection with responses written directly.
type stdioConn struct {
	sdk.Connection
	r *batchWatcher
	w *lockedWriter
}

var _ sdk.Connection = (*stdioConn)(nil)

// Write implements sdk.Connection.
func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok || resp.Error != nil || len(resp.Result) == 0 || resp.ID.Raw() == nil ||
		bytes.IndexByte(resp.Result, '\n') >= 0 || c.r.sawBatch.Load() {
		return c.Connection.Write(ctx, msg)
	}
	// As the SDK's connection does: no writes on a done context.
	if err := ctx.Err(); err != nil {
		return err
	}
	id, err := json.Marshal(resp.ID.Raw())
	if err != nil {
		return fmt.Errorf("encode response id: %w", err)
	}
	const head, mid, tail = `{"jsonrpc":"2.0","id":`, `,"result":`, "}\n"
	line := make([]byte, 0, len(head)+len(id)+len(mid)+len(resp.Result)+len(tail))
	line = append(append(append(append(append(line, head...), id...), mid...), resp.Result...), tail...)
	_, err = c.w.Write(line)
	return err
}

// lockedWriter writes each message in one call under its mutex, so that
// the SDK connection's writes and stdioConn's own never interleave. The
// mutex guards no state, only the stream's order, so it is held across
// the write, as the SDK's own connection holds its write lock.
type lockedWriter struct {
	mu gosync.Mutex
	w  io.WriteCloser
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return l.w.Close() }

// batchWatcher passes reads through and notes whether the client sent a
// JSON-RPC batch: a '[' that begins a line (after blanks), where a
// message must begin on MCP's stdio transport. A '[' that does not
// begin a message but begins a line (JSON a client spread over lines,
// which the transport forbids) only turns the direct writes off.
type batchWatcher struct {
	r         io.ReadCloser
	lineStart bool // only the reading goroutine touches it
	sawBatch  atomic.Bool
}

func (b *batchWatcher) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if !b.sawBatch.Load() {
		for _, c := range p[:n] {
			switch {
			case c == '\n':
				b.lineStart = true
			case c == ' ' || c == '\t' || c == '\r':
			case c == '[' && b.lineStart:
				b.sawBatch.Store(true)
				return n, err
			default:
				b.lineStart = false
			}
		}
	}
	return n, err
}

func (b *batchWatcher) Close() error { return b.r.Close() }

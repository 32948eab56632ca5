package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/opsearch/opsearch/mcp"
)

// stdioSession runs a go-sdk server with one tool over transport (made
// from the server's ends of two pipes), writes each of lines to it as a
// client would, and returns the line the server answers to each one
// that is not a notification (a notification's entry is empty).
func stdioSession(t *testing.T, transport func(io.ReadCloser, io.WriteCloser) sdk.Transport, lines []string) []string {
	t.Helper()
	type echoOut struct {
		Text  string   `json:"text"`
		Words []string `json:"words"`
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: "stdio-test", Version: "0"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "echo"}, func(_ context.Context, _ *sdk.CallToolRequest, in struct {
		Text string `json:"text"`
	}) (*sdk.CallToolResult, echoOut, error) {
		// Quotes, markup and non-ASCII text, which JSON escapes.
		return nil, echoOut{Text: in.Text, Words: strings.Fields(in.Text + ` "quoted" <b>&</b> naïve`)}, nil
	})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	// A server that never answers fails the test instead of hanging it:
	// closed pipes end every blocked read and write.
	stop := context.AfterFunc(ctx, func() {
		for _, c := range []io.Closer{inR, inW, outR, outW} {
			_ = c.Close()
		}
	})
	defer stop()
	done := make(chan error, 1)
	go func() {
		done <- srv.Run(ctx, transport(inR, outW))
		_ = outW.Close()
	}()
	out := bufio.NewReader(outR)
	answers := make([]string, len(lines))
	for i, line := range lines {
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatalf("write %q: %v", line, err)
		}
		if strings.Contains(line, `"id"`) {
			got, err := out.ReadString('\n')
			if err != nil {
				t.Fatalf("read the answer to %q: %v", line, err)
			}
			answers[i] = got
		}
	}
	_ = inW.Close()
	if err := <-done; err != nil && ctx.Err() == nil && !strings.Contains(err.Error(), "EOF") {
		t.Fatalf("server: %v", err)
	}
	return answers
}

func sdkStdio(r io.ReadCloser, w io.WriteCloser) sdk.Transport {
	return &sdk.IOTransport{Reader: r, Writer: w}
}

// TestStdioTransportAnswersAsTheSDK checks that mcp.StdioTransport's
// directly written responses say what the SDK's own transport says, one
// message per line, and that once a client sends a JSON-RPC batch (an
// older protocol version's) its answers come back as one batch.
func TestStdioTransportAnswersAsTheSDK(t *testing.T) {
	for _, version := range []string{"2025-06-18", "2025-03-26"} {
		t.Run(version, func(t *testing.T) {
			call := func(id int, text string) string {
				return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":%q}}}`, id, text)
			}
			lines := []string{
				`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`,
				`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
				call(2, "first call"),
				`{"jsonrpc":"2.0","id":"three","method":"tools/call","params":{"name":"echo","arguments":{"text":"a string id, \u00e9\nand a newline"}}}`,
				`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"nope","arguments":{}}}`,
				`{"jsonrpc":"2.0","id":5,"method":"ping"}`,
			}
			if version == "2025-03-26" {
				lines = append(lines, "["+call(6, "in a batch")+`,{"jsonrpc":"2.0","id":7,"method":"ping"}]`, call(8, "after the batch"))
			}
			want := stdioSession(t, sdkStdio, lines)
			got := stdioSession(t, mcp.StdioTransport, lines)
			for i := range lines {
				if want[i] == "" {
					if got[i] != "" {
						t.Errorf("answer to a notification: %s", got[i])
					}
					continue
				}
				if !strings.HasSuffix(got[i], "\n") || strings.Count(got[i], "\n") != 1 {
					t.Errorf("answer to %s is not one line: %q", lines[i], got[i])
				}
				var g, w any
				if err := json.Unmarshal([]byte(got[i]), &g); err != nil {
					t.Fatalf("answer to %s: %v: %s", lines[i], err, got[i])
				}
				if err := json.Unmarshal([]byte(want[i]), &w); err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(g, w) {
					t.Errorf("answer to %s:\n got %s\nwant %s", lines[i], got[i], want[i])
				}
			}
			if version == "2025-03-26" {
				if batch := got[len(got)-2]; !strings.HasPrefix(batch, "[") {
					t.Errorf("a batch was answered with %s, want an array", batch)
				}
			}
		})
	}
}

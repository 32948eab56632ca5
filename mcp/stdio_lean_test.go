package mcp_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"testing"
	"time"
)

// leanStdio is a minimal MCP client over a process's stdio: it writes
// JSON-RPC requests as lines and reads the answer's line, decoding only
// what the caller asks for, as a third-party client's JSON parser would.
// BenchmarkStdioSearch10k uses it to tell what opsearch adds to a call
// (the pipe, JSON-RPC, the SDK's server end) from what the go-sdk client
// adds by decoding every answer into maps.
type leanStdio struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	exited chan error
	id     int
	buf    []byte
	// received is when the last answer's last byte had been read,
	// before it was decoded.
	received time.Time
}

// startLean starts bin serve with env and initializes a session.
func startLean(t testing.TB, bin string, env []string) *leanStdio {
	t.Helper()
	c := &leanStdio{cmd: exec.Command(bin, "serve"), exited: make(chan error, 1)}
	c.cmd.Env = env
	stdout, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if c.in, err = c.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	c.cmd.Stderr = &stderr
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { c.exited <- c.cmd.Wait() }()
	t.Cleanup(func() {
		_ = c.in.Close()
		select {
		case <-c.exited:
		case <-time.After(30 * time.Second):
			_ = c.cmd.Process.Kill()
			<-c.exited
		}
		if t.Failed() {
			t.Logf("opsearch stderr:\n%s", stderr.String())
		}
	})
	c.out = bufio.NewReaderSize(stdout, 1<<20)
	var init struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if err := c.call("initialize", map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "lean", "version": "0"},
	}, &init); err != nil || init.ProtocolVersion == "" {
		t.Fatalf("initialize: %v %+v", err, init)
	}
	if _, err := fmt.Fprintln(c.in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
		t.Fatal(err)
	}
	return c
}

// call sends one request and decodes its result into out, skipping the
// server's notifications.
func (c *leanStdio) call(method string, params any, out any) error {
	c.id++
	req, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": method, "params": params})
	if err != nil {
		return err
	}
	if _, err := c.in.Write(append(req, '\n')); err != nil {
		return fmt.Errorf("write request: %w", err)
	}
	for {
		line, err := c.out.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			c.buf = append(c.buf[:0], line...)
			for err == bufio.ErrBufferFull {
				line, err = c.out.ReadSlice('\n')
				c.buf = append(c.buf, line...)
			}
			line = c.buf
		}
		if err != nil {
			return fmt.Errorf("read answer: %w", err)
		}
		c.received = time.Now()
		var msg struct {
			ID     *int            `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(line, &msg); err != nil {
			return fmt.Errorf("decode answer: %w", err)
		}
		if msg.ID == nil || *msg.ID != c.id {
			continue // a notification
		}
		if msg.Error != nil {
			return fmt.Errorf("%s: %s", method, msg.Error.Message)
		}
		return json.Unmarshal(msg.Result, out)
	}
}

// leanTool is what the benchmark reads of a tool answer.
type leanTool struct {
	IsError           bool `json:"isError"`
	StructuredContent struct {
		TookMS   float64 `json:"tookMs"`
		Ready    bool    `json:"ready"`
		Complete bool    `json:"complete"`
	} `json:"structuredContent"`
}

func (c *leanStdio) tool(name string, args map[string]any) (leanTool, error) {
	var res leanTool
	err := c.call("tools/call", map[string]any{"name": name, "arguments": args}, &res)
	if err == nil && res.IsError {
		err = fmt.Errorf("%s failed", name)
	}
	return res, err
}

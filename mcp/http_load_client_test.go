package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync/atomic"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// loadCaller is one client of the load benchmark.
type loadCaller interface {
	// Search runs openproject_search for query and fails unless the
	// answer is a successful tool result.
	Search(ctx context.Context, query string) error
	Close() error
}

// loadClient connects one load client as key's user: a rawLoadClient,
// or a go-sdk client when OPSEARCH_LOAD_CLIENT=sdk.
func (e *loadEnv) loadClient(ctx context.Context, key string) (loadCaller, error) {
	if os.Getenv("OPSEARCH_LOAD_CLIENT") == "sdk" {
		cs, err := e.connect(ctx, key)
		if err != nil {
			return nil, err
		}
		return sdkLoadClient{cs}, nil
	}
	c := &rawLoadClient{url: e.ts.URL + "/mcp", key: key, http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}}
	if err := c.initialize(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// sdkLoadClient is a go-sdk client session.
type sdkLoadClient struct{ cs *sdk.ClientSession }

func (c sdkLoadClient) Search(ctx context.Context, query string) error {
	res, err := c.cs.CallTool(ctx, &sdk.CallToolParams{Name: "openproject_search", Arguments: map[string]any{"query": query}})
	if err != nil {
		return err
	}
	if res.IsError || res.StructuredContent == nil {
		return fmt.Errorf("openproject_search %q: tool error: %s", query, contentText(res))
	}
	return nil
}

func (c sdkLoadClient) Close() error { return c.cs.Close() }

// rawLoadClient speaks Streamable HTTP as a load generator would: it
// initializes once, then POSTs each tools/call with the headers the
// transport requires and reads the answer from the event stream,
// decoding only what tells success from failure (the JSON-RPC error, the
// tool's isError, and that the answer holds results).
type rawLoadClient struct {
	url     string
	key     string
	http    *http.Client
	id      atomic.Int64
	version string
}

// loadProtocolVersion is what the raw client asks for, the newest, as
// current clients do; the server may answer with another it supports,
// which the client then uses.
const loadProtocolVersion = "2026-07-28"

func (c *rawLoadClient) initialize(ctx context.Context) error {
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if err := c.post(ctx, "initialize", map[string]any{
		"protocolVersion": loadProtocolVersion, "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "load", "version": "0"},
	}, &res); err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	c.version = res.ProtocolVersion
	return c.notify(ctx, "notifications/initialized")
}

func (c *rawLoadClient) Search(ctx context.Context, query string) error {
	// The answer is decoded as far as telling success from failure
	// takes: what a load generator on another machine would do, and less
	// of this machine's CPU taken from the server.
	var res struct {
		IsError           bool `json:"isError"`
		StructuredContent *struct {
			Results []json.RawMessage `json:"results"`
		} `json:"structuredContent"`
		Content json.RawMessage `json:"content"`
	}
	if err := c.post(ctx, "tools/call", map[string]any{"name": "openproject_search", "arguments": map[string]any{"query": query}}, &res); err != nil {
		return fmt.Errorf("openproject_search %q: %w", query, err)
	}
	if res.IsError || res.StructuredContent == nil {
		var content []struct {
			Text string `json:"text"`
		}
		_ = json.Unmarshal(res.Content, &content)
		text := ""
		if len(content) > 0 {
			text = content[0].Text
		}
		return fmt.Errorf("openproject_search %q: tool error: %s", query, text)
	}
	return nil
}

func (c *rawLoadClient) Close() error {
	c.http.CloseIdleConnections()
	return nil
}

// request POSTs one JSON-RPC message with the headers of the protocol
// version in use (2026-07-28 repeats the method and the tool's name).
func (c *rawLoadClient) request(ctx context.Context, method, name string, body any) (*http.Response, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("X-OpenProject-Api-Key", c.key)
	if c.version != "" {
		req.Header.Set("Mcp-Protocol-Version", c.version)
		req.Header.Set("Mcp-Method", method)
		if name != "" {
			req.Header.Set("Mcp-Name", name)
		}
	}
	return c.http.Do(req)
}

func (c *rawLoadClient) notify(ctx context.Context, method string) error {
	resp, err := c.request(ctx, method, "", map[string]any{"jsonrpc": "2.0", "method": method})
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s: HTTP %s", method, resp.Status)
	}
	return nil
}

// post sends one request and decodes its result into out.
func (c *rawLoadClient) post(ctx context.Context, method string, params, out any) error {
	id := c.id.Add(1)
	var name string
	if p, ok := params.(map[string]any); ok && method == "tools/call" {
		name, _ = p["name"].(string)
	}
	resp, err := c.request(ctx, method, name, map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %s: %.200s", resp.Status, body)
	}
	msg := body
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		// The answer is the data of the stream's message event (progress
		// notifications, if any, come before it).
		msg = nil
		for line := range bytes.Lines(body) {
			if d, ok := bytes.CutPrefix(line, []byte("data:")); ok && bytes.Contains(d, []byte(`"id"`)) {
				msg = bytes.TrimSpace(d)
			}
		}
		if msg == nil {
			return fmt.Errorf("no response in the event stream: %.200s", body)
		}
	}
	// One pass: the result decodes straight into out.
	rpc := struct {
		ID     int64 `json:"id"`
		Result any   `json:"result"`
		Error  *struct {
			Message string `json:"message"`
		} `json:"error"`
	}{Result: out}
	if err := json.Unmarshal(msg, &rpc); err != nil {
		return fmt.Errorf("decode response: %w", err)
	}
	switch {
	case rpc.Error != nil:
		return errors.New(rpc.Error.Message)
	case rpc.ID != id:
		return fmt.Errorf("response to request %d answers %d", id, rpc.ID)
	}
	return nil
}

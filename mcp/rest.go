package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// restTool is what the REST bridge knows of a tool before any user is
// involved: whether it writes, and its resolved input schema.
type restTool struct {
	write  bool
	schema *jsonschema.Resolved
}

// restTools lists every tool (write tools included, so a read-only
// server can answer 403 rather than 404 for them) from a server with no
// API and no index: registration touches neither.
func restTools() (map[string]restTool, error) {
	tools, err := ListTools(context.Background(), Options{})
	if err != nil {
		return nil, err
	}
	out := make(map[string]restTool, len(tools))
	for _, t := range tools {
		b, err := json.Marshal(t.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("schema of %s: %w", t.Name, err)
		}
		var sch jsonschema.Schema
		if err := json.Unmarshal(b, &sch); err != nil {
			return nil, fmt.Errorf("schema of %s: %w", t.Name, err)
		}
		res, err := sch.Resolve(nil)
		if err != nil {
			return nil, fmt.Errorf("schema of %s: %w", t.Name, err)
		}
		out[t.Name] = restTool{write: slices.Contains(writeToolNames, t.Name), schema: res}
	}
	return out, nil
}

// restTool answers POST /api/tools/{name}: the reference server's REST
// bridge. The tool runs through the key's own MCP server (an in-memory
// session), so it behaves exactly as over MCP. The checks come in the
// reference's order: unknown tool 404, write while read-only 403, no key
// 401, bad JSON 400, schema violation 400.
func (h *httpHandler) restTool(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	t, ok := h.tools[name]
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]any{"error": "Unknown tool: " + name})
		return
	}
	if t.write && h.opts.ReadOnly {
		writeJSON(w, http.StatusForbidden, map[string]any{
			"code":  "SERVER_READ_ONLY",
			"error": "The server is read-only: " + name + " is disabled",
		})
		return
	}
	if key, _ := h.apiKey(r); key == "" {
		h.unauthorized(w, r, "Unauthorized: an OpenProject API key or OAuth access token is required (Authorization: Bearer, X-OpenProject-Api-Key header, or apiKey query parameter)")
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeJSON(w, http.StatusRequestEntityTooLarge, map[string]any{"error": fmt.Sprintf("request body larger than %d bytes", mbe.Limit)})
			return
		}
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "cannot read the request body"})
		return
	}
	args, err := decodeArgs(body)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "Invalid JSON body: " + err.Error()})
		return
	}
	// The same check as over MCP (checkToolArgs), in the same words: a
	// bad argument is the request's fault, so 400 here, where MCP can
	// only answer an error result.
	sch := t.schema.Schema()
	dropNulls(sch, args)
	if err := checkArgs(sch, args); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{
			"error":   "Validation error",
			"details": []map[string]any{{"message": err.Error()}},
		})
		return
	}
	l, ks := h.lease(w, r)
	if l == nil {
		return
	}
	defer l.Release()
	cs, err := ks.client(r.Context())
	if err != nil {
		h.log.Error("REST bridge", "tool", name, "error", err)
		writeJSON(w, http.StatusInternalServerError, map[string]any{"error": "internal error"})
		return
	}
	res, err := cs.CallTool(r.Context(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		if r.Context().Err() != nil {
			return
		}
		// A protocol error: the SDK refused the arguments.
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "Validation error", "details": []map[string]any{{"message": err.Error()}}})
		return
	}
	content := res.Content
	if content == nil {
		content = []sdk.Content{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"content": content, "isError": res.IsError, "data": res.StructuredContent})
}

// client returns the in-memory client session of the REST bridge.
func (ks *keyServer) client(ctx context.Context) (*sdk.ClientSession, error) {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	if ks.cs != nil {
		return ks.cs, nil
	}
	st, ct := sdk.NewInMemoryTransports()
	// The sessions outlive the request that opened them; the user's
	// Close ends them.
	bg := context.WithoutCancel(ctx)
	ss, err := ks.srv.Connect(bg, st, nil)
	if err != nil {
		return nil, fmt.Errorf("connect REST bridge: %w", err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "opsearch-rest", Version: "1"}, nil).Connect(bg, ct, nil)
	if err != nil {
		_ = ss.Close()
		return nil, fmt.Errorf("connect REST bridge: %w", err)
	}
	ks.cs, ks.ss = cs, ss
	return cs, nil
}

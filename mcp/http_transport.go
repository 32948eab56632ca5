package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// The MCP transports over HTTP: stateless Streamable HTTP, and the legacy
// SSE transport (a stream per session, messages posted beside it).

// serveStreamable serves MCP Streamable HTTP for the request's user.
func (h *httpHandler) serveStreamable(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet || r.Method == http.MethodDelete {
		// Stateless: there are no sessions to stream or end. Answer
		// before authenticating, as the SDK would.
		w.Header().Set("Allow", "POST, OPTIONS")
		writeJSON(w, http.StatusMethodNotAllowed, map[string]any{"error": "Method Not Allowed: this server is stateless; POST JSON-RPC messages"})
		return
	}
	l, ks := h.lease(w, r)
	if l == nil {
		return
	}
	defer l.Release()
	// Clients such as Open WebUI send a narrower Accept and would get 406.
	r.Header.Set("Accept", "application/json, text/event-stream")
	ctx := context.WithValue(r.Context(), ctxServerKey{}, ks)
	r, isSearch := h.searchCall(r)
	if isSearch {
		// A search is CPU work from its request's decoding to its
		// answer's encoding, most of it in the SDK around the tool. It
		// takes a search slot for all of it, so the searches waiting
		// queue in order instead of sharing the cores: under load, each
		// then takes its own time after its wait, where sharing made the
		// costliest ones take many times theirs.
		if err := h.searchSlots.Acquire(ctx); err != nil {
			return // the client is gone
		}
		defer h.searchSlots.Release()
		h.streamable.ServeHTTP(w, r.WithContext(context.WithValue(ctx, ctxSlotHeld{}, true)))
		return
	}
	h.streamable.ServeHTTP(w, r.WithContext(ctx))
}

// ctxSlotHeld marks a request whose search slot the transport holds.
type ctxSlotHeld struct{}

// slotHeld reports whether ctx's request already holds a search slot.
func slotHeld(ctx context.Context) bool {
	held, _ := ctx.Value(ctxSlotHeld{}).(bool)
	return held
}

// searchCall reports whether r is a call of a search tool, reading its
// body (at most the size the SDK accepts) and returning r with the body
// restored. Anything it cannot tell is not a search: the SDK answers it.
func (h *httpHandler) searchCall(r *http.Request) (*http.Request, bool) {
	if r.Method != http.MethodPost || r.Body == nil {
		return r, false
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, h.opts.MaxBodyBytes+1))
	_ = r.Body.Close()
	r2 := r.Clone(r.Context())
	r2.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		// The SDK answers the truncated body as it would have.
		return r2, false
	}
	var msg struct {
		Method string `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.Method != "tools/call" {
		return r2, false
	}
	return r2, isSearchTool(msg.Params.Name)
}

// isSearchTool reports whether the tool named answers from the index.
func isSearchTool(name string) bool {
	switch name {
	case toolSearch, toolSearchWorkPackages, toolSearchWikiPages, toolSearchMeetings:
		return true
	}
	return false
}

// serveSSEPath splits /sse between the transports, as the reference
// does: GET without a session opens a legacy SSE stream, a POST with
// ?sessionid= is a legacy message, anything else is Streamable HTTP.
func (h *httpHandler) serveSSEPath(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodGet && r.Header.Get("Mcp-Session-Id") == "":
		h.sseStream(w, r)
	case r.Method == http.MethodPost && sseSessionID(r) != "":
		h.sseMessage(w, r)
	default:
		h.serveStreamable(w, r)
	}
}

func sseSessionID(r *http.Request) string {
	q := r.URL.Query()
	for _, k := range []string{"sessionid", "sessionId", "session_id"} {
		if v := q.Get(k); v != "" {
			return v
		}
	}
	return ""
}

// sseStream opens a legacy SSE session bound to the request's user.
func (h *httpHandler) sseStream(w http.ResponseWriter, r *http.Request) {
	l, ks := h.lease(w, r)
	if l == nil {
		return
	}
	// The lease lasts as long as the stream: every message of the
	// session is handled while it is open.
	defer l.Release()
	uid := l.Identity.UserID
	sw := &sseIDWriter{statusWriter: statusWriter{ResponseWriter: w, status: http.StatusOK}}
	sw.onID = func(id string) {
		h.sseMu.Lock()
		h.sseSessions[id] = uid
		h.sseMu.Unlock()
	}
	defer func() {
		if sw.id != "" {
			h.sseMu.Lock()
			delete(h.sseSessions, sw.id)
			h.sseMu.Unlock()
		}
	}()
	ctx, cancel := context.WithCancel(context.WithValue(r.Context(), ctxServerKey{}, ks))
	defer cancel()
	defer context.AfterFunc(h.streams, cancel)()
	h.sse.ServeHTTP(sw, r.WithContext(ctx))
}

// CloseStreams ends the open legacy SSE streams; call it when a graceful
// shutdown starts, so http.Server.Shutdown is not held up by them.
// Requests (and Streamable HTTP calls) are not affected.
func (h *httpHandler) CloseStreams() { h.closeStreams() }

// sseMessage delivers a legacy SSE message to its session. The session
// id is the capability, as in the reference; a credential sent along
// must belong to the session's user, so no key can drive another user's
// session.
func (h *httpHandler) sseMessage(w http.ResponseWriter, r *http.Request) {
	id := sseSessionID(r)
	if id == "" {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "sessionId is required"})
		return
	}
	h.sseMu.Lock()
	uid, ok := h.sseSessions[id]
	h.sseMu.Unlock()
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]any{"error": "session not found"})
		return
	}
	if key, fromRequest := h.apiKey(r); fromRequest {
		who, err := h.mgr.Validate(r.Context(), key)
		if err != nil {
			h.writeAcquireError(w, r, err)
			return
		}
		if who.UserID != uid {
			writeJSON(w, http.StatusForbidden, map[string]any{"error": "Forbidden: the session belongs to another user"})
			return
		}
	}
	// The SDK reads the id from "sessionid".
	r2 := r.Clone(r.Context())
	u := *r.URL
	u.RawQuery = url.Values{"sessionid": {id}}.Encode()
	r2.URL = &u
	if r2.Header.Get("Content-Type") == "" {
		r2.Header.Set("Content-Type", "application/json")
	}
	h.sse.ServeHTTP(w, r2)
}

// sseIDWriter learns the legacy SSE session id from the first event the
// SDK writes ("event: endpoint" with data "...?sessionid=<id>"), which
// the SDK does not expose otherwise.
type sseIDWriter struct {
	statusWriter
	buf  []byte
	id   string
	onID func(string)
}

func (s *sseIDWriter) Write(b []byte) (int, error) {
	if s.id == "" && len(s.buf) < 4096 {
		s.buf = append(s.buf, b...)
		if i := strings.Index(string(s.buf), "sessionid="); i >= 0 {
			rest := string(s.buf[i+len("sessionid="):])
			if j := strings.IndexAny(rest, "&\r\n"); j >= 0 {
				s.id = rest[:j]
				s.buf = nil
				// Registered before the client can learn the endpoint.
				s.onID(s.id)
			}
		}
	}
	return s.statusWriter.Write(b)
}

func (s *sseIDWriter) Flush() { s.statusWriter.Flush() }

func (s *sseIDWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

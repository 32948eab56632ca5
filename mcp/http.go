package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	gosync "sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/sync"
	"golang.org/x/sync/singleflight"
)

// DefaultMaxBodyBytes is the request body limit of the HTTP server.
const DefaultMaxBodyBytes = 4 << 20

// HTTPOptions configure NewHTTPHandler.
type HTTPOptions struct {
	// LiveTimeout bounds one live read tool call (see Options.LiveTimeout).
	LiveTimeout time.Duration
	// BaseURL is the OpenProject instance (shown by /health).
	BaseURL string
	// ServerKey is the optional single-tenant fallback: a request without
	// any credential acts as the owner of this key. Leave it empty on a
	// shared server.
	ServerKey string
	// ReadOnly hides and refuses the write tools, over MCP and REST.
	ReadOnly bool
	// AllowedOrigins are the browser origins (scheme://host[:port]) that
	// may call the server; "*" allows any. Loopback origins are allowed
	// when the request's Host is loopback too. Requests without Origin
	// (every non-browser client) are not affected.
	AllowedOrigins []string
	// AllowedHosts are the Host header values (name or name:port)
	// accepted besides loopback names and IP addresses; "*" accepts any.
	// A request naming any other host is refused (DNS rebinding), on
	// every listener: list the names clients use to reach the server,
	// such as a reverse proxy's or a compose service's.
	AllowedHosts []string
	// MaxBodyBytes limits request bodies (default DefaultMaxBodyBytes).
	MaxBodyBytes int64
	// Logger receives access and error lines; nil discards. Query strings
	// are logged with the values of credential-like parameters (apiKey,
	// api_key, token, key, access_token, ...) redacted, and keys never are.
	Logger *slog.Logger
	// Manager opens users and validates keys; build it with
	// HTTPAttach as its Attach (the type admits no other).
	Manager *HTTPUsers
	// Extra are further routes ("GET /metrics") mounted as they are.
	Extra map[string]http.Handler
	// ObserveSearch is passed to every user's server (see Options).
	ObserveSearch func(d time.Duration, tool string)
	// Version is reported to MCP clients.
	Version string
	// Probe tells /health whether OpenProject answers; nil probes
	// BaseURL's API root without a key (openproject.Probe).
	Probe func(ctx context.Context) error
	// ProbeEvery is how long /health reuses a probe's result (default
	// 10s), so frequent health checks cost OpenProject little.
	ProbeEvery time.Duration
}

// HTTPUsers is the user manager NewHTTPHandler serves from: its
// attachments are HTTPAttach's, which the type system checks.
type HTTPUsers = sync.Manager[*HTTPUser]

// HTTPUserHooks observe the HTTP server's users (for metrics): OnSync
// after every sync of a user, OnClose when a user is closed. Either may
// be nil.
type HTTPUserHooks struct {
	OnSync  func(u *sync.User, rep sync.Report, err error)
	OnClose func(u *sync.User)
}

// HTTPAttach returns the sync.ManagerOptions.Attach for NewHTTPHandler:
// the per-user state is the user's index and one MCP server per key.
func HTTPAttach(opts UserIndexOptions, hooks HTTPUserHooks) func(*sync.User) *HTTPUser {
	return func(u *sync.User) *HTTPUser {
		idx := NewUserIndex(opts)
		idx.SetUser(u)
		return &HTTPUser{user: u, idx: idx, hooks: hooks, servers: map[[sha256.Size]byte]*keyServer{}}
	}
}

// HTTPUser is one active user's state in the HTTP server: the index
// shared by all their requests, and an MCP server per API key. Servers
// are per key, not per user, because the live tools must act with the
// key the request brought; the key lives only in that server's client.
type HTTPUser struct {
	user  *sync.User
	idx   *UserIndex
	hooks HTTPUserHooks

	mu      gosync.Mutex
	closed  bool
	servers map[[sha256.Size]byte]*keyServer
}

// keyServer is the MCP server of one key, and a lazily connected
// in-memory client for the REST bridge.
type keyServer struct {
	srv *sdk.Server

	mu gosync.Mutex
	cs *sdk.ClientSession
	ss *sdk.ServerSession
}

var _ sync.Attachment = (*HTTPUser)(nil)

// RecordSync implements sync.Attachment.
func (s *HTTPUser) RecordSync(rep sync.Report, err error) {
	s.idx.RecordSync(rep, err)
	if s.hooks.OnSync != nil {
		s.hooks.OnSync(s.user, rep, err)
	}
}

// Close implements sync.Attachment: it ends the REST bridge sessions and
// closes the user's files, waiting for running searches.
func (s *HTTPUser) Close() error {
	if s.hooks.OnClose != nil {
		defer s.hooks.OnClose(s.user)
	}
	s.mu.Lock()
	s.closed = true
	servers := s.servers
	s.servers = nil
	s.mu.Unlock()
	for _, ks := range servers {
		ks.mu.Lock()
		if ks.cs != nil {
			_ = ks.cs.Close()
			_ = ks.ss.Close()
		}
		ks.mu.Unlock()
	}
	return s.idx.Close()
}

// server returns the MCP server for key, building it on first use.
func (s *HTTPUser) server(key string, build func() (*sdk.Server, error)) (*keyServer, error) {
	h := sha256.Sum256([]byte(key))
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, sync.ErrManagerClosed
	}
	if ks, ok := s.servers[h]; ok {
		return ks, nil
	}
	srv, err := build()
	if err != nil {
		return nil, err
	}
	ks := &keyServer{srv: srv}
	s.servers[h] = ks
	return ks, nil
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

// httpHandler serves MCP (Streamable HTTP and legacy SSE), the REST
// bridge and /health for many users.
type httpHandler struct {
	opts  HTTPOptions
	mgr   *HTTPUsers
	log   *slog.Logger
	tools map[string]restTool

	streamable http.Handler
	sse        http.Handler

	// streams ends every legacy SSE stream when cancelled (CloseStreams):
	// they never end by themselves, and would hold a graceful shutdown.
	streams      context.Context
	closeStreams context.CancelFunc

	sseMu       gosync.Mutex
	sseSessions map[string]int64 // legacy SSE session id -> user id

	// upstream caches the last reachability probe of OpenProject for
	// /health; probes share one request (probeFlight).
	probeFlight singleflight.Group
	upstreamMu  gosync.Mutex
	upstreamAt  time.Time
	upstreamErr error

	mux *http.ServeMux
}

type ctxServerKey struct{}

// NewHTTPHandler returns the multi-user HTTP handler:
//
//   - POST/GET/DELETE /mcp, / and /sse: MCP Streamable HTTP;
//   - GET /sse with POST /messages (or /sse?sessionid=): legacy SSE;
//   - POST /api/tools/{name} and /tools/{name}: the REST bridge;
//   - GET /health; and opts.Extra.
//
// Every MCP and REST request must bring an OpenProject API key
// (Authorization: Bearer, X-OpenProject-Api-Key, ?apiKey=, in that order,
// then opts.ServerKey), and is served from that key's user's index.
func NewHTTPHandler(opts HTTPOptions) (http.Handler, error) {
	if opts.Manager == nil {
		return nil, errors.New("http handler: Manager is required")
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	h := &httpHandler{
		opts: opts, mgr: opts.Manager, log: opts.Logger.With("subsystem", "http"),
		sseSessions: map[string]int64{},
	}
	h.streams, h.closeStreams = context.WithCancel(context.Background())
	var err error
	if h.tools, err = restTools(); err != nil {
		return nil, err
	}
	getServer := func(r *http.Request) *sdk.Server {
		ks, _ := r.Context().Value(ctxServerKey{}).(*keyServer)
		if ks == nil {
			return nil
		}
		return ks.srv
	}
	// Our own Host check (hostAllowed) covers every route and honours
	// AllowedHosts. The SDK's is off: it would refuse a reverse proxy's
	// Host, and, comparing case-sensitively, "LOCALHOST" on /mcp only.
	const noLocal = true
	// Stateless: every POST is a complete request/response with its own
	// credentials, checked on every request. No session outlives a
	// request, so none can be replayed with another user's key, none leaks
	// when a client vanishes, and the server works behind a load balancer
	// and with the 2026-07-28 protocol. The tools need no server-to-client
	// requests; progress notifications still ride on the POST's stream.
	// Stateful features (GET notification streams, DELETE) answer 405,
	// which the spec allows and clients handle.
	h.streamable = sdk.NewStreamableHTTPHandler(getServer, &sdk.StreamableHTTPOptions{
		Stateless: true, DisableLocalhostProtection: noLocal, MaxRequestBodyBytes: opts.MaxBodyBytes,
	})
	h.sse = sdk.NewSSEHandler(getServer, &sdk.SSEOptions{DisableLocalhostProtection: noLocal, MaxRequestBodyBytes: opts.MaxBodyBytes})

	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", h.health)
	mux.HandleFunc("/mcp", h.serveStreamable)
	mux.HandleFunc("/{$}", h.serveStreamable)
	mux.HandleFunc("/sse", h.serveSSEPath)
	mux.HandleFunc("POST /messages", h.sseMessage)
	mux.HandleFunc("POST /api/tools/{name}", h.restTool)
	mux.HandleFunc("POST /tools/{name}", h.restTool)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, map[string]any{"error": "Not Found"})
	})
	for pattern, eh := range opts.Extra {
		if eh == nil {
			continue
		}
		if err := handleSafe(mux, pattern, eh); err != nil {
			return nil, err
		}
	}
	h.mux = mux
	return h, nil
}

// handleSafe turns ServeMux's panic on a bad or conflicting pattern into
// an error.
func handleSafe(mux *http.ServeMux, pattern string, h http.Handler) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("http handler: route %q: %v", pattern, p)
		}
	}()
	mux.Handle(pattern, h)
	return nil
}

// ServeHTTP applies the checks every route shares, then routes.
func (h *httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := &statusWriter{ResponseWriter: w, status: http.StatusOK}
	// Strip the query-string key at once: nothing downstream (the SDK,
	// the access log, an error message) can see it again.
	r, qkey := stripAPIKey(r)
	defer func() {
		lvl := slog.LevelDebug
		if rec.status >= 400 {
			lvl = slog.LevelInfo
		}
		h.log.Log(r.Context(), lvl, "request", "method", r.Method, "path", r.URL.Path, "query", redactQuery(r.URL.RawQuery),
			"status", rec.status, "duration", time.Since(start))
	}()
	if !h.hostAllowed(r) {
		writeJSON(rec, http.StatusForbidden, map[string]any{"error": fmt.Sprintf("Forbidden: invalid Host header %q", r.Host)})
		return
	}
	if origin := r.Header.Get("Origin"); origin != "" {
		if !h.originAllowed(origin, r) {
			writeJSON(rec, http.StatusForbidden, map[string]any{"error": "Forbidden: origin not allowed"})
			return
		}
		rec.Header().Set("Access-Control-Allow-Origin", origin)
		rec.Header().Set("Access-Control-Expose-Headers", "Mcp-Session-Id, Mcp-Protocol-Version")
		rec.Header().Add("Vary", "Origin")
	}
	if r.Method == http.MethodOptions {
		rec.Header().Set("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS")
		rec.Header().Set("Access-Control-Allow-Headers", "Content-Type, Authorization, X-OpenProject-Api-Key, Mcp-Session-Id, Last-Event-ID, Mcp-Protocol-Version")
		rec.WriteHeader(http.StatusNoContent)
		return
	}
	if r.Body != nil {
		r.Body = http.MaxBytesReader(rec, r.Body, h.opts.MaxBodyBytes)
	}
	if qkey != "" {
		r = r.WithContext(context.WithValue(r.Context(), ctxQueryKey{}, qkey))
	}
	h.mux.ServeHTTP(rec, r)
}

// ctxQueryKey carries the ?apiKey= value, removed from the URL, to the
// credential lookup of the same request. It is read only by apiKey, for
// the request it was set on (the MCP session is stateless, so no later
// request inherits it).
type ctxQueryKey struct{}

// stripAPIKey removes apiKey from the query and returns it.
func stripAPIKey(r *http.Request) (*http.Request, string) {
	if !strings.Contains(strings.ToLower(r.URL.RawQuery), "apikey") {
		return r, ""
	}
	q := r.URL.Query()
	var key string
	for k, vs := range q {
		if strings.EqualFold(k, "apiKey") {
			if key == "" && len(vs) > 0 {
				key = vs[0]
			}
			delete(q, k)
		}
	}
	r2 := r.Clone(r.Context())
	u := *r.URL
	u.RawQuery = q.Encode()
	r2.URL = &u
	r2.RequestURI = u.RequestURI()
	return r2, key
}

// RedactURL returns u as a string with the values of credential-like
// query parameters (redactQuery) replaced and any userinfo dropped, for
// log lines written outside this handler.
func RedactURL(u *url.URL) string {
	if u == nil {
		return ""
	}
	c := *u
	c.RawQuery = redactQuery(c.RawQuery)
	c.User = nil
	return c.String()
}

// isCredentialParam reports whether a query parameter's name looks like
// a credential's. Only apiKey is one here, but clients written for other
// servers send a key or token under these names, and the value must not
// reach a log line whatever it is called.
func isCredentialParam(name string) bool {
	n := strings.ToLower(name)
	n = strings.NewReplacer("_", "", "-", "", ".", "").Replace(n)
	switch n {
	case "apikey", "key", "token", "accesstoken", "authtoken", "authorization", "auth",
		"bearer", "idtoken", "refreshtoken", "password", "passwd", "secret", "clientsecret", "signature", "sig":
		return true
	}
	return false
}

// redactQuery replaces the values of credential-like parameters in a raw
// query string, keeping everything else as it was sent (order, escaping,
// even malformed pairs), so a log line still shows what was asked.
func redactQuery(raw string) string {
	if raw == "" {
		return raw
	}
	pairs := strings.Split(raw, "&")
	for i, p := range pairs {
		name, _, hasValue := strings.Cut(p, "=")
		if un, err := url.QueryUnescape(name); err == nil {
			name = un
		}
		if hasValue && isCredentialParam(name) {
			pairs[i] = p[:strings.IndexByte(p, '=')+1] + "REDACTED"
		}
	}
	return strings.Join(pairs, "&")
}

// apiKey returns the request's credential in the reference server's
// precedence, and whether it came from the request (not the fallback).
func (h *httpHandler) apiKey(r *http.Request) (string, bool) {
	if a := strings.TrimSpace(r.Header.Get("Authorization")); len(a) > 7 && strings.EqualFold(a[:7], "bearer ") {
		if k := strings.TrimSpace(a[7:]); k != "" {
			return k, true
		}
	}
	if k := strings.TrimSpace(r.Header.Get("X-OpenProject-Api-Key")); k != "" {
		return k, true
	}
	if k, _ := r.Context().Value(ctxQueryKey{}).(string); strings.TrimSpace(k) != "" {
		return strings.TrimSpace(k), true
	}
	return h.opts.ServerKey, false
}

// isLoopbackHost reports whether host (with or without port) names the
// local machine.
func isLoopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// hostAllowed is the DNS-rebinding check: a page on an attacker's domain
// that re-resolves the name to this server's address would otherwise
// call us from the victim's browser, with the victim's network position.
// The request must name a loopback host, an IP address (a literal cannot
// be rebound: the page would have to be served from that address
// already), or an allowed host ("*" allows any). It applies to every
// listener, whatever address the connection arrived on: in a container
// the server listens on all interfaces and sees connections from the
// published port on a non-loopback address, yet a browser on the host
// reaches it all the same. Names compare case-insensitively, as DNS does.
func (h *httpHandler) hostAllowed(r *http.Request) bool {
	if isLoopbackHost(r.Host) || net.ParseIP(strings.Trim(hostOnly(r.Host), "[]")) != nil {
		return true
	}
	for _, a := range h.opts.AllowedHosts {
		if a == "*" || strings.EqualFold(a, r.Host) || (!strings.Contains(a, ":") && strings.EqualFold(a, hostOnly(r.Host))) {
			return true
		}
	}
	return false
}

func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return hostport
}

// originAllowed checks a browser's Origin (MCP spec: servers must
// validate it).
func (h *httpHandler) originAllowed(origin string, r *http.Request) bool {
	for _, a := range h.opts.AllowedOrigins {
		if a == "*" || strings.EqualFold(strings.TrimRight(a, "/"), origin) {
			return true
		}
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	return isLoopbackHost(u.Host) && isLoopbackHost(r.Host)
}

// lease authenticates the request and returns the lease on its user and
// the MCP server of its key, or writes the error answer and returns nil.
func (h *httpHandler) lease(w http.ResponseWriter, r *http.Request) (*sync.Lease[*HTTPUser], *keyServer) {
	key, _ := h.apiKey(r)
	if key == "" {
		unauthorized(w, "Unauthorized: an OpenProject API key is required (Authorization: Bearer, X-OpenProject-Api-Key header, or apiKey query parameter)")
		return nil, nil
	}
	l, err := h.mgr.Acquire(r.Context(), key)
	if err != nil {
		h.writeAcquireError(w, r, err)
		return nil, nil
	}
	ks, err := l.Attachment.server(key, func() (*sdk.Server, error) {
		client, err := h.mgr.NewClient(key)
		if err != nil {
			return nil, err
		}
		api, ok := client.(API)
		if !ok {
			return nil, errors.New("the manager's client does not implement mcp.API")
		}
		return NewServer(api, l.Attachment.idx, Options{ReadOnly: h.opts.ReadOnly, Logger: h.opts.Logger, Version: h.opts.Version,
			ObserveSearch: h.opts.ObserveSearch, Upstream: h.mgr, LiveTimeout: h.opts.LiveTimeout}), nil
	})
	if err != nil {
		l.Release()
		h.writeAcquireError(w, r, err)
		return nil, nil
	}
	return l, ks
}

func (h *httpHandler) writeAcquireError(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, openproject.ErrUnauthenticated), errors.Is(err, openproject.ErrPermission):
		unauthorized(w, "Unauthorized: OpenProject rejected the API key")
	case errors.Is(err, sync.ErrTooManyUsers), errors.Is(err, sync.ErrManagerClosed):
		w.Header().Set("Retry-After", "30")
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"error": "Service Unavailable: " + err.Error()})
	case errors.Is(err, sync.ErrLocked):
		// Another opsearch process (a CLI sync, say) holds the user's
		// files: temporary, and no fault of OpenProject's. The message
		// names the directory, so the operator knows which process.
		h.log.Warn("cannot serve the user: their files are in use", "error", err)
		w.Header().Set("Retry-After", "30")
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"error": "Service Unavailable: " + err.Error() + "; try again when it has finished"})
	case r.Context().Err() != nil:
		// The client left; nobody reads the answer.
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"error": "request cancelled"})
	default:
		h.log.Error("cannot serve the user", "error", err)
		writeJSON(w, http.StatusBadGateway, map[string]any{"error": "Bad Gateway: cannot reach OpenProject or open the user's index: " + userMessage(err)})
	}
}

func unauthorized(w http.ResponseWriter, msg string) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="opsearch"`)
	writeJSON(w, http.StatusUnauthorized, map[string]any{"error": msg})
}

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
	h.streamable.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxServerKey{}, ks)))
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

// Upstream probes of /health: a result is reused for probeTTL, and a
// probe waits at most probeTimeout.
const (
	probeTTL     = 10 * time.Second
	probeTimeout = 5 * time.Second
)

// upstream returns whether OpenProject answers, probing at most once per
// probeTTL however often /health is asked.
func (h *httpHandler) upstream(ctx context.Context) (time.Time, error) {
	h.upstreamMu.Lock()
	err, at := h.upstreamErr, h.upstreamAt
	h.upstreamMu.Unlock()
	ttl := h.opts.ProbeEvery
	if ttl <= 0 {
		ttl = probeTTL
	}
	if !at.IsZero() && time.Since(at) < ttl {
		return at, err
	}
	v, _, _ := h.probeFlight.Do("probe", func() (any, error) {
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), probeTimeout)
		defer cancel()
		probe := h.opts.Probe
		if probe == nil {
			probe = func(ctx context.Context) error { return openproject.Probe(ctx, nil, h.opts.BaseURL) }
		}
		err := probe(pctx)
		now := time.Now()
		h.upstreamMu.Lock()
		h.upstreamErr, h.upstreamAt = err, now
		h.upstreamMu.Unlock()
		return [2]any{err, now}, nil
	})
	r := v.([2]any)
	err, _ = r[0].(error)
	return r[1].(time.Time), err
}

// health answers GET /health: no auth, no user data. status is "ok", or
// "degraded" with the reason while OpenProject does not answer (searches
// still answer from the local indexes; live tools and syncs fail). It
// stays HTTP 200 either way: the process itself is healthy, and
// restarting it would not bring OpenProject back.
func (h *httpHandler) health(w http.ResponseWriter, r *http.Request) {
	out := map[string]any{
		"status": "ok", "mode": "http", "openproject": h.opts.BaseURL,
		"readOnly": h.opts.ReadOnly, "activeUsers": h.mgr.ActiveUsers(),
	}
	if h.opts.BaseURL != "" || h.opts.Probe != nil {
		at, err := h.upstream(r.Context())
		up := map[string]any{"reachable": err == nil, "checkedAt": at.UTC().Format(time.RFC3339)}
		if err != nil {
			out["status"] = "degraded"
			out["reason"] = "OpenProject does not answer: " + err.Error()
			up["error"] = err.Error()
		}
		out["upstream"] = up
	}
	writeJSON(w, http.StatusOK, out)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// statusWriter records the status for the access log. Unwrap lets
// http.ResponseController reach Flush on the real writer (SSE).
type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (s *statusWriter) WriteHeader(code int) {
	if !s.wrote {
		s.status, s.wrote = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	s.wrote = true
	return s.ResponseWriter.Write(b)
}

func (s *statusWriter) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

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

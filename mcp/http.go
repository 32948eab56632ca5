package mcp

import (
	"cmp"
	"context"
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
	"golang.org/x/sync/singleflight"

	"github.com/opsearch/opsearch/extract"
)

// DefaultMaxBodyBytes is the request body limit of the HTTP server.
const DefaultMaxBodyBytes = 4 << 20

// HTTPOptions configure NewHTTPHandler.
type HTTPOptions struct {
	// SearchSlots bounds the searches of all users running at once
	// (Options.SearchSlots); nil: NewSearchSlots.
	SearchSlots *SearchSlots
	// VerifyResults checks every search result with OpenProject before
	// the answer leaves (see Options.VerifyResults).
	VerifyResults bool
	// VerifyTTL is Options.VerifyTTL.
	VerifyTTL time.Duration
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
	// ConfirmWrites makes each write answer with a preview first
	// (Options.ConfirmWrites), over MCP and REST.
	ConfirmWrites bool
	// Extract is Options.Extract for every user's server.
	Extract extract.Options
	// WebhookSecret, if set, turns on POST /webhooks/openproject for
	// events OpenProject signs with this secret.
	WebhookSecret string
	// AdminToken, if set, turns on GET /status for whoever brings it.
	AdminToken string
	// Stats, if set, gives the status page the process's figures.
	Stats func() OperatorStats
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

// httpHandler serves MCP (Streamable HTTP and legacy SSE), the REST
// bridge and /health for many users.
type httpHandler struct {
	opts  HTTPOptions
	mgr   *HTTPUsers
	log   *slog.Logger
	tools map[string]restTool
	// searchSlots bounds the searches of all users at once: they share
	// the cores (NewSearchSlots).
	searchSlots *SearchSlots

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
	opts.Logger = cmp.Or(opts.Logger, slog.New(slog.DiscardHandler))
	h := &httpHandler{
		opts: opts, mgr: opts.Manager, log: opts.Logger.With("subsystem", "http"),
		sseSessions: map[string]int64{},
		searchSlots: opts.SearchSlots, // one bound for every user's searches
	}
	if h.searchSlots == nil {
		h.searchSlots = NewSearchSlots()
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
	mux.HandleFunc("GET "+resourceMetadataPath, h.resourceMetadata)
	mux.HandleFunc("POST /webhooks/openproject", h.webhook)
	mux.HandleFunc("GET /status", h.status)
	mux.HandleFunc("GET "+resourceMetadataPath+"/mcp", h.resourceMetadata)
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
		rec.Header().Set("Access-Control-Allow-Headers", "Content-Type, Authorization, X-OpenProject-Api-Key, Mcp-Session-Id, Last-Event-ID, Mcp-Protocol-Version, Mcp-Method, Mcp-Name")
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

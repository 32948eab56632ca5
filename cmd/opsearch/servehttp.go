package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	gosync "sync"
	"time"

	"github.com/opsearch/opsearch/audit"
	"github.com/opsearch/opsearch/control"
	"github.com/opsearch/opsearch/internal/spread"
	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/mcp"
	"github.com/opsearch/opsearch/metrics"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/sync"
)

// httpFlags configure `opsearch serve --http`.
type httpFlags struct {
	addr           string
	idleTimeout    time.Duration
	maxUsers       int
	maxSyncs       int
	keyGrace       time.Duration
	allowedOrigins string
	allowedHosts   string
	sharedIndex    bool
	perUserIndex   bool
	viewRefresh    time.Duration
	verifyResults  bool
	webhookSecret  string
	adminToken     string
	crawlKey       string
	storeURL       string
}

// bindHTTP registers the HTTP mode's flags. PORT (the reference server's
// variable) selects HTTP mode on 127.0.0.1:$PORT, HOST overrides the bind
// host.
func bindHTTP(fs *flag.FlagSet, e env) *httpFlags {
	h := &httpFlags{}
	def := ""
	if p := strings.TrimSpace(e.getenv("PORT")); p != "" {
		def = p
	}
	fs.StringVar(&h.addr, "http", def, "serve MCP over HTTP for many users on ADDR (host:port, or a port bound to 127.0.0.1, or $HOST) instead of stdio (env PORT)")
	fs.DurationVar(&h.idleTimeout, "idle-timeout", sync.DefaultIdleTimeout, "HTTP mode: stop a user's sync worker and close their index after this long without a request")
	fs.IntVar(&h.maxUsers, "max-users", sync.DefaultMaxUsers, "HTTP mode: most users active at once (more get 503)")
	fs.IntVar(&h.maxSyncs, "max-syncs", sync.DefaultMaxConcurrentSyncs, "HTTP mode: most syncs running at once across users")
	fs.DurationVar(&h.keyGrace, "key-grace", sync.DefaultKeyGrace, "HTTP mode: how long after OpenProject last confirmed a key its index keeps answering while OpenProject is unreachable (negative: never)")
	fs.StringVar(&h.allowedOrigins, "allowed-origins", e.getenv("OPSEARCH_ALLOWED_ORIGINS"), "HTTP mode: comma-separated browser origins allowed to call the server, * for any (env OPSEARCH_ALLOWED_ORIGINS; loopback origins are allowed on loopback)")
	fs.StringVar(&h.allowedHosts, "allowed-hosts", e.getenv("OPSEARCH_ALLOWED_HOSTS"), "HTTP mode: comma-separated host names (name or name:port) clients may use besides loopback names and IP addresses, * for any; others get 403 (DNS rebinding), on every listener: list a reverse proxy's or a compose service's name (env OPSEARCH_ALLOWED_HOSTS)")
	fs.BoolVar(&h.sharedIndex, "shared-index", false, "HTTP mode: keep one store and index for every user of the instance, each user seeing what OpenProject shows their key (refreshed every --view-refresh); the default, unless the data dir holds indexes per user from an earlier version and no shared one")
	fs.BoolVar(&h.perUserIndex, "per-user-index", false, "HTTP mode: keep one store and index per user instead of the shared one (the reference the shared index is tested against)")
	fs.DurationVar(&h.viewRefresh, "view-refresh", sync.DefaultViewRefresh, "HTTP mode, shared index: how often each active user's permissions are asked of OpenProject again (also after each of their syncs and key checks)")
	fs.StringVar(&h.crawlKey, "crawl-api-key", e.getenv("OPSEARCH_CRAWL_API_KEY"), "HTTP mode, shared index: the API key of an account (best an administrator's) that crawls the shared store on the schedule and answers no request (env OPSEARCH_CRAWL_API_KEY; prefer the environment: arguments show in process lists)")
	fs.StringVar(&h.storeURL, "store", e.getenv("OPSEARCH_STORE_URL"), "HTTP mode, shared index: keep the shared store in this PostgreSQL database (postgres://user@host:port/db) instead of the data dir, so several replicas serve one instance; each keeps its own index in its data dir (env OPSEARCH_STORE_URL; prefer the environment for a password)")
	fs.StringVar(&h.adminToken, "admin-token", e.getenv("OPSEARCH_ADMIN_TOKEN"), "HTTP mode: serve the operators' status page at GET /status to whoever brings this token (Authorization: Bearer, or ?token=) (env OPSEARCH_ADMIN_TOKEN; prefer the environment)")
	fs.StringVar(&h.webhookSecret, "webhook-secret", e.getenv("OPSEARCH_WEBHOOK_SECRET"), "HTTP mode: accept OpenProject's webhooks at POST /webhooks/openproject, signed with this secret (the webhook's \"signature secret\" in OpenProject); each work package event is searchable within seconds (env OPSEARCH_WEBHOOK_SECRET; prefer the environment)")
	fs.BoolVar(&h.verifyResults, "verify-results", false, "HTTP mode: check every search result with OpenProject, with the user's key, before answering (verdicts kept 5s): a permission taken away shows at once, at a request per result")
	return h
}

// crew is the one spread.Crew every user's searches share, or none with
// a PostgreSQL store: a search then waits on the database, which may run
// on the cores the crew's helper would spin on.
func (h *httpFlags) crew() *spread.Crew {
	if h.storeURL != "" {
		return nil
	}
	return spread.NewCrew()
}

// shared returns the Manager's shared-index options, nil for an index
// per user. Without either flag the shared index is kept, unless
// sync.DefaultShared finds only indexes per user in dataDir (a crawl key
// asks for the shared one).
func (h *httpFlags) shared(baseURL, dataDir string, log *slog.Logger) (*sync.SharedOptions, error) {
	crawlKey := strings.TrimSpace(h.crawlKey)
	switch {
	case h.sharedIndex && h.perUserIndex:
		return nil, errors.New("--shared-index and --per-user-index exclude each other")
	case h.perUserIndex && crawlKey != "":
		return nil, errors.New("--crawl-api-key (OPSEARCH_CRAWL_API_KEY) crawls the shared index, not with --per-user-index: each user's own index is crawled with their key")
	case h.perUserIndex && strings.TrimSpace(h.storeURL) != "":
		return nil, errors.New("--store (OPSEARCH_STORE_URL) holds the shared index's store, not with --per-user-index: indexes per user keep their stores in the data dir")
	case h.perUserIndex:
		return nil, nil
	case h.viewRefresh <= 0:
		return nil, fmt.Errorf("invalid --view-refresh %s: it must be positive", h.viewRefresh)
	}
	if !h.sharedIndex && crawlKey == "" && strings.TrimSpace(h.storeURL) == "" {
		shared, kept, err := sync.DefaultShared(dataDir, baseURL)
		if err != nil {
			return nil, err
		}
		if !shared {
			log.Warn("keeping the indexes per user this data dir holds; --shared-index switches to one shared index (crawled anew, the old directories can then be removed), --per-user-index keeps them and silences this",
				"users", len(kept), "dir", filepath.Dir(kept[0].Dir))
			return nil, nil
		}
	}
	return &sync.SharedOptions{BaseURL: baseURL, RefreshEvery: h.viewRefresh, CrawlKey: crawlKey}, nil
}

// listenAddr turns --http's value into a listen address: a bare port
// binds 127.0.0.1 (or $HOST), so nothing is exposed by accident.
func (h *httpFlags) listenAddr(e env) (string, error) {
	a := strings.TrimSpace(h.addr)
	host := cmp.Or(strings.TrimSpace(e.getenv("HOST")), "127.0.0.1")
	if !strings.Contains(a, ":") {
		a = net.JoinHostPort(host, a)
	} else if strings.HasPrefix(a, ":") {
		a = net.JoinHostPort(host, a[1:])
	}
	if _, _, err := net.SplitHostPort(a); err != nil {
		return "", fmt.Errorf("invalid --http address %q: %v", h.addr, err)
	}
	return a, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// HTTP server timeouts. WriteTimeout stays 0: SSE streams and long tool
// calls write for longer than any fixed bound; IdleTimeout and the read
// timeouts bound what a slow or idle client can hold.
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = 60 * time.Second
	httpIdleTimeout   = 120 * time.Second
)

// httpServe is what runServeHTTP needs beyond the shared flags.
type httpServe struct {
	conn       *connConfig
	flags      *httpFlags
	spec       string
	logQueries bool
	// audit, if set, keeps each user's audit log with these options.
	audit *audit.Options
	// ready, if set, is told the bound address once the server listens
	// (the demo binds port 0).
	ready func(addr string)
	// listener, if set, is the socket to serve on, bound by the caller
	// (the demo binds before its minutes of work, so a taken port fails
	// at once).
	listener net.Listener
}

// The HTTP handler hands the manager's clients (sync.UserAPI, built by
// newClient below) to each key's MCP server as mcp.API, with a type
// assertion; this keeps the two interfaces joined at compile time. (The
// stdio server gets its client directly: the call checks it.)
var _ mcp.API = (*openproject.Client)(nil)

// runServeHTTP serves many users over HTTP until ctx ends, then drains
// requests and stops every user's worker at a safe point.
//
// With OPENPROJECT_API_KEY (or --api-key) set, a request without any
// credential acts as that key's user: use it only for a single-user
// server.
func runServeHTTP(ctx context.Context, e env, cfg httpServe) error {
	conn, hf, spec := cfg.conn, cfg.flags, cfg.spec
	if conn.baseURL == "" {
		return errors.New("OPENPROJECT_BASE_URL is not set (or pass --base-url)")
	}
	addr, err := hf.listenAddr(e)
	if err != nil {
		return err
	}
	shared, err := hf.shared(conn.baseURL, conn.dataDir, e.logger.With("subsystem", "serve"))
	if err != nil {
		return err
	}
	// Check the base URL once, with a placeholder key, before listening.
	if _, err := openproject.New(openproject.Config{BaseURL: conn.baseURL, APIKey: "x"}); err != nil {
		return err
	}
	log := e.logger.With("subsystem", "serve")
	m := metrics.New()
	// One transport for all users' clients: connections are pooled per
	// host, and every request is counted by status class (never by URL
	// or key).
	transport := m.Transport(openproject.NewTransport(conn.timeout))
	newClient := func(key string) (sync.UserAPI, error) {
		// A user brings an API key or an OpenProject OAuth access token
		// in the same header; the client tells them apart by trying.
		return openproject.New(openproject.Config{BaseURL: conn.baseURL, APIKey: key, Bearer: conn.bearer, EitherScheme: true,
			Timeout: conn.timeout, Logger: e.logger, HTTPClient: &http.Client{Transport: transport}})
	}
	var mgr *mcp.HTTPUsers
	um := userMetrics{m: m, active: func() int { return mgr.ActiveUsers() }}
	uo := conn.userOptions(e)
	uo.Holder = "opsearch serve --http"
	if shared != nil {
		uo.StoreURL = strings.TrimSpace(hf.storeURL)
	}
	// Every user's searches share the cores, and every user's sync gives
	// way while searches wait for them.
	slots := mcp.NewSearchSlots()
	uo.WorkerOptions.Busy = slots
	up := &sync.UpstreamTracker{} // what the manager and the tools learn about reaching OpenProject
	mgr, err = sync.NewManager(sync.ManagerOptions[*mcp.HTTPUser]{
		DataDir: conn.dataDir, NewClient: newClient,
		Attach: mcp.HTTPAttach(mcp.UserIndexOptions{Schedule: spec, LogQueries: cfg.logQueries, Logger: e.logger,
			Upstream: up, Audit: cfg.audit, Crew: hf.crew()},
			mcp.HTTPUserHooks{OnSync: um.onSync, OnClose: um.onClose}),
		Schedule: spec, IdleTimeout: hf.idleTimeout, MaxUsers: hf.maxUsers, MaxConcurrentSyncs: hf.maxSyncs, KeyGrace: hf.keyGrace,
		UserOptions: uo,
		OnOpen:      control.Attach(control.Options{Command: uo.Holder, Logger: e.logger}),
		Upstream:    up,
		Shared:      shared,
		Logger:      e.logger,
	})
	if err != nil {
		return err
	}
	extra := map[string]http.Handler{"GET /metrics": m.Handler()}
	tools, err := mcp.ListTools(ctx, mcp.Options{ReadOnly: conn.readOnly})
	if err != nil {
		_ = mgr.Close(context.Background())
		return fmt.Errorf("list tools: %w", err)
	}
	oh, err := mcp.OpenAPIHandler(tools, conn.readOnly, "")
	if err != nil {
		_ = mgr.Close(context.Background())
		return err
	}
	maps.Copy(extra, mcp.OpenAPIRoutes(oh))
	h, err := mcp.NewHTTPHandler(mcp.HTTPOptions{
		BaseURL: conn.baseURL, ServerKey: conn.apiKey, ReadOnly: conn.readOnly, ConfirmWrites: conn.confirmWrites, Extract: conn.extractOptions(),
		AllowedOrigins: splitList(hf.allowedOrigins), AllowedHosts: splitList(hf.allowedHosts),
		Logger: e.logger, Manager: mgr, Version: readBuildInfo().version, Extra: extra, ObserveSearch: m.ObserveSearch,
		LiveTimeout: conn.liveTimeout(), SearchSlots: slots, VerifyResults: hf.verifyResults, WebhookSecret: strings.TrimSpace(hf.webhookSecret),
		AdminToken: strings.TrimSpace(hf.adminToken), Stats: operatorStats(m, conn.dataDir),
	})
	if err != nil {
		_ = mgr.Close(context.Background())
		return err
	}
	ln := cfg.listener
	if ln == nil {
		if ln, err = net.Listen("tcp", addr); err != nil {
			_ = mgr.Close(context.Background())
			return fmt.Errorf("listen on %s: %w", addr, err)
		}
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		IdleTimeout:       httpIdleTimeout,
		// net/http's own messages (TLS, hijack, panics) go to stderr
		// through slog; they never contain request URLs.
		ErrorLog: slog.NewLogLogger(e.logger.Handler(), slog.LevelWarn),
		BaseContext: func(net.Listener) context.Context {
			return context.WithoutCancel(ctx)
		},
	}
	log.Info("opsearch serving MCP over HTTP", "version", version, "addr", ln.Addr().String(), "base_url", conn.baseURL,
		"data_dir", conn.dataDir, "read_only", conn.readOnly, "server_key", conn.apiKey != "", "sync_schedule", spec,
		"idle_timeout", hf.idleTimeout, "max_users", hf.maxUsers, "max_syncs", hf.maxSyncs, "shared_index", shared != nil, "crawl_key", shared != nil && shared.CrawlKey != "", "verify_results", hf.verifyResults, "webhooks", hf.webhookSecret != "", "audit", cfg.audit != nil)
	if conn.apiKey != "" {
		log.Warn("a server API key is configured: requests without credentials act as its user")
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	if cfg.ready != nil {
		cfg.ready(ln.Addr().String())
	}
	var runErr error
	select {
	case <-ctx.Done():
		log.Info("shutting down: signal received")
	case runErr = <-errc:
		log.Error("HTTP server failed", "error", runErr)
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	// Drain: stop accepting, let running requests finish. Legacy SSE
	// streams never finish by themselves, so they are ended first.
	if cs, ok := h.(interface{ CloseStreams() }); ok {
		cs.CloseStreams()
	}
	if err := srv.Shutdown(sctx); err != nil {
		log.Warn("requests still running at the shutdown deadline; closing them", "error", err)
		_ = srv.Close()
	}
	if err := mgr.Close(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	log.Info("stopped")
	if errors.Is(runErr, http.ErrServerClosed) {
		runErr = nil
	}
	return runErr
}

// userMetrics feeds users' syncs into the metrics: outcomes, document
// counts (summed over users, never labelled by user) and active users.
type userMetrics struct {
	m      *metrics.Metrics
	active func() int
}

func (um userMetrics) onSync(u *sync.User, rep sync.Report, err error) {
	um.m.ObserveSync(rep, err)
	key := u.Dir // a path, only used as a map key inside metrics
	for _, k := range kind.All() {
		if n, cerr := u.Store.Count(k); cerr == nil {
			um.m.SetDocuments(key, string(k), n)
		}
	}
	um.m.SetActiveUsers(um.active())
}

func (um userMetrics) onClose(u *sync.User) {
	if u.View == nil {
		// A shared store's documents are every user's: they stay
		// counted, once, while others use them.
		um.m.ForgetUser(u.Dir)
	}
	um.m.SetActiveUsers(max(0, um.active()-1))
}

// operatorStats gives the status page the metrics' figures and the data
// directory's size, walked at most every 30 s.
func operatorStats(m *metrics.Metrics, dataDir string) func() mcp.OperatorStats {
	var (
		mu   gosync.Mutex
		size int64 = -1
		at   time.Time
	)
	return func() mcp.OperatorStats {
		s := m.Snapshot()
		mu.Lock()
		defer mu.Unlock()
		if time.Since(at) > 30*time.Second {
			size, at = dirSize(dataDir), time.Now()
		}
		return mcp.OperatorStats{Syncs: s.Syncs, LastError: s.LastError, Documents: s.Documents, Latencies: s.Latencies, DiskBytes: size}
	}
}

// dirSize is the bytes of the regular files under dir, -1 if it cannot
// be read.
func dirSize(dir string) int64 {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if info, err := d.Info(); err == nil && info.Mode().IsRegular() {
			n += info.Size()
		}
		return nil
	})
	if err != nil {
		return -1
	}
	return n
}

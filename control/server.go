package control

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/opsearch/opsearch/internal/spread"
	"github.com/opsearch/opsearch/search"
	"github.com/opsearch/opsearch/sync"
)

// Status is what GET /v1/status answers: the process that holds the
// files, whose they are, and the index's state.
type Status struct {
	PID       int              `json:"pid"`
	Command   string           `json:"command"`
	Since     time.Time        `json:"since"`
	Dir       string           `json:"dir"`
	BaseURL   string           `json:"baseUrl"`
	UserID    int64            `json:"userId"`
	Login     string           `json:"login,omitempty"`
	Freshness search.Freshness `json:"freshness"`
}

// SyncAnswer is what POST /v1/sync answers: the sync's report and, if it
// failed, why.
type SyncAnswer struct {
	Report sync.Summary `json:"report"`
	Error  string       `json:"error,omitempty"`
}

// errorBody is every non-2xx answer.
type errorBody struct {
	Error string `json:"error"`
}

// Options configure a Server.
type Options struct {
	// Command names the serving process in Status ("opsearch serve").
	Command string
	// Logger receives the server's messages; nil discards.
	Logger *slog.Logger
}

// Server answers one user's control socket.
type Server struct {
	path    string
	ln      net.Listener
	srv     *http.Server
	served  chan struct{} // closed when Serve returned
	log     *slog.Logger
	started time.Time
}

// maxBody bounds a request body: a search query is small.
const maxBody = 1 << 20

// Listen serves u's control socket until Close: searches and the status
// from u's store and index, syncs through syncNow (a Scheduler's
// SyncNow). The caller must hold u's files (it opened u), which makes
// any socket file already there a leftover of a process that died.
func Listen(u *sync.User, syncNow func(context.Context) (sync.Report, error), opts Options) (*Server, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	opts.Command = cmp.Or(opts.Command, "opsearch")
	path, err := SocketPath(u.Dir)
	if err != nil {
		return nil, err
	}
	if err := ensurePrivateDir(filepath.Dir(path), true); err != nil {
		return nil, err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("remove stale control socket: %w", err)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listen on control socket: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		_ = ln.Close()
		return nil, fmt.Errorf("make control socket private: %w", err)
	}
	s := &Server{path: path, ln: peerChecked{ln, log}, served: make(chan struct{}), log: log.With("subsystem", "control"), started: time.Now().UTC().Truncate(time.Second)}
	h := &handler{
		u:       u,
		eng:     search.New(u.Store, u.Index, search.Options{BaseURL: u.Identity.BaseURL, Rebuilding: u.Rebuilding, Crew: spread.NewCrew()}),
		syncNow: syncNow,
		status:  Status{PID: os.Getpid(), Command: opts.Command, Since: s.started, Dir: u.Dir, BaseURL: u.Identity.BaseURL, UserID: u.Identity.UserID, Login: u.Identity.Login},
		log:     s.log,
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/status", h.getStatus)
	mux.HandleFunc("POST /v1/search", h.postSearch)
	mux.HandleFunc("POST /v1/sync", h.postSync)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelWarn)}
	go func() {
		defer close(s.served)
		if err := s.srv.Serve(s.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("control socket stopped", "error", err)
		}
	}()
	s.log.Debug("control socket listening", "path", path)
	return s, nil
}

// Path is the socket's path.
func (s *Server) Path() string { return s.path }

// Close stops listening, cancels the requests still running (a sync
// asked for stops at its next safe point) and removes the socket file.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if err != nil {
		// A sync asked for over the socket is still running: cut it.
		err = s.srv.Close()
	}
	<-s.served
	if rerr := os.Remove(s.path); rerr != nil && !errors.Is(rerr, os.ErrNotExist) && err == nil {
		err = fmt.Errorf("remove control socket: %w", rerr)
	}
	return err
}

// Attach is a sync.OnOpenFunc that serves every opened user's control
// socket, for sync.RunnerOptions.OnOpen and sync.ManagerOptions.OnOpen.
// A socket that cannot be served is logged and skipped: commands then
// report that the files are in use.
func Attach(opts Options) sync.OnOpenFunc {
	return func(u *sync.User, syncNow func(context.Context) (sync.Report, error)) func() {
		s, err := Listen(u, syncNow, opts)
		if err != nil {
			if opts.Logger != nil {
				opts.Logger.Warn("commands cannot reach this process: no control socket", "dir", u.Dir, "error", err)
			}
			return nil
		}
		return func() {
			if err := s.Close(); err != nil && opts.Logger != nil {
				opts.Logger.Warn("close control socket", "error", err)
			}
		}
	}
}

type handler struct {
	u       *sync.User
	eng     *search.Engine
	syncNow func(context.Context) (sync.Report, error)
	status  Status
	log     *slog.Logger
}

func (h *handler) getStatus(w http.ResponseWriter, r *http.Request) {
	f, err := h.eng.Freshness(r.Context())
	if err != nil {
		h.fail(w, http.StatusInternalServerError, fmt.Errorf("read the index state: %w", err))
		return
	}
	st := h.status
	st.Freshness = f
	writeJSON(w, http.StatusOK, st)
}

func (h *handler) postSearch(w http.ResponseWriter, r *http.Request) {
	var q search.Query
	dec := json.NewDecoder(io.LimitReader(r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&q); err != nil {
		h.fail(w, http.StatusBadRequest, fmt.Errorf("decode search query: %w", err))
		return
	}
	if err := q.Validate(); err != nil {
		h.fail(w, http.StatusBadRequest, err)
		return
	}
	resp, err := h.eng.Search(r.Context(), q)
	if err != nil {
		h.fail(w, http.StatusInternalServerError, err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

func (h *handler) postSync(w http.ResponseWriter, r *http.Request) {
	if h.syncNow == nil {
		h.fail(w, http.StatusConflict, sync.ErrNotSyncing)
		return
	}
	rep, err := h.syncNow(r.Context())
	if errors.Is(err, sync.ErrNotSyncing) {
		h.fail(w, http.StatusConflict, err)
		return
	}
	a := SyncAnswer{Report: rep.Summary()}
	if err != nil {
		a.Error = err.Error()
	}
	writeJSON(w, http.StatusOK, a)
}

func (h *handler) fail(w http.ResponseWriter, code int, err error) {
	if code >= 500 {
		h.log.Error("control request failed", "error", err)
	}
	writeJSON(w, code, errorBody{Error: err.Error()})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// peerChecked refuses connections from other OS users (checkPeer).
type peerChecked struct {
	net.Listener
	log *slog.Logger
}

func (l peerChecked) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if err := checkPeer(c); err != nil {
			l.log.Warn("control socket: connection refused", "error", err)
			_ = c.Close()
			continue
		}
		return c, nil
	}
}

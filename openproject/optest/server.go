package optest

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/opsearch/opsearch/openproject"
)

// Profile selects which generation of OpenProject the fake imitates.
type Profile string

const (
	// ProfileCurrent imitates the newest servers: a paginated meetings list,
	// meeting agenda items, wiki pages with text and timestamps, API keys
	// accepted as Bearer tokens, internal comments.
	ProfileCurrent Profile = "current"
	// ProfileLegacy imitates OpenProject 13–17: GET /meetings and agenda
	// items answer 404, wiki pages carry only id, title and project, and an
	// API key sent as a Bearer token is treated as an (invalid) OAuth token.
	ProfileLegacy Profile = "legacy"
)

// DefaultMaxPageSize is the real server's default apiv3_max_page_size.
const DefaultMaxPageSize = 1000

// defaultPageSize is what the real server uses when pageSize is absent
// (the smallest of the default per_page_options "20, 100").
const defaultPageSize = 20

// Options configure a Server. The zero value is a current-profile server
// with the real defaults.
type Options struct {
	// MaxPageSize caps pageSize silently, like apiv3_max_page_size.
	// 0 means DefaultMaxPageSize.
	MaxPageSize int
	// Profile is the server generation to imitate; "" means ProfileCurrent.
	Profile Profile
	// Latency is how long every request takes to be answered, counted
	// from its arrival: the fake's own work (rendering, compressing) is
	// part of it, as a real server's is part of its response time, and
	// only the rest is slept. A request whose work alone takes longer is
	// answered when that work is done. The sleep ends early when the
	// client gives up.
	Latency time.Duration
	// Faults are the initial fault settings; change them with SetFaults.
	Faults Faults
	// Now is the server clock, used for updatedAt/createdAt of changes and
	// for relative date filters. nil means time.Now. SetClock replaces it.
	Now func() time.Time
	// CoreVersion is what GET /api/v3 shows administrators. "" picks a
	// version typical of the profile.
	CoreVersion string
	// StorageAddr is the listen address ("host:port", port 0 for a free
	// one) of the external object storage that serves External
	// attachments through presigned URLs, like S3 on another host. ""
	// means "127.0.0.1:0". The storage starts when the first presigned
	// URL is made, whether the Server runs under Listen or as a plain
	// http.Handler, and stops with Close.
	StorageAddr string
}

// Server is the fake OpenProject server. It is an http.Handler; Listen
// runs it on a local port, internal/optesting.Start for a test. All
// methods are safe for concurrent use.
type Server struct {
	opts Options
	st   *store

	clockMu sync.Mutex
	now     func() time.Time

	faultMu    sync.Mutex
	faults     Faults
	faultCount int // requests matching faults.PathPrefix since SetFaults
	rng        faultRand

	reqMu    sync.Mutex
	requests map[string]int
	total    int

	done      chan struct{}
	closeOnce sync.Once

	mux *http.ServeMux // the endpoints (routes.go)

	// storage serves External attachments on a listener of its own
	// (storage.go).
	storage *storage

	// gzips reuses gzip writers: a new one allocates about a megabyte,
	// which for 100,000 activities requests was most of what a sync
	// against the fake allocated, and its garbage collection slowed
	// everything else in the process (the load benchmark's searches).
	gzips sync.Pool
	// bodies lends the buffers answers are rendered and compressed into
	// (bodies.go).
	bodies *bodyBuffers
}

// NewServer returns a server for a deep copy of d: changes made through the
// API or the mutation methods never touch d. NewServer does not validate d;
// references to missing entities render as null links.
func NewServer(d *Dataset, opts Options) *Server {
	if opts.MaxPageSize <= 0 {
		opts.MaxPageSize = DefaultMaxPageSize
	}
	opts.Profile = cmp.Or(opts.Profile, ProfileCurrent)
	if opts.CoreVersion == "" {
		opts.CoreVersion = "17.1.0"
		if opts.Profile == ProfileLegacy {
			opts.CoreVersion = "14.6.3"
		}
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	s := &Server{
		opts:     opts,
		st:       newStore(d),
		now:      now,
		requests: map[string]int{},
		done:     make(chan struct{}),
		bodies:   newBodyBuffers(),
	}
	s.setFaultsLocked(opts.Faults)
	s.mux = s.newMux()
	s.storage = newStorage(s, cmp.Or(opts.StorageAddr, "127.0.0.1:0"))
	return s
}

// Profile returns the server generation the fake imitates.
func (s *Server) Profile() Profile { return s.opts.Profile }

// SetClock replaces the server clock. Tests use it to make updatedAt
// values and relative date filters deterministic.
func (s *Server) SetClock(now func() time.Time) {
	if now == nil {
		now = time.Now
	}
	s.clockMu.Lock()
	s.now = now
	s.clockMu.Unlock()
}

// clock returns the current server time, in UTC and truncated to the
// millisecond the API renders, so a timestamp read back from a response
// compares equal to the stored one.
func (s *Server) clock() time.Time {
	s.clockMu.Lock()
	now := s.now
	s.clockMu.Unlock()
	return now().UTC().Truncate(time.Millisecond)
}

// Close releases requests that are blocked by a hang fault or sleeping in
// injected latency, so an HTTP server wrapping s can shut down, and stops
// the external storage's listener (waiting for it). The server keeps
// answering API requests after Close, without delays; the content of
// External attachments is then answered with 500, as the storage is gone.
func (s *Server) Close() {
	s.closeOnce.Do(func() { close(s.done) })
	s.storage.close()
}

// Dataset returns a deep copy of the current state.
func (s *Server) Dataset() *Dataset {
	s.st.mu.RLock()
	defer s.st.mu.RUnlock()
	return s.st.snapshot()
}

// exchange is one request being answered.
type exchange struct {
	s    *Server
	w    http.ResponseWriter
	r    *http.Request
	user *User // the authenticated caller (a copy)
	// truncate makes send cut the body in half (a fault).
	truncate bool
	// due is the earliest time the answer may go out (Options.Latency
	// after arrival); respond waits for it.
	due time.Time
	// route is the pattern of the endpoint answering (empty before the
	// mux chose one): the size hint for its buffers (bodies.go).
	route string
}

// ServeHTTP answers one API request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.countRequest(r)
	ex := &exchange{s: s, w: w, r: r, due: time.Now().Add(s.opts.Latency)}
	if s.applyFaults(ex) {
		return
	}
	u, ok := s.authenticate(ex)
	if !ok {
		return
	}
	ex.user = u
	s.route(ex)
}

// respond writes the status line and headers once the request is due
// (Options.Latency after its arrival), and reports whether to write the
// body: false when the client went away while it waited.
func (ex *exchange) respond(status int) bool {
	if !ex.s.sleep(ex.r.Context(), time.Until(ex.due)) {
		return false
	}
	ex.w.WriteHeader(status)
	return true
}

// sleep waits d, or less if the client goes away or the server closes. It
// reports whether the request should still be answered.
func (s *Server) sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.done:
		return ctx.Err() == nil
	case <-ctx.Done():
		return false
	}
}

// Error messages of the real server (examples/error_*.json and the spec).
const (
	msgNoCredentials  = "You need to be authenticated to access this resource."
	msgBadCredentials = "You did not provide the correct credentials."
	msgNotFound       = "The requested resource could not be found."
	msgWPNotFound     = "The specified work package does not exist."
	msgProjectMissing = "The specified project does not exist."
	msgUserNotFound   = "The specified user does not exist or you do not have permission to view them."
	msgForbidden      = "You are not authorized to access this resource."
	msgWPForbidden    = "You are not allowed to see work packages."
	// paths/project_work_packages.yml, GET 403.
	msgProjectWPForbidden = "You are not allowed to see the work packages of this project."
	msgConflict           = "Your changes could not be saved, because the work package was changed since you've seen it the last time."
	msgInternal           = "An internal error has occured."
	msgFilterUnknown      = "Filters Invalid filter does not exist."
)

// authenticate resolves the caller from the Authorization header or answers
// 401 itself.
func (s *Server) authenticate(ex *exchange) (*User, bool) {
	h := strings.TrimSpace(ex.r.Header.Get("Authorization"))
	scheme := "Basic"
	if alt := ex.r.Header.Get("X-Authentication-Scheme"); alt != "" {
		// The real server names the scheme the client asked for, so
		// browser-like clients can avoid the native login dialog.
		scheme = alt
	}
	challenge := scheme + ` realm="OpenProject API"`
	if h == "" {
		ex.sendError(http.StatusUnauthorized, "Unauthenticated", msgNoCredentials, map[string]string{"WWW-Authenticate": challenge})
		return nil, false
	}
	kind, cred, _ := strings.Cut(h, " ")
	cred = strings.TrimSpace(cred)
	var key string
	switch strings.ToLower(kind) {
	case "basic":
		raw, err := base64.StdEncoding.DecodeString(cred)
		if err == nil {
			user, pass, ok := strings.Cut(string(raw), ":")
			if ok && user == "apikey" {
				key = pass
			}
		}
	case "bearer":
		// An OAuth access token (IssueToken), on every server. Current
		// servers accept API keys as Bearer tokens too. Either way a
		// failure names the Bearer scheme, as for a bad OAuth token.
		if u, ok := s.userByToken(cred); ok {
			return u, true
		}
		if s.opts.Profile == ProfileCurrent {
			if u, ok := s.userByKey(cred); ok {
				return u, true
			}
		}
		ex.sendError(http.StatusUnauthorized, "Unauthenticated", msgBadCredentials,
			map[string]string{"WWW-Authenticate": `Bearer realm="OpenProject API" error="invalid_token"`})
		return nil, false
	}
	u, ok := s.userByKey(key)
	if !ok {
		ex.sendError(http.StatusUnauthorized, "Unauthenticated", msgBadCredentials, map[string]string{"WWW-Authenticate": challenge})
		return nil, false
	}
	return u, true
}

// IssueToken returns a new OAuth access token for the user with login,
// as OpenProject's OAuth server issues one when the user signs in to an
// application (scope api_v3): it authenticates as that user, sent as
// "Authorization: Bearer <token>", until RevokeToken.
func (s *Server) IssueToken(login string) (string, error) {
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("issue token: %w", err)
	}
	tok := "opoauth-" + hex.EncodeToString(b[:])
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	for id, u := range s.st.users {
		if u.Login == login {
			s.st.tokens[tok] = id
			return tok, nil
		}
	}
	return "", fmt.Errorf("issue token: no user %q", login)
}

// RevokeToken makes token invalid, as revoking the application's access
// in OpenProject does: it answers 401 invalid_token from then on.
func (s *Server) RevokeToken(token string) {
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	delete(s.st.tokens, token)
}

// userByToken returns a copy of the user an OAuth token was issued to.
func (s *Server) userByToken(token string) (*User, bool) {
	s.st.mu.RLock()
	defer s.st.mu.RUnlock()
	id, ok := s.st.tokens[token]
	if !ok {
		return nil, false
	}
	u := *s.st.users[id]
	if u.Status != "" && u.Status != "active" {
		return nil, false
	}
	return &u, true
}

// userByKey returns a copy of the user an API key belongs to.
func (s *Server) userByKey(key string) (*User, bool) {
	if key == "" {
		return nil, false
	}
	s.st.mu.RLock()
	defer s.st.mu.RUnlock()
	id, ok := s.st.usersByKey[key]
	if !ok {
		return nil, false
	}
	u := *s.st.users[id]
	if u.Status != "" && u.Status != "active" {
		// Locked users cannot log in.
		return nil, false
	}
	return &u, true
}

// halContentType is the media type of every JSON answer, errors included.
const halContentType = "application/hal+json; charset=utf-8"

// sendHAL renders v and sends it.
func (ex *exchange) sendHAL(status int, v any) {
	p := ex.s.bodies.get(ex.s.bodies.hint(ex.route))
	*p = appendJSON(*p, v)
	ex.s.bodies.rendered(ex.route, len(*p))
	ex.send(status, halContentType, *p, nil)
	ex.s.bodies.put(p)
}

// sendError sends a HAL error body.
func (ex *exchange) sendError(status int, identifier, message string, header map[string]string) {
	ex.send(status, halContentType, encodeJSON(errorBody(identifier, message, "")), header)
}

// sendAPIError sends a prepared API error.
func (ex *exchange) sendAPIError(e *apiError) {
	ex.send(e.status, halContentType, encodeJSON(errorBody(e.identifier, e.message, e.attribute)), e.header)
}

// errorBody renders an Error resource as in examples/error_*.json.
func errorBody(identifier, message, attribute string) obj {
	o := obj{}
	if attribute != "" {
		o = append(o, kv{"_embedded", obj{{"details", obj{{"attribute", attribute}}}}})
	}
	return append(o,
		kv{"_type", "Error"},
		kv{"errorIdentifier", openproject.ErrorIdentifierPrefix + identifier},
		kv{"message", message},
	)
}

// gzipMinSize is the smallest body worth compressing.
const gzipMinSize = 1024

// send writes a complete response: headers, optional gzip, optional
// truncation fault.
func (ex *exchange) send(status int, contentType string, body []byte, header map[string]string) {
	ex.write(status, contentType, body, header, true)
}

// sendRaw is send without gzip, for files: the real server sends them as
// they are, with their length.
func (ex *exchange) sendRaw(status int, contentType string, body []byte, header map[string]string) {
	ex.write(status, contentType, body, header, false)
}

// write writes a complete response; compress allows gzip.
func (ex *exchange) write(status int, contentType string, body []byte, header map[string]string, compress bool) {
	h := ex.w.Header()
	for k, v := range header {
		h.Set(k, v)
	}
	if contentType != "" {
		h.Set("Content-Type", contentType)
	}
	if ex.truncate {
		// Announce the full length, send half, and return: net/http closes a
		// connection whose handler wrote less than its Content-Length, so
		// the client sees an unexpected EOF mid-body.
		h.Set("Content-Length", strconv.Itoa(len(body)))
		if ex.respond(status) {
			_, _ = ex.w.Write(body[:len(body)/2])
		}
		return
	}
	if compress && len(body) >= gzipMinSize && acceptsGzip(ex.r) {
		// BestSpeed gives 7-32% of the JSON (an activities answer 7%,
		// a listing page 15%, a work package 32%): half is a hint that
		// does not grow.
		zp := ex.s.bodies.get(len(body) / 2)
		defer func() { ex.s.bodies.put(zp) }()
		buf := bytes.NewBuffer(*zp)
		zw, _ := ex.s.gzips.Get().(*gzip.Writer)
		if zw == nil {
			zw, _ = gzip.NewWriterLevel(buf, gzip.BestSpeed) // a valid level: no error
		} else {
			zw.Reset(buf)
		}
		_, _ = zw.Write(body)
		if zw.Close() == nil {
			body = buf.Bytes()
			h.Set("Content-Encoding", "gzip")
			h.Add("Vary", "Accept-Encoding")
		}
		// The buffer may have grown: keep what it grew to.
		*zp = buf.Bytes()[:0]
		ex.s.gzips.Put(zw)
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	if ex.respond(status) && ex.r.Method != http.MethodHead {
		_, _ = ex.w.Write(body)
	}
}

// acceptsGzip reports whether the client accepts gzip content coding.
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(name), "gzip") {
			return !strings.Contains(strings.ReplaceAll(params, " ", ""), "q=0")
		}
	}
	return false
}

// countRequest records a request under "METHOD /path".
func (s *Server) countRequest(r *http.Request) {
	key := r.Method + " " + r.URL.Path
	s.reqMu.Lock()
	s.requests[key]++
	s.total++
	s.reqMu.Unlock()
}

// Requests returns how many requests arrived per "METHOD /path" (the path
// without query), including requests answered by faults or with 401.
func (s *Server) Requests() map[string]int {
	s.reqMu.Lock()
	defer s.reqMu.Unlock()
	out := make(map[string]int, len(s.requests))
	for k, v := range s.requests {
		out[k] = v
	}
	return out
}

// RequestCount sums the requests whose "METHOD /path" key or whose path
// starts with prefix, so both "GET /api/v3/work_packages" and
// "/api/v3/work_packages" work.
func (s *Server) RequestCount(prefix string) int {
	s.reqMu.Lock()
	defer s.reqMu.Unlock()
	n := 0
	for k, v := range s.requests {
		_, path, _ := strings.Cut(k, " ")
		if strings.HasPrefix(k, prefix) || strings.HasPrefix(path, prefix) {
			n += v
		}
	}
	return n
}

// TotalRequests returns the number of requests since the start or the last
// ResetRequests.
func (s *Server) TotalRequests() int {
	s.reqMu.Lock()
	defer s.reqMu.Unlock()
	return s.total
}

// ResetRequests clears the request counters.
func (s *Server) ResetRequests() {
	s.reqMu.Lock()
	s.requests = map[string]int{}
	s.total = 0
	s.reqMu.Unlock()
}

// apiError is an error answer prepared by a handler.
type apiError struct {
	status     int
	identifier string
	message    string
	attribute  string
	header     map[string]string
}

func (e *apiError) Error() string { return e.identifier + ": " + e.message }

func errNotFound(msg string) *apiError {
	return &apiError{status: http.StatusNotFound, identifier: "NotFound", message: msg}
}

func errInvalidQuery(msg string) *apiError {
	return &apiError{status: http.StatusBadRequest, identifier: "InvalidQuery", message: msg}
}

func errForbidden(msg string) *apiError {
	return &apiError{status: http.StatusForbidden, identifier: "MissingPermission", message: msg}
}

func errConstraint(attribute, msg string) *apiError {
	return &apiError{status: http.StatusUnprocessableEntity, identifier: "PropertyConstraintViolation", message: msg, attribute: attribute}
}

// parseID parses a positive decimal id.
func parseID(s string) (int64, bool) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, false
	}
	return id, true
}

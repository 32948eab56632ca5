package openproject

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	json "github.com/go-json-experiment/json/v1"

	"github.com/klauspost/compress/gzip"
)

// DefaultUserAgent identifies opsearch to OpenProject servers.
const DefaultUserAgent = "opsearch/0.1 (+https://github.com/opsearch/opsearch)"

// Config configures a Client. Only BaseURL and APIKey are required.
type Config struct {
	// BaseURL is the OpenProject instance, e.g. https://op.example.com or
	// https://example.com/openproject/; a trailing slash is ignored.
	BaseURL string
	// APIKey is the user's API token. It is sent as HTTP Basic
	// "apikey:<key>" (portable across versions) unless Bearer is set.
	APIKey string
	// Bearer sends the key as "Authorization: Bearer <key>" (newer servers,
	// OAuth tokens).
	Bearer bool
	// EitherScheme is for a credential that may be an API key or an OAuth
	// access token (a team server's users bring either): it is sent as
	// Basic "apikey:<key>" (every server takes an API key so) until the
	// server answers 401, then as a Bearer token (an OAuth token, or an
	// API key where Basic auth is off), which is kept from then on if it
	// works. Ignored when Bearer is set.
	EitherScheme bool
	// HTTPClient is used for requests; nil uses a client with sensible
	// transport timeouts. Its Timeout, if any, bounds each attempt.
	HTTPClient *http.Client
	// Timeout bounds a single attempt (connect to last body byte); default 30s.
	Timeout time.Duration
	// UserAgent defaults to DefaultUserAgent.
	UserAgent string
	// MaxAttempts bounds attempts of a retryable read (default 4).
	MaxAttempts int
	// RetryBase and RetryMax shape the exponential backoff with jitter
	// between attempts (defaults 500ms and 20s).
	RetryBase, RetryMax time.Duration
	// MaxRetryAfter is the longest Retry-After the client waits out by
	// itself (default 60s); a longer one is returned to the caller as an
	// ErrRateLimited error carrying RetryAfter.
	MaxRetryAfter time.Duration
	// Logger receives debug lines about retries; nil discards them.
	Logger *slog.Logger
	// Sleep waits between attempts; nil uses a context-aware timer. Tests
	// replace it to observe backoff without waiting.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Client talks to one OpenProject instance as one user. It is safe for
// concurrent use. Capability and status lookups are cached per Client,
// which is per key, so nothing one user sees is reused for another.
type Client struct {
	base *url.URL
	// auth is the Authorization header sent; bearer the one tried after
	// a 401 with Config.EitherScheme ("" otherwise, or once tried).
	auth    atomic.Pointer[string]
	bearer  atomic.Pointer[string]
	cfg     Config
	http    *http.Client
	logger  *slog.Logger
	secrets []string

	// bodies recycles response buffers: a crawl reads one body per work
	// package, and reading each into a fresh, doubling slice was a third
	// of the sync's allocation (measured at 100,000 work packages).
	bodies sync.Pool
	// gunzips reuses gzip readers (klauspost/compress/gzip), see once.
	gunzips sync.Pool

	mu            sync.Mutex
	caps          *Capabilities // lists probed; nil until Capabilities ran
	wikiText      bool
	wikiTextKnown bool
	statusClosed  map[int64]bool
}

// New validates cfg and returns a Client.
func New(cfg Config) (*Client, error) {
	raw := strings.TrimSpace(cfg.BaseURL)
	if raw == "" {
		return nil, errors.New("create client: base URL is empty")
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("create client: base URL %q must be an absolute http(s) URL", raw)
	}
	if u.User != nil {
		return nil, errors.New("create client: base URL must not contain credentials; pass the API key separately")
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawQuery, u.Fragment = "", ""
	// Users paste the API root as often as the instance URL.
	u.Path = strings.TrimSuffix(u.Path, "/api/v3")
	if cfg.APIKey == "" {
		return nil, errors.New("create client: API key is empty")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	cfg.UserAgent = cmp.Or(cfg.UserAgent, DefaultUserAgent)
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = 4
	}
	if cfg.RetryBase <= 0 {
		cfg.RetryBase = 500 * time.Millisecond
	}
	if cfg.RetryMax <= 0 {
		cfg.RetryMax = 20 * time.Second
	}
	if cfg.MaxRetryAfter <= 0 {
		cfg.MaxRetryAfter = 60 * time.Second
	}
	if cfg.Sleep == nil {
		cfg.Sleep = sleepCtx
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Transport: NewTransport(cfg.Timeout)}
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	basic := base64.StdEncoding.EncodeToString([]byte("apikey:" + cfg.APIKey))
	c := &Client{
		base: u, cfg: cfg, http: hc, logger: logger,
		secrets: []string{cfg.APIKey, basic},
	}
	bearer, basicAuth := "Bearer "+cfg.APIKey, "Basic "+basic
	switch {
	case cfg.Bearer:
		c.auth.Store(&bearer)
	case cfg.EitherScheme:
		c.auth.Store(&basicAuth)
		c.bearer.Store(&bearer)
	default:
		c.auth.Store(&basicAuth)
	}
	return c, nil
}

// BaseURL returns the instance URL without trailing slash.
func (c *Client) BaseURL() string { return c.base.String() }

// Redact removes the client's API key (plain and Basic-encoded) from s.
// Use it on any text that may echo a request, such as upstream messages.
func (c *Client) Redact(s string) string {
	for _, sec := range c.secrets {
		if sec != "" {
			s = strings.ReplaceAll(s, sec, "[REDACTED]")
		}
	}
	return s
}

// NewTransport returns the HTTP transport a Client uses when Config has no
// HTTPClient: bounded dial, TLS and response-header times. Callers that
// wrap it (for metrics) keep these bounds.
func NewTransport(responseTimeout time.Duration) *http.Transport {
	if responseTimeout <= 0 {
		responseTimeout = 30 * time.Second
	}
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: responseTimeout,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       90 * time.Second,
		ForceAttemptHTTP2:     true,
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// request describes one API call.
type request struct {
	method string
	path   string // below the base URL, starting with /api/v3
	query  url.Values
	body   any // JSON-encoded when non-nil
}

// do performs the request, retrying idempotent reads on transient failures,
// and decodes a 2xx JSON body into out (when out is non-nil).
func (c *Client) do(ctx context.Context, r request, out any) error {
	var payload []byte
	if r.body != nil {
		b, err := json.Marshal(r.body)
		if err != nil {
			return fmt.Errorf("encode request body: %w", err)
		}
		payload = b
	}
	// Only reads are retried: a write that timed out may have been applied,
	// and repeating a comment or a create is worse than reporting the error.
	idempotent := r.method == http.MethodGet || r.method == http.MethodHead
	attempts := 1
	if idempotent {
		attempts = c.cfg.MaxAttempts
	}
	var lastErr error
	for attempt := 1; attempt <= attempts; attempt++ {
		if err := ctx.Err(); err != nil {
			if lastErr != nil {
				return lastErr
			}
			return c.errorf(r, ErrNetwork, 0, err)
		}
		began := time.Now()
		err := c.once(ctx, r, payload, out)
		observeAttempt(ctx, time.Since(began), err)
		if err == nil {
			return nil
		}
		lastErr = err
		var apiErr *Error
		if !errors.As(err, &apiErr) || !retryable(apiErr) || attempt == attempts || ctx.Err() != nil {
			return err
		}
		wait := c.backoff(attempt)
		if apiErr.Kind == ErrRateLimited || (apiErr.Status == http.StatusServiceUnavailable && apiErr.RetryAfter > 0) {
			if apiErr.RetryAfter > c.cfg.MaxRetryAfter {
				return err
			}
			if apiErr.RetryAfter > 0 {
				wait = apiErr.RetryAfter
			}
		}
		c.logger.DebugContext(ctx, "retrying OpenProject request",
			"method", r.method, "path", r.path, "attempt", attempt, "wait", wait, "cause", err.Error())
		if serr := c.cfg.Sleep(ctx, wait); serr != nil {
			return err
		}
	}
	return lastErr
}

// retryable reports whether a failed read is worth repeating: whatever
// Error.Temporary says, and a 500 too. OpenProject answers 500 for any
// unhandled exception; most are passing (a lock timeout, a restarting
// worker, an overloaded database), and a sync that gives up on the first
// one never finishes a large crawl. One that is not passing costs at most
// MaxAttempts requests. Writes never get here: do tries them once.
func retryable(e *Error) bool {
	return e.Temporary() || (e.Kind == ErrServer && e.Status == http.StatusInternalServerError)
}

// backoff is capped exponential backoff with full jitter in [d/2, d).
func (c *Client) backoff(attempt int) time.Duration {
	d := c.cfg.RetryBase << (attempt - 1)
	if d <= 0 || d > c.cfg.RetryMax {
		d = c.cfg.RetryMax
	}
	half := d / 2
	return half + rand.N(half+1)
}

func (c *Client) once(ctx context.Context, r request, payload []byte, out any) error {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	u := *c.base
	u.Path = c.base.Path + r.path
	if len(r.query) > 0 {
		u.RawQuery = r.query.Encode()
	}
	var body io.Reader
	if payload != nil {
		body = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, u.String(), body)
	if err != nil {
		return c.errorf(r, ErrRequest, 0, err)
	}
	auth := c.auth.Load()
	req.Header.Set("Authorization", *auth)
	req.Header.Set("Accept", "application/hal+json, application/json")
	req.Header.Set("User-Agent", c.cfg.UserAgent)
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	hc := c.http
	file, _ := out.(*content)
	if file != nil {
		req.Header.Set("Accept", "*/*")
		hc = c.downloadClient()
	} else {
		// Asked for explicitly, a gzipped answer is decompressed here
		// rather than by net/http, with klauspost/compress's reader: a
		// crawl reads an answer per work package, and the standard
		// reader's inflate was 7 % of its CPU. Files keep net/http's
		// transparent handling.
		req.Header.Set("Accept-Encoding", "gzip")
	}
	resp, err := hc.Do(req)
	if err != nil {
		// url.Error's text contains the URL; ours never holds the key, but
		// strip it anyway to keep the error short.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return c.errorf(r, ErrNetwork, 0, err)
	}
	defer resp.Body.Close()
	// Bodies are read whole before decoding so a connection cut mid-body is
	// reported as truncated, not as a JSON syntax error.
	var data []byte
	var readErr error
	if file != nil && resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		// A file is read into a slice of its own, sized by its length
		// when the server sends one: a pooled buffer would double a
		// large file's memory (buffer, then the caller's copy).
		data, readErr = readLimited(resp, file.max+1)
	} else {
		buf, release := c.bodyFor(ctx)
		defer release()
		var rd io.Reader = resp.Body
		if file == nil && strings.EqualFold(resp.Header.Get("Content-Encoding"), "gzip") {
			zr, err := c.gunzip(resp.Body)
			switch {
			case err == nil:
				defer c.gunzips.Put(zr)
				rd = zr
			case errors.Is(err, io.EOF):
				rd = http.NoBody // an empty body has no gzip header
			case resp.StatusCode >= 200 && resp.StatusCode <= 299:
				return c.errorf(r, ErrMalformed, resp.StatusCode, fmt.Errorf("read gzip body: %w", err))
			default:
				rd = http.NoBody // the status says what went wrong
			}
		}
		_, readErr = buf.ReadFrom(io.LimitReader(rd, 256<<20))
		data = buf.Bytes()
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		if resp.StatusCode == http.StatusUnauthorized {
			// Config.EitherScheme: the credential may be an OAuth
			// token. Asked once per client; whichever scheme the
			// second answer used stays.
			if bearer := c.bearer.Swap(nil); bearer != nil && c.auth.CompareAndSwap(auth, bearer) {
				c.logger.Debug("OpenProject refused the credential as an API key; sending it as a Bearer token")
				return c.once(ctx, r, payload, out)
			}
		}
		return c.statusError(r, resp, data)
	}
	if readErr != nil {
		if ctx.Err() != nil {
			return c.errorf(r, ErrNetwork, resp.StatusCode, ctx.Err())
		}
		return c.errorf(r, ErrMalformed, resp.StatusCode, fmt.Errorf("read body: %w", readErr))
	}
	if file != nil {
		if int64(len(data)) > file.max {
			return c.errorf(r, ErrTooLarge, resp.StatusCode, fmt.Errorf("over %d bytes", file.max))
		}
		file.data, file.contentType = data, resp.Header.Get("Content-Type")
		return nil
	}
	if out == nil || resp.StatusCode == http.StatusNoContent {
		return nil
	}
	if err := decodeBody(data, out); err != nil {
		return c.errorf(r, ErrMalformed, resp.StatusCode, fmt.Errorf("decode body: %w", err))
	}
	return nil
}

// decodeBody decodes an answer's body into out: with encoding/json's
// semantics (go-json-experiment/json/v1), except how a type error is
// reported. Legacy reporting defers the first type error and decodes
// the rest of the value, which a caller that rejects the whole answer on
// any error (ErrMalformed) never reads; the v2 decoder stops at it.
// Without that deferral an activities answer, mostly members the client
// skips (each activity embeds its work package), decodes a third faster:
// BenchmarkDecodeActivities, 328-417 us against 539-569 us for 30
// comments.
func decodeBody(data []byte, out any) error {
	return jsonv2.Unmarshal(data, out, json.DefaultOptionsV1(), json.ReportErrorsWithLegacySemantics(false))
}

// content receives a downloaded file (AttachmentContent): at most max
// bytes are wanted.
type content struct {
	max         int64
	data        []byte
	contentType string
}

// readLimited reads resp's body up to limit bytes.
func readLimited(resp *http.Response, limit int64) ([]byte, error) {
	size := min(limit, 64<<10)
	if n := resp.ContentLength; n >= 0 && n < limit {
		size = n + 1 // room to see the end without growing
	}
	return readAllInto(make([]byte, 0, size), io.LimitReader(resp.Body, limit))
}

// readAllInto is io.ReadAll appending to b.
func readAllInto(b []byte, r io.Reader) ([]byte, error) {
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}

// downloadClient is the HTTP client of file downloads: the client's own,
// but on a redirect to another origin (external storage) the
// Authorization header is dropped. Go's own rule keeps it for the same
// host name on another port, and for subdomains.
func (c *Client) downloadClient() *http.Client {
	hc := *c.http
	origin := c.base.Scheme + "://" + c.base.Host
	hc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= 5 {
			return errors.New("stopped after 5 redirects")
		}
		if req.URL.Scheme+"://"+req.URL.Host != origin {
			req.Header.Del("Authorization")
		}
		return nil
	}
	return &hc
}

// maxPooledBody is the largest response buffer kept for reuse; a rare
// huge page's buffer goes back to the garbage collector instead of
// staying resident.
const maxPooledBody = 1 << 20

// bodyFor returns the buffer to read an answer into and the function
// that gives it back: the page buffer ctx carries (withPageBuffer) when
// it is free, or a pooled one (body). Either is reused once given back,
// so nothing decoded may keep a reference to it.
func (c *Client) bodyFor(ctx context.Context) (*bytes.Buffer, func()) {
	if pb, ok := ctx.Value(pageBufferKey{}).(*pageBuffer); ok && pb.inUse.CompareAndSwap(false, true) {
		pb.buf.Reset()
		return &pb.buf, func() { pb.inUse.Store(false) }
	}
	buf := c.body()
	return buf, func() { c.recycle(buf) }
}

// pageBuffer is a response buffer lent to the requests of one page of a
// listing (EachPage), kept across its pages however large it grows.
type pageBuffer struct {
	// inUse is set while a request reads into buf: a request the call
	// makes besides the page's own (a lookup behind it) takes a pooled
	// buffer instead.
	inUse atomic.Bool
	buf   bytes.Buffer
}

type pageBufferKey struct{}

// withPageBuffer returns ctx carrying buf for the requests made under it.
func withPageBuffer(ctx context.Context, buf *pageBuffer) context.Context {
	return context.WithValue(ctx, pageBufferKey{}, buf)
}

// body returns an empty buffer for a response body. Nothing decoded from
// it may keep a reference to it: the JSON decoder copies strings and raw
// messages, and statusError copies what it keeps.
func (c *Client) body() *bytes.Buffer {
	if b, ok := c.bodies.Get().(*bytes.Buffer); ok {
		return b
	}
	return new(bytes.Buffer)
}

// gunzip returns a pooled gzip reader of body; put it back in c.gunzips
// when done.
func (c *Client) gunzip(body io.Reader) (*gzip.Reader, error) {
	if zr, ok := c.gunzips.Get().(*gzip.Reader); ok {
		if err := zr.Reset(body); err != nil {
			return nil, err
		}
		return zr, nil
	}
	return gzip.NewReader(body)
}

func (c *Client) recycle(b *bytes.Buffer) {
	if b.Cap() > maxPooledBody {
		return
	}
	b.Reset()
	c.bodies.Put(b)
}

func (c *Client) errorf(r request, kind error, status int, cause error) *Error {
	e := &Error{Kind: kind, Status: status, Method: r.method, Path: r.path}
	if cause != nil {
		e.Err = redactedError{msg: c.Redact(cause.Error()), err: cause}
	}
	return e
}

// redactedError keeps the cause for errors.Is while printing a text
// without credentials.
type redactedError struct {
	msg string
	err error
}

func (e redactedError) Error() string { return e.msg }
func (e redactedError) Unwrap() error { return e.err }

func (c *Client) statusError(r request, resp *http.Response, body []byte) *Error {
	e := &Error{Kind: kindForStatus(resp.StatusCode), Status: resp.StatusCode, Method: r.method, Path: r.path}
	var he halError
	if decodeBody(body, &he) == nil && he.Type == "Error" {
		e.Identifier = strings.TrimPrefix(he.ErrorIdentifier, ErrorIdentifierPrefix)
		e.Message = c.Redact(he.Message)
		e.Attribute = he.Embedded.Details.Attribute
		if e.Identifier == "MultipleErrors" && len(he.Embedded.Errors) > 0 {
			msgs := make([]string, 0, len(he.Embedded.Errors))
			for _, sub := range he.Embedded.Errors {
				msgs = append(msgs, sub.Message)
			}
			e.Message = c.Redact(strings.Join(msgs, " "))
		}
	} else if txt := strings.TrimSpace(string(body)); txt != "" && len(txt) < 300 && !strings.HasPrefix(txt, "<") {
		e.Message = c.Redact(txt) // e.g. 406 "Missing content-type header"
	}
	// OpenProject reports an invalid select as InvalidSignal and a bad body
	// as InvalidRequestBody; both are the caller's fault like InvalidQuery.
	if resp.StatusCode == http.StatusForbidden && e.Identifier == "Unauthenticated" {
		e.Kind = ErrUnauthenticated // OAuth token with the wrong scope
	}
	if ra := resp.Header.Get("Retry-After"); ra != "" {
		e.RetryAfter = parseRetryAfter(ra, time.Now())
		e.sentRetryAfter = e.RetryAfter
	}
	if e.Kind == ErrRateLimited && e.RetryAfter == 0 {
		e.RetryAfter = c.cfg.RetryBase
	}
	return e
}

// parseRetryAfter reads delay-seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if secs, err := strconv.Atoi(v); err == nil {
		if secs < 0 {
			return 0
		}
		if secs > math.MaxInt64/int(time.Second) {
			return math.MaxInt64 // more seconds than a Duration holds
		}
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d.Round(time.Second)
		}
	}
	return 0
}

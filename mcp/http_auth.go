package mcp

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/sync"
)

// Credentials over HTTP: where a request's API key comes from, how it
// stays out of URLs and logs, and how it becomes a user and an MCP server.

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

// lease authenticates the request and returns the lease on its user and
// the MCP server of its key, or writes the error answer and returns nil.
func (h *httpHandler) lease(w http.ResponseWriter, r *http.Request) (*sync.Lease[*HTTPUser], *keyServer) {
	key, _ := h.apiKey(r)
	if key == "" {
		h.unauthorized(w, r, "Unauthorized: an OpenProject API key or OAuth access token is required (Authorization: Bearer, X-OpenProject-Api-Key header, or apiKey query parameter)")
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
		return NewServer(api, l.Attachment.idx, Options{ReadOnly: h.opts.ReadOnly, ConfirmWrites: h.opts.ConfirmWrites, Extract: h.opts.Extract, Logger: h.opts.Logger, Version: h.opts.Version,
			ObserveSearch: h.opts.ObserveSearch, Upstream: h.mgr, LiveTimeout: h.opts.LiveTimeout, SearchSlots: h.searchSlots,
			VerifyResults: h.opts.VerifyResults, VerifyTTL: h.opts.VerifyTTL,
			OnRejected: func() { h.mgr.Reject(key) }}), nil
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
		h.unauthorized(w, r, "Unauthorized: OpenProject rejected the API key or access token")
	case errors.Is(err, sync.ErrTooManyUsers), errors.Is(err, sync.ErrManagerClosed), errors.Is(err, sync.ErrIndexBuilding):
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

// unauthorized answers 401 with a challenge naming the protected
// resource metadata (RFC 9728), so an OAuth-capable client can find
// OpenProject's authorization server and sign the user in.
func (h *httpHandler) unauthorized(w http.ResponseWriter, r *http.Request, msg string) {
	w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="opsearch", resource_metadata=%q`, publicURL(r, resourceMetadataPath)))
	writeJSON(w, http.StatusUnauthorized, map[string]any{"error": msg})
}

// resourceMetadataPath is where the protected resource metadata (RFC
// 9728) is served.
const resourceMetadataPath = "/.well-known/oauth-protected-resource"

// publicURL is path on this server as the client reached it: the Host it
// asked for (checked by hostAllowed), and https when the connection or a
// TLS-terminating proxy (X-Forwarded-Proto) says so.
func publicURL(r *http.Request, path string) string {
	scheme := "http"
	if r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https") {
		scheme = "https"
	}
	return scheme + "://" + r.Host + path
}

// resourceMetadata answers GET /.well-known/oauth-protected-resource
// (and the same with the resource's path appended, as RFC 9728 asks
// clients to try first): opsearch is a resource that takes OpenProject's
// OAuth access tokens, issued by the instance itself with the api_v3
// scope opsearch needs to read and write through API v3.
func (h *httpHandler) resourceMetadata(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "max-age=3600")
	writeJSON(w, http.StatusOK, map[string]any{
		"resource":                 publicURL(r, "/mcp"),
		"authorization_servers":    []string{strings.TrimRight(h.opts.BaseURL, "/")},
		"scopes_supported":         []string{"api_v3"},
		"bearer_methods_supported": []string{"header"},
		"resource_name":            "opsearch: search for OpenProject",
	})
}

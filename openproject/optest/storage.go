package optest

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"html"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The external storage imitates an S3 bucket behind presigned URLs, the
// way a real server with fog storage hands out attachments: the API's
// content route redirects to
//
//	http://HOST:PORT/opsearch-attachments/attachments/{id}/{fileName}?X-Amz-Algorithm=...&X-Amz-Expires=300&X-Amz-Signature=...
//
// on a listener of its own (another host:port than the API). It answers
// like S3: 400 with an XML error when the request also carries an
// Authorization header (S3 allows one authentication mechanism, and a
// client that forwards the API's credentials on a redirect is sending
// two), 403 when the signature is wrong or expired, 404 for a file that
// is gone, and 200 with the bytes otherwise. Presigned URLs are valid for
// presignExpiry by the server clock.

// presignExpiry is how long a presigned URL stays valid (X-Amz-Expires).
const presignExpiry = 300 * time.Second

// storageBucket is the bucket name in the storage's paths.
const storageBucket = "opsearch-attachments"

// amzDate is the layout of X-Amz-Date.
const amzDate = "20060102T150405Z"

// errStorageClosed: the server was closed, so the storage no longer
// serves.
var errStorageClosed = errors.New("external storage closed")

// storage is the external object storage of one Server. It listens from
// the first presign until close.
type storage struct {
	srv  *Server
	addr string
	// name is the host name of addr when it is a name, not an IP
	// address: the presigned URLs use it.
	name string
	key  []byte // signs the presigned URLs

	mu     sync.Mutex
	closed bool
	ln     net.Listener
	hs     *http.Server
	served chan struct{} // closed when hs.Serve has returned

	reqMu    sync.Mutex
	requests int
}

func newStorage(srv *Server, addr string) *storage {
	key := make([]byte, 32)
	_, _ = rand.Read(key) // crypto/rand.Read does not fail
	st := &storage{srv: srv, addr: addr, key: key}
	if h, _, err := net.SplitHostPort(addr); err == nil && h != "" && net.ParseIP(h) == nil {
		st.name = h
	}
	return st
}

// listener starts the storage if it is not running yet and returns its
// address.
func (st *storage) listener() (net.Addr, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		return nil, errStorageClosed
	}
	if st.ln != nil {
		return st.ln.Addr(), nil
	}
	ln, err := net.Listen("tcp", st.addr)
	if err != nil {
		return nil, fmt.Errorf("listen for external storage: %w", err)
	}
	st.ln = ln
	st.hs = &http.Server{
		Handler:           http.HandlerFunc(st.serve),
		ReadHeaderTimeout: 10 * time.Second,
		// Clients that hang up mid-download make net/http log.
		ErrorLog: log.New(io.Discard, "", 0),
	}
	st.served = make(chan struct{})
	go func(hs *http.Server, done chan<- struct{}) {
		defer close(done)
		_ = hs.Serve(ln) // ends with ErrServerClosed on close
	}(st.hs, st.served)
	return ln.Addr(), nil
}

// close stops the listener, if it ever started, and waits until it is
// done: open downloads get a moment to finish, then their connections
// are closed. The storage does not start again.
func (st *storage) close() {
	st.mu.Lock()
	st.closed = true
	hs, served := st.hs, st.served
	st.mu.Unlock()
	if hs == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if hs.Shutdown(ctx) != nil {
		_ = hs.Close()
	}
	<-served
}

// presign returns a presigned URL of a's content, valid from now for
// presignExpiry. The URL names the storage's host name when its address
// has one ("localhost:0"), else its IP address; when it listens on every
// interface, the host the client used for the API (reqHost), with the
// storage's port.
//
// With the default address the storage differs from a fake on 127.0.0.1
// by its port only. Go's http.Client then forwards the Authorization
// header on the redirect (it compares host names, not ports), as it
// would to a MinIO beside OpenProject on the same host, and the storage
// answers 400: a client must drop the header itself. A storage address
// with another name (StorageAddr "localhost:0" for a fake on 127.0.0.1)
// behaves like S3 on a host of its own.
func (st *storage) presign(a *storedAttachment, reqHost string, now time.Time) (string, error) {
	addr, err := st.listener()
	if err != nil {
		return "", err
	}
	host := addr.String()
	ta, isTCP := addr.(*net.TCPAddr)
	switch {
	case isTCP && st.name != "":
		host = net.JoinHostPort(st.name, strconv.Itoa(ta.Port))
	case isTCP && ta.IP.IsUnspecified():
		h := "127.0.0.1"
		if reqHost != "" {
			if rh, _, err := net.SplitHostPort(reqHost); err == nil {
				h = rh
			} else {
				h = reqHost
			}
		}
		host = net.JoinHostPort(strings.Trim(h, "[]"), strconv.Itoa(ta.Port))
	}
	path := "/" + storageBucket + "/attachments/" + itoa(a.ID) + "/"
	q := url.Values{
		"X-Amz-Algorithm":              {"AWS4-HMAC-SHA256"},
		"X-Amz-Credential":             {"OPSEARCHFAKEKEY/" + now.Format("20060102") + "/us-east-1/s3/aws4_request"},
		"X-Amz-Date":                   {now.UTC().Format(amzDate)},
		"X-Amz-Expires":                {strconv.Itoa(int(presignExpiry / time.Second))},
		"X-Amz-SignedHeaders":          {"host"},
		"response-content-disposition": {contentDisposition("attachment", a.FileName)},
	}
	q.Set("X-Amz-Signature", st.sign(path+a.FileName, q))
	return "http://" + host + path + url.PathEscape(a.FileName) + "?" + q.Encode(), nil
}

// sign is the signature of a path (unescaped) and the signed query
// parameters.
func (st *storage) sign(path string, q url.Values) string {
	m := hmac.New(sha256.New, st.key)
	for _, s := range []string{path, q.Get("X-Amz-Date"), q.Get("X-Amz-Expires"), q.Get("response-content-disposition")} {
		m.Write([]byte(s))
		m.Write([]byte{'\n'})
	}
	return hex.EncodeToString(m.Sum(nil))
}

// count returns how many requests the storage has answered.
func (st *storage) count() int {
	st.reqMu.Lock()
	defer st.reqMu.Unlock()
	return st.requests
}

// StorageRequests returns how many requests reached the external storage
// (downloads of External attachments through their presigned URLs,
// refused ones included). Requests to the API, the redirects among
// them, are counted by Requests.
func (s *Server) StorageRequests() int { return s.storage.count() }

// serve answers one request to the storage.
func (st *storage) serve(w http.ResponseWriter, r *http.Request) {
	st.reqMu.Lock()
	st.requests++
	st.reqMu.Unlock()
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		s3Error(w, r, http.StatusMethodNotAllowed, "MethodNotAllowed", "The specified method is not allowed against this resource.")
		return
	}
	if r.Header.Get("Authorization") != "" {
		s3Error(w, r, http.StatusBadRequest, "InvalidArgument",
			"Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter, Signature query string parameter or the Authorization header should be specified")
		return
	}
	q := r.URL.Query()
	sig, err := hex.DecodeString(q.Get("X-Amz-Signature"))
	if err != nil || q.Get("X-Amz-Algorithm") == "" || !hmac.Equal(sig, mustHex(st.sign(r.URL.Path, q))) {
		s3Error(w, r, http.StatusForbidden, "SignatureDoesNotMatch",
			"The request signature we calculated does not match the signature you provided. Check your key and signing method.")
		return
	}
	signed, err := time.Parse(amzDate, q.Get("X-Amz-Date"))
	expires, err2 := strconv.Atoi(q.Get("X-Amz-Expires"))
	if err != nil || err2 != nil || st.srv.clock().After(signed.Add(time.Duration(expires)*time.Second)) {
		s3Error(w, r, http.StatusForbidden, "AccessDenied", "Request has expired")
		return
	}
	rest, _ := strings.CutPrefix(r.URL.Path, "/"+storageBucket+"/attachments/")
	idArg, name, _ := strings.Cut(rest, "/")
	id, _ := parseID(idArg)
	st.srv.st.mu.RLock()
	a, ok := st.srv.st.atts[id]
	st.srv.st.mu.RUnlock()
	if !ok || !a.External || a.FileName != name {
		s3Error(w, r, http.StatusNotFound, "NoSuchKey", "The specified key does not exist.")
		return
	}
	body := a.Bytes()
	_, digest := a.sizeAndDigest()
	h := w.Header()
	h.Set("Content-Type", a.contentType())
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("ETag", `"`+digest+`"`)
	h.Set("Accept-Ranges", "bytes")
	if d := q.Get("response-content-disposition"); d != "" {
		h.Set("Content-Disposition", d)
	}
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

func mustHex(s string) []byte {
	b, _ := hex.DecodeString(s)
	return b
}

// s3Error answers with an S3 error document.
func s3Error(w http.ResponseWriter, r *http.Request, status int, code, message string) {
	var reqID [8]byte
	_, _ = rand.Read(reqID[:])
	body := `<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
		"<Error><Code>" + code + "</Code><Message>" + html.EscapeString(message) + "</Message>" +
		"<Resource>" + html.EscapeString(r.URL.Path) + "</Resource>" +
		"<RequestId>" + strings.ToUpper(hex.EncodeToString(reqID[:])) + "</RequestId></Error>"
	h := w.Header()
	h.Set("Content-Type", "application/xml")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = io.WriteString(w, body)
	}
}

package control

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/opsearch/opsearch/search"
	"github.com/opsearch/opsearch/sync"
)

// ErrNoServer is returned by Dial when no process serves the user
// directory's control socket: the caller may open the files itself.
var ErrNoServer = errors.New("no opsearch process serves this user directory")

// Timeouts of the client: connecting, and a status or search answer. A
// sync has none but the caller's context, since a first crawl takes
// minutes.
const (
	dialTimeout   = 2 * time.Second
	answerTimeout = time.Minute
)

// Client talks to the process that holds one user directory's files.
type Client struct {
	hc   *http.Client
	path string
	// Status is the holder's status as of Dial.
	Status Status
}

// Dial connects to the control socket of the user directory dir and
// asks for its status. It fails with ErrNoServer when there is no
// socket or nothing listens on it (a leftover of a process that died).
func Dial(ctx context.Context, dir string) (*Client, error) {
	path, err := SocketPath(dir)
	if err != nil {
		return nil, err
	}
	fi, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, ErrNoServer
	}
	if err != nil {
		return nil, fmt.Errorf("check control socket: %w", err)
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return nil, fmt.Errorf("check control socket: %s is not a socket", path)
	}
	if err := ensurePrivateDir(filepath.Dir(path), false); err != nil {
		return nil, err
	}
	d := net.Dialer{Timeout: dialTimeout}
	c := &Client{path: path, hc: &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return d.DialContext(ctx, "unix", path)
		},
		DisableCompression: true,
	}}}
	if err := c.do(ctx, http.MethodGet, "/v1/status", nil, &c.Status, answerTimeout); err != nil {
		if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT) {
			return nil, ErrNoServer
		}
		return nil, err
	}
	return c, nil
}

// Close releases the client's connections.
func (c *Client) Close() { c.hc.CloseIdleConnections() }

// Holder describes the serving process for messages ("pid 4242,
// opsearch serve").
func (c *Client) Holder() string {
	return fmt.Sprintf("pid %d, %s", c.Status.PID, c.Status.Command)
}

// Search runs q in the holder's index.
func (c *Client) Search(ctx context.Context, q search.Query) (search.Response, error) {
	var resp search.Response
	err := c.do(ctx, http.MethodPost, "/v1/search", q, &resp, answerTimeout)
	return resp, err
}

// Freshness is the holder's index state now.
func (c *Client) Freshness(ctx context.Context) (search.Freshness, error) {
	var st Status
	if err := c.do(ctx, http.MethodGet, "/v1/status", nil, &st, answerTimeout); err != nil {
		return search.Freshness{}, err
	}
	return st.Freshness, nil
}

// Sync asks the holder to sync now and waits for that sync's report. An
// error from the sync itself is the report's (Report().Err()); err is
// about asking: the holder not syncing yet (sync.ErrNotSyncing), or gone.
func (c *Client) Sync(ctx context.Context) (sync.Report, error) {
	var a SyncAnswer
	if err := c.do(ctx, http.MethodPost, "/v1/sync", struct{}{}, &a, 0); err != nil {
		return sync.Report{}, err
	}
	rep := a.Report.Report()
	if a.Error != "" && rep.Err() == nil {
		// Failed before or beyond any kind (a recovery, a cancellation).
		return rep, errors.New(a.Error)
	}
	return rep, nil
}

// RemoteError is an error answer of the serving process.
type RemoteError struct {
	Status  int
	Message string
}

func (e *RemoteError) Error() string { return e.Message }

// Is makes a 409 answer match sync.ErrNotSyncing.
func (e *RemoteError) Is(target error) bool {
	return target == sync.ErrNotSyncing && e.Status == http.StatusConflict
}

func (c *Client) do(ctx context.Context, method, path string, in, out any, timeout time.Duration) error {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("encode control request: %w", err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://opsearch"+path, body)
	if err != nil {
		return fmt.Errorf("build control request: %w", err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("the opsearch process serving %s did not answer within %s", c.path, timeout)
		}
		return fmt.Errorf("ask the opsearch process serving %s: %w", c.path, err)
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(io.LimitReader(resp.Body, 64<<20))
	if resp.StatusCode != http.StatusOK {
		var eb errorBody
		if err := dec.Decode(&eb); err != nil || eb.Error == "" {
			eb.Error = "the opsearch process answered " + resp.Status
		}
		return &RemoteError{Status: resp.StatusCode, Message: eb.Error}
	}
	if err := dec.Decode(out); err != nil {
		return fmt.Errorf("decode control answer: %w", err)
	}
	return nil
}

package optest

import (
	"context"
	"net"
	"net/http"
	"time"
)

// Instance is a Server listening on a TCP address, as programs run it (the
// fakeop and demo commands, eval's benchmark). Tests use
// internal/optesting.Start instead, which ties the server to the test.
type Instance struct {
	// Server is the fake being served.
	Server *Server
	// URL is the base URL: scheme, host and port. The API lives under
	// URL+"/api/v3".
	URL string

	hs   *http.Server
	errc chan error
}

// Listen serves a Server for a deep copy of d (see NewServer) on addr,
// "host:port"; port 0 picks a free one. Like NewServer it does not
// validate d. Without Options.StorageAddr the external storage listens on
// a free port of the same host, so that a fake reachable from other
// machines has a reachable storage too. The error is net.Listen's.
func Listen(addr string, d *Dataset, opts Options) (*Instance, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	if opts.StorageAddr == "" {
		if host, _, err := net.SplitHostPort(ln.Addr().String()); err == nil {
			opts.StorageAddr = net.JoinHostPort(host, "0")
		}
	}
	s := NewServer(d, opts)
	in := &Instance{
		Server: s,
		URL:    "http://" + ln.Addr().String(),
		hs:     &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second},
		errc:   make(chan error, 1),
	}
	go func() { in.errc <- in.hs.Serve(ln) }()
	return in, nil
}

// Err delivers the error that ended serving: a failure of the listener,
// or http.ErrServerClosed after Shutdown or Close.
func (in *Instance) Err() <-chan error { return in.errc }

// Shutdown stops the instance gracefully: it releases the requests held by
// a hang fault or sleeping in injected latency (Server.Close), stops
// accepting connections and waits for the open requests until ctx ends.
func (in *Instance) Shutdown(ctx context.Context) error {
	in.Server.Close()
	return in.hs.Shutdown(ctx)
}

// Close stops the instance at once: it releases the held requests and
// closes every connection.
func (in *Instance) Close() error {
	in.Server.Close()
	return in.hs.Close()
}

package mcp

import (
	"crypto/sha256"
	gosync "sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/opsearch/opsearch/sync"
)

// The HTTP server's per-user state, attached to the sync manager's users:
// one index per user, one MCP server per API key.

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

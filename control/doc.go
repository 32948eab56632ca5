// Package control lets opsearch commands reach the opsearch process that
// holds a user's files.
//
// bbolt and bleve lock their files, so while `opsearch serve` (stdio or
// HTTP) holds a user's store and index, `opsearch search`, `status` and
// `sync` cannot open them. Instead the holder listens on a Unix socket
// in the user's directory (private: the directory is 0700, the socket
// 0600, and on Linux the peer's uid is checked), and the commands send
// their request there: a search or the status is answered from the live
// index, a sync runs in the holder's scheduler. When no process answers,
// the commands open the files themselves, as before.
//
// The protocol is JSON over HTTP/1.1 on the socket: GET /v1/status,
// POST /v1/search (a search.Query), POST /v1/sync. It is internal to one
// opsearch version pair on one machine; the paths carry a version so a
// mismatch fails clearly rather than silently.
//
// It owns the socket (its path, its permissions, the peer check), the
// protocol and both ends of it: Listen and Attach serve a sync.User,
// Dial and Client ask. It must not know how a search ranks or a sync
// crawls (the holder's search.Engine and sync.User answer), nor the
// commands' flags and output, which stay in cmd/opsearch.
package control

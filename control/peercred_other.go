//go:build !linux

package control

import "net"

// checkPeer relies on the socket directory's permissions where the
// peer's credentials are not read.
func checkPeer(net.Conn) error { return nil }

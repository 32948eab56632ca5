//go:build linux

package control

import (
	"fmt"
	"net"
	"os"
	"syscall"
)

// checkPeer refuses a connection from another OS user. The socket's
// directory and mode already keep them out; this holds even if those
// were loosened by hand.
func checkPeer(c net.Conn) error {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return nil
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return fmt.Errorf("check peer: %w", err)
	}
	var cred *syscall.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return fmt.Errorf("check peer: %w", err)
	}
	if credErr != nil {
		return fmt.Errorf("check peer: %w", credErr)
	}
	if int(cred.Uid) != os.Getuid() {
		return fmt.Errorf("check peer: uid %d is not this process's user", cred.Uid)
	}
	return nil
}

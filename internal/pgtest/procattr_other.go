//go:build unix && !linux

package pgtest

import "syscall"

// serverAttr is how the server is started: as cred, in a process group of its
// own. Only Linux has a parent-death signal: elsewhere a test binary that dies
// without running its cleanup leaves the server running.
func serverAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred, Setpgid: true}
}

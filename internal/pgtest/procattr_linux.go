package pgtest

import "syscall"

// serverAttr is how the server is started: as cred, in a process group of its
// own, and sent SIGQUIT (PostgreSQL's immediate shutdown) when the thread that
// started it ends, so that a test binary that dies leaves no server behind.
func serverAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGQUIT, Setpgid: true}
}

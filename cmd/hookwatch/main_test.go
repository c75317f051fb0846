package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestSecondInterruptEnds: the first Ctrl-C asks the command to end
// cleanly (its context); a second ends the process, even one stuck where
// the context does not reach: here, reading a token file that is a FIFO
// no one writes.
func TestSecondInterruptEnds(t *testing.T) {
	e := newTestEnv(t)
	fifo := filepath.Join(e.root, "token")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	cmd := exec.Command(e.self, "install", "--dry-run", "--token-file", fifo)
	cmd.Env = os.Environ()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-done })
	time.Sleep(time.Second) // blocked in the open of the FIFO by now
	cmd.Process.Signal(os.Interrupt)
	select {
	case <-done:
		t.Skip("the first interrupt came before the command's handler was in place")
	case <-time.After(500 * time.Millisecond):
	}
	cmd.Process.Signal(os.Interrupt)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("a second interrupt did not end the command")
	}
}

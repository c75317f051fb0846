package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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

// TestUnknownSubcommand: a slip of the fingers is answered with the
// subcommand it was meant for, alone; a name near none gets the list.
// Both are usage errors.
func TestUnknownSubcommand(t *testing.T) {
	for _, c := range []struct {
		args  []string
		near  string // "" for no suggestion
		usage bool
	}{
		{[]string{"srve"}, "serve", false},
		{[]string{"instal", "--mode", "http"}, "install", false},
		{[]string{"docter"}, "doctor", false},
		{[]string{"exprot"}, "export", false},
		{[]string{"SERVE"}, "serve", false},
		{[]string{"help", "srve"}, "serve", false},
		{[]string{"xyzzy"}, "", true},
		{[]string{"rm"}, "", true},
		{[]string{"help", "xyzzy"}, "", true},
	} {
		var stdout, stderr strings.Builder
		err := run(context.Background(), c.args, strings.NewReader(""), &stdout, &stderr)
		if code := exitCode(err, &stderr); code != 2 {
			t.Errorf("%v: exit %d, want 2", c.args, code)
		}
		msg := stderr.String()
		if got := strings.Contains(msg, "did you mean"); got != (c.near != "") || c.near != "" && !strings.Contains(msg, `did you mean "`+c.near+`"?`) {
			t.Errorf("%v: %q, want a suggestion of %q", c.args, msg, c.near)
		}
		if got := strings.Contains(msg, "Usage:"); got != c.usage {
			t.Errorf("%v: the list of subcommands printed: %v, want %v", c.args, got, c.usage)
		}
	}
}

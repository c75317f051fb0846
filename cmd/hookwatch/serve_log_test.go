package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/hook"
	"github.com/hookwatch/hookwatch/internal/serveproc"
	"github.com/hookwatch/hookwatch/internal/testbin"
)

// TestServeRotatesOwnLog: a collector whose standard error is the home's
// serve.log, opened for appending as launchd opens it (which rotates
// nothing at a start, unlike a hook), rotates it itself once it is past
// the home's bound on logs: the log as it was goes to serve.log.1 whole,
// and what the collector writes next lands in a new serve.log.
func TestServeRotatesOwnLog(t *testing.T) {
	bin := testbin.Build(t, "./cmd/hookwatch")
	home := t.TempDir()
	log := filepath.Join(home, hook.ServeLog)
	// Past the bound (8 MiB, hook's maxLogBytes) by a MiB.
	old := bytes.Repeat([]byte("an old line of a collector that ran for months\n"), (9<<20)/47)
	if err := os.WriteFile(log, old, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(log, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := serveproc.Start(serveproc.Options{
		Bin: bin, Stdout: f, Stderr: f,
		Env: append(os.Environ(), "HOOKWATCH_HOME="+home, "HOOKWATCH_TOKEN=", "HOOKWATCH_DB=", "HOOKWATCH_CODEX_ROLLOUTS=off", "HOOKWATCH_WATCH_TRANSCRIPTS=off"),
	})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			p.Kill()
		}
	}()
	var rotated []byte
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if rotated, err = os.ReadFile(log + ".1"); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if !bytes.HasPrefix(rotated, old) {
		t.Fatalf("serve.log.1: %d bytes (%v), want the %d of serve.log before the start first", len(rotated), err, len(old))
	}
	stopped = true
	if err := p.Stop(time.Minute); err != nil {
		t.Fatal(err)
	}
	cur, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	// Listening is said at once, shutting down at the end, into the new log.
	all := string(rotated[len(old):]) + string(cur)
	if !strings.Contains(all, "hookwatch serve: listening on") || !strings.Contains(string(cur), "shutting down") || len(cur) >= len(old) {
		t.Fatalf("after the rotation: serve.log.1 holds %q past the old log, serve.log %q", rotated[len(old):], cur)
	}
}

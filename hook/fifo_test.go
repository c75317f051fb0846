package hook_test

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/fifotest"
	"github.com/hookwatch/hookwatch/internal/testbin"
)

// TestPayloadPathsFIFO runs the real hook binary on payloads whose paths
// name FIFOs and devices (the file a Read read, a subagent's sidecar, the
// transcript at SessionEnd and PreCompact, a Codex rollout): it exits 0 at
// once, says nothing, and delivers the event.
func TestPayloadPathsFIFO(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the hook binary")
	}
	bin := testbin.Build(t, "./cmd/hookwatch-hook")
	c := newCollector(t)
	cases := fifotest.Payloads(t)
	for _, tc := range cases {
		home := t.TempDir()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		cmd := exec.CommandContext(ctx, bin)
		cmd.Env = append(cmd.Environ(), "HOOKWATCH_HOME="+home, "HOOKWATCH_URL="+c.srv.URL, "HOOKWATCH_HOOK_BUDGET=1s")
		cmd.Stdin = bytes.NewReader(tc.Payload)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		start := time.Now()
		err := cmd.Run()
		took := time.Since(start)
		cancel()
		if err != nil {
			t.Errorf("%s: %v after %v (stderr %q)", tc.Name, err, took.Round(time.Millisecond), stderr.String())
			continue
		}
		if stdout.Len() != 0 || stderr.Len() != 0 {
			t.Errorf("%s: stdout %q, stderr %q; want both empty", tc.Name, stdout.String(), stderr.String())
		}
		// Generous: the work is a few system calls; a blocked open is
		// forever.
		if took > 2*time.Second {
			t.Errorf("%s: took %v", tc.Name, took)
		}
	}
	sessions := map[string]bool{}
	for _, env := range c.got() {
		p, err := event.Decode(env.Payload)
		if err != nil {
			t.Fatal(err)
		}
		sessions[p.SessionID] = true
	}
	if len(sessions) != len(cases) {
		t.Errorf("the collector got the events of %d sessions, want %d", len(sessions), len(cases))
	}
}

// TestLastResortEndsRun: a step the budget does not bound that hangs (here
// hook.log is a FIFO no one reads, as a file on a mount that stopped
// answering would hang) ends the real hook binary at twice its budget, exit
// code 0, nothing on stdout.
func TestLastResortEndsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the hook binary")
	}
	bin := testbin.Build(t, "./cmd/hookwatch-hook")
	home := t.TempDir()
	fifotest.Mkfifo(t, filepath.Join(home, "hook.log"))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin)
	cmd.Env = append(cmd.Environ(), "HOOKWATCH_HOME="+home, "HOOKWATCH_URL="+testbin.DeadURL(t), "HOOKWATCH_AUTOSTART=0", "HOOKWATCH_HOOK_BUDGET=300ms")
	cmd.Stdin = strings.NewReader("not a payload") // logged: hook.log is opened
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	if err != nil || stdout.Len() != 0 || stderr.Len() != 0 {
		t.Errorf("after %v: %v, stdout %q, stderr %q; want exit 0 and nothing", took, err, stdout.String(), stderr.String())
	}
	if took < 600*time.Millisecond || took > 3*time.Second {
		t.Errorf("ended after %v, want about 600ms (twice the budget)", took)
	}
}

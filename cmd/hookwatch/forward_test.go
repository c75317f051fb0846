package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/hook"
	"github.com/hookwatch/hookwatch/internal/pgtest"
	"github.com/hookwatch/hookwatch/internal/testbin"
	"github.com/hookwatch/hookwatch/spool"
	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/postgres"
)

// TestForwardHTTPS sends events with the real hook binary to a collector
// that serves HTTPS only, on PostgreSQL, with a user's token: the first hook
// starts the forwarder, which delivers through TLS verified against the
// test's certificate (HOOKWATCH_CA_FILE); the forwarder is then SIGKILLed
// half-way, the hooks go on spooling, and a new forwarder delivers the
// rest. Every event is stored exactly once, as the token's user.
func TestForwardHTTPS(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the hook and forwarder binaries")
	}
	dir := t.TempDir()
	dbURL := pgtest.NewDatabase(t)
	t.Setenv("HOOKWATCH_HOME", filepath.Join(dir, "server"))
	t.Setenv("HOOKWATCH_DB", dbURL)
	t.Setenv("HOOKWATCH_TOKEN", "")
	t.Setenv("HOOKWATCH_CODEX_ROLLOUTS", "off")
	var out, errOut bytes.Buffer
	if err := run(t.Context(), []string{"token", "create", "--user", "ann"}, nil, &out, &errOut); err != nil {
		t.Fatalf("token create: %v %s", err, errOut.String())
	}
	secret := strings.TrimSpace(out.String())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url, certFile, _, done := startServeTLS(t, ctx, dir)
	defer func() { cancel(); <-done }()

	// The developer's machine: the token where 'hookwatch install --token'
	// keeps it, the team's URL and certificate in the environment.
	hookBin := testbin.Build(t, "./cmd/hookwatch-hook")
	bin := testbin.Build(t, "./cmd/hookwatch") // beside it: what the hook starts
	home := filepath.Join(dir, "laptop")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, hook.TokenFile), []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + dir, "HOOKWATCH_HOME=" + home, "HOOKWATCH_URL=" + url, "HOOKWATCH_CA_FILE=" + certFile, "PATH=" + os.Getenv("PATH")}
	spoolDir := filepath.Join(home, "spool")
	forwarder := func() (spool.ConsumerInfo, bool) {
		c, ok := spool.Consumer(spoolDir)
		return c, ok && c.Addr == hook.ForwarderAddr(url)
	}
	t.Cleanup(func() {
		if c, ok := forwarder(); ok {
			syscall.Kill(c.PID, syscall.SIGKILL)
		}
	})
	const session, n = "forward-https", 120
	sendHook := func(i int, extra ...string) {
		t.Helper()
		payload := fmt.Sprintf(`{"session_id":%q,"cwd":"/tmp","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"echo %d"},"tool_use_id":"toolu_%03d"}`, session, i, i)
		cmd := exec.Command(hookBin)
		cmd.Env = append(append([]string{}, env...), extra...)
		cmd.Stdin = strings.NewReader(payload)
		var stdout bytes.Buffer
		cmd.Stdout = &stdout
		if err := cmd.Run(); err != nil || stdout.Len() > 0 {
			t.Fatalf("hook %d: %v, stdout %q", i, err, stdout.String())
		}
	}
	db := postgres.MustOpenDB(t, dbURL)
	waitStored := func(want int64) store.Session {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for {
			s, err := db.Session(t.Context(), session)
			if err == nil && s.EventCount >= want || time.Now().After(deadline) {
				if s.EventCount != want {
					t.Fatalf("stored %d events (%v), want %d; forward.log:\n%s\nhook.log:\n%s", s.EventCount, err, want,
						readFileString(filepath.Join(home, "forward.log")), readFileString(filepath.Join(home, "hook.log")))
				}
				return s
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	// The first hook finds no forwarder: it spools and starts one.
	sendHook(0)
	waitStored(1)
	first, ok := forwarder()
	if !ok {
		t.Fatalf("no forwarder attached to %s after the first hook; forward.log:\n%s", spoolDir, readFileString(filepath.Join(home, "forward.log")))
	}
	// Half the events through the running forwarder, then SIGKILL it
	// while they may still be in flight; the rest wait in the spool
	// (autostart off, so that the test starts the next forwarder).
	for i := 1; i < n/2; i++ {
		sendHook(i)
	}
	if err := syscall.Kill(first.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for i := n / 2; i < n; i++ {
		sendHook(i, "HOOKWATCH_AUTOSTART=0")
	}
	// SIGKILL is delivered, not carried out, when Kill returns: the lock
	// goes with the last of the killed process's files, which under load
	// has been seen to take longer than the hooks above. Any other
	// forwarder attached then was started by a hook.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		c, ok := forwarder()
		if ok && c.PID != first.PID {
			t.Fatalf("forwarder %d is attached after the SIGKILL of %d: the hooks started it with autostart off", c.PID, first.PID)
		}
		if !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the SIGKILLed forwarder %d still holds the spool after 10 s", first.PID)
		}
	}
	fwd := exec.Command(bin, "forward")
	fwd.Env = env
	var fwdLog bytes.Buffer
	fwd.Stdout, fwd.Stderr = &fwdLog, &fwdLog
	if err := fwd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		fwd.Process.Signal(syscall.SIGTERM)
		fwd.Wait()
	}()
	s := waitStored(n)
	if s.User != "ann" {
		t.Errorf("the session is stored as %q's, want the token's user ann", s.User)
	}
	page, err := db.Events(t.Context(), store.EventFilter{SessionID: session, Limit: 2 * n})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, e := range page.Events {
		if seen[e.ToolUseID] {
			t.Errorf("call %s stored twice", e.ToolUseID)
		}
		seen[e.ToolUseID] = true
	}
	if len(seen) != n {
		t.Errorf("stored %d distinct calls, want %d", len(seen), n)
	}
	if b, err := os.ReadFile(filepath.Join(home, "rejected.jsonl")); err == nil {
		t.Errorf("rejected.jsonl holds %s", b)
	}
	// Settled: the spool holds nothing more.
	sp, err := spool.Open(spoolDir, spool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := sp.Stats()
		if err == nil && st.PendingBytes == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the spool still holds %+v (%v); forwarder:\n%s", st, err, fwdLog.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func readFileString(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// TestForwardUsage: forward needs a URL the hook cannot post to itself.
func TestForwardUsage(t *testing.T) {
	t.Setenv("HOOKWATCH_HOME", t.TempDir())
	for _, url := range []string{"", "ftp://example.com", "http://127.0.0.1:7421", "http://10.0.0.5:7421"} {
		t.Setenv("HOOKWATCH_URL", url)
		var out, errOut bytes.Buffer
		if err := run(t.Context(), []string{"forward"}, nil, &out, &errOut); !errors.Is(err, errUsage) {
			t.Errorf("forward with HOOKWATCH_URL=%q: %v, want a usage error", url, err)
		}
	}
}

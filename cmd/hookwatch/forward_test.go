package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/forward"
	"github.com/hookwatch/hookwatch/hook"
	"github.com/hookwatch/hookwatch/internal/pgtest"
	"github.com/hookwatch/hookwatch/internal/syncbuf"
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
	dir, dbURL := teamServerEnv(t)
	secret := createUserToken(t, "ann")
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
	// The compaction archive of two sessions, one untouched for 40 days:
	// the forwarder the hook starts deletes it, by default, and keeps the
	// other.
	oldArchive, recentArchive := filepath.Join(home, "archive", "old"), filepath.Join(home, "archive", "recent")
	for _, d := range []string{oldArchive, recentArchive} {
		p := filepath.Join(d, "main", "20260101T000000.000000000Z.jsonl")
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(`{"type":"user"}`+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if d == oldArchive {
			old := time.Now().Add(-40 * 24 * time.Hour)
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
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
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(readFileString(filepath.Join(home, "forward.log")), "pruned the compaction archive"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the forwarder did not log a pass of the archive; forward.log:\n%s", readFileString(filepath.Join(home, "forward.log")))
		}
	}
	if _, err := os.Stat(oldArchive); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the archive untouched for 40 days is still there (%v)", err)
	}
	if _, err := os.Stat(recentArchive); err != nil {
		t.Errorf("the recent archive: %v", err)
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
	_, fwdLog, stopForward := startForward(t, bin, env)
	defer stopForward()
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

// startForward starts bin's forward command with env, its output written
// to the returned log, which the test may read while it runs; stop ends it
// with SIGTERM and waits for it.
func startForward(t *testing.T, bin string, env []string) (fwd *exec.Cmd, log *syncbuf.Buffer, stop func()) {
	t.Helper()
	fwd = exec.Command(bin, "forward")
	fwd.Env = env
	log = new(syncbuf.Buffer)
	fwd.Stdout, fwd.Stderr = log, log
	if err := fwd.Start(); err != nil {
		t.Fatal(err)
	}
	return fwd, log, func() {
		fwd.Process.Signal(syscall.SIGTERM)
		fwd.Wait()
	}
}

// teamServerEnv skips in -short mode (the tests run the hook and forwarder
// binaries), and points serve and the token commands at a PostgreSQL
// database of the test's, with the server's home under dir, and no
// HOOKWATCH_TOKEN; it returns the directory and the database's URL.
func teamServerEnv(t *testing.T) (dir, dbURL string) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the hook and forwarder binaries")
	}
	dir, dbURL = t.TempDir(), pgtest.NewDatabase(t)
	t.Setenv("HOOKWATCH_HOME", filepath.Join(dir, "server"))
	t.Setenv("HOOKWATCH_DB", dbURL)
	t.Setenv("HOOKWATCH_TOKEN", "")
	t.Setenv("HOOKWATCH_CODEX_ROLLOUTS", "off")
	return dir, dbURL
}

// createUserToken makes a token for user with 'hookwatch token create' and
// returns its secret.
func createUserToken(t *testing.T, user string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	if err := run(t.Context(), []string{"token", "create", "--user", user}, nil, &out, &errOut); err != nil {
		t.Fatalf("token create: %v %s", err, errOut.String())
	}
	return strings.TrimSpace(out.String())
}

func readFileString(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// TestForwardUsage: forward needs a collector's base URL the hook cannot
// post to itself.
func TestForwardUsage(t *testing.T) {
	t.Setenv("HOOKWATCH_HOME", t.TempDir())
	for _, url := range []string{"", "ftp://example.com", "http://127.0.0.1:7421", "http://10.0.0.5:7421",
		"https://example.com/v1/events", "https://example.com/hookwatch/v1/events/"} {
		t.Setenv("HOOKWATCH_URL", url)
		var out, errOut bytes.Buffer
		// Bounded: a forwarder that accepted the URL would run until its
		// context ends.
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
		err := run(ctx, []string{"forward"}, nil, &out, &errOut)
		cancel()
		if !errors.Is(err, errUsage) {
			t.Errorf("forward with HOOKWATCH_URL=%q: %v, want a usage error", url, err)
		}
	}
}

// TestForwardArchiveRetain: --archive-retain takes an age as serve's
// --retain does, or off; its variable sets its default; an age under an
// hour, a negative one or a word is refused naming the flag or the
// variable, before anything runs; --help says the default.
func TestForwardArchiveRetain(t *testing.T) {
	for in, want := range map[string]time.Duration{"30d": 30 * 24 * time.Hour, "2w": 14 * 24 * time.Hour, "36h": 36 * time.Hour,
		"1.5d": 36 * time.Hour, "off": 0, "OFF": 0, "0": 0} {
		var a archiveAge
		if err := a.Set(in); err != nil || time.Duration(a) != want {
			t.Errorf("--archive-retain %s = %v, %v; want %v", in, time.Duration(a), err, want)
		}
	}
	for d, want := range map[archiveAge]string{archiveAge(forward.DefaultArchiveRetain): "30d", 0: "off", archiveAge(36 * time.Hour): "36h0m0s"} {
		if got := d.String(); got != want {
			t.Errorf("%v shown as %q, want %q", time.Duration(d), got, want)
		}
	}

	t.Setenv("HOOKWATCH_HOME", t.TempDir())
	t.Setenv("HOOKWATCH_URL", "https://hookwatch.example")
	for _, c := range []struct{ env, flag, says string }{
		{"", "1m", "--archive-retain 1m0s deletes the compaction archive of every session older than 1m0s: refused under 1h0m0s"},
		{"", "-3d", `"-3d": not a positive number of days or weeks, or off`},
		{"", "forever", `"forever": not a positive duration (90d, 2w, 36h), or off`},
		{"a month", "", `HOOKWATCH_ARCHIVE_RETAIN="a month", the default of --archive-retain`},
		{"30m", "", "--archive-retain 30m0s deletes"},
	} {
		t.Setenv("HOOKWATCH_ARCHIVE_RETAIN", c.env)
		args := []string{"forward"}
		if c.flag != "" {
			args = append(args, "--archive-retain", c.flag)
		}
		// Bounded: a forwarder that took the value would run until its
		// context ends.
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
		var out, errOut bytes.Buffer
		err := run(ctx, args, nil, &out, &errOut)
		cancel()
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error()+errOut.String(), c.says) {
			t.Errorf("forward --archive-retain %q with HOOKWATCH_ARCHIVE_RETAIN=%q: %v %s; want a usage error saying %q", c.flag, c.env, err, errOut.String(), c.says)
		}
		if _, err := os.Stat(filepath.Join(os.Getenv("HOOKWATCH_HOME"), "spool")); err == nil {
			t.Fatalf("forward --archive-retain %q opened the spool before refusing it", c.flag)
		}
	}

	t.Setenv("HOOKWATCH_ARCHIVE_RETAIN", "")
	var out bytes.Buffer
	if err := run(t.Context(), []string{"forward", "--help"}, nil, &out, io.Discard); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("forward --help: %v", err)
	}
	for _, want := range []string{"[--archive-retain AGE|off]", "$HOOKWATCH_HOME/archive", "or off to keep it all (env HOOKWATCH_ARCHIVE_RETAIN) (default 30d)", "30 days by\ndefault"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("forward --help does not say %q:\n%s", want, out.String())
		}
	}
}

// TestForwardReadsKeptURL: without --url or HOOKWATCH_URL, forward sends
// to the URL install kept in the home, as the hooks do: here one the hook
// posts to itself, which forward refuses naming it.
func TestForwardReadsKeptURL(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOOKWATCH_HOME", home)
	t.Setenv("HOOKWATCH_URL", "")
	if err := os.WriteFile(filepath.Join(home, hook.URLFile), []byte("http://10.0.0.5:7421\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	err := run(ctx, []string{"forward"}, nil, io.Discard, io.Discard)
	if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "http://10.0.0.5:7421") {
		t.Errorf("forward with the URL kept: %v, want a usage error naming the URL kept", err)
	}
}

// TestForwardTokenReplaced walks docs/team-server.md's revoked token: a
// running forwarder delivers with carol's token from the home's token
// file; the admin revokes it, and the events wait in the spool, refused
// (401), while the forwarder's log names the file and the fix; carol
// installs a new token ('hookwatch install --token-file'), and the same
// forwarder, never restarted, sends it and delivers what waited, saying
// that it switched tokens without printing either.
func TestForwardTokenReplaced(t *testing.T) {
	dir, dbURL := teamServerEnv(t)
	createToken := func() string { return createUserToken(t, "carol") }
	old := createToken()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url, certFile, _, done := startServeTLS(t, ctx, dir)
	defer func() { cancel(); <-done }()

	hookBin := testbin.Build(t, "./cmd/hookwatch-hook")
	bin := testbin.Build(t, "./cmd/hookwatch")
	home := filepath.Join(dir, "laptop", ".hookwatch")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	tokenPath := filepath.Join(home, hook.TokenFile)
	if err := os.WriteFile(tokenPath, []byte(old+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Autostart off: the one forwarder is the test's, so that a delivery
	// after the new token is installed is that forwarder's.
	env := []string{"HOME=" + filepath.Join(dir, "laptop"), "HOOKWATCH_HOME=" + home, "HOOKWATCH_URL=" + url,
		"HOOKWATCH_CA_FILE=" + certFile, "HOOKWATCH_AUTOSTART=0", "CLAUDE_CONFIG_DIR=" + filepath.Join(dir, "claude"), "PATH=" + os.Getenv("PATH")}
	fwd, fwdLog, stopForward := startForward(t, bin, env)
	defer stopForward()

	const session, n = "forward-token-replaced", 20
	sendHook := func(i int) {
		t.Helper()
		payload := fmt.Sprintf(`{"session_id":%q,"cwd":"/tmp","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"echo %d"},"tool_use_id":"toolu_%03d"}`, session, i, i)
		cmd := exec.Command(hookBin)
		cmd.Env = env
		cmd.Stdin = strings.NewReader(payload)
		if out, err := cmd.Output(); err != nil || len(out) > 0 {
			t.Fatalf("hook %d: %v, stdout %q", i, err, out)
		}
	}
	db := postgres.MustOpenDB(t, dbURL)
	stored := func() int64 {
		s, _ := db.Session(t.Context(), session)
		return s.EventCount
	}
	// waitFor polls cond for up to 30 s: far longer than the forwarder's
	// backoff after the few refusals below.
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not after 30 s (%d events stored); forwarder:\n%s", what, stored(), fwdLog.String())
			}
		}
	}

	sendHook(0)
	waitFor("the first event is delivered with the first token", func() bool { return stored() == 1 })
	var list bytes.Buffer
	if err := run(t.Context(), []string{"token", "list", "--json"}, nil, &list, io.Discard); err != nil {
		t.Fatal(err)
	}
	var tokens []store.Token
	if err := json.Unmarshal(list.Bytes(), &tokens); err != nil || len(tokens) != 1 {
		t.Fatalf("token list: %v %s", err, list.String())
	}
	if err := run(t.Context(), []string{"token", "revoke", tokens[0].ID}, nil, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < n; i++ {
		sendHook(i)
	}
	waitFor("the forwarder says the collector refuses the token file's token", func() bool {
		return strings.Contains(fwdLog.String(), "refuses the token in "+tokenPath+" (HTTP 401)")
	})
	if got := stored(); got != 1 {
		t.Fatalf("stored %d events with a revoked token, want the first alone", got)
	}
	if log := fwdLog.String(); !strings.Contains(log, "hookwatch install --token-file") {
		t.Errorf("the forwarder's refusal does not say how to install a new token:\n%s", log)
	}

	// As the user does: the new token, installed; the forwarder runs on.
	newToken := createToken()
	tokenFile := filepath.Join(dir, "carol2.token")
	if err := os.WriteFile(tokenFile, []byte(newToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	install := exec.Command(bin, "install", "--url", url, "--token-file", tokenFile)
	install.Env = env
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("install --token-file: %v\n%s", err, out)
	}
	waitFor("the spooled events are delivered with the new token", func() bool { return stored() == n })
	// The spool's consumer lock is held while its process runs: the
	// forwarder started above still runs, never restarted.
	if c, ok := spool.Consumer(filepath.Join(home, "spool")); !ok || c.PID != fwd.Process.Pid {
		t.Fatalf("the spool's consumer is %+v (%v), want the forwarder %d, still running, never restarted", c, ok, fwd.Process.Pid)
	}
	s, err := db.Session(t.Context(), session)
	if err != nil || s.User != "carol" {
		t.Errorf("the session is stored as %q's (%v), want the token's user carol", s.User, err)
	}
	log := fwdLog.String()
	if !strings.Contains(log, "the token changed") || !strings.Contains(log, tokenPath) {
		t.Errorf("the forwarder's log does not say it switched to the token of %s:\n%s", tokenPath, log)
	}
	if strings.Contains(log, old) || strings.Contains(log, newToken) {
		t.Errorf("the forwarder's log holds a token:\n%s", log)
	}
	if b, err := os.ReadFile(filepath.Join(home, "rejected.jsonl")); err == nil {
		t.Errorf("rejected.jsonl holds %s", b)
	}
}

// TestForwardHidesThePassword: a URL's user info may hold a password; the
// forwarder's output, which the hook that starts it appends to
// forward.log, names the collector without it.
func TestForwardHidesThePassword(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOOKWATCH_HOME", home)
	t.Setenv("HOOKWATCH_TOKEN", "")
	t.Setenv("HOOKWATCH_URL", "https://carol:s3cret@127.0.0.1:1") // nothing listens: every POST fails
	sp, err := spool.Open(filepath.Join(home, "spool"), spool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := sp.Append([]byte(`{"id":"0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"}`)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 1500*time.Millisecond)
	defer cancel()
	var out, errOut bytes.Buffer
	if err := run(ctx, []string{"forward"}, nil, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	all := out.String() + errOut.String()
	if !strings.Contains(out.String(), "to https://127.0.0.1:1\n") || !strings.Contains(all, `retrying" url=https://127.0.0.1:1 in=`) || strings.Contains(all, "s3cret") {
		t.Fatalf("forward with a password in its URL printed\n%s", all)
	}
}

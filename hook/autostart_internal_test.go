package hook

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestAutostartNotForTeamServer: a hook whose home holds a team server's
// token (install --token) starts no collector at the loopback URL it finds
// down, an SSH tunnel to the server say: the spool keeps the events for the
// server, whether the hook reads the token from the file or from
// HOOKWATCH_TOKEN exported from it (the profile of http hooks' users does).
// HOOKWATCH_TOKEN of another token, or no token, leaves autostart as it was.
func TestAutostartNotForTeamServer(t *testing.T) {
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, TokenFile), []byte("hwt_0123\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const url = "http://127.0.0.1:1"
	ep, err := parseEndpoint(url)
	if err != nil {
		t.Fatal(err)
	}
	f := func(env map[string]string, wantTeam bool) {
		t.Helper()
		env["HOOKWATCH_HOME"] = home
		cfg, _ := ConfigFromEnv(func(k string) string { return env[k] })
		err := cfg.autostart(ep)
		if team := err != nil && strings.Contains(err.Error(), "team server"); team != wantTeam {
			t.Errorf("autostart with %v: %v, want the team server's refusal: %v", env, err, wantTeam)
		}
		if ForTeamServer(cfg.TokenSource, cfg.Token, cfg.Home) != wantTeam {
			t.Errorf("ForTeamServer with %v = %v", env, !wantTeam)
		}
	}
	f(map[string]string{"HOOKWATCH_URL": url}, true)
	f(map[string]string{"HOOKWATCH_URL": url, "HOOKWATCH_TOKEN": "hwt_0123"}, true)
	f(map[string]string{"HOOKWATCH_URL": url, "HOOKWATCH_TOKEN": "hwt_env"}, false)
	f(map[string]string{}, false) // the local default reads no token file
}

// TestServeLogRotated: a collector started in the background appends to
// serve.log, which a home months old would grow without bound (every
// start, every warning of a collector that runs for weeks): past
// maxLogBytes it is rotated to serve.log.1 first, as hook.log is.
func TestServeLogRotated(t *testing.T) {
	home := t.TempDir()
	log := filepath.Join(home, "serve.log")
	big := strings.Repeat("x", maxLogBytes+1)
	if err := os.WriteFile(log, []byte(big), 0o600); err != nil {
		t.Fatal(err)
	}
	start := func() {
		t.Helper()
		p, err := StartServeProcess("/bin/true", home, "127.0.0.1:1")
		if err != nil {
			t.Fatal(err)
		}
		p.Wait()
	}
	start()
	if fi, err := os.Stat(log + ".1"); err != nil || fi.Size() != int64(len(big)) {
		t.Fatalf("serve.log past %d bytes was not rotated to serve.log.1: %v", maxLogBytes, err)
	}
	if fi, err := os.Stat(log); err != nil || fi.Size() != 0 {
		t.Fatalf("serve.log after the rotation: %v, %v", fi, err)
	}
	// A log under the bound is appended to.
	os.WriteFile(log, []byte("kept\n"), 0o600)
	start()
	if b, _ := os.ReadFile(log); string(b) != "kept\n" {
		t.Errorf("serve.log under the bound: %q", b)
	}
}

// TestServeLogCopyTruncate: the log of a process the hook starts is opened
// for appending, so that copying it aside and truncating it while the
// process runs (logrotate's copytruncate, as docs say) is safe: what the
// process writes next starts the file again, with no hole of the old
// size before it.
func TestServeLogCopyTruncate(t *testing.T) {
	home := t.TempDir()
	log := filepath.Join(home, "serve.log")
	p, err := spawnDetached("/bin/sh", home, "serve.log", "-c",
		`echo one >&2; while [ ! -e "$HOOKWATCH_HOME/go" ]; do sleep 0.02; done; echo two >&2`)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for b, _ := os.ReadFile(log); string(b) != "one\n"; b, _ = os.ReadFile(log) {
		if time.Now().After(deadline) {
			p.Kill()
			t.Fatalf("serve.log = %q", b)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := os.Truncate(log, 0); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	p.Wait()
	if b, _ := os.ReadFile(log); string(b) != "two\n" {
		t.Fatalf("serve.log after a truncation = %q, want the next line alone", b)
	}
}

// TestRotateOwnLog: a process the hook starts, writing to its log without
// a pause, has the log rotated under it once it passes maxLogBytes: the
// log goes to serve.log.1 whole and the process writes on into a new
// serve.log, standard output too (the test binary's PASS), and not one
// line is lost or torn across the rotation.
func TestRotateOwnLog(t *testing.T) {
	home := t.TempDir()
	log := filepath.Join(home, "serve.log")
	t.Setenv("HOOKWATCH_TEST_OWN_LOG", "1")
	p, err := spawnDetached(os.Args[0], home, "serve.log", "-test.run=^TestRotateOwnLogChild$")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-done:
		case <-time.After(time.Minute):
			p.Kill()
		}
	}()
	st, err := p.Wait()
	close(done)
	old, _ := os.ReadFile(log + ".1")
	cur, _ := os.ReadFile(log)
	if err != nil || !st.Success() {
		t.Fatalf("child: %v %v\n%s", st, err, cur)
	}
	if len(old) <= maxLogBytes || len(cur) >= maxLogBytes || len(cur) == 0 {
		t.Fatalf("serve.log.1 holds %d bytes, serve.log %d: want the first past %d, the second the rest", len(old), len(cur), maxLogBytes)
	}
	if !strings.Contains(string(cur), "PASS") {
		t.Errorf("standard output, the log too, was not moved to the new serve.log: %q", cur[max(0, len(cur)-200):])
	}
	next := 0
	for _, l := range strings.Split(string(old)+string(cur), "\n") {
		if !strings.HasPrefix(l, "line ") {
			continue
		}
		if want := ownLogLine(next); l+"\n" != want {
			t.Fatalf("line %d of the two files: %q, want %q", next, l, want)
		}
		next++
	}
	if first := strings.SplitN(string(cur), "\n", 2)[0]; first == ownLogLine(0)[:len(ownLogLine(0))-1] || next < 1000 {
		t.Fatalf("%d lines, serve.log starting %q: the rotation was not while the process wrote", next, first)
	}
}

// ownLogLine is the nth line TestRotateOwnLogChild writes.
func ownLogLine(n int) string {
	return "line " + strings.Repeat("0", 9-len(strconv.Itoa(n))) + strconv.Itoa(n) + " " + strings.Repeat("x", 80) + "\n"
}

// TestRotateOwnLogChild is the process of TestRotateOwnLog: it writes
// numbered lines to standard error, past maxLogBytes, and on until 1000
// lines after it sees its log rotated.
func TestRotateOwnLogChild(t *testing.T) {
	if os.Getenv("HOOKWATCH_TEST_OWN_LOG") != "1" {
		t.Skip("the process TestRotateOwnLog starts")
	}
	ownLogEvery = 5 * time.Millisecond
	home := os.Getenv("HOOKWATCH_HOME")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go RotateOwnLog(ctx, home, "serve.log")
	written, after := 0, -1
	deadline := time.Now().Add(30 * time.Second)
	for n := 0; after != 0; n++ {
		line := ownLogLine(n)
		if _, err := os.Stderr.WriteString(line); err != nil {
			t.Fatal(err)
		}
		written += len(line)
		switch {
		case after > 0:
			after--
		case written > maxLogBytes && n%100 == 0:
			if _, err := os.Stat(filepath.Join(home, "serve.log.1")); err == nil {
				after = 1000
			} else if time.Now().After(deadline) {
				t.Fatal("serve.log was not rotated")
			}
		}
	}
}

// TestRotateOwnLogNotOurs: a log of the home past maxLogBytes that is not
// the process's standard error (here the test's own, whatever it is) is
// left alone: it is another process's to rotate.
func TestRotateOwnLogNotOurs(t *testing.T) {
	home := t.TempDir()
	log := filepath.Join(home, "serve.log")
	if err := os.WriteFile(log, []byte(strings.Repeat("x", maxLogBytes+1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if rotateStderr(log) {
		t.Fatal("rotateStderr rotated a log that is not standard error")
	}
	if _, err := os.Stat(log + ".1"); err == nil {
		t.Fatal("serve.log.1 exists")
	}
}

package hook

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAutostartNotForTeamServer: a hook whose home holds a team server's
// token (install --token) starts no collector at the loopback URL it finds
// down, an SSH tunnel to the server say: the spool keeps the events for the
// server. HOOKWATCH_TOKEN alone, or no token, leaves autostart as it was.
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
		if ForTeamServer(cfg.TokenSource, cfg.Token) != wantTeam {
			t.Errorf("ForTeamServer with %v = %v", env, !wantTeam)
		}
	}
	f(map[string]string{"HOOKWATCH_URL": url}, true)
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

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/doctor"
	"github.com/hookwatch/hookwatch/hook"
	"github.com/hookwatch/hookwatch/internal/testbin"
)

// newRealEnv is newTestEnv whose hookwatch and hookwatch-hook are the real
// binaries, so that a hook's autostart would really start a collector.
func newRealEnv(t *testing.T) *testEnv {
	t.Helper()
	built := map[string]string{}
	for _, pkg := range []string{"./cmd/hookwatch", "./cmd/hookwatch-hook"} {
		built[pkg] = testbin.Build(t, pkg) // before newTestEnv narrows PATH
	}
	e := newTestEnv(t)
	for bin, pkg := range map[string]string{e.self: "./cmd/hookwatch", e.lean: "./cmd/hookwatch-hook"} {
		b, err := os.ReadFile(built[pkg])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(bin, b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// TestStartAndStop: doctor starts no collector unless --start asks, uninstall
// says that one still runs, and stop stops the one this home runs.
func TestStartAndStop(t *testing.T) {
	e := newRealEnv(t)
	base, _, err := collectorURL()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	out := mustHW(t, "stop")
	if !strings.Contains(out, "no collector is running for "+e.hwHome) {
		t.Fatalf("stop with none running: %q", out)
	}

	// A plain doctor, round trip included, changes nothing: the hook it
	// runs would start a collector, and does not.
	mustHW(t, "install")
	hw(t, "", "doctor")
	time.Sleep(300 * time.Millisecond) // an autostarted collector would be up by now
	if healthy(ctx, base, time.Second) {
		t.Fatal("doctor started a collector")
	}
	if _, ok := runningCollector(e.hwHome); ok {
		t.Fatal("doctor left a collector attached to the spool")
	}
	if exists(filepath.Join(e.hwHome, "spool", "current.jsonl")) {
		b, _ := os.ReadFile(filepath.Join(e.hwHome, "spool", "current.jsonl"))
		if len(strings.TrimSpace(string(b))) > 0 {
			t.Fatalf("doctor left an event in the spool: %s", b)
		}
	}

	// With --json, standard output is the report alone: what --start did
	// is said on standard error.
	out, errOut, _ := hw(t, "", "doctor", "--start", "--json", "--no-round-trip")
	if !strings.Contains(errOut, "started a collector at "+base) {
		t.Fatalf("doctor --start --json said on stderr:\n%s", errOut)
	}
	if r := new(doctor.Report); json.Unmarshal([]byte(out), r) != nil || len(r.Checks) == 0 {
		t.Fatalf("doctor --start --json printed no report alone on stdout:\n%s", out)
	}
	c, ok := runningCollector(e.hwHome)
	if !ok || c.PID <= 0 || "http://"+c.Addr != base {
		t.Fatalf("after doctor --start: collector %+v, %v; want one at %s", c, ok, base)
	}
	out = mustHW(t, "uninstall")
	want := fmt.Sprintf("A collector is still running at %s (pid %d); stop it with: hookwatch stop", base, c.PID)
	if !strings.Contains(out, want) {
		t.Fatalf("uninstall does not say %q:\n%s", want, out)
	}
	if out := mustHW(t, "uninstall", "--codex"); !strings.Contains(out, want) {
		t.Fatalf("uninstall --codex does not say %q:\n%s", want, out)
	}

	out = mustHW(t, "stop")
	if want := fmt.Sprintf("stopped the collector at %s (pid %d)", base, c.PID); !strings.Contains(out, want) {
		t.Fatalf("stop: %q, want %q", out, want)
	}
	if healthy(ctx, base, time.Second) {
		t.Fatal("the collector still answers after stop")
	}
	if _, ok := runningCollector(e.hwHome); ok {
		t.Fatal("the collector still holds the spool lock after stop")
	}
	if !exited(c.PID) {
		t.Fatalf("process %d still runs after stop", c.PID)
	}
	if out := mustHW(t, "uninstall"); strings.Contains(out, "still running") {
		t.Fatalf("uninstall after stop: %s", out)
	}
}

// TestStopForwarder: stop stops the forwarder of this home as it stops a
// collector, as its help says.
func TestStopForwarder(t *testing.T) {
	e := newTestEnv(t)
	const remote = "https://127.0.0.1:1"
	cmd := exec.Command(e.self, "forward")
	cmd.Env = append(os.Environ(), "HOOKWATCH_URL="+remote)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-done })
	deadline := time.Now().Add(10 * time.Second)
	for {
		if c, ok := runningCollector(e.hwHome); ok && c.Addr == hook.ForwarderAddr(remote) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the forwarder did not attach to the spool")
		}
		time.Sleep(20 * time.Millisecond)
	}
	out := mustHW(t, "stop")
	if !strings.Contains(out, "stopped the forwarder to "+remote) {
		t.Fatalf("stop: %q", out)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the forwarder still runs after stop")
	}
}

// TestBadCollectorURL: every command that asks the collector refuses a
// HOOKWATCH_URL no collector can be reached at, saying what is wrong with
// it, instead of reporting the collector down; install refuses to install
// hooks that would deliver nothing; sessions lists without the collector
// and says why.
func TestBadCollectorURL(t *testing.T) {
	e := newTestEnv(t)
	if err := os.MkdirAll(filepath.Join(e.config, "projects"), 0o755); err != nil {
		t.Fatal(err)
	}
	for url, why := range map[string]string{
		"127.0.0.1:7421":         "it has no scheme",
		"not a url":              "it has no scheme",
		"http://localhost:99999": `its port "99999" is not a number up to 65535`,
	} {
		t.Setenv("HOOKWATCH_URL", url)
		for _, args := range [][]string{
			{"sessions", "diff", "a", "b"},
			{"demo", "--no-start"},
			{"import", "--no-start"},
			{"install"},
		} {
			_, _, err := hw(t, "", args...)
			if err == nil || !strings.Contains(err.Error(), "HOOKWATCH_URL") || !strings.Contains(err.Error(), why) {
				t.Errorf("HOOKWATCH_URL=%q hookwatch %s: %v, want it to say %q", url, strings.Join(args, " "), err, why)
			}
		}
		_, stderr, err := hw(t, "", "sessions", "--all")
		if err != nil || !strings.Contains(stderr, why) {
			t.Errorf("HOOKWATCH_URL=%q hookwatch sessions --all: %v, stderr %q; want a listing and a warning saying %q", url, err, stderr, why)
		}
	}
}

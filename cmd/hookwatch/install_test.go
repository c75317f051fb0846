package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hookwatch/hookwatch/claudecode"
	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/doctor"
	"github.com/hookwatch/hookwatch/hook"
	"github.com/hookwatch/hookwatch/install"
	"github.com/hookwatch/hookwatch/internal/deadport"
	"github.com/hookwatch/hookwatch/internal/otelcol"
	"github.com/hookwatch/hookwatch/internal/pgtest"
	"github.com/hookwatch/hookwatch/internal/testbin"
	"github.com/hookwatch/hookwatch/spool"
	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/sqlite"
)

// TestMain lets the test binary stand in for the hookwatch binaries: the
// scripts testEnv writes run it with HOOKWATCH_TEST_MAIN=1, so a hook that
// doctor runs is the real hook code. The PostgreSQL server and the Jaeger
// the tests started, if any, are stopped after them.
func TestMain(m *testing.M) {
	if os.Getenv("HOOKWATCH_TEST_MAIN") == "1" {
		main()
	}
	code := pgtest.Main(m)
	otelcol.StopJaeger()
	os.Exit(code)
}

// testEnv is a user's machine in a temporary directory: HOME, HOOKWATCH_HOME,
// CLAUDE_CONFIG_DIR, a project directory as the working directory, and the
// hookwatch and hookwatch-hook binaries in bin.
type testEnv struct {
	root, home, hwHome, config, project, bin string
	self, lean                               string // the two binaries
}

func newTestEnv(t *testing.T) *testEnv {
	t.Helper()
	root := t.TempDir()
	e := &testEnv{
		root:    root,
		home:    filepath.Join(root, "home"),
		hwHome:  filepath.Join(root, "home", ".hookwatch"),
		config:  filepath.Join(root, "claude-config"),
		project: filepath.Join(root, "project"),
		bin:     filepath.Join(root, "opt", "hookwatch bin"), // a space, as in "Application Support"
	}
	e.self = filepath.Join(e.bin, "hookwatch")
	e.lean = filepath.Join(e.bin, "hookwatch-hook")
	for _, d := range []string{e.home, e.config, e.project, e.bin, filepath.Join(root, "path")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	testBin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	e.writeScript(t, e.self, "#!/bin/sh\nHOOKWATCH_TEST_MAIN=1 exec '"+testBin+"' \"$@\"\n")
	e.writeScript(t, e.lean, "#!/bin/sh\nHOOKWATCH_TEST_MAIN=1 exec '"+testBin+"' hook \"$@\"\n")
	t.Setenv("HOME", e.home)
	t.Setenv("HOOKWATCH_HOME", e.hwHome)
	t.Setenv("CLAUDE_CONFIG_DIR", e.config)
	t.Setenv("PATH", filepath.Join(root, "path")+":/usr/bin:/bin")
	// Nothing listens there until a test starts a collector on it.
	t.Setenv("HOOKWATCH_URL", "http://"+testbin.FreeAddr(t))
	for _, k := range []string{"HOOKWATCH_DB", "HOOKWATCH_TOKEN", "HOOKWATCH_ADDR", "GOBIN", "HOOKWATCH_HOOK_BUDGET"} {
		t.Setenv(k, "")
	}
	t.Chdir(e.project)
	old := executable
	executable = func() (string, error) { return e.self, nil }
	t.Cleanup(func() { executable = old })
	return e
}

func (e *testEnv) writeScript(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
}

// fakeClaude puts a claude on PATH that prints version.
func (e *testEnv) fakeClaude(t *testing.T, version string) {
	e.writeScript(t, filepath.Join(e.root, "path", "claude"), "#!/bin/sh\necho '"+version+" (Claude Code)'\n")
}

func (e *testEnv) userSettings() string { return filepath.Join(e.config, "settings.json") }

// hw runs the hookwatch CLI in-process and returns stdout, stderr and the
// error.
func hw(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), err
}

// mustHW runs the CLI and fails the test on an error.
// deadPort returns a loopback port bound for the test's length and
// listened on by nobody: a collector's URL that nothing answers.
func deadPort(t *testing.T) *deadport.Port {
	t.Helper()
	dead, err := deadport.Open()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dead.Close() })
	return dead
}

func mustHW(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, err := hw(t, "", args...)
	if err != nil {
		t.Fatalf("hookwatch %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// testCollector is the real collector (package collector on a SQLite store)
// behind an httptest server. It does not serve GET
// /v1/sessions/{id}/agents yet, so the test server answers that route
// itself with the agents body.
type testCollector struct {
	*httptest.Server
	mu     sync.Mutex
	agents string
	// agentsAuth is the Authorization header of the last agents request.
	agentsAuth string
}

func newTestCollector(t *testing.T) *testCollector {
	t.Helper()
	return newTestCollectorToken(t, "")
}

// newTestCollectorToken starts a collector that requires token ("" for none).
func newTestCollectorToken(t *testing.T, token string) *testCollector {
	t.Helper()
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "collector.db"))
	if err != nil {
		t.Fatal(err)
	}
	return newTestCollectorOn(t, db, collector.Config{Token: token})
}

// newTestCollectorOn starts a collector configured by cfg on db, which it
// closes when the test ends, and points HOOKWATCH_URL at it.
func newTestCollectorOn(t *testing.T, db *sqlite.DB, cfg collector.Config) *testCollector {
	t.Helper()
	cfg.Store, cfg.Version = db, version
	srv, err := collector.New(cfg)
	if err != nil {
		db.Close()
		t.Fatal(err)
	}
	// As serve's: the http hooks post there.
	srv.Handle("POST "+claudecode.HookPath, srv.HandleClaudeHook(collector.ClaudeHookConfig{Home: t.TempDir()}))
	c := &testCollector{agents: `{"agents":[]}`}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/sessions/{id}/agents", func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.agentsAuth = r.Header.Get("Authorization")
		w.Write([]byte(c.agents))
	})
	mux.Handle("/", srv.Handler())
	c.Server = httptest.NewServer(mux)
	t.Cleanup(func() {
		c.Close()
		if err := srv.Shutdown(context.Background()); err != nil {
			t.Errorf("collector shutdown: %v", err)
		}
	})
	t.Setenv("HOOKWATCH_URL", c.URL)
	return c
}

// installTLSTeamServer starts a collector on a fresh SQLite file behind
// https://, whose certificate stands for the team's own authority, and
// installs the hooks of e as a developer of that team server does:
// 'install --url <https URL> --ca-file <the authority>', HOOKWATCH_URL unset.
func installTLSTeamServer(t *testing.T, e *testEnv) *httptest.Server {
	t.Helper()
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "collector.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	srv, err := collector.New(collector.Config{Store: db, Version: version})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewTLSServer(srv.Handler())
	t.Cleanup(func() {
		ts.Close()
		srv.Shutdown(context.Background())
	})
	ca := filepath.Join(e.root, "team-ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOOKWATCH_URL", "")
	mustHW(t, "install", "--url", ts.URL, "--ca-file", ca)
	return ts
}

// setAgents sets the body of GET /v1/sessions/{id}/agents.
func (c *testCollector) setAgents(body string) {
	c.mu.Lock()
	c.agents = body
	c.mu.Unlock()
}

// get returns the status and body of a GET of path on the collector.
func (c *testCollector) get(t *testing.T, path string) (int, string) {
	t.Helper()
	resp, err := http.Get(c.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// session returns the stored events of the session, asking the collector's
// query API.
func (c *testCollector) session(t *testing.T, id string) []store.Event {
	t.Helper()
	resp, err := http.Get(c.URL + "/v1/sessions/" + url.PathEscape(id) + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body collector.EventsResponse
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("GET /v1/sessions/%s/events: HTTP %d: %v", id, resp.StatusCode, err)
	}
	events := make([]store.Event, len(body.Events))
	for i, e := range body.Events {
		events[i] = e.Stored()
	}
	return events
}

// registered reads a settings file the way doctor does.
func registered(t *testing.T, scope, path string) *doctor.Settings {
	t.Helper()
	s, err := doctor.ReadSettings(scope, path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestInstallRegistersLeanBinary(t *testing.T) {
	e := newTestEnv(t)
	out := mustHW(t, "install")
	if !strings.Contains(out, "Created "+e.userSettings()) || !strings.Contains(out, "hookwatch doctor") {
		t.Fatalf("install output:\n%s", out)
	}
	s := registered(t, "user", e.userSettings())
	if got := s.Binaries(); len(got) != 1 || got[0] != e.lean {
		t.Fatalf("registered binaries %q, want only %s", got, e.lean)
	}
	for _, h := range s.Handlers {
		if h.Shell || len(h.Args) != 1 || h.Args[0] != "hook" {
			t.Fatalf("handler %+v: want exec form with args [hook]", h)
		}
	}
	if len(s.Handlers) < 20 || s.Statusline != "" || len(s.Duplicates()) > 0 {
		t.Fatalf("%d handlers, statusline %q, duplicates %v", len(s.Handlers), s.Statusline, s.Duplicates())
	}
	before := readFile(t, e.userSettings())
	if out := mustHW(t, "install"); !strings.Contains(out, "already installed") {
		t.Fatalf("reinstall output:\n%s", out)
	}
	if after := readFile(t, e.userSettings()); !bytes.Equal(before, after) {
		t.Fatalf("reinstall changed the file")
	}
	if out := mustHW(t, "uninstall"); !strings.Contains(out, "Removed") {
		t.Fatalf("uninstall output:\n%s", out)
	}
	if exists(e.userSettings()) {
		t.Fatalf("uninstall left the file install created")
	}
}

func TestInstallWithoutLeanBinary(t *testing.T) {
	e := newTestEnv(t)
	os.Remove(e.lean)
	mustHW(t, "install")
	s := registered(t, "user", e.userSettings())
	if got := s.Binaries(); len(got) != 1 || got[0] != e.self {
		t.Fatalf("registered binaries %q, want %s", got, e.self)
	}
	if h := s.Handlers[0]; len(h.Args) != 1 || h.Args[0] != "hook" {
		t.Fatalf("handler %+v: want args [hook]", h)
	}
}

func TestInstallFollowsSymlinkToBinary(t *testing.T) {
	e := newTestEnv(t)
	link := filepath.Join(e.root, "path", "hookwatch")
	if err := os.Symlink(e.self, link); err != nil {
		t.Fatal(err)
	}
	executable = func() (string, error) { return link, nil }
	mustHW(t, "install")
	if got := registered(t, "user", e.userSettings()).Binaries(); len(got) != 1 || got[0] != e.lean {
		t.Fatalf("registered %q, want the sibling of the link's target %s", got, e.lean)
	}
}

const userSettings = `{
    "model": "opus",
  "permissions": {"allow": ["Bash(go test:*)"]},
  "hooks": {
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "~/bin/guard.sh"}]}]
  },
  "statusLine": {"type": "command", "command": "~/bin/status.sh"}
}
`

// TestUninstallRemovesWhatInstallMade: a project's settings file install
// created goes at uninstall with the .claude directory made for it; a
// directory that holds anything else stays.
func TestUninstallRemovesWhatInstallMade(t *testing.T) {
	e := newTestEnv(t)
	dir := filepath.Join(e.project, ".claude")
	mustHW(t, "install", "--scope", "project")
	if !exists(filepath.Join(dir, "settings.json")) {
		t.Fatal("install --scope project made no settings file")
	}
	if out := mustHW(t, "uninstall", "--scope", "project"); !strings.Contains(out, "Removed") {
		t.Fatalf("uninstall output:\n%s", out)
	}
	if exists(dir) {
		t.Errorf("uninstall left the empty %s", dir)
	}
	mustHW(t, "install", "--scope", "project")
	keep := filepath.Join(dir, "agents")
	if err := os.Mkdir(keep, 0o755); err != nil {
		t.Fatal(err)
	}
	mustHW(t, "uninstall", "--scope", "project")
	if !exists(keep) {
		t.Errorf("uninstall removed %s", keep)
	}
}

func TestUninstallRestoresBytes(t *testing.T) {
	f := func(scope, path string, args ...string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(userSettings), 0o644); err != nil {
			t.Fatal(err)
		}
		out := mustHW(t, append([]string{"install"}, args...)...)
		backup := path + ".hookwatch-backup"
		if !strings.Contains(out, "Updated "+path) || !strings.Contains(out, "Backup of the file from before hookwatch: "+backup) {
			t.Fatalf("install %v output:\n%s", args, out)
		}
		if b := readFile(t, backup); string(b) != userSettings {
			t.Fatalf("backup differs from the original:\n%s", b)
		}
		if s := registered(t, scope, path); len(s.Handlers) == 0 {
			t.Fatalf("install %v registered nothing in %s", args, path)
		}
		var scopeArgs []string // uninstall takes the scope flags only
		for _, a := range args {
			if a != "--statusline" {
				scopeArgs = append(scopeArgs, a)
			}
		}
		out = mustHW(t, append([]string{"uninstall"}, scopeArgs...)...)
		if !strings.Contains(out, "byte for byte") {
			t.Fatalf("uninstall %v output:\n%s", args, out)
		}
		if b := readFile(t, path); string(b) != userSettings {
			t.Fatalf("uninstall %v left:\n%s", args, b)
		}
		if exists(backup) {
			t.Fatalf("uninstall %v left the backup", args)
		}
	}
	e := newTestEnv(t)
	f("user", e.userSettings())
	f("user", e.userSettings(), "--statusline")
	f("project", filepath.Join(e.project, ".claude", "settings.json"), "--scope", "project")
	other := filepath.Join(e.root, "other")
	f("local", filepath.Join(other, ".claude", "settings.local.json"), "--scope", "local", "--project", other)
}

func TestInstallDryRun(t *testing.T) {
	e := newTestEnv(t)
	if err := os.WriteFile(e.userSettings(), []byte(userSettings), 0o644); err != nil {
		t.Fatal(err)
	}
	out := mustHW(t, "install", "--dry-run")
	if !strings.Contains(out, "Dry run") || !strings.Contains(out, "+++ "+e.userSettings()) || !strings.Contains(out, e.lean) {
		t.Fatalf("dry-run output:\n%s", out)
	}
	if b := readFile(t, e.userSettings()); string(b) != userSettings {
		t.Fatalf("dry run changed the file:\n%s", b)
	}
	if exists(e.userSettings() + ".hookwatch-backup") {
		t.Fatalf("dry run wrote a backup")
	}
	if !strings.Contains(out, "Backup of the file as it is: would be written to "+e.userSettings()+".hookwatch-backup") {
		t.Errorf("dry-run output does not say where the backup would go:\n%s", out)
	}
	mustHW(t, "install")
	installed := readFile(t, e.userSettings())
	out = mustHW(t, "uninstall", "--dry-run")
	if !strings.Contains(out, "Dry run") || !strings.Contains(out, "\n-") {
		t.Fatalf("uninstall dry-run output:\n%s", out)
	}
	if b := readFile(t, e.userSettings()); !bytes.Equal(b, installed) {
		t.Fatalf("uninstall dry run changed the file")
	}
}

// TestInstallModesAndStatusline: every combination of mode and status line
// can be had, survives installing twice and a plain re-install (the fix
// doctor names), and uninstalls back to the user's file.
func TestInstallModesAndStatusline(t *testing.T) {
	f := func(mode string, statusline bool) {
		t.Helper()
		e := newTestEnv(t)
		if err := os.WriteFile(e.userSettings(), []byte(userSettings), 0o644); err != nil {
			t.Fatal(err)
		}
		args := []string{"install", "--mode", mode}
		if statusline {
			args = append(args, "--statusline")
		}
		check := func(when string) {
			t.Helper()
			s := registered(t, "user", e.userSettings())
			http := 0
			for _, h := range s.Handlers {
				if h.Type == "http" {
					http++
				}
			}
			// The hooks run the lean binary, whatever the status line.
			if got := s.Binaries(); len(got) != 1 || got[0] != e.lean {
				t.Fatalf("--mode %s, statusline %v, %s: the hooks run %q, want %s", mode, statusline, when, got, e.lean)
			}
			if (http > 0) != (mode == "http") || len(s.Duplicates()) > 0 {
				t.Fatalf("--mode %s, statusline %v, %s: %d http handlers, duplicates %v", mode, statusline, when, http, s.Duplicates())
			}
			// The status line runs hookwatch itself, wrapping the user's.
			want := ""
			if statusline {
				want = "'" + e.self + "' statusline --wrap '~/bin/status.sh'"
			}
			if s.Statusline != want {
				t.Fatalf("--mode %s, statusline %v, %s: statusLine %q, want %q", mode, statusline, when, s.Statusline, want)
			}
		}
		out := mustHW(t, args...)
		if strings.Contains(out, "Note: the statusLine needs") {
			t.Fatalf("install %v still moves the hooks:\n%s", args, out)
		}
		check("installed once")
		installed := readFile(t, e.userSettings())
		mustHW(t, args...)
		check("installed twice")
		mustHW(t, "install")
		check("then installed without flags")
		if b := readFile(t, e.userSettings()); !bytes.Equal(b, installed) {
			t.Fatalf("--mode %s, statusline %v: a plain re-install changed the file:\n%s", mode, statusline, b)
		}
		mustHW(t, "uninstall")
		if b := readFile(t, e.userSettings()); string(b) != userSettings {
			t.Fatalf("--mode %s, statusline %v: uninstall left:\n%s", mode, statusline, b)
		}
	}
	f("command", false)
	f("command", true)
	f("http", false)
	f("http", true)
}

// TestInstallModeSwitch: an explicit --mode switches, and the next plain
// install keeps the new mode.
func TestInstallModeSwitch(t *testing.T) {
	e := newTestEnv(t)
	mode := func() string {
		t.Helper()
		for _, h := range registered(t, "user", e.userSettings()).Handlers {
			if h.Type == "http" {
				return "http"
			}
		}
		return "command"
	}
	mustHW(t, "install")
	// What the install says is what it wrote.
	if out := mustHW(t, "install", "--mode", "http", "--url", "http://127.0.0.1:9999/"); !strings.Contains(out, "Hooks run: POST http://127.0.0.1:9999/v1/hooks/claude ") {
		t.Fatalf("install --mode http says:\n%s", out)
	}
	mustHW(t, "install")
	if got := mode(); got != "http" {
		t.Fatalf("after --mode http and a plain install: %s", got)
	}
	if b := readFile(t, e.userSettings()); !strings.Contains(string(b), "http://127.0.0.1:9999/v1/hooks/claude") {
		t.Fatalf("a plain install lost the --url of the http hooks:\n%s", b)
	}
	mustHW(t, "install", "--mode", "command")
	mustHW(t, "install")
	if got := mode(); got != "command" {
		t.Fatalf("after --mode command and a plain install: %s", got)
	}
}

func TestUninstallRemovesOtherLeanBinaries(t *testing.T) {
	e := newTestEnv(t)
	if err := os.WriteFile(e.userSettings(), []byte(userSettings), 0o644); err != nil {
		t.Fatal(err)
	}
	mustHW(t, "install")
	// hookwatch moved: the settings still name the old hookwatch-hook.
	moved := filepath.Join(e.root, "new")
	if err := os.Rename(e.bin, moved); err != nil {
		t.Fatal(err)
	}
	executable = func() (string, error) { return filepath.Join(moved, "hookwatch"), nil }
	mustHW(t, "install")
	s := registered(t, "user", e.userSettings())
	if got := s.Binaries(); len(got) != 1 || got[0] != filepath.Join(moved, "hookwatch-hook") || len(s.Duplicates()) > 0 {
		t.Fatalf("after moving: binaries %q, duplicates %v", got, s.Duplicates())
	}
	if err := os.Rename(moved, e.bin); err != nil {
		t.Fatal(err)
	}
	executable = func() (string, error) { return e.self, nil }
	mustHW(t, "uninstall")
	if b := readFile(t, e.userSettings()); string(b) != userSettings {
		t.Fatalf("uninstall left:\n%s", b)
	}
}

func TestInstallOldClaudeGetsShellForm(t *testing.T) {
	e := newTestEnv(t)
	e.fakeClaude(t, "2.1.100")
	mustHW(t, "install")
	s := registered(t, "user", e.userSettings())
	if len(s.Handlers) == 0 || !s.Handlers[0].Shell || s.Handlers[0].Binary != e.lean {
		t.Fatalf("handlers %+v: want shell form for Claude Code 2.1.100", s.Handlers[:min(1, len(s.Handlers))])
	}
	for _, h := range s.Handlers {
		if h.Event == "DirectoryAdded" {
			t.Fatalf("registered DirectoryAdded, which 2.1.100 does not know")
		}
	}
}

func TestInstallHTTPMode(t *testing.T) {
	e := newTestEnv(t)
	// The events without http handlers run the command hook, which posts
	// where HOOKWATCH_URL, else the URL kept, says: --url keeps the http
	// hooks' URL for it too, and install says when HOOKWATCH_URL names
	// another collector.
	const note = "SessionStart, Setup, SubagentStart take no http handler and run the command hook, which posts to http://127.0.0.1:8888 (HOOKWATCH_URL)"
	t.Setenv("HOOKWATCH_URL", "")
	if out := mustHW(t, "install", "--mode", "http", "--url", "http://127.0.0.1:9999"); strings.Contains(out, "take no http handler") || hook.ReadURL(e.hwHome) != "http://127.0.0.1:9999" {
		t.Errorf("install --mode http to another port, HOOKWATCH_URL unset: the home keeps %q; it says:\n%s", hook.ReadURL(e.hwHome), out)
	}
	t.Setenv("HOOKWATCH_URL", "http://127.0.0.1:8888")
	if out := mustHW(t, "install", "--mode", "http", "--url", "http://127.0.0.1:9999"); !strings.Contains(out, note) {
		t.Errorf("install --mode http to another port, HOOKWATCH_URL elsewhere, says:\n%s", out)
	}
	t.Setenv("HOOKWATCH_URL", "http://127.0.0.1:9999/")
	if out := mustHW(t, "install", "--mode", "http", "--url", "http://127.0.0.1:9999"); strings.Contains(out, "take no http handler") {
		t.Errorf("install --mode http with HOOKWATCH_URL set to its URL says:\n%s", out)
	}
	t.Setenv("HOOKWATCH_URL", "")
	mustHW(t, "install", "--url", "local")
	if out := mustHW(t, "install", "--mode", "http"); strings.Contains(out, "take no http handler") {
		t.Errorf("install --mode http to the default URL says:\n%s", out)
	} else if !strings.Contains(out, install.HTTPDownNote(true)) {
		t.Errorf("install --mode http does not say what its hooks lose while the collector is down:\n%s", out)
	}
	if out := mustHW(t, "install", "--mode", "command"); strings.Contains(out, "cannot spool") {
		t.Errorf("install --mode command says what http hooks lose:\n%s", out)
	}
	mustHW(t, "install", "--mode", "http", "--url", "http://127.0.0.1:9999")
	s := registered(t, "user", e.userSettings())
	http, command := 0, 0
	for _, h := range s.Handlers {
		switch h.Type {
		case "http":
			http++
			if h.URL != "http://127.0.0.1:9999/v1/hooks/claude" {
				t.Fatalf("http handler URL %q", h.URL)
			}
		case "command":
			command++
		}
	}
	if http == 0 || command == 0 {
		t.Fatalf("%d http and %d command handlers: want both", http, command)
	}
}

func TestInstallUsageErrors(t *testing.T) {
	f := func(args ...string) {
		t.Helper()
		_, _, err := hw(t, "", args...)
		if !errors.Is(err, errUsage) {
			t.Fatalf("hookwatch %v: error %v, want a usage error", args, err)
		}
	}
	newTestEnv(t)
	f("install", "--scope", "global")
	f("install", "extra")
	f("install", "--bogus")
	f("uninstall", "--scope", "nowhere")
	f("uninstall", "extra")
	f("install", "--mode", "smoke")
}

func TestInstallProjectScopeNote(t *testing.T) {
	e := newTestEnv(t)
	out := mustHW(t, "install", "--scope", "project")
	path := filepath.Join(e.project, ".claude", "settings.json")
	if !strings.Contains(out, "Created "+path) || !strings.Contains(out, "consider the local scope") {
		t.Fatalf("install --scope project output:\n%s", out)
	}
	if exists(e.userSettings()) {
		t.Fatalf("the project scope wrote the user settings")
	}
}

// TestHelpCommand: "help COMMAND" and "COMMAND --help" print COMMAND's
// help to stdout, where a pager or grep reads it, and succeed; a word that
// names no command is a usage error.
func TestHelpCommand(t *testing.T) {
	for name := range commands {
		if name == "hook" { // the hook's arguments are Claude Code's, not a person's
			continue
		}
		for _, args := range [][]string{{"help", name}, {name, "--help"}, {name, "-h"}} {
			out, errOut, err := hw(t, "", args...)
			if err != nil && !errors.Is(err, flag.ErrHelp) || !strings.HasPrefix(out, "Usage: hookwatch "+name) || errOut != "" {
				t.Errorf("hookwatch %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, out, errOut)
			}
		}
	}
	if out, _, _ := hw(t, "", "serve", "--help"); !strings.HasSuffix(out, serveEnvHelp) {
		t.Errorf("serve --help does not end with the variables serve reads:\n%s", out)
	}
	if _, _, err := hw(t, "", "help", "nosuch"); !errors.Is(err, errUsage) || !strings.Contains(err.Error(), `"nosuch"`) {
		t.Errorf("help nosuch: %v, want a usage error naming it", err)
	}
	// A subcommand's flags follow it.
	if out, _, err := hw(t, "", "audit", "verify", "--help"); !errors.Is(err, flag.ErrHelp) || !strings.Contains(out, "Usage: hookwatch audit verify") {
		t.Errorf("audit verify --help: %v\n%s", err, out)
	}
	for _, speed := range []string{"NaN", "0", "-1", "Inf"} {
		if _, _, err := hw(t, "", "demo", "--no-start", "--speed", speed); !errors.Is(err, errUsage) {
			t.Errorf("demo --speed %s: %v, want a usage error", speed, err)
		}
	}
}

// TestUninstallHelpCodex: uninstall's --codex says it removes the hooks and
// their trust, not what install's does (adds them), and --codex-bin, which
// uninstall takes without using, says so.
func TestUninstallHelpCodex(t *testing.T) {
	out, _, _ := hw(t, "", "uninstall", "--help")
	for _, want := range []string{"remove the hooks from $CODEX_HOME/hooks.json", "their trust from $CODEX_HOME/config.toml", "ignored: uninstall needs no Codex binary"} {
		if !strings.Contains(out, want) {
			t.Errorf("uninstall --help does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "trust the hooks") || strings.Contains(out, "reports the hooks' trust hashes") {
		t.Errorf("uninstall --help describes install's flags:\n%s", out)
	}
	if out, _, _ := hw(t, "", "install", "--help"); !strings.Contains(out, "trust the hooks in $CODEX_HOME/config.toml") {
		t.Errorf("install --help lost its --codex:\n%s", out)
	}
}

// TestHelpExplains: the help of a command run by hand says what it does,
// past its synopsis and flags, and shows how it is run; version is a
// command like the others, listed, with a help and no arguments.
func TestHelpExplains(t *testing.T) {
	for _, name := range []string{"service", "statusline", "prune", "audit", "import", "demo", "stop", "install", "uninstall", "export"} {
		out, _, _ := hw(t, "", name, "--help")
		synopsis, rest, _ := strings.Cut(out, "\n\n")
		explanation, _, _ := strings.Cut(rest, "\n\n")
		if !strings.HasPrefix(synopsis, "Usage: hookwatch "+name) || len(explanation) < 150 || strings.HasPrefix(explanation, "  -") {
			t.Errorf("hookwatch %s --help says nothing of what it does:\n%s", name, out)
		}
		if name != "demo" && name != "stop" && !strings.Contains(out, "\nExample") {
			t.Errorf("hookwatch %s --help has no example:\n%s", name, out)
		}
	}
	if usage, _, _ := hw(t, "", "help"); !strings.Contains(usage, "\n  version ") {
		t.Errorf("the usage does not list version:\n%s", usage)
	}
	for _, args := range [][]string{{"version"}, {"--version"}, {"-v"}} {
		if out, _, err := hw(t, "", args...); err != nil || out != "hookwatch "+version+"\n" {
			t.Errorf("hookwatch %s: %q, %v", args[0], out, err)
		}
	}
	if out, _, err := hw(t, "", "version", "extra"); !errors.Is(err, errUsage) || out != "" {
		t.Errorf("hookwatch version extra: %q, %v; want a usage error and nothing on stdout", out, err)
	}
}

// TestBadFlagSaidOnce: a bad flag's error comes once, after the
// synopsis and where to read the flags, not the whole list of them.
func TestBadFlagSaidOnce(t *testing.T) {
	_, errOut, err := hw(t, "", "prune", "--older-than", "xyz")
	if !errors.Is(err, errUsage) || !strings.HasPrefix(errOut, "Usage: hookwatch prune") || strings.Contains(errOut, "invalid value") {
		t.Errorf("prune --older-than xyz: %v; stderr:\n%s", err, errOut)
	}
	var b bytes.Buffer
	if exitCode(err, &b) != 2 || strings.Count(b.String(), "invalid value") != 1 {
		t.Errorf("what is printed of the error: %q", b.String())
	}
	// So for every command a person runs (the statusline's flags are its
	// settings', which it takes quietly; the hook's are Claude Code's).
	for name := range commands {
		if name == "hook" || name == "statusline" {
			continue
		}
		out, errOut, err := hw(t, "", name, "--no-such-flag")
		if !errors.Is(err, errUsage) || out != "" || !strings.HasPrefix(errOut, "Usage: hookwatch "+name) {
			t.Errorf("hookwatch %s --no-such-flag: %v\nstdout:\n%s\nstderr:\n%s", name, err, out, errOut)
		}
		// A command of subcommands (policy, token) lists them instead;
		// one of no flags (stop) says so rather than send to a list of
		// none.
		hint := "Run 'hookwatch " + name + " --help' for its flags.\n"
		if help, _, _ := hw(t, "", name, "--help"); !strings.Contains(help, "\n  -") {
			hint = "It takes no flags: run 'hookwatch " + name + " --help' for what it does.\n"
		}
		if strings.Contains(err.Error(), "flag provided but not defined") &&
			(!strings.HasSuffix(errOut, hint) || strings.Contains(errOut, "\n  -")) {
			t.Errorf("hookwatch %s --no-such-flag printed more than its synopsis:\n%s", name, errOut)
		}
	}
	// Nor does the help of a command of no flags end on the empty list.
	if out, _, _ := hw(t, "", "stop", "--help"); !strings.HasSuffix(out, "<its plist>).\n") {
		t.Errorf("hookwatch stop --help ends %q", out[max(0, len(out)-40):])
	}
}

// TestBadFlagNearest: a misspelt flag's error names the flag it is a slip
// of; a flag like none names none.
func TestBadFlagNearest(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string // "" for no suggestion
	}{
		{[]string{"serve", "--adr", "127.0.0.1:1"}, "--addr"},
		{[]string{"serve", "--ADDR", "127.0.0.1:1"}, "--addr"},
		{[]string{"sessions", "--codx"}, "--codex"},
		{[]string{"prune", "--older-then", "2d"}, "--older-than"},
		{[]string{"policy", "test", "--evnets", "e.jsonl"}, "--events"},
		{[]string{"serve", "--no-such-flag"}, ""},
		{[]string{"sessions", "--limt", "3"}, ""}, // sessions has no --limit
	} {
		_, _, err := hw(t, "", c.args...)
		if !errors.Is(err, errUsage) {
			t.Errorf("hookwatch %v: %v, want a usage error", c.args, err)
			continue
		}
		_, got, _ := strings.Cut(err.Error(), "did you mean ")
		if want := c.want + "?"; c.want == "" && got != "" || c.want != "" && got != want {
			t.Errorf("hookwatch %v: %v, want the suggestion %q", c.args, err, c.want)
		}
	}
}

// TestInstallCodexRefusesClaudeFlags: a flag of Claude Code's hooks alone
// given with --codex is a usage error naming it, and nothing is written.
func TestInstallCodexRefusesClaudeFlags(t *testing.T) {
	e := newTestEnv(t)
	t.Setenv("CODEX_HOME", filepath.Join(e.root, "codex"))
	for _, args := range [][]string{{"--mode", "http"}, {"--statusline"}} {
		_, _, err := hw(t, "", append([]string{"install", "--codex"}, args...)...)
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), args[0]) {
			t.Errorf("install --codex %s: %v, want a usage error naming %s", strings.Join(args, " "), err, args[0])
		}
	}
	// The refusal reads as a sentence, and its reason is the flag's own.
	for args, want := range map[string]string{
		"--statusline":             "--statusline applies to Claude Code's hooks only: Codex has no status line",
		"--mode http":              "--mode applies to Claude Code's hooks only: Codex runs the command hook",
		"--mode http --statusline": "--mode, --statusline apply to Claude Code's hooks only",
	} {
		_, _, err := hw(t, "", append([]string{"install", "--codex"}, strings.Fields(args)...)...)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("install --codex %s: %v, want %q", args, err, want)
		}
	}
	if exists(filepath.Join(e.root, "codex")) {
		t.Error("a refused install wrote Codex's files")
	}
}

// TestInstallRefusedBeforeWriting: a command line install refuses is
// refused before anything is printed (a dry run's diff included) or
// written (the token given with it included). --trust-project goes with
// --codex --scope project only.
func TestInstallRefusedBeforeWriting(t *testing.T) {
	e := newTestEnv(t)
	codexHome := filepath.Join(e.root, "codex")
	t.Setenv("CODEX_HOME", codexHome)
	notExec := filepath.Join(e.root, "codex-not-executable")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string // in the error
	}{
		{[]string{"--trust-project"}, "--codex --scope project"},
		{[]string{"--trust-project", "--scope", "project", "--token", "s3cret"}, "--codex --scope project"},
		{[]string{"--codex", "--trust-project", "--codex-bin", "/nonexistent/codex"}, "--codex --scope project"},
		{[]string{"--codex", "--trust-project", "--dry-run"}, "--codex --scope project"},
		{[]string{"--codex", "--scope", "user", "--trust-project", "--token", "s3cret"}, "--codex --scope project"},
		{[]string{"--scope", "global", "--token", "s3cret"}, "global"},
		{[]string{"--mode", "smoke", "--token", "s3cret"}, "smoke"},
		{[]string{"--codex", "--scope", "local", "--token", "s3cret"}, "local"},
		// A Codex binary that is not there, or cannot run, is refused
		// before the hooks it would trust are written.
		{[]string{"--codex", "--codex-bin", "/nonexistent/codex"}, "--codex-bin /nonexistent/codex: no such file"},
		{[]string{"--codex", "--codex-bin", "/nonexistent/codex", "--token", "s3cret"}, "pass the path of Codex's binary"},
		{[]string{"--codex", "--codex-bin", "/nonexistent/codex", "--dry-run"}, "--codex-bin /nonexistent/codex"},
		{[]string{"--codex", "--codex-bin", notExec}, "not executable"},
		{[]string{"--codex", "--codex-bin", e.root}, "is a directory"},
	} {
		args := append([]string{"install"}, c.args...)
		out, _, err := hw(t, "", args...)
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), c.want) || out != "" {
			t.Errorf("hookwatch %s: %v, want a usage error naming %s and nothing printed; printed:\n%s", strings.Join(args, " "), err, c.want, out)
		}
	}
	// A CA file that holds no certificate is refused before the token
	// is kept.
	notPEM := filepath.Join(e.root, "not-a-cert.pem")
	if err := os.WriteFile(notPEM, []byte("hello\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := hw(t, "", "install", "--token", "s3cret", "--ca-file", notPEM); err == nil || !strings.Contains(err.Error(), "no PEM certificate") {
		t.Errorf("install --ca-file with no certificate: %v", err)
	}
	for _, p := range []string{codexHome, e.userSettings(), filepath.Join(e.project, ".claude"), filepath.Join(e.project, ".codex"), e.hwHome} {
		if exists(p) {
			t.Errorf("a refused install wrote %s", p)
		}
	}
}

// TestInstallCodexWithoutCodex: with no Codex binary to ask for the hooks'
// hashes, the dry run does not promise trust, install fails (the hooks it
// wrote would never run) naming --codex-bin, says that it left the hooks
// file written and which command takes it out, and doctor's fix names
// --codex-bin too. That command does.
func TestInstallCodexWithoutCodex(t *testing.T) {
	e := newTestEnv(t)
	t.Setenv("CODEX_HOME", filepath.Join(e.root, "codex"))
	if out := mustHW(t, "install", "--codex", "--dry-run"); !strings.Contains(out, "would stay untrusted") || strings.Contains(out, "would be trusted") {
		t.Errorf("install --codex --dry-run without Codex:\n%s", out)
	}
	_, _, err := hw(t, "", "install", "--codex")
	if err == nil || !strings.Contains(err.Error(), "Codex is not on PATH") || !strings.Contains(err.Error(), "--codex-bin") ||
		strings.Count(err.Error(), "skips an untrusted hook") != 1 {
		t.Errorf("install --codex without Codex: %v", err)
	}
	hooksFile := filepath.Join(e.root, "codex", "hooks.json")
	if !exists(hooksFile) {
		t.Error("the hooks file was not written")
	}
	if err == nil || !strings.Contains(err.Error(), "install left "+hooksFile+" written") || !strings.Contains(err.Error(), "`hookwatch uninstall --codex` takes them out") {
		t.Errorf("install --codex without Codex does not say what it left written and how to undo it: %v", err)
	}
	r, _ := runDoctorJSON(t, "--no-round-trip")
	wantCheck(t, r, "codex hooks (user)", doctor.Fail, "records no trust", "--codex-bin")
	mustHW(t, "uninstall", "--codex")
	if exists(hooksFile) {
		t.Error("uninstall --codex left the hooks file")
	}

	// In a project, the command names the scope and the project.
	_, _, err = hw(t, "", "install", "--codex", "--scope", "project", "--project", e.project)
	if want := "`hookwatch uninstall --codex --scope project --project " + e.project + "`"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("install --codex --scope project without Codex: %v, want it to name %s", err, want)
	}
}

// TestInstallRefusesTemporaryBuild: the binary of 'go run' is deleted when
// it exits, or when the build cache is trimmed: hooks naming it would fail
// from then on.
func TestInstallRefusesTemporaryBuild(t *testing.T) {
	e := newTestEnv(t)
	for _, tmp := range goRunBuilds(t) {
		executable = func() (string, error) { return tmp, nil }
		for _, args := range [][]string{{"install"}, {"install", "--codex", "--codex-bin", "/bin/sh"}} {
			_, _, err := hw(t, "", args...)
			if err == nil || !strings.Contains(err.Error(), "go install ./cmd/hookwatch ./cmd/hookwatch-hook") {
				t.Errorf("%s from the go run build %s: %v, want an error saying to install the binaries", strings.Join(args, " "), tmp, err)
			}
		}
		if exists(e.userSettings()) {
			t.Fatal("install wrote settings naming a temporary build")
		}
	}
	// Not a build of go run: a directory of that name elsewhere in the path.
	if install.IsTemporaryBuild(filepath.Join(os.TempDir(), "go-build-tools", "bin", "hookwatch")) {
		t.Error("a go-build-tools directory taken for go run's")
	}
}

// TestNextSteps: what install says next names what the first hook starts:
// the collector on this machine (unless it runs already), a forwarder for a
// remote https:// collector, nothing for one the hook posts to itself.
func TestNextSteps(t *testing.T) {
	for base, want := range map[string]string{
		"http://127.0.0.1:7421":           "starts the collector in the background",
		"https://hooks.example.com":       "starts 'hookwatch forward' in the background, which sends the events to https://hooks.example.com",
		"http://10.0.0.5:7421":            "The hooks send the events to http://10.0.0.5:7421",
		"http://localhost:7999/somewhere": "starts the collector in the background",
	} {
		if got := nextSteps(base, collectorState{}); !strings.Contains(got, want) {
			t.Errorf("nextSteps(%q) = %q, want it to say %q", base, got, want)
		}
	}
	if got := nextSteps("http://127.0.0.1:7421", collectorState{running: true}); !strings.Contains(got, "The collector runs already; the dashboard is at http://127.0.0.1:7421") {
		t.Errorf("with the collector running: %q", got)
	}
	// A team server's token with a URL on this machine (a tunnel to the
	// server): no hook starts a collector there, and no service is asked for.
	for _, running := range []bool{false, true} {
		if got := nextSteps("http://127.0.0.1:7421", collectorState{running: running, team: true}); !strings.Contains(got, "wait in the spool, and no collector is started on this machine") || strings.Contains(got, "service install") {
			t.Errorf("a team server's token at a loopback URL (running %v): %q", running, got)
		}
	}
	if got := nextSteps("https://hooks.example.com", collectorState{team: true}); !strings.Contains(got, "service install --forward") {
		t.Errorf("a remote collector's next steps do not name the forwarder's service: %q", got)
	}
	// With HOOKWATCH_AUTOSTART off no hook starts anything: the next step
	// is to start it.
	if got := nextSteps("http://127.0.0.1:7421", collectorState{noAutostart: true}); !strings.Contains(got, "start it: hookwatch serve") || strings.Contains(got, "first hook starts") {
		t.Errorf("HOOKWATCH_AUTOSTART off: %q", got)
	}
	if got := nextSteps("https://hooks.example.com", collectorState{noAutostart: true}); !strings.Contains(got, "hookwatch forward") || strings.Contains(got, "first hook starts") {
		t.Errorf("HOOKWATCH_AUTOSTART off, a remote collector: %q", got)
	}
	// What install prints, with no collector and then with one running.
	e := newTestEnv(t)
	if out := mustHW(t, "install"); !strings.Contains(out, "The first hook starts the collector") {
		t.Errorf("install with no collector running:\n%s", out)
	}
	mustHW(t, "uninstall")
	// This home's collector, at another address than HOOKWATCH_URL names
	// (serve --addr, and no export): no hook can start one at the URL, and
	// the dashboard is where it runs.
	db0, err := sqlite.Open(filepath.Join(t.TempDir(), "mine.db"))
	if err != nil {
		t.Fatal(err)
	}
	mine, err := collector.Start(collector.Options{Config: collector.Config{Store: db0, Version: version}, Addr: "127.0.0.1:0", Home: e.hwHome})
	if err != nil {
		t.Fatal(err)
	}
	if out := mustHW(t, "install"); !strings.Contains(out, "this home's collector runs at "+mine.URL()) || !strings.Contains(out, "hookwatch install --url "+mine.URL()) || strings.Contains(out, "first hook starts") {
		t.Errorf("install with this home's collector elsewhere:\n%s", out)
	}
	mine.Stop(context.Background())
	mustHW(t, "uninstall")
	// A collector on this machine that drains a spool, not this home's,
	// is another home's: install says so, not that it runs already.
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "other.db"))
	if err != nil {
		t.Fatal(err)
	}
	other, err := collector.Start(collector.Options{Config: collector.Config{Store: db, Version: version}, Addr: "127.0.0.1:0", Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Stop(context.Background())
	t.Setenv("HOOKWATCH_URL", other.URL())
	if out := mustHW(t, "install"); !strings.Contains(out, "is the collector of another HOOKWATCH_HOME") || strings.Contains(out, "runs already") {
		t.Errorf("install with another home's collector running:\n%s", out)
	}
	mustHW(t, "uninstall")
	// One that requires a token tells whether it drains a spool only to a
	// caller holding it: install asks with the hooks' token.
	db2, err := sqlite.Open(filepath.Join(t.TempDir(), "other2.db"))
	if err != nil {
		t.Fatal(err)
	}
	guarded, err := collector.Start(collector.Options{Config: collector.Config{Store: db2, Version: version, Token: "s3cret-token"}, Addr: "127.0.0.1:0", Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer guarded.Stop(context.Background())
	t.Setenv("HOOKWATCH_URL", guarded.URL())
	t.Setenv("HOOKWATCH_TOKEN", "s3cret-token")
	if out := mustHW(t, "install"); !strings.Contains(out, "is the collector of another HOOKWATCH_HOME") {
		t.Errorf("install with another home's collector that requires the hooks' token:\n%s", out)
	}
	mustHW(t, "uninstall")
	t.Setenv("HOOKWATCH_TOKEN", "")
	// One that drains no spool is no home's known: it runs.
	c := newTestCollector(t)
	if out := mustHW(t, "install"); !strings.Contains(out, "The collector runs already") || strings.Contains(out, "another HOOKWATCH_HOME") {
		t.Errorf("install with a collector that drains no spool:\n%s", out)
	}
	mustHW(t, "uninstall")
	// This home's collector drains its spool.
	sp, err := spool.Open(filepath.Join(os.Getenv("HOOKWATCH_HOME"), "spool"), spool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	release, err := sp.Attach(strings.TrimPrefix(c.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	if out := mustHW(t, "install"); !strings.Contains(out, "The collector runs already; the dashboard is at "+c.URL) {
		t.Errorf("install with a collector running:\n%s", out)
	}
	release()
	// --url with command hooks: the hooks send there, the URL kept.
	mustHW(t, "uninstall")
	want := "Next: open Claude Code. The hooks send the events to http://10.0.0.5:7421"
	if out := mustHW(t, "install", "--url", "http://10.0.0.5:7421"); !strings.Contains(out, want) || strings.Contains(out, "export HOOKWATCH_URL") {
		t.Errorf("install --url with command hooks:\n%s\nwant it to say %q", out, want)
	}
	// A team server's token, its URL a tunnel on this machine: the hooks
	// read the token there, and start no collector.
	mustHW(t, "install", "--url", "local")
	mustHW(t, "uninstall")
	want = "The hooks send the events to " + c.URL + " with the team server's token; while nothing answers there they wait in the spool"
	if out := mustHW(t, "install", "--url", c.URL, "--token", "hwt_0123456789abcdef"); !strings.Contains(out, want) || strings.Contains(out, "service install") {
		t.Errorf("install --url on this machine with a team server's token:\n%s\nwant it to say %q", out, want)
	}
}

// TestInstallURLCommandHooks: --url with command hooks keeps the URL in
// the home (mode 0600), where the hooks read it without HOOKWATCH_URL;
// install again without --url keeps it and says so, --url local removes
// it; a bad URL is refused before anything is written; HOOKWATCH_URL set
// elsewhere in install's environment is said to win; uninstall leaves it
// with the token.
func TestInstallURLCommandHooks(t *testing.T) {
	e := newTestEnv(t)
	t.Setenv("HOOKWATCH_URL", "")
	const u = "http://10.0.0.5:7421"
	file := filepath.Join(e.hwHome, hook.URLFile)
	kept := func() string {
		t.Helper()
		b, err := os.ReadFile(file)
		if os.IsNotExist(err) {
			return ""
		} else if err != nil {
			t.Fatal(err)
		}
		if fi, _ := os.Stat(file); fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", file, fi.Mode().Perm())
		}
		return string(b)
	}
	out := mustHW(t, "install", "--url", u+"/")
	if kept() != u+"\n" || strings.Contains(out, "export HOOKWATCH_URL") || !strings.Contains(out, "Kept the collector URL "+u+" in "+file) {
		t.Fatalf("install --url %s: the home keeps %q; it says:\n%s", u, kept(), out)
	}
	if cfg, _ := hook.ConfigFromEnv(os.Getenv); cfg.URL != u || cfg.URLSource != hook.URLFromFile {
		t.Errorf("the hooks send to %q (%v), want %q from the file", cfg.URL, cfg.URLSource, u)
	}
	if out := mustHW(t, "install"); kept() != u+"\n" || !strings.Contains(out, "The hooks keep sending to "+u) || !strings.Contains(out, "--url local") {
		t.Errorf("install again without --url: the home keeps %q; it says:\n%s", kept(), out)
	}
	if _, _, err := hw(t, "", "install", "--url", "ftp://10.0.0.6"); !errors.Is(err, errUsage) || kept() != u+"\n" || !strings.Contains(err.Error(), "--url") {
		t.Errorf("install --url ftp://: err %v, the home keeps %q", err, kept())
	}
	if out := mustHW(t, "install", "--url", "http://10.0.0.7:7421", "--dry-run"); kept() != u+"\n" || !strings.Contains(out, "would be kept") {
		t.Errorf("install --url --dry-run: the home keeps %q; it says:\n%s", kept(), out)
	}
	t.Setenv("HOOKWATCH_URL", "http://10.0.0.9:7421")
	if out := mustHW(t, "install"); !strings.Contains(out, "HOOKWATCH_URL=http://10.0.0.9:7421 in this environment wins over the URL kept ("+u+")") {
		t.Errorf("install with HOOKWATCH_URL elsewhere says:\n%s", out)
	}
	t.Setenv("HOOKWATCH_URL", "")
	if out := mustHW(t, "uninstall"); kept() != u+"\n" || !strings.Contains(out, "stays with the data, in "+file) {
		t.Errorf("uninstall: the home keeps %q; it says:\n%s", kept(), out)
	}
	if out := mustHW(t, "install", "--url", "local"); kept() != "" || !strings.Contains(out, "Removed the collector URL") || !strings.Contains(out, "The first hook starts the collector") {
		t.Errorf("install --url local: the home keeps %q; it says:\n%s", kept(), out)
	}
	if cfg, _ := hook.ConfigFromEnv(os.Getenv); cfg.URL != hook.DefaultURL {
		t.Errorf("after --url local the hooks send to %q", cfg.URL)
	}
	// Codex's command hook reads the same file: --url goes with --codex.
	if _, stderr, err := hw(t, "", "install", "--codex", "--url", u, "--dry-run"); err != nil && strings.Contains(stderr, "--url") {
		t.Errorf("install --codex --url refused: %v\n%s", err, stderr)
	}
}

// TestInstallURLDryRunNotes: the notes of a dry run that changes the URL
// kept are those of the real run: --url local sends the hooks to this
// machine's collector, with no forwarder for the URL kept before.
func TestInstallURLDryRunNotes(t *testing.T) {
	newTestEnv(t)
	t.Setenv("HOOKWATCH_URL", "")
	const team = "https://hookwatch.example.com"
	const forwarder = "hands the events for " + team
	if out := mustHW(t, "install", "--url", team); !strings.Contains(out, forwarder) {
		t.Fatalf("install --url %s says nothing of the forwarder:\n%s", team, out)
	}
	for _, args := range [][]string{{"--url", "local", "--dry-run"}, {"--url", "local"}} {
		if out := mustHW(t, append([]string{"install"}, args...)...); strings.Contains(out, forwarder) || strings.Contains(out, "would be kept") {
			t.Errorf("install %q, after --url %s, says:\n%s", args, team, out)
		}
	}
	// And the other way: a dry run of a URL needing the forwarder says so.
	if out := mustHW(t, "install", "--url", team, "--dry-run"); !strings.Contains(out, forwarder) {
		t.Errorf("install --url %s --dry-run says nothing of the forwarder:\n%s", team, out)
	}
}

// TestUninstallSaysWhatStays: uninstall leaves the home's data where it is
// and says where, and how to remove it; a dry run, or a home never made,
// says nothing of it.
func TestUninstallSaysWhatStays(t *testing.T) {
	e := newTestEnv(t)
	mustHW(t, "install")
	want := "rm -rf " + claudecode.ShellQuote(e.hwHome)
	if out := mustHW(t, "uninstall", "--dry-run"); strings.Contains(out, want) {
		t.Errorf("uninstall --dry-run:\n%s\nwant no word of the home", out)
	}
	if exists(e.hwHome) {
		if err := os.RemoveAll(e.hwHome); err != nil {
			t.Fatal(err)
		}
	}
	if out := mustHW(t, "uninstall", "--dry-run"); strings.Contains(out, "rm -rf") {
		t.Errorf("uninstall without a home:\n%s\nwant no word of it", out)
	}
	if err := os.MkdirAll(filepath.Join(e.hwHome, "spool"), 0o700); err != nil {
		t.Fatal(err)
	}
	out := mustHW(t, "uninstall")
	if !strings.Contains(out, e.hwHome) || !strings.Contains(out, want) {
		t.Errorf("uninstall:\n%s\nwant it to name %s and say %q", out, e.hwHome, want)
	}
	if !exists(filepath.Join(e.hwHome, "spool")) {
		t.Errorf("uninstall removed %s", e.hwHome)
	}
}

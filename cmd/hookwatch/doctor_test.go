package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/doctor"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/hook"
	"github.com/hookwatch/hookwatch/hooksock"
	"github.com/hookwatch/hookwatch/policy"
	"github.com/hookwatch/hookwatch/spool"
	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/sqlite"
)

// runDoctorJSON runs `hookwatch doctor --json` and returns the report and the
// error (nil or exitError{1}).
func runDoctorJSON(t *testing.T, args ...string) (*doctor.Report, error) {
	t.Helper()
	out, errOut, err := hw(t, "", append([]string{"doctor", "--json"}, args...)...)
	var r struct {
		OK bool `json:"ok"`
		doctor.Report
	}
	if jerr := json.Unmarshal([]byte(out), &r); jerr != nil {
		t.Fatalf("doctor --json printed no JSON (%v):\n%s\nstderr:\n%s", jerr, out, errOut)
	}
	if r.OK != (r.Problems == 0) {
		t.Fatalf("ok %v with %d problems", r.OK, r.Problems)
	}
	for _, c := range r.Checks {
		if c.Status == doctor.Fail && c.Fix == "" {
			t.Errorf("check %q failed without a fix: %+v", c.Name, c)
		}
	}
	return &r.Report, err
}

// check returns the named check of r.
func check(t *testing.T, r *doctor.Report, name string) doctor.Check {
	t.Helper()
	for _, c := range r.Checks {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no check %q in %+v", name, r.Checks)
	return doctor.Check{}
}

// wantCheck fails unless the named check has the status, and its message,
// details or fix contain each of the strings.
func wantCheck(t *testing.T, r *doctor.Report, name string, status doctor.Status, contains ...string) {
	t.Helper()
	c := check(t, r, name)
	all := c.Message + "\n" + strings.Join(c.Details, "\n") + "\nfix: " + c.Fix
	if c.Status != status {
		t.Fatalf("check %q is %s, want %s:\n%s", name, c.Status, status, all)
	}
	for _, s := range contains {
		if !strings.Contains(all, s) {
			t.Fatalf("check %q lacks %q:\n%s", name, s, all)
		}
	}
}

func wantExit1(t *testing.T, err error) {
	t.Helper()
	var ee exitError
	if !errors.As(err, &ee) || ee.code != 1 {
		t.Fatalf("doctor returned %v, want exit status 1", err)
	}
}

const validPolicy = `version: 1
rules:
  - id: no-rm-rf
    tool: Bash
    when: 'tool_input.command matches "rm\\s+-rf"'
    action: deny
    reason: no recursive deletes
`

const invalidPolicy = `version: 1
rules:
  - id: typo
    tool: Bash
    action: dney
`

func TestDoctorHealthy(t *testing.T) {
	e := newTestEnv(t)
	c := newTestCollector(t)
	mustHW(t, "install")
	os.MkdirAll(e.hwHome, 0o700)
	if err := os.WriteFile(filepath.Join(e.hwHome, "policy.yaml"), []byte(validPolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	// The home's policy answers, as a collector serves them. Its address
	// is left out: this collector does not drain the home's spool, so the
	// hook must post to it.
	sock, err := hooksock.Listen(hooksock.Path(e.hwHome))
	if err != nil {
		t.Fatal(err)
	}
	sock.Serve(collector.AnswerHooks(policy.NewEvaluator(e.hwHome), ""), func(err error) { t.Error(err) })
	t.Cleanup(func() { sock.Close() })
	e.fakeClaude(t, "2.1.268")

	out, _, err := hw(t, "", "doctor")
	if err != nil || !strings.Contains(out, "No problems found.") {
		t.Fatalf("doctor: %v\n%s", err, out)
	}
	r, err := runDoctorJSON(t)
	if err != nil || r.Problems != 0 {
		t.Fatalf("doctor --json: %v, %d problems: %+v", err, r.Problems, r.Checks)
	}
	wantCheck(t, r, "settings (user)", doctor.OK, e.userSettings(), e.lean)
	wantCheck(t, r, "settings (project)", doctor.Info, "does not exist")
	wantCheck(t, r, "registration", doctor.OK, "user")
	wantCheck(t, r, "collector", doctor.OK, c.URL, "version "+version)
	wantCheck(t, r, "policy", doctor.OK, "ok, 1 rule", "answered by the collector")
	wantCheck(t, r, "database", doctor.OK)
	wantCheck(t, r, "round trip", doctor.OK, e.lean, "stored session "+event.ProbeSessionPrefix)
	wantCheck(t, r, "claude", doctor.OK, "2.1.268, supported")
	// The round trip went through the real hook to the collector, into a
	// probe session that the session list leaves out.
	rt := check(t, r, "round trip").Message
	id := rt[strings.Index(rt, event.ProbeSessionPrefix):]
	if evs := c.session(t, id); len(evs) != 1 || evs[0].Event != "Notification" {
		t.Fatalf("collector stored %+v for %s, want one Notification", evs, id)
	}
	code, body := c.get(t, "/v1/sessions")
	if code != 200 || strings.Contains(body, event.ProbeSessionPrefix) || !strings.Contains(body, `"sessions"`) {
		t.Fatalf("GET /v1/sessions after doctor: %d %s", code, body)
	}
	// Nothing to warn about afterwards: doctor left no trace in the hook log.
	r, _ = runDoctorJSON(t, "--no-round-trip")
	wantCheck(t, r, "hook log", doctor.OK, "no hook errors")
}

func TestDoctorBroken(t *testing.T) {
	e := newTestEnv(t)                   // HOOKWATCH_URL is a closed port: the collector is down
	t.Setenv("HOOKWATCH_AUTOSTART", "0") // and nothing will start it: a problem
	mustHW(t, "install")
	os.Remove(e.lean)
	os.MkdirAll(e.hwHome, 0o700)
	bad := filepath.Join(e.project, ".hookwatch", "policy.yaml")
	os.MkdirAll(filepath.Dir(bad), 0o755)
	if err := os.WriteFile(bad, []byte(invalidPolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err := hw(t, "", "doctor")
	wantExit1(t, err)
	for _, s := range []string{"FAIL  settings (user)", "fix: hookwatch install", "FAIL  collector", "fix: hookwatch serve", "FAIL  policy", "problems"} {
		if !strings.Contains(out, s) {
			t.Fatalf("doctor output lacks %q:\n%s", s, out)
		}
	}
	r, err := runDoctorJSON(t)
	wantExit1(t, err)
	wantCheck(t, r, "settings (user)", doctor.Fail, e.lean+": does not exist", "hookwatch install")
	wantCheck(t, r, "collector", doctor.Fail, "not reachable", "hookwatch serve")
	wantCheck(t, r, "policy", doctor.Fail, `rule "typo"`, "$EDITOR "+bad)
	wantCheck(t, r, "round trip", doctor.Fail, "cannot run "+e.lean, "hookwatch install")
	if r.Problems != 4 {
		t.Fatalf("%d problems, want 4: %+v", r.Problems, r.Checks)
	}

	// The fixes it names work: reinstall, and the round trip now spools —
	// in a scratch home: doctor leaves no event in the spool, no line in
	// hook.log and starts no collector.
	mustHW(t, "install")
	r, err = runDoctorJSON(t)
	wantExit1(t, err) // the collector and the policy are still broken
	wantCheck(t, r, "settings (user)", doctor.OK, e.self)
	wantCheck(t, r, "round trip", doctor.OK, "spooled the event (in a scratch home)")
	r, _ = runDoctorJSON(t)
	wantCheck(t, r, "spool", doctor.OK, "is empty")
	wantCheck(t, r, "hook log", doctor.OK, "no hook errors")
}

func TestDoctorNotRegistered(t *testing.T) {
	newTestEnv(t)
	newTestCollector(t)
	r, err := runDoctorJSON(t, "--no-round-trip")
	wantExit1(t, err)
	wantCheck(t, r, "registration", doctor.Fail, "does not run it", "fix: hookwatch install")
	for _, c := range r.Checks {
		if c.Name == "round trip" {
			t.Fatalf("--no-round-trip ran the round trip")
		}
	}
}

func TestDoctorDuplicates(t *testing.T) {
	e := newTestEnv(t)
	newTestCollector(t)
	// The plugin and a settings install: every event twice.
	mustHW(t, "install")
	project := filepath.Join(e.project, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(project), 0o755)
	if err := os.WriteFile(project, []byte(`{"enabledPlugins": {"hookwatch@hookwatch": true}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := runDoctorJSON(t, "--no-round-trip")
	wantExit1(t, err)
	wantCheck(t, r, "registration", doctor.Fail, "hookwatch@hookwatch", "arrives twice", "hookwatch uninstall")
	// The plugin's launcher finds no hookwatch: not in the plugin, not on
	// PATH, not in ~/go/bin.
	wantCheck(t, r, "plugin", doctor.Fail, "finds no hookwatch", "go install")
	gobin := filepath.Join(e.home, "go", "bin")
	os.MkdirAll(gobin, 0o755)
	e.writeScript(t, filepath.Join(gobin, "hookwatch"), "#!/bin/sh\nexit 0\n")
	r, _ = runDoctorJSON(t, "--no-round-trip")
	wantCheck(t, r, "plugin", doctor.OK, filepath.Join(gobin, "hookwatch"))

	// Two scopes with different binaries: twice again.
	os.Remove(project)
	os.Remove(e.lean)
	mustHW(t, "install", "--scope", "local")
	r, err = runDoctorJSON(t, "--no-round-trip")
	wantExit1(t, err)
	wantCheck(t, r, "registration", doctor.Fail, "different hookwatch handlers", "hookwatch uninstall --scope local")
	// The same handler in two scopes runs once: only a warning.
	mustHW(t, "install")
	r, _ = runDoctorJSON(t, "--no-round-trip")
	wantCheck(t, r, "registration", doctor.Warn, "runs it once")

	// Two hookwatch groups for one event in one file.
	mustHW(t, "uninstall", "--scope", "local")
	b := readFile(t, e.userSettings())
	dup := strings.Replace(string(b), `"Stop": [`, `"Stop": [{"hooks": [{"type": "command", "command": "/usr/local/bin/hookwatch", "args": ["hook"]}]}, `, 1)
	if dup == string(b) {
		t.Fatalf("no Stop event in %s", b)
	}
	os.WriteFile(e.userSettings(), []byte(dup), 0o644)
	r, err = runDoctorJSON(t, "--no-round-trip")
	wantExit1(t, err)
	wantCheck(t, r, "settings (user)", doctor.Fail, "more than once for Stop", "fix: hookwatch install")
	wantCheck(t, r, "registration", doctor.Fail, "the user settings register different hookwatch handlers", "fix: hookwatch install")
	mustHW(t, "install")
	r, err = runDoctorJSON(t, "--no-round-trip")
	if err != nil {
		t.Fatalf("after the fix: %v: %+v", err, r.Checks)
	}
	wantCheck(t, r, "settings (user)", doctor.OK, e.self)
}

func TestDoctorEnvironmentProblems(t *testing.T) {
	e := newTestEnv(t)
	mustHW(t, "install")
	// A URL neither the hook nor a forwarder can post to.
	goodURL := os.Getenv("HOOKWATCH_URL")
	t.Setenv("HOOKWATCH_URL", "ftp://hookwatch.example.com")
	// A database under a regular file.
	blocker := filepath.Join(e.root, "file")
	os.WriteFile(blocker, nil, 0o644)
	t.Setenv("HOOKWATCH_DB", filepath.Join(blocker, "sub", "hw.db"))
	// An old Claude Code that does not run exec-form handlers: the ones
	// installed before it was on PATH.
	e.fakeClaude(t, "2.1.100")
	os.WriteFile(e.userSettings(), []byte("{not json"), 0o644)
	r, err := runDoctorJSON(t, "--no-round-trip")
	wantExit1(t, err)
	wantCheck(t, r, "collector", doctor.Fail, "http://", "export HOOKWATCH_URL=http://127.0.0.1:7421")
	wantCheck(t, r, "database", doctor.Fail, "is a file, not a directory", "HOOKWATCH_DB")
	wantCheck(t, r, "settings (user)", doctor.Fail, "cannot parse", "$EDITOR")

	os.Remove(e.userSettings())
	t.Setenv("HOOKWATCH_URL", goodURL) // install refuses hooks that would deliver nothing
	e.fakeClaude(t, "2.1.268")
	mustHW(t, "install")
	e.fakeClaude(t, "2.1.100")
	r, _ = runDoctorJSON(t, "--no-round-trip")
	wantCheck(t, r, "claude", doctor.Fail, "2.1.139", "fix: hookwatch install")
	mustHW(t, "install") // with 2.1.100 on PATH: shell form
	r, _ = runDoctorJSON(t, "--no-round-trip")
	// The handlers suit it now, but the version is older than the
	// oldest supported one.
	wantCheck(t, r, "claude", doctor.Warn, "2.1.100, unsupported", "fix: claude update")
}

// TestDoctorToken: a collector that refuses the hook's token fails the
// collector check, which names where the token came from and gives the fix
// that fits it: HOOKWATCH_TOKEN is exported anew, the token file of a team
// server's user is replaced by install, and a hook that sends none is
// given one. With the right token, the round trip stores its event.
func TestDoctorToken(t *testing.T) {
	e := newTestEnv(t)
	newTestCollectorToken(t, "right")
	mustHW(t, "install")
	tokenPath := filepath.Join(e.hwHome, hook.TokenFile)
	if err := os.MkdirAll(e.hwHome, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, env, inFile string
		want              []string
		notFix            string
	}{
		// HOOKWATCH_TOKEN comes before the file, which the message leaves out.
		{name: "environment", env: "wrong", inFile: "right",
			want: []string{"is up but refuses HOOKWATCH_TOKEN (HTTP 401)", "fix: export HOOKWATCH_TOKEN="}, notFix: "--token-file"},
		// docs/team-server.md's revoked token: a new one is installed.
		{name: "file", inFile: "wrong",
			want: []string{"is up but refuses the token in " + tokenPath + " (HTTP 401)", "hookwatch token create --user NAME", "hookwatch install --token-file FILE"}, notFix: "export HOOKWATCH_TOKEN"},
		{name: "none",
			want: []string{"requires a token, and none was given, neither HOOKWATCH_TOKEN nor " + tokenPath + " holding one (HTTP 401)", "hookwatch install --token-file FILE"}, notFix: "export HOOKWATCH_TOKEN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("HOOKWATCH_TOKEN", tc.env)
			os.Remove(tokenPath)
			if tc.inFile != "" {
				if err := os.WriteFile(tokenPath, []byte(tc.inFile+"\n"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			r, err := runDoctorJSON(t)
			wantExit1(t, err)
			wantCheck(t, r, "collector", doctor.Fail, tc.want...)
			if c := check(t, r, "collector"); strings.Contains(c.Fix, tc.notFix) {
				t.Errorf("the fix of a token from the %s says %q: %s", tc.name, tc.notFix, c.Fix)
			}
			wantCheck(t, r, "round trip", doctor.OK, "refuses the token")
		})
	}
	os.Remove(tokenPath)
	t.Setenv("HOOKWATCH_TOKEN", "right")
	r, err := runDoctorJSON(t)
	if err != nil {
		t.Fatalf("doctor with the right token: %v: %+v", err, r.Checks)
	}
	wantCheck(t, r, "round trip", doctor.OK, "stored session "+event.ProbeSessionPrefix)
	// The event refused earlier went to a scratch home: nothing is pending.
	wantCheck(t, r, "spool", doctor.OK, "is empty")
}

// TestDoctorHTTPRoundTrip: with http hooks installed, doctor posts a
// synthetic event where they post, with the headers Claude Code would send
// from this environment, and says when the collector would drop their
// events: its token not exported, the collector down.
func TestDoctorHTTPRoundTrip(t *testing.T) {
	e := newTestEnv(t)
	c := newTestCollectorToken(t, "right")
	tokenFile := filepath.Join(e.root, "ann.token")
	if err := os.WriteFile(tokenFile, []byte("right\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mustHW(t, "install", "--mode", "http", "--url", c.URL, "--token-file", tokenFile)
	// The command hooks read the token file; Claude Code's http hooks
	// send $HOOKWATCH_TOKEN, which is not exported.
	r, err := runDoctorJSON(t)
	wantExit1(t, err)
	wantCheck(t, r, "round trip (http)", doctor.Fail, "POST "+c.URL+"/v1/hooks/claude answered HTTP 401", "refuses the token", "export HOOKWATCH_TOKEN=")
	wantCheck(t, r, "round trip", doctor.OK, "stored session "+event.ProbeSessionPrefix)

	t.Setenv("HOOKWATCH_TOKEN", "right")
	r, err = runDoctorJSON(t)
	if err != nil {
		t.Fatalf("doctor with the token exported: %v: %+v", err, r.Checks)
	}
	wantCheck(t, r, "round trip (http)", doctor.OK, "answered HTTP 2", "stored session "+event.ProbeSessionPrefix)

	c.Close()
	r, _ = runDoctorJSON(t)
	wantCheck(t, r, "round trip (http)", doctor.Fail, "lost while it does not answer")
}

// TestDoctorHTTPRoundTripRevoked: a team server refuses the revoked token
// the http hooks send, and doctor's round trip quotes why, as the server
// words it (what to do included), without echoing the token.
func TestDoctorHTTPRoundTripRevoked(t *testing.T) {
	e := newTestEnv(t)
	db, secret := revokedTokenDB(t, filepath.Join(t.TempDir(), "team.db"))
	c := newTestCollectorOn(t, db, collector.Config{RequireAuth: true})
	tokenFile := filepath.Join(e.root, "ann.token")
	if err := os.WriteFile(tokenFile, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mustHW(t, "install", "--mode", "http", "--url", c.URL, "--token-file", tokenFile)
	t.Setenv("HOOKWATCH_TOKEN", secret)
	out, _, err := hw(t, "", "doctor", "--json")
	wantExit1(t, err)
	if strings.Contains(out, secret) {
		t.Fatalf("doctor echoes the token:\n%s", out)
	}
	r, _ := runDoctorJSON(t)
	wantCheck(t, r, "round trip (http)", doctor.Fail, "POST "+c.URL+"/v1/hooks/claude answered HTTP 401",
		`the collector says: "this bearer token was revoked at 2026-11-30T09:00:00Z: `+hook.RevokedTokenFix,
		// Exporting the token file's token again would change nothing.
		"fix: ask the collector's admin for a new token", "hookwatch install --token-file FILE")
	// HOOKWATCH_TOKEN, revoked, is replaced by a new token, exported or
	// installed once HOOKWATCH_TOKEN no longer overrides the file.
	wantCheck(t, r, "collector", doctor.Fail, "refuses HOOKWATCH_TOKEN (HTTP 401)", `the collector says: "this bearer token was revoked at 2026-11-30T09:00:00Z`,
		"fix: ask the collector's admin for a new token", "export HOOKWATCH_TOKEN=<the new token>", "unset HOOKWATCH_TOKEN and install it: hookwatch install --token-file FILE")
	if c := check(t, r, "collector"); strings.Contains(c.Fix, "hookwatch serve runs with") {
		t.Errorf("the fix for a revoked HOOKWATCH_TOKEN exports the server's: %s", c.Fix)
	}
	if c := check(t, r, "round trip (http)"); strings.Contains(c.Fix, "export") {
		t.Errorf("the fix for a revoked token exports it again: %s", c.Fix)
	}
}

func TestDoctorUsage(t *testing.T) {
	newTestEnv(t)
	if _, _, err := hw(t, "", "doctor", "extra"); !errors.Is(err, errUsage) {
		t.Fatalf("doctor extra: %v, want a usage error", err)
	}
	// A --project that is no directory is said so, not checked as one
	// whose settings are broken.
	file := filepath.Join(t.TempDir(), "hostname")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]string{file: file + " is not a directory", file + "-missing": "no such file or directory"} {
		out, _, err := hw(t, "", "doctor", "--project", dir)
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), want) || out != "" {
			t.Errorf("doctor --project %s: %v, %q; want a usage error with %q and no report", dir, err, out, want)
		}
	}
}

// TestDoctorLosses: lost events make doctor say degraded until the user
// acknowledges them; new losses make it degraded again.
func TestDoctorLosses(t *testing.T) {
	e := newTestEnv(t)
	newTestCollector(t)
	mustHW(t, "install")
	sp, err := spool.Open(filepath.Join(e.hwHome, "spool"), spool.Options{MaxBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		sp.Append([]byte(`{"id":"x"}`)) // over the cap: dropped
	}
	r, _ := runDoctorJSON(t, "--no-round-trip")
	wantCheck(t, r, "spool", doctor.Warn, "3 dropped", "degraded, 3 lost events not acknowledged", "HOOKWATCH_SPOOL_MAX", "fix: hookwatch doctor --ack-losses")

	out := mustHW(t, "doctor", "--ack-losses", "--no-round-trip")
	if !strings.Contains(out, "acknowledged 3 lost event(s) (3 in all: 3 dropped, 0 corrupt)") {
		t.Fatalf("doctor --ack-losses:\n%s", out)
	}
	r, _ = runDoctorJSON(t, "--no-round-trip")
	wantCheck(t, r, "spool", doctor.OK, "3 dropped, 0 corrupt (acknowledged)")

	sp.Append([]byte(`{"id":"y"}`))
	r, _ = runDoctorJSON(t, "--no-round-trip")
	wantCheck(t, r, "spool", doctor.Warn, "4 dropped", "degraded, 1 lost event not acknowledged")

	// With --json, what --ack-losses did is said on stderr: standard
	// output is the report alone, which already reads the losses as
	// acknowledged.
	_, errOut, _ := hw(t, "", "doctor", "--json", "--ack-losses", "--no-round-trip")
	if !strings.Contains(errOut, "acknowledged 1 lost event(s) (4 in all: 4 dropped, 0 corrupt)") {
		t.Errorf("doctor --json --ack-losses said on stderr:\n%s", errOut)
	}
	// Acknowledged again, nothing is news.
	if out := mustHW(t, "doctor", "--ack-losses", "--no-round-trip"); !strings.Contains(out, "no new lost events to acknowledge (4 in all, acknowledged before: 4 dropped, 0 corrupt)") {
		t.Errorf("doctor --ack-losses with nothing new:\n%s", out)
	}
	r, _ = runDoctorJSON(t, "--ack-losses", "--no-round-trip")
	wantCheck(t, r, "spool", doctor.OK, "4 dropped, 0 corrupt (acknowledged)")
}

// TestDoctorDatabase: the database check looks at the database serve would
// open, resolved as serve resolves it (dbDSN, dbFile), not by a rule of
// its own.
func TestDoctorDatabase(t *testing.T) {
	newTestEnv(t)
	mustHW(t, "install")
	t.Setenv("HOOKWATCH_DB", "")
	r, _ := runDoctorJSON(t, "--no-round-trip")
	wantCheck(t, r, "database", doctor.OK, dbFile(dbDSN(""), hook.Home(os.Getenv))+" ")
	own := filepath.Join(t.TempDir(), "own.db")
	t.Setenv("HOOKWATCH_DB", own)
	r, _ = runDoctorJSON(t, "--no-round-trip")
	wantCheck(t, r, "database", doctor.OK, own+" is writable")
	t.Setenv("HOOKWATCH_DB", "postgres://hookwatch@db.invalid/hookwatch")
	r, _ = runDoctorJSON(t, "--no-round-trip")
	wantCheck(t, r, "database", doctor.Info, "PostgreSQL")
}

// revokedTokenDB opens a SQLite store at path holding one token of user
// ann, revoked at 2026-11-30 09:00 UTC, and returns its secret; the
// collector the caller starts on it (newTestCollectorOn) closes it.
func revokedTokenDB(t *testing.T, path string) (*sqlite.DB, string) {
	t.Helper()
	db, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	tok, secret := store.NewToken("ann", "", store.RoleUser, time.Now())
	if err := db.CreateToken(t.Context(), tok); err != nil {
		t.Fatal(err)
	}
	if err := db.RevokeToken(t.Context(), tok.ID, time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	return db, secret
}

// TestDoctorRoundTripWithoutForwarder: right after 'install --url https://…',
// before any hook started the forwarder, the round trip runs the hook and
// says that no forwarder delivers its event — the forwarder check's to
// report — rather than fail with a fix to install again what is installed.
// The probe waits in a scratch home: nothing of it is left in the home's
// spool, for the forwarder to deliver later, nor in its hook.log.
func TestDoctorRoundTripWithoutForwarder(t *testing.T) {
	e := newTestEnv(t)
	ts := installTLSTeamServer(t, e)

	r, _ := runDoctorJSON(t)
	wantCheck(t, r, "collector", doctor.OK, ts.URL)
	wantCheck(t, r, "forwarder", doctor.Warn, "no forwarder runs")
	wantCheck(t, r, "round trip", doctor.OK, "no forwarder runs", "scratch home")
	if n, err := os.ReadDir(filepath.Join(e.hwHome, "spool")); err == nil {
		for _, f := range n {
			if b, _ := os.ReadFile(filepath.Join(e.hwHome, "spool", f.Name())); strings.Contains(string(b), event.ProbeSessionPrefix) {
				t.Errorf("the probe was left in the home's spool, in %s", f.Name())
			}
		}
	}
	if b, _ := os.ReadFile(filepath.Join(e.hwHome, "hook.log")); strings.Contains(string(b), event.ProbeSessionPrefix) {
		t.Errorf("the probe's failure was left in the home's hook.log:\n%s", b)
	}
}

package main

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/forward"
	"github.com/hookwatch/hookwatch/install"
	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/sqlite"
)

// TestInstallTeamToken points a laptop at a team server with a user's
// token: the settings file never holds the token, the http handlers send it
// from Claude Code's environment, and the command hook, which reads it from
// the home's 0600 token file, gets the event stored as the token's user.
func TestInstallTeamToken(t *testing.T) {
	e := newTestEnv(t)
	e.fakeClaude(t, "2.1.100")
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "team.db"))
	if err != nil {
		t.Fatal(err)
	}
	tok, secret := store.NewToken("ann", "", store.RoleUser, time.Now())
	if err := db.CreateToken(context.Background(), tok); err != nil {
		t.Fatal(err)
	}
	srv, err := collector.New(collector.Config{Store: db, Version: version, RequireAuth: true})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	defer func() { hs.Close(); srv.Shutdown(context.Background()) }()

	secretFile := filepath.Join(e.root, "secret")
	if err := os.WriteFile(secretFile, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mustHW(t, "install", "--mode", "http", "--url", hs.URL, "--token-file", secretFile)
	settings := string(readFile(t, e.userSettings()))
	if strings.Contains(settings, secret) {
		t.Fatalf("settings.json holds the token:\n%s", settings)
	}
	for _, want := range []string{`"Bearer $HOOKWATCH_TOKEN"`, `"allowedEnvVars"`, hs.URL + "/v1/hooks/claude"} {
		if !strings.Contains(settings, want) {
			t.Errorf("settings.json lacks %s:\n%s", want, settings)
		}
	}
	tokenPath := filepath.Join(e.hwHome, "token")
	fi, err := os.Stat(tokenPath)
	if err != nil || fi.Mode().Perm() != 0o600 || strings.TrimSpace(string(readFile(t, tokenPath))) != secret {
		t.Fatalf("token file: %v %v", fi, err)
	}

	// Command mode: the hook finds the token in the home.
	mustHW(t, "install", "--mode", "command")
	if strings.Contains(string(readFile(t, e.userSettings())), secret) {
		t.Fatal("settings.json holds the token")
	}
	t.Setenv("HOOKWATCH_URL", hs.URL)
	t.Setenv("USER", "mallory")
	payload := `{"session_id":"s-team","hook_event_name":"UserPromptSubmit","prompt":"hi","cwd":"/tmp","transcript_path":"/tmp/t.jsonl"}`
	if out, errOut, err := hw(t, payload, "hook"); err != nil || out != "" {
		t.Fatalf("hook: %v %q %q", err, out, errOut)
	}
	sess, err := db.Session(context.Background(), "s-team")
	if err != nil {
		t.Fatalf("the hook's event is not on the server: %v (hook.log: %s)", err, readFileOr(filepath.Join(e.hwHome, "hook.log")))
	}
	if sess.User != "ann" {
		t.Errorf("the event is recorded as %q, want the token's user ann", sess.User)
	}
	if log := readFileOr(filepath.Join(e.hwHome, "hook.log")); strings.Contains(log, secret) {
		t.Errorf("hook.log holds the token: %s", log)
	}
	// Without the token the server refuses the hook, which spools.
	if err := os.Remove(tokenPath); err != nil {
		t.Fatal(err)
	}
	payload = strings.Replace(payload, "s-team", "s-team-2", 1)
	if _, _, err := hw(t, payload, "hook"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Session(context.Background(), "s-team-2"); err == nil {
		t.Error("the server stored an event sent without a token")
	}
}

func readFileOr(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// TestInstallForwarder points the command hook at an https:// team server:
// install keeps the team's CA file in the home for the forwarder, says that
// the hooks' events go through 'hookwatch forward', and refuses a CA file
// that holds no certificate.
func TestInstallForwarder(t *testing.T) {
	e := newTestEnv(t)
	e.fakeClaude(t, "2.1.100")
	certFile, _, _ := testCert(t, e.root)
	secretFile := filepath.Join(e.root, "secret")
	if err := os.WriteFile(secretFile, []byte("hwt_0123\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOOKWATCH_URL", "https://hookwatch.example.com")
	out := mustHW(t, "install", "--token-file", secretFile, "--ca-file", certFile)
	if !strings.Contains(out, "hookwatch forward") || !strings.Contains(out, "service install --forward") {
		t.Errorf("install output does not name the forwarder:\n%s", out)
	}
	ca := filepath.Join(e.hwHome, "ca.pem")
	fi, err := os.Stat(ca)
	if err != nil || fi.Mode().Perm() != 0o600 || string(readFile(t, ca)) != string(readFile(t, certFile)) {
		t.Fatalf("ca.pem: %v %v", fi, err)
	}
	if _, _, err := hw(t, "", "install", "--ca-file", secretFile); err == nil || !strings.Contains(err.Error(), "no PEM certificate") {
		t.Fatalf("install --ca-file with no certificate: %v", err)
	}
	t.Setenv("HOOKWATCH_URL", "http://10.0.0.5:7421")
	if out := mustHW(t, "install"); strings.Contains(out, "hookwatch forward") {
		t.Errorf("install for a URL the hook posts to names the forwarder:\n%s", out)
	}
}

// TestInstallHTTPHost: http handlers for a team server send the machine's
// name from HOOKWATCH_HOST (allowedEnvVars), beside the token; for the local
// collector they send neither.
func TestInstallHTTPHost(t *testing.T) {
	e := newTestEnv(t)
	e.fakeClaude(t, "2.1.100")
	out := mustHW(t, "install", "--mode", "http", "--url", "http://10.0.0.5:7421", "--token", "hwt_0123")
	settings := string(readFile(t, e.userSettings()))
	for _, want := range []string{`"X-Hookwatch-Host": "$HOOKWATCH_HOST"`, `"Authorization": "Bearer $HOOKWATCH_TOKEN"`, `"HOOKWATCH_HOST"`, `"HOOKWATCH_TOKEN"`} {
		if !strings.Contains(settings, want) {
			t.Errorf("settings.json lacks %s:\n%s", want, settings)
		}
	}
	if !strings.Contains(out, "export HOOKWATCH_HOST=") {
		t.Errorf("install does not say to export HOOKWATCH_HOST:\n%s", out)
	}
	if !strings.Contains(out, install.HTTPDownNote(false)) {
		t.Errorf("install does not say what http hooks to a remote collector lose while it is down:\n%s", out)
	}
	os.Remove(filepath.Join(e.hwHome, "token"))
	out = mustHW(t, "install", "--mode", "http", "--url", "http://127.0.0.1:7421")
	if settings := string(readFile(t, e.userSettings())); strings.Contains(settings, "X-Hookwatch-Host") || strings.Contains(out, "HOOKWATCH_HOST") {
		t.Errorf("a local collector's handlers send the host:\n%s\n%s", settings, out)
	}
}

// TestInstallTokenReplaced: install says what it did to the home's token
// even when the settings file stays as it is: a token replaced (after an
// admin revoked the old one) is said so, and a forwarder running on the
// home is said to send it without a restart; only when nothing changed
// does install say so.
func TestInstallTokenReplaced(t *testing.T) {
	e := newTestEnv(t)
	e.fakeClaude(t, "2.1.100")
	const url = "https://hookwatch.example.com"
	t.Setenv("HOOKWATCH_URL", url)
	tokenPath := filepath.Join(e.hwHome, "token")
	secrets := map[string]string{"carol.token": "hwt_carol_1", "carol2.token": "hwt_carol_2"}
	for name, secret := range secrets {
		if err := os.WriteFile(filepath.Join(e.root, name), []byte(secret+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	forwarding := false
	for _, step := range []struct {
		name      string
		file      string
		dryRun    bool
		forwarder bool // a forwarder runs on the home
		want      []string
		notWant   []string
		holds     string // the token file's token after the step
	}{
		{name: "first", file: "carol.token", holds: "hwt_carol_1",
			want: []string{"Stored the token in " + tokenPath}, notWant: []string{"Replaced the token"}},
		{name: "same", file: "carol.token", holds: "hwt_carol_1",
			want: []string{"already installed", "nothing to change"}, notWant: []string{"Replaced the token", "Stored the token"}},
		{name: "another, dry run", file: "carol2.token", dryRun: true, holds: "hwt_carol_1",
			want: []string{"the token in " + tokenPath + " would be replaced", "nothing was written"}, notWant: []string{"nothing to change", "Replaced the token"}},
		{name: "another", file: "carol2.token", forwarder: true, holds: "hwt_carol_2",
			want: []string{"already installed", "its hooks stay as they are", "Replaced the token in " + tokenPath,
				fmt.Sprintf("hookwatch forward (pid %d) sends it from its next attempt on (within a second when the collector refused the old one), without a restart", os.Getpid())},
			notWant: []string{"nothing to change"}},
	} {
		t.Run(step.name, func(t *testing.T) {
			if step.forwarder && !forwarding {
				startForwarder(t, e.hwHome, url)
				forwarding = true
			}
			args := []string{"install", "--token-file", filepath.Join(e.root, step.file)}
			if step.dryRun {
				args = append(args, "--dry-run")
			}
			out := mustHW(t, args...)
			for _, w := range step.want {
				if !strings.Contains(out, w) {
					t.Errorf("install does not say %q:\n%s", w, out)
				}
			}
			for _, w := range step.notWant {
				if strings.Contains(out, w) {
					t.Errorf("install says %q:\n%s", w, out)
				}
			}
			for _, secret := range secrets {
				if strings.Contains(out, secret) {
					t.Errorf("install prints the token:\n%s", out)
				}
			}
			if got := strings.TrimSpace(string(readFile(t, tokenPath))); got != step.holds {
				t.Errorf("the token file holds %q, want %q", got, step.holds)
			}
		})
	}
}

// startForwarder runs a forwarder (forward.Run) on home's spool for url
// until the test ends, once it is attached.
func startForwarder(t *testing.T, home, url string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- forward.Run(ctx, forward.Options{Home: home, URL: url, Ready: func() { close(ready) }})
	}()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("the forwarder did not start: %v", err)
	}
}

// TestInstallTokenOnCommandLine: a secret given as --token's value shows in
// ps and the shell's history, so install warns, naming the ways that keep
// it off the command line; --token - (stdin) and --token-file store it the
// same without a warning, and the warning never repeats the secret.
func TestInstallTokenOnCommandLine(t *testing.T) {
	e := newTestEnv(t)
	e.fakeClaude(t, "2.1.100")
	const secret = "hwt_ann_cmdline"
	tokenPath := filepath.Join(e.hwHome, "token")
	_, errOut, err := hw(t, "", "install", "--url", "http://10.0.0.5:7421", "--token", secret)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut, "warning") || !strings.Contains(errOut, "--token-file") || !strings.Contains(errOut, "--token -") || strings.Contains(errOut, secret) {
		t.Errorf("install --token SECRET: stderr %q, want a warning naming --token-file and --token -, without the secret", errOut)
	}
	if got := strings.TrimSpace(readFileOr(tokenPath)); got != secret {
		t.Fatalf("token file holds %q, want %q", got, secret)
	}
	if _, errOut, err := hw(t, secret+"2\n", "install", "--url", "http://10.0.0.5:7421", "--token", "-"); err != nil || strings.Contains(errOut, "warning") {
		t.Errorf("install --token -: %v, stderr %q, want no warning", err, errOut)
	}
	if got := strings.TrimSpace(readFileOr(tokenPath)); got != secret+"2" {
		t.Errorf("token file holds %q after --token -, want %q", got, secret+"2")
	}
	out, _, _ := hw(t, "", "install", "--help")
	if !strings.Contains(out, "--token-file") || !strings.Contains(out, "shows in ps") {
		t.Errorf("install --help does not recommend --token-file over --token SECRET:\n%s", out)
	}
}

// TestInstallTokenDryRunNotes: a dry run with a token, to a home that
// holds none or another, notes what the real run then notes: the notes
// follow the token given, not the token file the dry run leaves as it is.
func TestInstallTokenDryRunNotes(t *testing.T) {
	e := newTestEnv(t)
	t.Setenv("HOOKWATCH_URL", "")
	notes := func(out string) []string {
		var n []string
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "Note: ") {
				n = append(n, l)
			}
		}
		return n
	}
	for _, tc := range []struct{ mode, url, token string }{
		{"command", "https://hookwatch.example.com", "hwt_first"},
		{"http", "https://hookwatch.example.com", "hwt_second"},
		{"command", "http://127.0.0.1:7421", "hwt_third"},
	} {
		args := []string{"install", "--mode", tc.mode, "--url", tc.url, "--token", tc.token}
		dry := notes(mustHW(t, append(args, "--dry-run")...))
		real := notes(mustHW(t, args...))
		if len(real) == 0 || !slices.Equal(dry, real) {
			t.Errorf("%q: the dry run notes\n%s\nthe real run\n%s", args, strings.Join(dry, "\n"), strings.Join(real, "\n"))
		}
		if got := strings.TrimSpace(readFileOr(filepath.Join(e.hwHome, "token"))); got != tc.token {
			t.Errorf("%q: the token file holds %q", args, got)
		}
	}
}

// TestInstallURLReplacedForwarderRuns: 'install --url' to another server
// while a forwarder to the first one runs says that it holds the spool and
// sends it to the old URL, and that 'hookwatch stop' lets the next hook
// start the new one; a forwarder to the URL kept is no news.
func TestInstallURLReplacedForwarderRuns(t *testing.T) {
	e := newTestEnv(t)
	e.fakeClaude(t, "2.1.100")
	t.Setenv("HOOKWATCH_URL", "")
	const first, second = "https://one.example.com", "https://two.example.com"
	if err := os.WriteFile(filepath.Join(e.root, "ann.token"), []byte("hwt_ann\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mustHW(t, "install", "--url", first, "--token-file", filepath.Join(e.root, "ann.token"))
	startForwarder(t, e.hwHome, first)
	if out := mustHW(t, "install", "--url", first); strings.Contains(out, "hookwatch stop") {
		t.Errorf("install to the URL the forwarder sends to asks to stop it:\n%s", out)
	}
	out := mustHW(t, "install", "--url", second)
	want := fmt.Sprintf("the running hookwatch forward (pid %d) sends this home's spool to %s, not to %s: run 'hookwatch stop'; the next hook starts the forwarder to %s", os.Getpid(), first, second, second)
	if !strings.Contains(out, want) {
		t.Errorf("install to another URL while a forwarder runs does not say %q:\n%s", want, out)
	}
}

// TestInstallTokenShadowed: a token given to install while HOOKWATCH_TOKEN
// is exported with another would never be sent, since the hooks read the
// variable first (hook.LookupToken): install, and its dry run, warn, naming
// the variable and the export from the file that mends it, without either
// secret. No warning when the variable holds the token given, or when no
// token is given (the variable then is the user's choice).
func TestInstallTokenShadowed(t *testing.T) {
	e := newTestEnv(t)
	e.fakeClaude(t, "2.1.100")
	const exported, given = "hwt_exported_old", "hwt_given_new"
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte(given+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	install := []string{"install", "--url", "https://hookwatch.example.com", "--token-file", file}
	t.Setenv("HOOKWATCH_TOKEN", exported)
	for _, args := range [][]string{append(install, "--dry-run"), install} {
		_, errOut, err := hw(t, "", args...)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(errOut, "warning: HOOKWATCH_TOKEN is exported here with another token") ||
			!strings.Contains(errOut, `export HOOKWATCH_TOKEN="$(cat `+filepath.Join(e.hwHome, "token")+`)"`) ||
			strings.Contains(errOut, exported) || strings.Contains(errOut, given) {
			t.Errorf("%v with another HOOKWATCH_TOKEN exported: stderr %q, want a warning naming the variable and its fix, without the secrets", args, errOut)
		}
	}
	for name, args := range map[string][]string{"no token given": {"install", "--url", "https://hookwatch.example.com"}, "the same token exported": install} {
		if name == "the same token exported" {
			t.Setenv("HOOKWATCH_TOKEN", given)
		}
		if _, errOut, err := hw(t, "", args...); err != nil || strings.Contains(errOut, "warning") {
			t.Errorf("%s: %v, stderr %q, want no warning", name, err, errOut)
		}
	}
}

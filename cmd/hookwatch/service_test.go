package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/hook"
	"github.com/hookwatch/hookwatch/install"
	"github.com/hookwatch/hookwatch/store/sqlite"
)

func TestServicePrint(t *testing.T) {
	e := newTestEnv(t)
	f := func(goos string) {
		t.Helper()
		// The collector listens where the hooks post (HOOKWATCH_URL).
		_, want := install.ServiceUnit(goos, e.self, map[string]string{"HOOKWATCH_HOME": e.hwHome, "HOOKWATCH_ADDR": strings.TrimPrefix(os.Getenv("HOOKWATCH_URL"), "http://")})
		if got := mustHW(t, "service", "print", "--os", goos); got != string(want) {
			t.Fatalf("service print --os %s:\n%s\nwant:\n%s", goos, got, want)
		}
	}
	f("linux")
	f("darwin")
	if _, _, err := hw(t, "", "service", "print", "--os", "plan9"); !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "hookwatch serve") {
		t.Fatalf("service print --os plan9: %v", err)
	}
}

// TestServicePassesServeSettings: every setting serve reads from the
// environment reaches the unit, and HOOKWATCH_ADDR, when set, wins over
// the address of HOOKWATCH_URL.
func TestServicePassesServeSettings(t *testing.T) {
	newTestEnv(t)
	t.Setenv("HOOKWATCH_OTLP_ENDPOINT", "http://127.0.0.1:4318")
	t.Setenv("HOOKWATCH_AUDIT_DIR", "/var/audit")
	t.Setenv("HOOKWATCH_ADDR", "127.0.0.1:7999")
	t.Setenv("HOOKWATCH_RETAIN", "90d")
	t.Setenv("HOOKWATCH_SIGNAL_STALLED_AFTER", "10m")
	got := mustHW(t, "service", "print", "--os", "linux")
	for _, want := range []string{`Environment="HOOKWATCH_OTLP_ENDPOINT=http://127.0.0.1:4318"`, `Environment="HOOKWATCH_AUDIT_DIR=/var/audit"`, `Environment="HOOKWATCH_ADDR=127.0.0.1:7999"`,
		`Environment="HOOKWATCH_RETAIN=90d"`, `Environment="HOOKWATCH_SIGNAL_STALLED_AFTER=10m"`} {
		if !strings.Contains(got, want) {
			t.Errorf("the unit lacks %s:\n%s", want, got)
		}
	}
}

func TestServiceInstallUninstallSystemd(t *testing.T) {
	e := newTestEnv(t)
	t.Setenv("HOOKWATCH_DB", filepath.Join(e.root, "data", "hw.db"))
	t.Setenv("HOOKWATCH_TOKEN", "s3cret")
	unit := filepath.Join(e.home, ".config", "systemd", "user", "hookwatch.service")
	out := mustHW(t, "service", "install", "--os", "linux")
	if !strings.Contains(out, "Wrote "+unit) || !strings.Contains(out, "systemctl --user daemon-reload && systemctl --user enable --now hookwatch") ||
		!strings.Contains(out, "HOOKWATCH_ADDR, HOOKWATCH_DB, HOOKWATCH_HOME, HOOKWATCH_TOKEN") {
		t.Fatalf("service install output:\n%s", out)
	}
	b := readFile(t, unit)
	if !strings.Contains(string(b), `ExecStart="`+e.self+`" serve`) || !strings.Contains(string(b), `Environment="HOOKWATCH_TOKEN=s3cret"`) {
		t.Fatalf("unit file:\n%s", b)
	}
	if fi, _ := os.Stat(unit); fi.Mode().Perm() != 0o600 {
		t.Fatalf("unit mode %v: it holds the token, want 0600", fi.Mode().Perm())
	}
	if out := mustHW(t, "service", "install", "--os", "linux"); !strings.Contains(out, "already up to date") {
		t.Fatalf("second service install:\n%s", out)
	}
	// A unit of another mode (edited, say) is replaced by one 0600 from
	// its first byte, whole, with nothing left beside it.
	if err := os.Chmod(unit, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOOKWATCH_TOKEN", "s3cret2")
	mustHW(t, "service", "install", "--os", "linux")
	if fi, _ := os.Stat(unit); fi.Mode().Perm() != 0o600 || !strings.Contains(string(readFile(t, unit)), "s3cret2") {
		t.Fatalf("unit replaced: mode %v:\n%s", fi.Mode().Perm(), readFile(t, unit))
	}
	if des, _ := os.ReadDir(filepath.Dir(unit)); len(des) != 1 {
		t.Errorf("beside the unit: %v", des)
	}
	t.Setenv("HOOKWATCH_TOKEN", "s3cret")
	mustHW(t, "service", "install", "--os", "linux")
	// Enabled: uninstall refuses and names the command to run first.
	wants := filepath.Join(filepath.Dir(unit), "default.target.wants", "hookwatch.service")
	os.MkdirAll(filepath.Dir(wants), 0o755)
	if err := os.Symlink(unit, wants); err != nil {
		t.Fatal(err)
	}
	if _, _, err := hw(t, "", "service", "uninstall", "--os", "linux"); err == nil || !strings.Contains(err.Error(), "systemctl --user disable --now hookwatch") {
		t.Fatalf("service uninstall of an enabled unit: %v", err)
	}
	if !exists(unit) {
		t.Fatalf("refused uninstall removed the unit")
	}
	os.Remove(wants)
	out = mustHW(t, "service", "uninstall", "--os", "linux")
	if exists(unit) || !strings.Contains(out, "systemctl --user stop hookwatch") {
		t.Fatalf("service uninstall (unit still there: %v):\n%s", exists(unit), out)
	}
	if out := mustHW(t, "service", "uninstall", "--os", "linux"); !strings.Contains(out, "nothing to remove") {
		t.Fatalf("second service uninstall:\n%s", out)
	}
}

// TestServiceInstallCollectorRunning: with a collector already running for
// the home (hookwatch demo, a hook or serve started it), the service's
// collector could not start beside it: install says so, and the command it
// gives stops that one first.
func TestServiceInstallCollectorRunning(t *testing.T) {
	e := newTestEnv(t)
	db, err := sqlite.Open(filepath.Join(e.root, "hw.db"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := collector.Start(collector.Options{Config: collector.Config{Store: db, Version: version}, Addr: "127.0.0.1:0", Home: e.hwHome})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop(context.Background())
	out := mustHW(t, "service", "install", "--os", "linux")
	if !strings.Contains(out, "hookwatch stop && systemctl --user daemon-reload && systemctl --user enable --now hookwatch") ||
		!strings.Contains(out, fmt.Sprintf("pid %d", os.Getpid())) {
		t.Errorf("service install with a collector running:\n%s", out)
	}
	out = mustHW(t, "service", "install", "--os", "darwin")
	if !strings.Contains(out, "hookwatch stop && launchctl load -w") {
		t.Errorf("service install --os darwin with a collector running:\n%s", out)
	}
	// Run for another home, the service does not meet this one.
	t.Setenv("HOOKWATCH_HOME", filepath.Join(e.root, "other"))
	if out := mustHW(t, "service", "print", "--os", "linux"); strings.Contains(out, "hookwatch stop") {
		t.Errorf("service print names a stop:\n%s", out)
	}
	mustHW(t, "service", "uninstall", "--os", "linux")
	if out := mustHW(t, "service", "install", "--os", "linux"); strings.Contains(out, "hookwatch stop") {
		t.Errorf("service install for a home with no collector:\n%s", out)
	}
}

func TestServiceInstallLaunchd(t *testing.T) {
	e := newTestEnv(t)
	plist := filepath.Join(e.home, "Library", "LaunchAgents", install.ServiceLabel+".plist")
	out := mustHW(t, "service", "install", "--os", "darwin")
	if !strings.Contains(out, "launchctl load -w "+plist) || !strings.Contains(string(readFile(t, plist)), "<string>"+e.self+"</string>") {
		t.Fatalf("service install --os darwin:\n%s", out)
	}
	out = mustHW(t, "service", "uninstall", "--os", "darwin")
	if exists(plist) || !strings.Contains(out, "launchctl remove "+install.ServiceLabel) {
		t.Fatalf("service uninstall --os darwin:\n%s", out)
	}
}

func TestServiceUsage(t *testing.T) {
	newTestEnv(t)
	f := func(args ...string) {
		t.Helper()
		if _, _, err := hw(t, "", append([]string{"service"}, args...)...); !errors.Is(err, errUsage) {
			t.Fatalf("service %v: %v, want a usage error", args, err)
		}
	}
	f()
	f("start")
	f("install", "extra")
	f("print", "--bogus")
	f("print", "--os", "windows")
	f("--os", "freebsd", "install")
	f("print", "--os", "")
}

// TestServiceForward writes the unit of a forwarder: it runs 'hookwatch
// forward' with the URL and CA file of this shell, and refuses without a
// URL to forward to.
func TestServiceForward(t *testing.T) {
	e := newTestEnv(t)
	t.Setenv("HOOKWATCH_URL", "")
	if _, _, err := hw(t, "", "service", "install", "--os", "linux", "--forward"); err == nil || !strings.Contains(err.Error(), "HOOKWATCH_URL") {
		t.Fatalf("service install --forward without HOOKWATCH_URL: %v", err)
	}
	// The URL install kept does: the forwarder reads it itself, as the
	// hooks do, so the unit does not freeze it.
	kept := filepath.Join(e.hwHome, hook.URLFile)
	if err := os.MkdirAll(e.hwHome, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kept, []byte("https://kept.example.com\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out := mustHW(t, "service", "print", "--os", "linux", "--forward"); !strings.Contains(out, " forward") || strings.Contains(out, "HOOKWATCH_URL=") {
		t.Errorf("service print --forward with the URL kept:\n%s", out)
	}
	os.Remove(kept)
	t.Setenv("HOOKWATCH_URL", "https://hookwatch.example.com")
	t.Setenv("HOOKWATCH_CA_FILE", "/etc/ssl/team-ca.pem")
	t.Setenv("HOOKWATCH_DB", "/not/for/a/forwarder.db")
	t.Setenv("HOOKWATCH_ARCHIVE_RETAIN", "90d")
	out := mustHW(t, "service", "install", "--os", "linux", "--forward")
	if !strings.Contains(out, "HOOKWATCH_ARCHIVE_RETAIN, HOOKWATCH_CA_FILE, HOOKWATCH_HOME, HOOKWATCH_URL") ||
		!strings.Contains(out, "To start the forwarder now and at every login") || strings.Contains(out, "collector now") {
		t.Fatalf("service install --forward output:\n%s", out)
	}
	b := string(readFile(t, filepath.Join(e.home, ".config", "systemd", "user", "hookwatch.service")))
	if !strings.Contains(b, `ExecStart="`+e.self+`" forward`) || !strings.Contains(b, `Environment="HOOKWATCH_URL=https://hookwatch.example.com"`) ||
		!strings.Contains(b, `Environment="HOOKWATCH_CA_FILE=/etc/ssl/team-ca.pem"`) || strings.Contains(b, "HOOKWATCH_DB") ||
		!strings.Contains(b, `Environment="HOOKWATCH_ARCHIVE_RETAIN=90d"`) {
		t.Fatalf("forwarder unit:\n%s", b)
	}
}

// TestServiceAbsolutePaths: a relative path in a setting the unit passes
// on is made absolute from the installing shell's directory: the service
// runs elsewhere (systemd: in the home directory; launchd: in /), where it
// would name other files than the hooks use.
func TestServiceAbsolutePaths(t *testing.T) {
	e := newTestEnv(t)
	t.Chdir(e.project)
	t.Setenv("HOOKWATCH_HOME", "hw")
	t.Setenv("HOOKWATCH_DB", "data/hw.db")
	t.Setenv("HOOKWATCH_AUDIT_DIR", "./audit")
	t.Setenv("HOOKWATCH_WATCH_TRANSCRIPTS", "auto")
	t.Setenv("HOOKWATCH_PRICES", "prices.json")
	t.Setenv("HOOKWATCH_TLS_CERT", "tls/cert.pem")
	got := mustHW(t, "service", "print", "--os", "linux")
	for _, want := range []string{
		`Environment="HOOKWATCH_PRICES=` + filepath.Join(e.project, "prices.json") + `"`,
		`Environment="HOOKWATCH_TLS_CERT=` + filepath.Join(e.project, "tls", "cert.pem") + `"`,
		`Environment="HOOKWATCH_HOME=` + filepath.Join(e.project, "hw") + `"`,
		`Environment="HOOKWATCH_DB=` + filepath.Join(e.project, "data", "hw.db") + `"`,
		`Environment="HOOKWATCH_AUDIT_DIR=` + filepath.Join(e.project, "audit") + `"`,
		`Environment="HOOKWATCH_WATCH_TRANSCRIPTS=auto"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the unit lacks %s:\n%s", want, got)
		}
	}
	t.Setenv("HOOKWATCH_DB", "postgres://hw@db.example/hookwatch")
	if got := mustHW(t, "service", "print", "--os", "linux"); !strings.Contains(got, `Environment="HOOKWATCH_DB=postgres://hw@db.example/hookwatch"`) {
		t.Errorf("a PostgreSQL URL changed in the unit:\n%s", got)
	}
}

// TestServiceRefusesTemporaryBuild: the binary of 'go run' is deleted when
// it exits; a unit naming it would fail at the next start.
func TestServiceRefusesTemporaryBuild(t *testing.T) {
	e := newTestEnv(t)
	for _, tmp := range goRunBuilds(t) {
		executable = func() (string, error) { return tmp, nil }
		_, _, err := hw(t, "", "service", "install", "--os", "linux")
		if err == nil || !strings.Contains(err.Error(), "go install") {
			t.Errorf("service install from the go run build %s: %v, want an error saying to install the binary", tmp, err)
		}
		if exists(filepath.Join(e.home, ".config", "systemd", "user", "hookwatch.service")) {
			t.Fatal("service install wrote a unit naming a temporary build")
		}
	}
}

// goRunBuilds are where 'go run' puts the binary it runs: a temporary
// directory (Go before 1.24), or the build cache, in its default place or
// where GOCACHE (which it sets) names.
func goRunBuilds(t *testing.T) []string {
	cache := t.TempDir()
	t.Setenv("GOCACHE", cache)
	return []string{
		filepath.Join(os.TempDir(), "go-build1234567", "b001", "exe", "hookwatch"),
		filepath.Join(os.TempDir(), "home", ".cache", "go-build", "aa", "aac9fa07510b84c7876435c732c6a993ca92242f858a6404e005b19f89515834-d", "hookwatch"),
		filepath.Join(cache, "3f", "3f9b2c0e5d7a41b8c6e2f0a9d8b7c6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c9-d", "hookwatch"),
	}
}

// TestServiceArgumentOrder: the flags may come before the action or after
// it; print --forward, like install --forward, needs the remote URL rather
// than printing a forwarder with nowhere to send.
func TestServiceArgumentOrder(t *testing.T) {
	newTestEnv(t)
	after := mustHW(t, "service", "print", "--os", "darwin")
	if before := mustHW(t, "service", "--os", "darwin", "print"); before != after || !strings.Contains(before, "<plist") {
		t.Errorf("service --os darwin print:\n%s\nwant:\n%s", before, after)
	}
	for _, args := range [][]string{{"service", "--os", "linux"}, {"service", "print", "extra"}, {"service", "--os", "linux", "print", "extra"}} {
		if out, _, err := hw(t, "", args...); !errors.Is(err, errUsage) || out != "" {
			t.Errorf("hookwatch %s: %v, stdout %q; want a usage error and nothing on stdout", strings.Join(args, " "), err, out)
		}
	}
	t.Setenv("HOOKWATCH_URL", "")
	if out, _, err := hw(t, "", "service", "print", "--forward"); !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "HOOKWATCH_URL") || out != "" {
		t.Errorf("service print --forward without HOOKWATCH_URL: %v, stdout %q; want a usage error naming HOOKWATCH_URL", err, out)
	}
}

// unsetenv unsets k for the rest of the test: a variable set to the empty
// string is one service install takes as set, to drop it from the unit.
func unsetenv(t *testing.T, k string) {
	t.Helper()
	t.Setenv(k, "") // restores k when the test ends
	os.Unsetenv(k)
}

// TestServiceInstallKeepsSettings: service install run again, as after an
// upgrade, from a shell that no longer sets the settings the unit was
// installed with, keeps them and lists them, a secret by name only; the
// shell's value of a setting replaces the unit's, and one set to the empty
// string drops it. service print writes what install would, and uninstall
// removes the unit it rewrote.
func TestServiceInstallKeepsSettings(t *testing.T) {
	for _, goos := range []string{"linux", "darwin"} {
		t.Run(goos, func(t *testing.T) {
			e := newTestEnv(t)
			unit := filepath.Join(e.home, ".config", "systemd", "user", "hookwatch.service")
			if goos == "darwin" {
				unit = filepath.Join(e.home, "Library", "LaunchAgents", install.ServiceLabel+".plist")
			}
			db := filepath.Join(e.project, "rel.db")
			t.Setenv("HOOKWATCH_DB", "rel.db")
			t.Setenv("HOOKWATCH_TOKEN", "s3cret")
			t.Setenv("HOOKWATCH_OTLP_HEADERS", "authorization=Bearer%20otlp-s3cret")
			t.Setenv("HOOKWATCH_AUDIT_DIR", "/var/audit")
			mustHW(t, "service", "install", "--os", goos)
			installed := readFile(t, unit)

			for _, k := range []string{"HOOKWATCH_DB", "HOOKWATCH_TOKEN", "HOOKWATCH_OTLP_HEADERS", "HOOKWATCH_AUDIT_DIR"} {
				unsetenv(t, k)
			}
			t.Chdir(e.root) // where rel.db would name another file
			out := mustHW(t, "service", "install", "--os", goos)
			if got := readFile(t, unit); string(got) != string(installed) {
				t.Fatalf("service install again changed the unit:\n%s\nwant:\n%s\noutput:\n%s", got, installed, out)
			}
			for _, want := range []string{"already up to date", "HOOKWATCH_DB=" + db + "\n", "HOOKWATCH_AUDIT_DIR=/var/audit\n", "HOOKWATCH_TOKEN (a secret", "HOOKWATCH_OTLP_HEADERS (a secret"} {
				if !strings.Contains(out, want) {
					t.Errorf("service install again does not say %q:\n%s", want, out)
				}
			}
			if strings.Contains(out, "s3cret") {
				t.Errorf("service install printed a secret:\n%s", out)
			}
			if got := mustHW(t, "service", "print", "--os", goos); got != string(installed) {
				t.Errorf("service print:\n%s\nwant what install wrote:\n%s", got, installed)
			}
			// An upgrade that moved the binary keeps the settings too.
			moved := filepath.Join(e.root, "usr", "bin", "hookwatch")
			executable = func() (string, error) { return moved, nil }
			out = mustHW(t, "service", "install", "--os", goos)
			if b := string(readFile(t, unit)); !strings.Contains(out, "It runs "+moved+", instead of "+e.self+".") || !strings.Contains(b, moved) || !strings.Contains(b, db) {
				t.Errorf("service install from another binary:\n%s\nunit:\n%s", out, b)
			}

			// The shell's value wins; the empty string drops the unit's.
			t.Setenv("HOOKWATCH_AUDIT_DIR", "/srv/audit")
			t.Setenv("HOOKWATCH_DB", "")
			out = mustHW(t, "service", "install", "--os", goos)
			b := string(readFile(t, unit))
			if !strings.Contains(b, "/srv/audit") || strings.Contains(b, "/var/audit") || strings.Contains(b, "HOOKWATCH_DB") || !strings.Contains(b, "s3cret") {
				t.Errorf("unit after HOOKWATCH_AUDIT_DIR=/srv/audit HOOKWATCH_DB= service install:\n%s", b)
			}
			if !strings.Contains(out, "It drops HOOKWATCH_DB, set to the empty string in this shell.") || strings.Contains(out, "HOOKWATCH_DB=") {
				t.Errorf("service install dropping HOOKWATCH_DB:\n%s", out)
			}
			if got := mustHW(t, "service", "print", "--os", goos); got != b {
				t.Errorf("service print:\n%s\nwant what install wrote:\n%s", got, b)
			}

			out = mustHW(t, "service", "uninstall", "--os", goos)
			if exists(unit) || !strings.Contains(out, "Removed "+unit) {
				t.Fatalf("service uninstall (unit still there: %v):\n%s", exists(unit), out)
			}
		})
	}
}

// TestServiceInstallKeepsAddress: an address the unit listens on, set by
// HOOKWATCH_ADDR once, is not replaced by the one of HOOKWATCH_URL; the
// output says where the hooks post instead.
func TestServiceInstallKeepsAddress(t *testing.T) {
	e := newTestEnv(t)
	unit := filepath.Join(e.home, ".config", "systemd", "user", "hookwatch.service")
	t.Setenv("HOOKWATCH_ADDR", "0.0.0.0:7999")
	mustHW(t, "service", "install", "--os", "linux")
	unsetenv(t, "HOOKWATCH_ADDR")
	out := mustHW(t, "service", "install", "--os", "linux")
	if b := string(readFile(t, unit)); !strings.Contains(b, `Environment="HOOKWATCH_ADDR=0.0.0.0:7999"`) {
		t.Fatalf("service install again dropped HOOKWATCH_ADDR:\n%s", b)
	}
	addr := strings.TrimPrefix(os.Getenv("HOOKWATCH_URL"), "http://")
	if !strings.Contains(out, "HOOKWATCH_ADDR=0.0.0.0:7999\n") || !strings.Contains(out, "HOOKWATCH_ADDR="+addr+" hookwatch service install") {
		t.Errorf("service install keeping an address HOOKWATCH_URL does not point at:\n%s", out)
	}
	// Dropped, the address is HOOKWATCH_URL's again.
	t.Setenv("HOOKWATCH_ADDR", "")
	mustHW(t, "service", "install", "--os", "linux")
	if b := string(readFile(t, unit)); !strings.Contains(b, `Environment="HOOKWATCH_ADDR=`+addr+`"`) {
		t.Fatalf("HOOKWATCH_ADDR= service install:\n%s", b)
	}
}

// TestServiceInstallKeepsHandAdded: a variable added to the unit by hand
// is kept as it is, the shell's value of it notwithstanding: it is no
// setting of hookwatch's that the shell passes on.
func TestServiceInstallKeepsHandAdded(t *testing.T) {
	e := newTestEnv(t)
	unit := filepath.Join(e.home, ".config", "systemd", "user", "hookwatch.service")
	mustHW(t, "service", "install", "--os", "linux")
	b := strings.Replace(string(readFile(t, unit)), "Restart=", "Environment=HTTPS_PROXY=http://proxy:3128 \"NO_PROXY=a b\"\nRestart=", 1)
	os.WriteFile(unit, []byte(b), 0o600)
	t.Setenv("HTTPS_PROXY", "http://other:8080")
	out := mustHW(t, "service", "install", "--os", "linux")
	b = string(readFile(t, unit))
	if !strings.Contains(b, `Environment="HTTPS_PROXY=http://proxy:3128"`) || !strings.Contains(b, `Environment="NO_PROXY=a b"`) || strings.Contains(b, "other") {
		t.Fatalf("unit after service install again:\n%s", b)
	}
	if !strings.Contains(out, "HTTPS_PROXY=http://proxy:3128\n") {
		t.Errorf("service install does not list the variable it keeps:\n%s", out)
	}
}

// TestServiceInstallSwitchCommand: a forwarder installed over a collector
// keeps none of its settings: the collector's HOOKWATCH_TOKEN, which the
// forwarder would send to the remote collector, least of all. Run again
// without --forward, install keeps the forwarder, as it keeps its settings:
// a collector in its place would keep the events meant for the remote one.
func TestServiceInstallSwitchCommand(t *testing.T) {
	e := newTestEnv(t)
	unit := filepath.Join(e.home, ".config", "systemd", "user", "hookwatch.service")
	t.Setenv("HOOKWATCH_TOKEN", "local-admin")
	mustHW(t, "service", "install", "--os", "linux")
	unsetenv(t, "HOOKWATCH_TOKEN")
	t.Setenv("HOOKWATCH_URL", "https://hookwatch.example.com")
	out := mustHW(t, "service", "install", "--os", "linux", "--forward")
	if b := string(readFile(t, unit)); strings.Contains(b, "local-admin") || !strings.Contains(b, "forward") {
		t.Fatalf("forwarder unit over a collector's:\n%s", b)
	}
	if !strings.Contains(out, "keeps none of the settings of the installed unit, which ran 'hookwatch serve'") || !strings.Contains(out, "HOOKWATCH_TOKEN") {
		t.Errorf("service install --forward over a collector:\n%s", out)
	}
	// Run again without HOOKWATCH_URL, the forwarder keeps its URL; and
	// without --forward, it stays a forwarder.
	unsetenv(t, "HOOKWATCH_URL")
	for _, args := range [][]string{{"--forward"}, nil} {
		out := mustHW(t, append([]string{"service", "install", "--os", "linux"}, args...)...)
		if !strings.Contains(out, "already up to date") || !strings.Contains(out, "HOOKWATCH_URL=https://hookwatch.example.com\n") {
			t.Errorf("service install %v again:\n%s", args, out)
		}
		if args == nil && !strings.Contains(out, "It keeps running 'hookwatch forward'") {
			t.Errorf("service install without --forward over a forwarder does not say it keeps it:\n%s", out)
		}
	}
	if got := mustHW(t, "service", "print", "--os", "linux"); got != string(readFile(t, unit)) {
		t.Errorf("service print over a forwarder:\n%s", got)
	}
	out = mustHW(t, "service", "install", "--os", "linux", "--forward=false")
	if b := string(readFile(t, unit)); !strings.Contains(b, `" serve`) || strings.Contains(b, "HOOKWATCH_URL") || !strings.Contains(out, "which ran 'hookwatch forward'") {
		t.Errorf("service install --forward=false over a forwarder:\n%s\nunit:\n%s", out, b)
	}
}

// TestServiceInstallUnreadableUnit: a unit service install cannot read
// back whole (written by someone else, edited beyond its settings, too
// large) is reported and left as it is, by print too; uninstall still
// removes it.
func TestServiceInstallUnreadableUnit(t *testing.T) {
	e := newTestEnv(t)
	unit := filepath.Join(e.home, ".config", "systemd", "user", "hookwatch.service")
	mustHW(t, "service", "install", "--os", "linux")
	written := string(readFile(t, unit))
	for _, c := range []struct{ content, want string }{
		{strings.Replace(written, "Restart=", "MemoryMax=1G\nRestart=", 1), `"MemoryMax=1G" is not a setting service install writes`},
		{strings.Replace(written, `" serve`, `" serve --retain 720h`, 1), "not <binary> serve"},
		{strings.Replace(written, "# Written by hookwatch service install.\n", "", 1), "not written by hookwatch service install"},
		{strings.Replace(written, "Restart=", "Environment=\"HOOKWATCH_DB=%h/hw.db\"\nRestart=", 1), "specifier (%h)"},
		{written + "#" + strings.Repeat("x", install.MaxServiceUnitSize) + "\n", "larger than"},
	} {
		if err := os.WriteFile(unit, []byte(c.content), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, action := range []string{"install", "print"} {
			out, _, err := hw(t, "", "service", action, "--os", "linux")
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), unit) || !strings.Contains(err.Error(), "hookwatch service uninstall") {
				t.Errorf("service %s of a unit it cannot read: %v, want an error saying %q\nstdout:\n%s", action, err, c.want, out)
			}
		}
		if got := string(readFile(t, unit)); got != c.content {
			t.Fatalf("service install changed a unit it cannot read:\n%s", got)
		}
	}
	os.Remove(unit)
	os.Mkdir(unit, 0o755)
	if _, _, err := hw(t, "", "service", "install", "--os", "linux"); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("service install over a directory: %v", err)
	}
	os.Remove(unit)

	os.WriteFile(unit, []byte("[Service]\nExecStart=/usr/bin/true\n"), 0o600)
	if out := mustHW(t, "service", "uninstall", "--os", "linux"); exists(unit) || !strings.Contains(out, "Removed") {
		t.Fatalf("service uninstall of a unit install cannot read (still there: %v):\n%s", exists(unit), out)
	}
}

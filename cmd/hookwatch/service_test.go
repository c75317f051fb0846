package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookwatch/hookwatch/install"
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
	got := mustHW(t, "service", "print", "--os", "linux")
	for _, want := range []string{`Environment="HOOKWATCH_OTLP_ENDPOINT=http://127.0.0.1:4318"`, `Environment="HOOKWATCH_AUDIT_DIR=/var/audit"`, `Environment="HOOKWATCH_ADDR=127.0.0.1:7999"`} {
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
	t.Setenv("HOOKWATCH_URL", "https://hookwatch.example.com")
	t.Setenv("HOOKWATCH_CA_FILE", "/etc/ssl/team-ca.pem")
	t.Setenv("HOOKWATCH_DB", "/not/for/a/forwarder.db")
	out := mustHW(t, "service", "install", "--os", "linux", "--forward")
	if !strings.Contains(out, "HOOKWATCH_CA_FILE, HOOKWATCH_HOME, HOOKWATCH_URL") {
		t.Fatalf("service install --forward output:\n%s", out)
	}
	b := string(readFile(t, filepath.Join(e.home, ".config", "systemd", "user", "hookwatch.service")))
	if !strings.Contains(b, `ExecStart="`+e.self+`" forward`) || !strings.Contains(b, `Environment="HOOKWATCH_URL=https://hookwatch.example.com"`) ||
		!strings.Contains(b, `Environment="HOOKWATCH_CA_FILE=/etc/ssl/team-ca.pem"`) || strings.Contains(b, "HOOKWATCH_DB") {
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
	got := mustHW(t, "service", "print", "--os", "linux")
	for _, want := range []string{
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
	tmp := filepath.Join(os.TempDir(), "go-build1234567", "b001", "exe", "hookwatch")
	executable = func() (string, error) { return tmp, nil }
	_, _, err := hw(t, "", "service", "install", "--os", "linux")
	if err == nil || !strings.Contains(err.Error(), "go install") {
		t.Fatalf("service install from a go run build: %v, want an error saying to install the binary", err)
	}
	if exists(filepath.Join(e.home, ".config", "systemd", "user", "hookwatch.service")) {
		t.Fatal("service install wrote a unit naming a temporary build")
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

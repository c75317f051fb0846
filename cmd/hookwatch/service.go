package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/hookwatch/hookwatch/claudecode"
	"github.com/hookwatch/hookwatch/hook"
	"github.com/hookwatch/hookwatch/install"
	"github.com/hookwatch/hookwatch/store/postgres"
)

func init() {
	register(command{
		name:    "service",
		summary: "install, remove or print the user service that keeps the collector running",
		run:     runService,
	})
}

// serviceEnv are the variables the service inherits from the shell that
// installs it, when set there: every one serve reads (serveEnv), so that the
// collector sees what the user configured for it.
var serviceEnv = serveEnv

// forwarderEnv are those of a forwarder's service (--forward): where to
// send, with what to trust. The token stays in $HOOKWATCH_HOME/token
// unless HOOKWATCH_TOKEN is set.
var forwarderEnv = []string{"HOOKWATCH_CA_FILE", "HOOKWATCH_HOME", "HOOKWATCH_TOKEN", "HOOKWATCH_URL"}

const serviceSynopsis = `service install|uninstall|print [--os linux|darwin] [--forward]

Writes (install), removes (uninstall) or prints (print) the user service that
runs 'hookwatch serve' at every login — or 'hookwatch forward' with --forward —
with the HOOKWATCH_* settings of this shell: a systemd user unit,
~/.config/systemd/user/hookwatch.service, or a launchd agent,
~/Library/LaunchAgents/` + install.ServiceLabel + `.plist. It prints the systemctl or
launchctl commands that start or stop it, and runs none of them itself.

Flags:`

// serviceExamples ends service --help.
const serviceExamples = `
Examples:
  hookwatch service install              # then run the systemctl command it prints
  hookwatch service print --os darwin    # the launchd agent, written nowhere
  HOOKWATCH_URL=https://hookwatch.example.com hookwatch service install --forward
`

// runService is `hookwatch service`. It writes or removes the unit file and
// prints the systemctl or launchctl commands to run: starting a long-lived
// process is the user's call, so it never runs them itself.
func runService(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("service", serviceSynopsis, stdout, stderr)
	goos := fs.String("os", runtime.GOOS, "service manager to write for: linux (systemd user unit) or darwin (launchd agent)")
	fwd := fs.Bool("forward", false, "run 'hookwatch forward' instead of the collector: for a machine whose hooks send to a remote https:// collector (HOOKWATCH_URL, which must be set)")
	usageTrailer(fs, serviceExamples)
	// The flags may come before the action too: service --os darwin print.
	rest, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(rest) == 0 {
		fs.Usage()
		return fmt.Errorf("%w: missing action: install, uninstall or print", errUsage)
	}
	action := rest[0]
	if slices.Contains(helpArgs[:], action) {
		printHelp(fs)
		return nil
	}
	if *goos != "linux" && *goos != "darwin" && flagSet(fs, "os") {
		return fmt.Errorf("%w: --os takes linux or darwin, got %q; elsewhere, run 'hookwatch serve' from your own init system", errUsage, *goos)
	}
	if len(rest) > 1 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, rest[1])
	}
	self, _, err := binaries()
	if err != nil {
		return err
	}
	if action == "install" && isTemporaryBuild(self) {
		return fmt.Errorf("%s is a temporary build of 'go run', deleted when it exits: install hookwatch (go install ./cmd/hookwatch), then run that binary's 'hookwatch service install'", self)
	}
	names, unit := serviceEnv, install.ServiceUnit
	if *fwd {
		names, unit = forwarderEnv, install.ForwarderUnit
		if err := hook.CheckURL(os.Getenv("HOOKWATCH_URL")); action != "uninstall" && err != nil {
			return fmt.Errorf("%w: --forward needs HOOKWATCH_URL set to the remote collector's URL: %v", errUsage, err)
		}
	}
	env := map[string]string{}
	for _, k := range names {
		if v := os.Getenv(k); v != "" {
			env[k] = v
		}
	}
	absolutePaths(env)
	if !*fwd && env["HOOKWATCH_ADDR"] == "" {
		// The hooks post to HOOKWATCH_URL: a collector on this machine
		// listens there, not on serve's default address.
		if addr, err := localListenAddr(os.Getenv("HOOKWATCH_URL")); err == nil {
			env["HOOKWATCH_ADDR"] = addr
		}
	}
	rel, content := unit(*goos, self, env)
	if rel == "" {
		return fmt.Errorf("no service manager support for %s: run 'hookwatch serve' from your own init system", *goos)
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return fmt.Errorf("cannot find the home directory: %w", err)
	}
	path := filepath.Join(home, filepath.FromSlash(rel))
	switch action {
	case "print":
		_, err := stdout.Write(content)
		return err
	case "install":
		return serviceInstall(stdout, *goos, path, content, names, env)
	case "uninstall":
		return serviceUninstall(stdout, *goos, home, path)
	}
	fs.Usage()
	return fmt.Errorf("%w: unknown action %q: want install, uninstall or print", errUsage, action)
}

// pathEnv are the settings of serviceEnv and forwarderEnv that name a file
// or a directory.
var pathEnv = []string{"HOOKWATCH_AUDIT_DIR", "HOOKWATCH_CA_FILE", "HOOKWATCH_CODEX_ROLLOUTS", "HOOKWATCH_DB", "HOOKWATCH_HOME", "HOOKWATCH_WATCH_TRANSCRIPTS"}

// absolutePaths makes the relative paths of env's pathEnv absolute, from
// the working directory: the service runs in another (systemd: the home
// directory; launchd: /), where they would name other files than the
// shell's hooks use. Keywords (auto, off) and database URLs are kept.
func absolutePaths(env map[string]string) {
	for _, k := range pathEnv {
		v, ok := env[k]
		if !ok || filepath.IsAbs(v) || v == "auto" || v == "off" || postgres.IsURL(v) {
			continue
		}
		if abs, err := filepath.Abs(v); err == nil {
			env[k] = abs
		}
	}
}

// isTemporaryBuild reports whether path is where 'go run' builds the
// binary it runs: <temp>/go-build…/…/exe/<name>, removed when it exits.
func isTemporaryBuild(path string) bool {
	dir := filepath.Dir(path)
	if filepath.Base(dir) != "exe" {
		return false
	}
	for d := filepath.Dir(dir); d != filepath.Dir(d); d = filepath.Dir(d) {
		if strings.HasPrefix(filepath.Base(d), "go-build") {
			return true
		}
	}
	return false
}

func serviceInstall(w io.Writer, goos, path string, content []byte, names []string, env map[string]string) error {
	old, err := os.ReadFile(path)
	existed := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("cannot read %s: %w", path, err)
	}
	var b strings.Builder
	if existed && bytes.Equal(old, content) {
		fmt.Fprintf(&b, "%s is already up to date.\n", path)
	} else {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("cannot create %s: %w", filepath.Dir(path), err)
		}
		// 0600: the unit may carry HOOKWATCH_TOKEN.
		if err := os.WriteFile(path, content, 0o600); err != nil {
			return fmt.Errorf("cannot write %s: %w", path, err)
		}
		if err := os.Chmod(path, 0o600); err != nil {
			return fmt.Errorf("cannot write %s: %w", path, err)
		}
		verb := "Wrote"
		if existed {
			verb = "Updated"
		}
		fmt.Fprintf(&b, "%s %s.\n", verb, path)
	}
	if len(env) > 0 {
		var passed []string
		for _, k := range names {
			if _, ok := env[k]; ok {
				passed = append(passed, k)
			}
		}
		fmt.Fprintf(&b, "It passes %s from this shell to the service.\n", strings.Join(passed, ", "))
	}
	b.WriteString("\nTo start the collector now and at every login, run:\n\n")
	switch goos {
	case "linux":
		if existed {
			b.WriteString("  systemctl --user daemon-reload && systemctl --user enable hookwatch && systemctl --user restart hookwatch\n")
		} else {
			b.WriteString("  systemctl --user daemon-reload && systemctl --user enable --now hookwatch\n")
		}
		b.WriteString("\nTo keep it running while you are logged out: loginctl enable-linger \"$USER\"\n")
		b.WriteString("Its log: journalctl --user -u hookwatch\n")
	case "darwin":
		if existed {
			fmt.Fprintf(&b, "  launchctl unload %s; launchctl load -w %s\n", claudecode.ShellQuote(path), claudecode.ShellQuote(path))
		} else {
			fmt.Fprintf(&b, "  launchctl load -w %s\n", claudecode.ShellQuote(path))
		}
	}
	_, err = io.WriteString(w, b.String())
	return err
}

func serviceUninstall(w io.Writer, goos, home, path string) error {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(w, "%s does not exist: nothing to remove.\n", path)
		return nil
	}
	if goos == "linux" {
		// Removing the unit of an enabled service leaves a dangling link
		// that systemctl can no longer disable by name.
		wants := filepath.Join(home, ".config", "systemd", "user", "default.target.wants", "hookwatch.service")
		if _, err := os.Lstat(wants); err == nil {
			return fmt.Errorf("the service is enabled: run 'systemctl --user disable --now hookwatch' first, then 'hookwatch service uninstall' again")
		}
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("cannot remove %s: %w", path, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Removed %s.\n\nIf the collector still runs, stop it with:\n\n", path)
	switch goos {
	case "linux":
		b.WriteString("  systemctl --user stop hookwatch; systemctl --user daemon-reload\n")
	case "darwin":
		fmt.Fprintf(&b, "  launchctl remove %s\n", install.ServiceLabel)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

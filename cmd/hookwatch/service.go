package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/hookwatch/hookwatch/claudecode"
	"github.com/hookwatch/hookwatch/hook"
	"github.com/hookwatch/hookwatch/install"
	"github.com/hookwatch/hookwatch/internal/atomicfile"
	"github.com/hookwatch/hookwatch/internal/regfile"
	"github.com/hookwatch/hookwatch/redact"
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
// send, with what to trust, how long the compaction archive is kept. The
// token stays in $HOOKWATCH_HOME/token unless HOOKWATCH_TOKEN is set.
var forwarderEnv = []string{"HOOKWATCH_ARCHIVE_RETAIN", "HOOKWATCH_CA_FILE", "HOOKWATCH_HOME", "HOOKWATCH_TOKEN", "HOOKWATCH_URL"}

const serviceSynopsis = `service install|uninstall|print [--os linux|darwin] [--forward]

Writes (install), removes (uninstall) or prints (print) the user service that
runs 'hookwatch serve' at every login — or 'hookwatch forward' with --forward —
with the HOOKWATCH_* settings of this shell: a systemd user unit,
~/.config/systemd/user/hookwatch.service, or a launchd agent,
~/Library/LaunchAgents/` + install.ServiceLabel + `.plist, which appends the output to the
home's ` + hook.ServeLog + ` (` + hook.ForwardLog + `), as a hook does. It prints the systemctl or
launchctl commands that start or stop it, and runs none of them itself; when a
collector runs for the home already (one hookwatch demo or a hook started),
the service's could not start beside it, and the command begins with
'hookwatch stop'.

Run again (after an upgrade, say), install keeps the settings of the unit
installed that this shell does not set, and lists them (a secret by name only);
a setting this shell sets replaces the unit's, and one set to the empty string
drops it, as serve takes an empty value for unset: HOOKWATCH_DB= hookwatch
service install. Variables added to the unit by hand are kept as they are. It
keeps a forwarder unless --forward=false; of a unit that runs the other command
(serve, forward) it keeps no setting. A unit it cannot read back — not written
by service install, or edited beyond its settings — it leaves as it is and
reports: move it away or uninstall it first. print writes what install would.

Flags:`

// serviceExamples ends service --help.
const serviceExamples = `
Examples:
  hookwatch service install              # then run the systemctl command it prints
  hookwatch service print --os darwin    # the launchd agent, written nowhere
  HOOKWATCH_DB= hookwatch service install  # again, without the HOOKWATCH_DB the unit had
  hookwatch service install --forward     # to the URL 'hookwatch install --url' kept
`

// serviceActions are the actions service takes, its one argument.
var serviceActions = [...]string{"install", "uninstall", "print"}

// serviceFlagSet defines service's flags, --os and --forward, which come
// before or after its action: the one definition runService parses and the
// docs' command lines are checked against.
func serviceFlagSet(stdout, stderr io.Writer) (fs *flag.FlagSet, goos *string, fwd *bool) {
	fs = newFlagSet("service", serviceSynopsis, stdout, stderr)
	goos = fs.String("os", runtime.GOOS, "service manager to write for: linux (systemd user unit) or darwin (launchd agent)")
	fwd = fs.Bool("forward", false, "run 'hookwatch forward' instead of the collector: for a machine whose hooks send to a remote https:// collector (HOOKWATCH_URL, set here or kept from the forwarder installed, else the URL 'hookwatch install --url' kept, which the forwarder reads itself)")
	usageTrailer(fs, serviceExamples)
	return fs, goos, fwd
}

// runService is `hookwatch service`. It writes or removes the unit file and
// prints the systemctl or launchctl commands to run: starting a long-lived
// process is the user's call, so it never runs them itself. install and
// print read the installed unit back first, to keep its settings: the
// shell it is run from again, after an upgrade, may no longer set them.
func runService(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs, goos, fwd := serviceFlagSet(stdout, stderr)
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
	if !slices.Contains(serviceActions[:], action) {
		fs.Usage()
		return fmt.Errorf("%w: unknown action %q: want install, uninstall or print", errUsage, action)
	}
	self, _, err := binaries()
	if err != nil {
		return err
	}
	if action == "install" && install.IsTemporaryBuild(self) {
		return fmt.Errorf("%s is a build of 'go run', deleted when it exits or when the build cache is trimmed: install hookwatch (go install ./cmd/hookwatch), then run that binary's 'hookwatch service install'", self)
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return fmt.Errorf("cannot find the home directory: %w", err)
	}
	// A collector and a forwarder share the one path.
	rel, _ := install.ServiceUnit(*goos, self, nil)
	if rel == "" {
		return fmt.Errorf("no service manager support for %s: run 'hookwatch serve' from your own init system", *goos)
	}
	path := filepath.Join(home, filepath.FromSlash(rel))
	if action == "uninstall" {
		// Whatever the unit holds: uninstall reads none of it.
		return serviceUninstall(stdout, *goos, home, path)
	}
	old, installed, err := readInstalledService(*goos, path)
	if err != nil {
		return err
	}
	var notes []string
	if installed != nil && installed.Command == "forward" && !flagSet(fs, "forward") {
		// Run again without --forward, install keeps the forwarder: a
		// collector in its place would keep the events it should send.
		*fwd = true
		notes = append(notes, "It keeps running 'hookwatch forward', as the installed unit does: --forward=false installs the collector instead.")
	}
	names, unit, command := serviceEnv, install.ServiceUnit, "serve"
	if *fwd {
		names, unit, command = forwarderEnv, install.ForwarderUnit, "forward"
	}
	derived := map[string]string{}
	// Where the hooks send: HOOKWATCH_URL, else the URL install kept.
	hookURL, urlSrc := hook.LookupURL(os.Getenv, hook.Home(os.Getenv))
	if urlSrc == hook.URLDefault {
		hookURL = ""
	}
	addr, urlErr := localListenAddr(hookURL)
	if !*fwd && urlErr == nil {
		// The hooks post to that URL: a collector on this machine
		// listens there, not on serve's default address.
		derived["HOOKWATCH_ADDR"] = addr
	}
	set := serviceSettingsOf(command, names, installed, os.LookupEnv, derived)
	set.notes = notes
	if *fwd {
		// Without HOOKWATCH_URL in the unit, the forwarder reads the URL
		// install kept, as the hooks do.
		if err := hook.CheckURL(cmp.Or(set.env["HOOKWATCH_URL"], hookURL)); err != nil {
			return fmt.Errorf("%w: --forward needs the remote collector's URL, set in HOOKWATCH_URL or kept by 'hookwatch install --url': %v", errUsage, err)
		}
	} else if urlErr == nil && slices.Contains(set.kept, "HOOKWATCH_ADDR") && !install.ListensAt(set.env["HOOKWATCH_ADDR"], addr) {
		set.notes = append(set.notes, fmt.Sprintf("The collector keeps listening on %s, not at HOOKWATCH_URL: HOOKWATCH_ADDR=%s hookwatch service install moves it there.", set.env["HOOKWATCH_ADDR"], addr))
	}
	_, content := unit(*goos, self, set.env)
	if action == "print" {
		_, err := stdout.Write(content)
		return err
	}
	return serviceInstall(stdout, *goos, path, old, installed, self, content, set)
}

// serviceSettings is the environment of the unit service install writes,
// and where its settings come from.
type serviceSettings struct {
	// command is what the unit runs: serve (a collector) or forward (a
	// forwarder).
	command string
	env     map[string]string
	// passed are set in this shell; kept are the installed unit's, this
	// shell not setting them; dropped are the installed unit's, set to
	// the empty string in this shell; added are the installed unit's
	// variables that are no setting of hookwatch.
	passed, kept, dropped, added []string
	// other is the command the installed unit runs when it is not this
	// unit's (serve, forward): none of its settings, left, are kept, a
	// collector's HOOKWATCH_TOKEN not being a forwarder's.
	other string
	left  []string
	// notes are said after the settings.
	notes []string
}

// serviceSettingsOf merges the environment of a unit running command:
// the settings of names that lookup (os.LookupEnv) finds set, a relative
// path made absolute, and those of the installed unit, when it runs the
// same command, that lookup does not find; then, of the settings neither
// sets, those of derived, as from this shell. A setting set to the empty
// string, which serve and forward take for unset, drops the unit's. A
// variable of the unit that is none of names, added by hand, is kept as
// it is: the shell's PATH or HTTPS_PROXY is not meant for the service.
func serviceSettingsOf(command string, names []string, installed *install.InstalledService, lookup func(string) (string, bool), derived map[string]string) serviceSettings {
	s := serviceSettings{command: command, env: map[string]string{}}
	var unit map[string]string
	if installed != nil {
		if installed.Command == command {
			unit = installed.Env
		} else if len(installed.Env) > 0 {
			s.other = installed.Command
			s.left = slices.Sorted(maps.Keys(installed.Env))
		}
	}
	shell := map[string]string{}
	for _, k := range names {
		if v, ok := lookup(k); ok && v != "" {
			shell[k] = v
		}
	}
	absolutePaths(shell)
	for _, k := range names {
		v, set := lookup(k)
		was, had := unit[k]
		switch {
		case v != "":
			s.env[k] = shell[k]
			s.passed = append(s.passed, k)
		case derived[k] != "" && (set || !had):
			s.env[k] = derived[k]
			s.passed = append(s.passed, k)
		case had && set:
			s.dropped = append(s.dropped, k)
		case had:
			s.env[k] = was
			s.kept = append(s.kept, k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(unit)) {
		if !slices.Contains(names, k) {
			s.env[k] = unit[k]
			s.added = append(s.added, k)
		}
	}
	return s
}

// readInstalledService reads the unit at path that service install wrote
// for goos: its content, and what it runs; nil and nil when there is none.
// A unit it cannot read back whole is an error, never one to write over:
// its settings would be lost.
func readInstalledService(goos, path string) ([]byte, *install.InstalledService, error) {
	b, err := regfile.ReadHead(path, install.MaxServiceUnitSize+1)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil, nil
	case errors.Is(err, regfile.ErrNotRegular):
		return nil, nil, fmt.Errorf("%s is not a regular file: move it away, then run service install again", path)
	case err != nil:
		return nil, nil, fmt.Errorf("cannot read %s: %w", path, err)
	}
	s, err := install.ReadServiceUnit(goos, b)
	if err != nil {
		hint := ""
		if goos == "linux" {
			hint = " (settings of your own belong in a drop-in: systemctl --user edit hookwatch)"
		}
		return nil, nil, fmt.Errorf("%s: %w: service install writes over no unit whose settings it cannot keep; move this one away, or remove it with 'hookwatch service uninstall', then install again%s", path, err, hint)
	}
	return b, &s, nil
}

// secretWords mark the name of a variable whose value service install
// never prints: HOOKWATCH_TOKEN, HOOKWATCH_OTLP_HEADERS and their kin.
var secretWords = []string{"TOKEN", "SECRET", "PASS", "KEY", "AUTH", "HEADERS", "CREDENTIAL", "COOKIE"}

// shownSetting is how service install lists a setting it keeps: k=v, the
// secrets redact finds in v replaced (a database URL's password), or k
// alone when its name says it holds a secret.
func shownSetting(k, v string) string {
	for _, w := range secretWords {
		if strings.Contains(strings.ToUpper(k), w) {
			return k + " (a secret, not shown)"
		}
	}
	v, _ = redact.String(v)
	return k + "=" + v
}

// pathEnv are the settings of serviceEnv and forwarderEnv that name a file
// or a directory.
var pathEnv = []string{"HOOKWATCH_AUDIT_DIR", "HOOKWATCH_CA_FILE", "HOOKWATCH_CODEX_ROLLOUTS", "HOOKWATCH_DB", "HOOKWATCH_HOME", "HOOKWATCH_OTLP_CA_FILE", "HOOKWATCH_PRICES", "HOOKWATCH_TLS_CERT", "HOOKWATCH_TLS_KEY", "HOOKWATCH_WATCH_TRANSCRIPTS"}

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

// serviceInstall writes content to path over old, the unit installed
// there (nil for none), and says what it passes, keeps and drops of the
// settings.
func serviceInstall(w io.Writer, goos, path string, old []byte, installed *install.InstalledService, self string, content []byte, set serviceSettings) error {
	existed := installed != nil
	var b strings.Builder
	if existed && bytes.Equal(old, content) {
		fmt.Fprintf(&b, "%s is already up to date.\n", path)
	} else {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("cannot create %s: %w", filepath.Dir(path), err)
		}
		// 0600 from its first byte, a unit of another mode replaced
		// whole: the unit may carry HOOKWATCH_TOKEN.
		if err := atomicfile.Write(path, content, atomicfile.Options{}); err != nil {
			return fmt.Errorf("cannot write %s: %w", path, err)
		}
		verb := "Wrote"
		if existed {
			verb = "Updated"
		}
		fmt.Fprintf(&b, "%s %s.\n", verb, path)
	}
	if existed && installed.Binary != self {
		fmt.Fprintf(&b, "It runs %s, instead of %s.\n", self, installed.Binary)
	}
	if len(set.passed) > 0 {
		fmt.Fprintf(&b, "It passes %s from this shell to the service.\n", strings.Join(set.passed, ", "))
	}
	if len(set.kept) > 0 {
		again := "hookwatch service install"
		if installed.Command == "forward" {
			again += " --forward"
		}
		fmt.Fprintf(&b, "It keeps the installed unit's settings that this shell does not set (to drop one, set it to the empty string: %s= %s):\n", set.kept[0], again)
		for _, k := range set.kept {
			fmt.Fprintf(&b, "  %s\n", shownSetting(k, set.env[k]))
		}
	}
	if len(set.added) > 0 {
		b.WriteString("It keeps the variables added to the installed unit, as they are:\n")
		for _, k := range set.added {
			fmt.Fprintf(&b, "  %s\n", shownSetting(k, set.env[k]))
		}
	}
	if len(set.dropped) > 0 {
		fmt.Fprintf(&b, "It drops %s, set to the empty string in this shell.\n", strings.Join(set.dropped, ", "))
	}
	if set.other != "" {
		fmt.Fprintf(&b, "It keeps none of the settings of the installed unit, which ran 'hookwatch %s': %s.\n", set.other, strings.Join(set.left, ", "))
	}
	for _, n := range set.notes {
		b.WriteString(n + "\n")
	}
	stop := runningBeside(set.env["HOOKWATCH_HOME"], &b)
	what := "collector"
	if set.command == "forward" {
		what = "forwarder"
	}
	fmt.Fprintf(&b, "\nTo start the %s now and at every login, run:\n\n", what)
	switch goos {
	case "linux":
		if existed {
			b.WriteString("  " + stop + "systemctl --user daemon-reload && systemctl --user enable hookwatch && systemctl --user restart hookwatch\n")
		} else {
			b.WriteString("  " + stop + "systemctl --user daemon-reload && systemctl --user enable --now hookwatch\n")
		}
		b.WriteString("\nTo keep it running while you are logged out: loginctl enable-linger \"$USER\"\n")
		b.WriteString("Its log: journalctl --user -u hookwatch\n")
	case "darwin":
		if existed {
			fmt.Fprintf(&b, "  %slaunchctl unload %s; launchctl load -w %s\n", stop, claudecode.ShellQuote(path), claudecode.ShellQuote(path))
		} else {
			fmt.Fprintf(&b, "  %slaunchctl load -w %s\n", stop, claudecode.ShellQuote(path))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// runningBeside says, in b, when a collector or a forwarder runs already
// for the data directory the service is to use (unitHome, else this
// shell's): one hookwatch demo, a hook or a serve started holds the home's
// spool, so the service's would exit at once, and its manager would start
// it again and again. It returns the command that stops that one, to run
// before the service's start, or "".
func runningBeside(unitHome string, b *strings.Builder) string {
	shellHome := hook.Home(os.Getenv)
	home := cmp.Or(unitHome, shellHome)
	c, ok := runningCollector(home)
	if !ok {
		return ""
	}
	what := "a collector listening at http://" + c.Addr
	if strings.HasPrefix(c.Addr, hook.ForwarderAddr("")) {
		what = "hookwatch " + c.Addr
	}
	fmt.Fprintf(b, "Note: %s runs for %s already (pid %d): the service's cannot start beside it, so the command below stops it first.\n", what, home, c.PID)
	if home != shellHome {
		return "HOOKWATCH_HOME=" + claudecode.ShellQuote(home) + " hookwatch stop && "
	}
	return "hookwatch stop && "
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

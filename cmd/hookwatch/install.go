package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hookwatch/hookwatch/doctor"
	"github.com/hookwatch/hookwatch/hook"
	"github.com/hookwatch/hookwatch/install"
)

func init() {
	register(command{
		name:    "install",
		summary: "register hookwatch's hooks in Claude Code's settings",
		run:     runInstall,
	})
	register(command{
		name:    "uninstall",
		summary: "remove hookwatch's hooks from Claude Code's settings",
		run:     runUninstall,
	})
}

// executable returns the path of the running hookwatch binary; tests point
// it at a directory of their own.
var executable = os.Executable

// binaries returns the running hookwatch, resolved through symlinks, and the
// binary the hooks should run: the lean hookwatch-hook beside it when there
// is one (the hook starts once per agent event, and the lean binary starts
// faster), else hookwatch itself.
func binaries() (self, hookBin string, err error) {
	exe, err := executable()
	if err != nil {
		return "", "", fmt.Errorf("cannot find the hookwatch binary: %w", err)
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	if exe, err = filepath.Abs(exe); err != nil {
		return "", "", fmt.Errorf("cannot find the hookwatch binary: %w", err)
	}
	sib := filepath.Join(filepath.Dir(exe), doctor.HookBinaryName+filepath.Ext(exe))
	if fi, err := os.Stat(sib); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
		return exe, sib, nil
	}
	return exe, exe, nil
}

// claudeVersion is what "claude --version" says, "" when it cannot tell.
func claudeVersion(ctx context.Context) string {
	return doctor.ClaudeVersion(ctx, 3*time.Second)
}

// scopeFlags are the flags install and uninstall share.
type scopeFlags struct {
	scope, project string
	dryRun         bool
}

func (f *scopeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.scope, "scope", install.ScopeUser, "settings file to edit: user (~/.claude/settings.json or $CLAUDE_CONFIG_DIR), project (.claude/settings.json) or local (.claude/settings.local.json)")
	fs.StringVar(&f.project, "project", "", "project directory for the project and local scopes (default: the working directory)")
	fs.BoolVar(&f.dryRun, "dry-run", false, "print the change as a diff and write nothing")
}

func runInstall(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("install", "install [--scope user|project|local] [--mode command|http] [--statusline] [--dry-run] [--project DIR] [--url URL]", stderr)
	var sf scopeFlags
	sf.register(fs)
	mode := fs.String("mode", "", "command: Claude Code runs the hook binary per event (events are spooled while the collector is down); http: Claude Code posts events to the collector where it can (default: the mode already installed in this scope, else command)")
	statusline := fs.Bool("statusline", false, "also make hookwatch Claude Code's statusLine (wrapping the one already set)")
	url := fs.String("url", "", "collector base URL for --mode http (default $HOOKWATCH_URL, else "+install.DefaultCollectorURL+")")
	if err := parseFlagsNoArgs(fs, args); err != nil {
		return err
	}
	self, hookBin, err := binaries()
	if err != nil {
		return err
	}
	var notes []string
	// The hooks run the lean binary; the statusLine needs hookwatch itself.
	bin := hookBin
	collector := *url
	if collector == "" {
		collector = os.Getenv("HOOKWATCH_URL")
	}
	o := install.Options{
		Scope:            sf.scope,
		Mode:             *mode,
		Binary:           bin,
		CollectorURL:     collector,
		ProjectDir:       sf.project,
		ClaudeVersion:    claudeVersion(ctx),
		Statusline:       *statusline,
		StatuslineBinary: self,
		DryRun:           sf.dryRun,
	}
	path, err := install.SettingsPath(o)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if o.Mode == "" {
		// A re-install keeps the mode (and the URL http hooks post to).
		m, u, err := install.Installed(o)
		if err != nil {
			return err
		}
		o.Mode = orDefault(m, install.ModeCommand)
		if m == install.ModeHTTP && *url == "" && u != "" {
			o.CollectorURL = u
		}
	}
	if *url != "" && o.Mode != install.ModeHTTP {
		notes = append(notes, "--url only applies to --mode http: the command hook reads HOOKWATCH_URL from the environment Claude Code gives it")
	}
	// install recognises its own entries by the binary's name (hookwatch)
	// or by o.Binary; entries of a hookwatch-hook elsewhere would stay and
	// run next to the new ones, so they go first.
	stale, err := otherHookBinaries(sf.scope, path, bin)
	if err != nil {
		return err
	}
	for _, s := range stale {
		if sf.dryRun {
			notes = append(notes, fmt.Sprintf("the hooks that run %s are removed first (not shown in the diff)", s))
			continue
		}
		u := o
		u.Binary = s
		r, err := install.Uninstall(u)
		if err != nil {
			return fmt.Errorf("cannot remove the hooks that run %s: %w", s, err)
		}
		if r.Changed {
			fmt.Fprintf(stdout, "Removed the hooks that ran %s from %s\n", s, path)
		}
	}
	r, err := install.Install(o)
	if err != nil {
		return fmt.Errorf("cannot install into %s: %w", path, err)
	}
	r.Notes = append(notes, r.Notes...)
	printResult(stdout, r, "install", sf.dryRun)
	if !sf.dryRun && r.Changed {
		how := bin + " hook"
		if o.Mode == install.ModeHTTP {
			how = "POST " + strings.TrimRight(orDefault(o.CollectorURL, install.DefaultCollectorURL), "/") + install.HookPath + " (where Claude Code allows it), else " + how
		}
		fmt.Fprintf(stdout, "Hooks run: %s\n", how)
		fmt.Fprintf(stdout, "Next: open Claude Code. The first hook starts the collector in the background; the dashboard is at %s.\nCheck the setup any time with 'hookwatch doctor'; keep the collector running across reboots with 'hookwatch service install'.\n", orDefault(collector, install.DefaultCollectorURL))
	}
	return nil
}

func runUninstall(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("uninstall", "uninstall [--scope user|project|local] [--dry-run] [--project DIR]", stderr)
	var sf scopeFlags
	sf.register(fs)
	if err := parseFlagsNoArgs(fs, args); err != nil {
		return err
	}
	_, hookBin, err := binaries()
	if err != nil {
		return err
	}
	o := install.Options{Scope: sf.scope, Binary: hookBin, ProjectDir: sf.project, DryRun: sf.dryRun}
	path, err := install.SettingsPath(o)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	// Uninstall recognises binaries named hookwatch and o.Binary; every
	// other hookwatch-hook the file names needs a pass of its own.
	others, err := otherHookBinaries(sf.scope, path, hookBin)
	if err != nil {
		return err
	}
	var total install.Result
	for i, b := range append([]string{hookBin}, others...) {
		o.Binary = b
		r, err := install.Uninstall(o)
		if err != nil {
			return fmt.Errorf("cannot uninstall from %s: %w", path, err)
		}
		if i == 0 || r.Changed {
			total = mergeResults(total, r)
		}
		if sf.dryRun && len(others) > 0 {
			total.Notes = append(total.Notes, "the hooks that run "+strings.Join(others, ", ")+" are removed by further passes (not shown in the diff)")
			break
		}
	}
	printResult(stdout, total, "uninstall", sf.dryRun)
	if c, ok := runningCollector(hook.Home(os.Getenv)); ok && !sf.dryRun {
		// The hooks are gone, the collector is not: say so rather than
		// leave a server listening that the user believes uninstalled.
		fmt.Fprintf(stdout, "A collector is still running at http://%s%s; stop it with: hookwatch stop\n", c.Addr, pidNote(c.PID))
	}
	return nil
}

func pidNote(pid int) string {
	if pid <= 0 {
		return ""
	}
	return fmt.Sprintf(" (pid %d)", pid)
}

// otherHookBinaries returns the hookwatch-hook binaries the settings file
// registers other than bin: install would not recognise their entries.
func otherHookBinaries(scope, path, bin string) ([]string, error) {
	s, err := doctor.ReadSettings(scope, path)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, b := range s.Binaries() {
		if b != bin && filepath.Base(b) == doctor.HookBinaryName+filepath.Ext(b) {
			out = append(out, b)
		}
	}
	return out, nil
}

// mergeResults folds the result of a later pass into the earlier one.
func mergeResults(a, b install.Result) install.Result {
	if a.Path == "" {
		return b
	}
	a.Changed = a.Changed || b.Changed
	a.Removed, a.Restored, a.Backup = b.Removed, a.Restored || b.Restored, b.Backup
	a.Diff += b.Diff
	a.Notes = append(a.Notes, b.Notes...)
	return a
}

// printResult tells what Install or Uninstall did: the file, whether it
// changed (with the diff for a dry run), the backup and the notes.
func printResult(w io.Writer, r install.Result, verb string, dry bool) {
	var b strings.Builder
	switch {
	case !r.Changed && verb == "install":
		fmt.Fprintf(&b, "hookwatch is already installed in %s: nothing to change.\n", r.Path)
	case !r.Changed:
		fmt.Fprintf(&b, "%s does not register hookwatch: nothing to change.\n", r.Path)
	case dry:
		fmt.Fprintf(&b, "Dry run: %s would change as follows (nothing was written):\n\n%s\n", r.Path, r.Diff)
	case r.Removed:
		fmt.Fprintf(&b, "Removed %s (hookwatch had created it).\n", r.Path)
	case r.Restored:
		fmt.Fprintf(&b, "Restored %s to its content from before hookwatch, byte for byte.\n", r.Path)
	case r.Created:
		fmt.Fprintf(&b, "Created %s (%s).\n", r.Path, diffStat(r.Diff))
	default:
		fmt.Fprintf(&b, "Updated %s (%s).\n", r.Path, diffStat(r.Diff))
	}
	if r.Backup != "" {
		fmt.Fprintf(&b, "Backup: %s\n", r.Backup)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "Note: %s\n", n)
	}
	io.WriteString(w, b.String())
}

// diffStat counts the added and removed lines of a unified diff.
func diffStat(diff string) string {
	add, del := 0, 0
	for _, l := range strings.Split(diff, "\n") {
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
		case strings.HasPrefix(l, "+"):
			add++
		case strings.HasPrefix(l, "-"):
			del++
		}
	}
	return fmt.Sprintf("+%d -%d lines", add, del)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

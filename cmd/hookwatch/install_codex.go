package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"slices"
	"strings"

	"github.com/hookwatch/hookwatch/claudecode"
	"github.com/hookwatch/hookwatch/codex"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/install"
	"github.com/hookwatch/hookwatch/internal/patherr"
)

// codexFlags are the flags install and uninstall add for Codex.
type codexFlags struct {
	codex bool
	bin   string
	// trustProject (install only) trusts the project as well.
	trustProject bool
}

// register adds the flags to fs, described for install or, with
// uninstall, for uninstall, which takes the trust out without asking Codex.
func (f *codexFlags) register(fs *flag.FlagSet, uninstall bool) {
	const files = "$CODEX_HOME/hooks.json (user scope) or .codex/hooks.json (project scope)"
	if uninstall {
		fs.BoolVar(&f.codex, "codex", false, "edit Codex's hooks file instead of Claude Code's settings: remove the hooks from "+files+", and their trust from $CODEX_HOME/config.toml")
		// Accepted, so that an install command line with uninstall in its
		// place runs.
		fs.StringVar(&f.bin, "codex-bin", "", "ignored: uninstall needs no Codex binary (install's flag, accepted here too)")
		return
	}
	fs.BoolVar(&f.codex, "codex", false, "edit Codex's hooks file instead of Claude Code's settings: "+files+", and trust the hooks in $CODEX_HOME/config.toml")
	fs.StringVar(&f.bin, "codex-bin", "", "the Codex binary that reports the hooks' trust hashes (default: codex on PATH)")
}

// codexOptions are the install options of the Codex hooks file of sf.
func codexOptions(sf scopeFlags) (install.Options, error) {
	_, hookBin, err := binaries()
	if err != nil {
		return install.Options{}, err
	}
	o := install.Options{Runtime: event.RuntimeCodex, Scope: sf.scope, Binary: hookBin, ProjectDir: sf.project, DryRun: sf.dryRun}
	if _, err := install.SettingsPath(o); err != nil {
		return o, fmt.Errorf("%w: %v", errUsage, err)
	}
	return o, nil
}

// claudeOnlyFlags are install's flags that apply to Claude Code's hooks
// alone: Codex runs command hooks, and has no statusLine.
var claudeOnlyFlags = []string{"mode", "statusline"}

// claudeOnly returns the flags of claudeOnlyFlags set in fs.
func claudeOnly(fs *flag.FlagSet) []string {
	var set []string
	fs.Visit(func(f *flag.Flag) {
		if slices.Contains(claudeOnlyFlags, f.Name) {
			set = append(set, "--"+f.Name)
		}
	})
	return set
}

// claudeOnlyRefusal says why install --codex refuses the flags set (from
// claudeOnly): each flag's own reason, in a sentence whose verb agrees.
func claudeOnlyRefusal(set []string) string {
	verb := "apply"
	if len(set) == 1 {
		verb = "applies"
	}
	var why []string
	if slices.Contains(set, "--statusline") {
		why = append(why, "Codex has no status line")
	}
	if slices.Contains(set, "--mode") {
		why = append(why, "Codex runs the command hook only")
	}
	return fmt.Sprintf("%s %s to Claude Code's hooks only: %s", strings.Join(set, ", "), verb, strings.Join(why, "; "))
}

// checkCodexBin refuses (errUsage) a --codex-bin that names no program:
// install would write the hooks, then fail to ask it for their trust. ""
// (codex on PATH, looked up later) is no mistake; a name without a slash
// is looked up on PATH, as a command would be.
func checkCodexBin(bin string) error {
	if bin == "" {
		return nil
	}
	_, err := exec.LookPath(bin)
	if err == nil {
		return nil
	}
	var ee *exec.Error
	if errors.As(err, &ee) {
		err = ee.Err
	}
	why := patherr.Strip(err, bin).Error()
	switch {
	case errors.Is(err, exec.ErrNotFound):
		why = "not found on PATH"
	case errors.Is(err, fs.ErrPermission):
		why = "not executable"
	}
	return fmt.Errorf("%w: --codex-bin %s: %s: pass the path of Codex's binary (command -v codex prints it), or leave --codex-bin out to use the codex on PATH; nothing was written", errUsage, bin, why)
}

// trustStep is what the user must do when hookwatch cannot trust the hooks
// itself.
const trustStep = "open Codex and trust hookwatch's hooks with /hooks, or run `hookwatch install --codex --codex-bin PATH` again with Codex's binary"

// installCodex writes the hooks file, then asks Codex for the hooks' trust
// hashes and records them, as Codex's own /hooks review does. done is what
// install did besides, said with the file's result (printResult). The
// flags are checked already, and sf resolved (runInstall). A failure once
// the hooks file is written says so, and how to take the hooks out: they
// stay, for the user to trust in Codex's /hooks or to remove.
func installCodex(ctx context.Context, sf scopeFlags, cf codexFlags, stdout io.Writer, done ...string) (err error) {
	o, err := codexOptions(sf)
	if err != nil {
		return err
	}
	path, _ := install.SettingsPath(o)
	r, err := install.Install(o)
	if err != nil {
		return err // it names the file
	}
	if !sf.dryRun {
		defer func() {
			if err != nil {
				err = fmt.Errorf("%w; install left %s written: %s takes them out", err, path, uninstallCodexCommand(sf))
			}
		}()
	}
	printResult(stdout, r, "install", sf.dryRun, done...)
	config, err := install.CodexConfigPath(o)
	if err != nil {
		return err
	}
	if cf.trustProject {
		tr, err := install.TrustCodexProject(o)
		if err != nil {
			return fmt.Errorf("cannot trust the project in %s: %w", config, err)
		}
		for _, n := range tr.Notes {
			fmt.Fprintf(stdout, "Note: %s\n", n)
		}
		if tr.Changed {
			verb := "Trusted"
			if sf.dryRun {
				verb = "Would trust"
			}
			fmt.Fprintf(stdout, "%s the project in %s (%s), as codex exec --trust would.\n", verb, config, diffStat(tr.Diff))
		}
	}
	bin := cf.bin
	if bin == "" {
		bin, _ = exec.LookPath("codex")
	}
	if sf.dryRun {
		if bin == "" {
			fmt.Fprintf(stdout, "Then hookwatch's hooks would stay untrusted: Codex is not on PATH, and its hashes of them are what %s records (pass --codex-bin PATH).\n", config)
			return nil
		}
		fmt.Fprintf(stdout, "Then hookwatch's hooks would be trusted in %s with the hashes Codex reports for them.\n", config)
		return nil
	}
	// Installed but untrusted, the hooks never run: a failure, said so,
	// with the step that makes them run.
	untrusted := func(why string) error {
		return fmt.Errorf("hookwatch's hooks are in %s, but %s, and codex exec skips an untrusted hook silently: %s", path, why, trustStep)
	}
	if bin == "" {
		return untrusted("Codex is not on PATH to say which of them it trusts")
	}
	cwd := sf.project
	if cwd == "" {
		cwd, _ = os.Getwd()
	}
	hooks, err := codex.ListHooks(ctx, bin, cwd, os.Environ())
	if errors.Is(err, codex.ErrHooksOff) {
		return fmt.Errorf("hookwatch's hooks are in %s, but %w: under [features] in %s, set hooks = true (and codex_hooks, if there) or delete the line, then run this again", path, err, config)
	}
	var load *codex.LoadError
	if errors.As(err, &load) {
		return fmt.Errorf("hookwatch's hooks are in %s, but %w: fix that (codex exec reports the same), then run this again", path, err)
	}
	if err != nil {
		return untrusted(fmt.Sprintf("Codex could not be asked which of them it trusts (%v)", err))
	}
	keys, err := install.CodexKeys(o)
	if err != nil {
		return err
	}
	if len(listed(hooks, keys)) == 0 {
		return fmt.Errorf("Codex does not list the hooks of %s: a project's hooks apply only once the project is trusted (run this again with --trust-project, or trust it with codex exec --trust, or add [projects.%q] trust_level = \"trusted\" to %s and run this again)", path, cwd, config)
	}
	tr, err := install.TrustCodex(o, hooks)
	if err != nil {
		return fmt.Errorf("cannot trust the hooks in %s: %w", config, err)
	}
	for _, n := range tr.Notes {
		fmt.Fprintf(stdout, "Note: %s\n", n)
	}
	if tr.Changed {
		fmt.Fprintf(stdout, "Trusted hookwatch's hooks in %s (%s), as Codex's /hooks review would.\n", config, diffStat(tr.Diff))
	}
	// Ask again: what counts is what Codex says.
	if hooks, err = codex.ListHooks(ctx, bin, cwd, os.Environ()); err == nil {
		n := 0
		for _, h := range listed(hooks, keys) {
			if !h.Trusted() {
				n++
			}
		}
		if n > 0 {
			return untrusted(fmt.Sprintf("Codex still reports %d of them untrusted", n))
		}
		// Turned off by the user, a hook does not run however trusted:
		// that is theirs to undo, so said, not changed.
		if off := codex.OffEvents(listed(hooks, keys)); len(off) > 0 {
			which, it, line := "the hook of "+off[0], "it", "its enabled = false line"
			if len(off) > 1 {
				which, it, line = "the hooks of "+strings.Join(off, ", "), "them", "their enabled = false lines"
			}
			return fmt.Errorf("hookwatch's hooks are in %s and trusted, but Codex has %s turned off, so it neither records nor enforces a policy there: turn %s on in Codex's /hooks, or delete %s in %s", path, which, it, line, config)
		}
	}
	fmt.Fprintf(stdout, "Codex runs the hooks: %s hook\n", o.Binary)
	return nil
}

// uninstallCodexCommand is the command that takes out the hooks install
// --codex wrote with sf, quoted for a message.
func uninstallCodexCommand(sf scopeFlags) string {
	cmd := "hookwatch uninstall --codex"
	if sf.scope != claudecode.ScopeUser {
		cmd += " --scope " + sf.scope
		if p := sf.project; p != "" {
			if strings.ContainsAny(p, " \t\n'\"$`\\;&|<>()*?[]{}~#!") {
				p = "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
			}
			cmd += " --project " + p
		}
	}
	return "`" + cmd + "`"
}

// listed returns the hooks whose key is one of keys.
func listed(hooks []codex.Hook, keys []string) []codex.Hook {
	var out []codex.Hook
	for _, h := range hooks {
		for _, k := range keys {
			if h.Key == k {
				out = append(out, h)
				break
			}
		}
	}
	return out
}

// uninstallCodex takes the hooks' trust out of config.toml, then the hooks
// out of the hooks file.
func uninstallCodex(sf scopeFlags, stdout io.Writer) error {
	o, err := codexOptions(sf)
	if err != nil {
		return err
	}
	tr, err := install.UntrustCodex(o)
	if err != nil {
		return fmt.Errorf("cannot remove the hooks' trust from %s: %w", tr.Path, err)
	}
	r, err := install.Uninstall(o)
	if err != nil {
		return err // it names the file
	}
	printResult(stdout, r, "uninstall", sf.dryRun)
	if tr.Changed {
		verb := "Removed"
		if sf.dryRun {
			verb = "Would remove"
		}
		if tr.Removed {
			fmt.Fprintf(stdout, "%s %s: the hooks' trust was all it held.\n", verb, tr.Path)
		} else {
			fmt.Fprintf(stdout, "%s the hooks' trust from %s (%s).\n", verb, tr.Path, diffStat(tr.Diff))
		}
		if sf.dryRun {
			fmt.Fprintf(stdout, "\n%s\n", tr.Diff)
		}
	}
	return nil
}

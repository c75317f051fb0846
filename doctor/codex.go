package doctor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hookwatch/hookwatch/claudecode"
	"github.com/hookwatch/hookwatch/codex"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/install"
)

// checkCodex checks Codex's hooks files (the user's and the project's):
// that hookwatch's hooks are there for every Codex event, run this
// hookwatch, and are trusted. Codex skips an untrusted hook without a word
// in `codex exec`, so an installation that looks right can record nothing.
func (e *env) checkCodex(ctx context.Context) []Check {
	home, err := codex.Home(e.Getenv)
	if err != nil {
		return []Check{{Name: "codex", Status: Info, Message: err.Error()}}
	}
	bin, _ := lookPath("codex")
	var out []Check
	for _, f := range codexFiles(home, e.WorkDir, e.HookBinary) {
		out = append(out, e.checkCodexFile(ctx, f.o, f.o.Scope, f.path, bin))
	}
	return out
}

// codexFile is one of Codex's hooks files, with the install options that
// name it.
type codexFile struct {
	o    install.Options
	path string
}

// codexFiles are Codex's hooks files: the user's, in home ($CODEX_HOME),
// and the project's of workDir.
func codexFiles(home, workDir, hookBinary string) []codexFile {
	var out []codexFile
	for _, scope := range []string{claudecode.ScopeUser, claudecode.ScopeProject} {
		o := install.Options{Runtime: event.RuntimeCodex, Scope: scope, ConfigDir: home, ProjectDir: workDir, Binary: hookBinary}
		if path, err := install.SettingsPath(o); err == nil {
			out = append(out, codexFile{o, path})
		}
	}
	return out
}

// CodexHooked reports whether one of Codex's hooks files — the user's,
// or the project's of workDir — registers hookwatch's hook, found as the
// codex checks find it (ReadSettings): where it does, Codex's events are
// held to hookwatch's policy. A file that cannot be read registers
// nothing (the codex checks report it).
func CodexHooked(getenv func(string) string, workDir string) bool {
	home, err := codex.Home(getenv)
	if err != nil {
		return false
	}
	for _, f := range codexFiles(home, workDir, "") {
		if s, err := ReadSettings(f.o.Scope, f.path); err == nil && len(s.Handlers) > 0 {
			return true
		}
	}
	return false
}

func (e *env) checkCodexFile(ctx context.Context, o install.Options, scope, path, bin string) Check {
	c := Check{Name: "codex hooks (" + scope + ")", Status: OK}
	reinstall := "hookwatch install --codex"
	if scope != claudecode.ScopeUser {
		reinstall += " --scope " + scope + e.projectFlag
	}
	s, err := ReadSettings(scope, path)
	switch {
	case err != nil:
		c.Status, c.Message, c.Fix = Fail, fmt.Sprintf("%v: Codex cannot read this file's hooks either", err), e.editFix(scope, path)
		return c
	case !s.Exists:
		c.Status, c.Message = Info, path+" does not exist"
		return c
	case len(s.Handlers) == 0:
		c.Status, c.Message = Info, path+" does not register hookwatch"
		return c
	}
	e.codexInstalled = true
	fail := func(st Status, msg string) {
		if st == Fail || c.Status == OK {
			c.Status = st
		}
		c.Details = append(c.Details, msg)
		c.Fix = reinstall
	}
	var missing []string
	for _, name := range event.CodexEvents {
		if !slices.ContainsFunc(s.Handlers, func(h Handler) bool { return h.Event == name }) {
			missing = append(missing, name)
		}
	}
	c.Message = fmt.Sprintf("%s registers %s for %d of Codex's %d events", path, strings.Join(s.Binaries(), " and "), len(event.CodexEvents)-len(missing), len(event.CodexEvents))
	if len(missing) > 0 {
		fail(Warn, "no hookwatch hook for "+strings.Join(missing, ", "))
	}
	for _, b := range s.Binaries() {
		p, err := resolveBinary(b)
		switch {
		case err != nil:
			fail(Fail, fmt.Sprintf("%s: %v; every hook event fails", b, err))
		case !e.ours(p) && !e.ours(b):
			fail(Warn, fmt.Sprintf("%s is not this hookwatch (%s)", b, e.Self))
		}
	}
	keys, err := install.CodexKeys(o)
	if err != nil || len(keys) == 0 {
		return c
	}
	if bin == "" {
		// Without Codex the hashes cannot be checked; the tables can.
		config, _ := install.CodexConfigPath(o)
		b, _, _ := claudecode.ReadConfigFile(config)
		n := 0
		for _, k := range keys {
			if strings.Contains(string(b), "[hooks.state."+fmt.Sprintf("%q", k)+"]") {
				n++
			}
		}
		if n < len(s.Handlers) {
			fail(Fail, fmt.Sprintf("%s records no trust for some of hookwatch's hooks: codex exec skips an untrusted hook silently", config))
			// install asks Codex for the hooks' hashes: it needs the binary.
			c.Fix = reinstall + " --codex-bin PATH   # Codex is not on PATH"
		} else {
			c.Details = append(c.Details, "codex is not on PATH: trust recorded in "+config+", its hashes not checked")
		}
		return c
	}
	hooks, err := codex.ListHooks(ctx, bin, e.WorkDir, e.Environ)
	if errors.Is(err, codex.ErrHooksOff) {
		// Installing again changes nothing: the setting is the user's.
		config, _ := install.CodexConfigPath(o)
		fail(Fail, err.Error())
		c.Fix = hooksOnFix(config)
		return c
	}
	if load := (*codex.LoadError)(nil); errors.As(err, &load) {
		// Codex runs on its defaults then: no hook of these files runs.
		fail(Fail, err.Error())
		c.Fix = "hookwatch doctor   # again, once the file and line Codex names above are fixed"
		return c
	}
	if err != nil {
		fail(Warn, fmt.Sprintf("cannot ask Codex which hooks it trusts: %v", err))
		return c
	}
	listed, untrusted := 0, 0
	var ours []codex.Hook
	for _, h := range hooks {
		if slices.Contains(keys, h.Key) {
			ours = append(ours, h)
			listed++
			if !h.Trusted() {
				untrusted++
			}
		}
	}
	off := codex.OffEvents(ours)
	switch {
	case listed == 0 && scope == claudecode.ScopeProject:
		fail(Fail, "Codex ignores this file: the project is not trusted (codex exec --trust, or trust_level = \"trusted\" for it in config.toml)")
		c.Fix = reinstall + " --trust-project"
	case listed == 0:
		fail(Fail, "Codex does not list hookwatch's hooks of this file")
	case untrusted > 0:
		fail(Fail, fmt.Sprintf("Codex reports %d of hookwatch's %d hooks untrusted: codex exec skips an untrusted hook silently", untrusted, listed))
	case len(off) > 0:
		// The user's choice, which installing again leaves alone.
		config, _ := install.CodexConfigPath(o)
		which := "the hook of " + off[0]
		if len(off) > 1 {
			which = "the hooks of " + strings.Join(off, ", ")
		}
		fail(Fail, fmt.Sprintf("Codex has %s turned off: neither recorded nor held to a policy there", which))
		c.Fix = "$EDITOR " + claudecode.ShellQuote(config) + "   # delete enabled = false from hookwatch's [hooks.state] tables, or turn them on in Codex's /hooks"
	default:
		c.Message += fmt.Sprintf(", all %d trusted", listed)
	}
	return c
}

// hooksOnFix is the step that turns Codex's hooks feature back on in
// config, its config.toml.
func hooksOnFix(config string) string {
	return "$EDITOR " + claudecode.ShellQuote(config) + "   # under [features], set hooks = true (and codex_hooks, if there), or delete the line"
}

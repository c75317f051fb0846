package install

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/hookwatch/hookwatch/claudecode"
	"github.com/hookwatch/hookwatch/codex"
)

// Codex skips a hook it does not trust, silently in `codex exec`. Trust is
// recorded in $CODEX_HOME/config.toml, whatever the scope of the hooks
// file, as [hooks.state."<key>"] trusted_hash = "<hash>", the hash one
// only Codex computes (its app-server's hooks/list reports it). TrustCodex
// writes those tables for hookwatch's handlers, UntrustCodex takes exactly
// them out again, so that install then uninstall leaves config.toml byte
// for byte as it was.

// CodexConfigPath returns Codex's config.toml for o (Runtime codex).
func CodexConfigPath(o Options) (string, error) {
	dir := o.ConfigDir
	if o.Scope != "" && o.Scope != "user" || dir == "" {
		d, err := codex.Home(os.Getenv)
		if err != nil {
			return "", err
		}
		dir = d
	}
	return filepath.Join(dir, codex.ConfigFileName), nil
}

// CodexKeys returns the keys (codex.HookKey) of hookwatch's handlers in
// o's Codex hooks file, as it is now.
func CodexKeys(o Options) ([]string, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	path, _ := o.path()
	b, existed, err := readFile(path)
	if err != nil || !existed {
		return nil, err
	}
	s, err := parse(b, path)
	if err != nil {
		return nil, err
	}
	h, ok, err := hooksObject(s.body)
	if err != nil || !ok {
		return nil, err
	}
	paths := []string{path}
	if r, err := filepath.EvalSymlinks(path); err == nil && r != path {
		paths = append(paths, r)
	}
	var keys []string
	for _, ev := range items(h.value) {
		for _, g := range ourGroups(ev.value, o.Binary) {
			n := len(items(items(ev.value)[g].value.Get("hooks")))
			for i := range n {
				for _, p := range paths {
					keys = append(keys, codex.HookKey(p, ev.key, g, i))
				}
			}
		}
	}
	return keys, nil
}

// TrustCodex records in config.toml the trust of each of hookwatch's
// handlers in o's hooks file that hooks (Codex's hooks/list, run after
// Install wrote the file) reports untrusted. With o.DryRun it writes
// nothing.
func TrustCodex(o Options, hooks []codex.Hook) (Result, error) {
	path, err := CodexConfigPath(o)
	if err != nil {
		return Result{}, err
	}
	r := Result{Path: path}
	keys, err := CodexKeys(o)
	if err != nil {
		return r, err
	}
	ours := map[string]bool{}
	for _, k := range keys {
		ours[k] = true
	}
	old, existed, err := readFile(path)
	if err != nil {
		return r, err
	}
	after := old
	for _, h := range hooks {
		if !ours[h.Key] || h.Trusted() || h.CurrentHash == "" {
			continue
		}
		var ok bool
		if after, ok = codex.SetTrust(after, h.Key, h.CurrentHash); !ok {
			r.Notes = append(r.Notes, fmt.Sprintf("%s already has a table of its own for %s: left as it is; review the hook with /hooks in Codex", path, h.Key))
		}
	}
	r.Created = !existed && len(after) > 0
	if !existed && len(after) == 0 {
		return r, nil
	}
	return commit(r, old, existed, after, false, "", false, o.DryRun)
}

// UntrustCodex takes out of config.toml the trust TrustCodex recorded for
// hookwatch's handlers in o's hooks file, and the project's trust
// TrustCodexProject recorded. Call it before Uninstall, which
// removes the handlers the keys are computed from.
func UntrustCodex(o Options) (Result, error) {
	path, err := CodexConfigPath(o)
	if err != nil {
		return Result{}, err
	}
	r := Result{Path: path}
	keys, err := CodexKeys(o)
	if err != nil || len(keys) == 0 {
		return r, err
	}
	old, existed, err := readFile(path)
	if err != nil || !existed {
		return r, err
	}
	after := old
	for _, k := range keys {
		after, _ = codex.RemoveTrust(after, k)
	}
	if o.Scope == claudecode.ScopeProject {
		if dir, err := codexProject(o); err == nil {
			after, _ = codex.RemoveProjectTrust(after, dir)
		}
	}
	// A file left with nothing but blank lines (TrustCodex made it, or
	// nothing else was set in it) is removed: Codex reads no file as one
	// that sets nothing.
	remove := !bytes.Equal(after, old) && len(bytes.TrimSpace(after)) == 0
	return commit(r, old, true, after, remove, "", false, o.DryRun)
}

// codexProject returns the project directory o names (project scope), as
// Codex keys it in config.toml: absolute.
func codexProject(o Options) (string, error) {
	o, err := o.withDefaults()
	if err != nil {
		return "", err
	}
	return filepath.Abs(o.ProjectDir)
}

// TrustCodexProject records in config.toml that o's project (project
// scope) is trusted, which Codex requires before it loads the project's
// .codex/ layer and so its hooks (codex.SetProjectTrust); UntrustCodex
// takes it out again. Only on the user's request: trusting a project
// trusts all of its Codex configuration, not only hookwatch's hooks. With
// o.DryRun it writes nothing.
func TrustCodexProject(o Options) (Result, error) {
	path, err := CodexConfigPath(o)
	if err != nil {
		return Result{}, err
	}
	r := Result{Path: path}
	dir, err := codexProject(o)
	if err != nil {
		return r, err
	}
	old, existed, err := readFile(path)
	if err != nil {
		return r, err
	}
	after, changed := codex.SetProjectTrust(old, dir)
	if !changed {
		r.Notes = append(r.Notes, fmt.Sprintf("%s already has a table for %s: left as it is", path, dir))
		return r, nil
	}
	r.Created = !existed
	return commit(r, old, existed, after, false, "", false, o.DryRun)
}

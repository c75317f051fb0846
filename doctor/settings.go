package doctor

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/hookwatch/hookwatch/install"
)

// Names of hookwatch's binaries. The lean hook binary exists because the hook
// starts once per agent event, and a binary without the server's
// dependencies starts faster.
const (
	BinaryName     = "hookwatch"
	HookBinaryName = "hookwatch-hook"
)

// Handler is one hook handler of a settings file that runs hookwatch.
type Handler struct {
	// Event is the key under "hooks" (PreToolUse …).
	Event string `json:"event"`
	// Type is the handler's type: "command" or "http".
	Type string `json:"type"`
	// Binary is the program a command handler runs: "command" in exec
	// form, the command line's first word in shell form. "" for http.
	Binary string `json:"binary,omitempty"`
	// Args are the arguments after Binary.
	Args []string `json:"args,omitempty"`
	// Shell reports a shell-form command handler (no "args" field).
	Shell bool `json:"shell,omitempty"`
	// Command is the "command" field as written.
	Command string `json:"command,omitempty"`
	// URL is an http handler's URL.
	URL string `json:"url,omitempty"`
	// Launcher reports the plugin's launcher one-liner (install.PluginLauncher)
	// pasted into a settings file.
	Launcher bool `json:"launcher,omitempty"`
}

// Identity returns what tells two handlers apart for Claude Code, which runs
// a handler defined identically in several settings files once.
func (h Handler) Identity() string {
	if h.Type == "http" {
		return "http " + h.URL
	}
	if h.Shell {
		return "sh " + h.Command
	}
	return "exec " + strings.Join(append([]string{h.Binary}, h.Args...), "\x00")
}

// Settings is what one Claude Code settings file says about hookwatch.
type Settings struct {
	// Scope is install.ScopeUser, ScopeProject or ScopeLocal.
	Scope string `json:"scope"`
	// Path is the settings file.
	Path string `json:"path"`
	// Exists reports whether the file exists.
	Exists bool `json:"exists"`
	// Handlers are hookwatch's handlers, in file order.
	Handlers []Handler `json:"handlers,omitempty"`
	// Statusline is the statusLine command when it runs hookwatch.
	Statusline string `json:"statusline,omitempty"`
	// Plugins are the hookwatch plugins the file enables
	// ("hookwatch@<marketplace>" keys of enabledPlugins set to true).
	Plugins []string `json:"plugins,omitempty"`
}

// Binaries returns the distinct binaries of s's command handlers, sorted.
func (s *Settings) Binaries() []string {
	var out []string
	for _, h := range s.Handlers {
		if h.Binary != "" && !slices.Contains(out, h.Binary) {
			out = append(out, h.Binary)
		}
	}
	sort.Strings(out)
	return out
}

// Duplicates returns the events that have more than one hookwatch handler in
// s: each would run once per handler, so its events arrive twice.
func (s *Settings) Duplicates() []string {
	n := map[string]int{}
	var out []string
	for _, h := range s.Handlers {
		n[h.Event]++
		if n[h.Event] == 2 {
			out = append(out, h.Event)
		}
	}
	return out
}

// ReadSettings reads the settings file path and finds hookwatch in it. A
// missing file is not an error (Exists is false); a file that is not a JSON
// object is.
func ReadSettings(scope, path string) (*Settings, error) {
	s := &Settings{Scope: scope, Path: path}
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return s, nil
	case err != nil:
		return s, fmt.Errorf("cannot read %s: %w", path, err)
	}
	s.Exists = true
	b = trimBOM(b)
	if len(strings.TrimSpace(string(b))) == 0 {
		return s, nil // Claude Code reads a blank file as {}
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		return s, fmt.Errorf("cannot parse %s: %w", path, err)
	}
	// Members of an unexpected type read as absent: judging them is
	// Claude Code's business, and install's when it edits the file.
	var root struct {
		Hooks          map[string]json.RawMessage
		StatusLine     json.RawMessage
		EnabledPlugins map[string]json.RawMessage
	}
	_ = json.Unmarshal(top["hooks"], &root.Hooks)
	_ = json.Unmarshal(top["enabledPlugins"], &root.EnabledPlugins)
	root.StatusLine = top["statusLine"]
	// A map loses the file's order; report events in a stable one.
	events := make([]string, 0, len(root.Hooks))
	for name := range root.Hooks {
		events = append(events, name)
	}
	sort.Strings(events)
	for _, name := range events {
		var groups []struct {
			Hooks []json.RawMessage `json:"hooks"`
		}
		if json.Unmarshal(root.Hooks[name], &groups) != nil {
			continue // not ours to judge: install reports it when it edits the file
		}
		for _, g := range groups {
			for _, raw := range g.Hooks {
				if h, ok := parseHandler(name, raw); ok {
					s.Handlers = append(s.Handlers, h)
				}
			}
		}
	}
	var sl struct {
		Command string `json:"command"`
	}
	if json.Unmarshal(root.StatusLine, &sl) == nil {
		if w, ok := install.ShellWords(sl.Command); ok && len(w) >= 2 && w[1] == "statusline" && isHookwatchName(w[0]) {
			s.Statusline = sl.Command
		}
	}
	for k, v := range root.EnabledPlugins {
		var on bool
		if strings.HasPrefix(k, "hookwatch@") && json.Unmarshal(v, &on) == nil && on {
			s.Plugins = append(s.Plugins, k)
		}
	}
	sort.Strings(s.Plugins)
	return s, nil
}

// parseHandler returns the handler raw when it runs hookwatch.
func parseHandler(event string, raw json.RawMessage) (Handler, bool) {
	var h struct {
		Type    string   `json:"type"`
		Command string   `json:"command"`
		Args    []string `json:"args"`
		URL     string   `json:"url"`
	}
	var probe map[string]json.RawMessage
	if json.Unmarshal(raw, &probe) != nil {
		return Handler{}, false
	}
	_ = json.Unmarshal(raw, &h) // fields of another type stay empty
	out := Handler{Event: event, Type: h.Type, Command: h.Command}
	switch h.Type {
	case "http":
		u := h.URL
		if i := strings.IndexAny(u, "?#"); i >= 0 {
			u = u[:i]
		}
		if !strings.HasSuffix(u, install.HookPath) {
			return Handler{}, false
		}
		out.URL = h.URL
		return out, true
	case "command":
		if h.Command == install.PluginLauncher {
			out.Launcher, out.Shell = true, true
			return out, true
		}
		if _, hasArgs := probe["args"]; hasArgs {
			out.Binary, out.Args = h.Command, h.Args
		} else {
			w, ok := install.ShellWords(h.Command)
			if !ok || len(w) == 0 {
				return Handler{}, false
			}
			out.Binary, out.Args, out.Shell = w[0], w[1:], true
		}
		return out, isHookwatchHook(out.Binary, out.Args)
	}
	return Handler{}, false
}

// isHookwatchHook reports whether binary args runs the hook: "hookwatch hook
// …", or the lean binary with any arguments (it is nothing but the hook).
func isHookwatchHook(binary string, args []string) bool {
	switch baseName(binary) {
	case BinaryName:
		return len(args) > 0 && args[0] == "hook"
	case HookBinaryName:
		return true
	}
	return false
}

// isHookwatchName reports whether path names one of hookwatch's binaries.
func isHookwatchName(path string) bool {
	b := baseName(path)
	return b == BinaryName || b == HookBinaryName
}

// baseName is the file name of path without a Windows .exe suffix.
func baseName(path string) string {
	b := path[strings.LastIndexAny(path, `/\`)+1:]
	return strings.TrimSuffix(strings.TrimSuffix(b, ".exe"), ".EXE")
}

func trimBOM(b []byte) []byte {
	if len(b) >= 3 && b[0] == 0xef && b[1] == 0xbb && b[2] == 0xbf {
		return b[3:]
	}
	return b
}

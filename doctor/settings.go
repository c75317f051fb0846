package doctor

import (
	"slices"
	"sort"
	"strings"

	"github.com/hookwatch/hookwatch/claudecode"
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
	// URL is an http handler's URL; Collector the base URL of the
	// collector it posts to (claudecode.Handler.CollectorURL).
	URL       string `json:"url,omitempty"`
	Collector string `json:"collector,omitempty"`
	// http is the handler as Claude Code reads it, for the headers it
	// sends (the http round trip).
	http claudecode.Handler
	// Launcher reports the plugin's launcher one-liner
	// (claudecode.PluginLauncher) pasted into a settings file.
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
	// Scope is claudecode.ScopeManaged, ScopeUser, ScopeProject or ScopeLocal.
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

// ReadSettings reads the settings file path (claudecode.ReadSettings) and
// finds hookwatch in it: the handlers that run hookwatch's hook, whether
// install wrote them or not, by the rule install recognises its own with
// (claudecode.Handler.Kind). A missing file is not an error (Exists is
// false); a file that is not a JSON object is.
func ReadSettings(scope, path string) (*Settings, error) {
	cs, err := claudecode.ReadSettings(path)
	s := &Settings{Scope: scope, Path: path, Exists: cs.Exists}
	if err != nil {
		return s, err
	}
	for _, h := range cs.Hooks {
		k := h.Kind("")
		if k == claudecode.NotHookwatch {
			continue
		}
		out := Handler{Event: h.Event, Type: h.Type, Command: h.Command, URL: h.URL}
		if h.Type == "http" {
			out.http = h.Handler
		}
		out.Collector, _ = h.CollectorURL()
		switch {
		case k == claudecode.Launcher:
			out.Launcher, out.Shell = true, true
		case h.Type == "command":
			out.Binary, out.Args, _ = h.Program()
			out.Shell = !h.Exec
		}
		s.Handlers = append(s.Handlers, out)
	}
	if k, _ := claudecode.ClassifyStatusLine(cs.StatusLine, ""); k != claudecode.StatusOther {
		s.Statusline = cs.StatusLine
	}
	for _, p := range cs.EnabledPlugins {
		if claudecode.IsOurPlugin(p) {
			s.Plugins = append(s.Plugins, p)
		}
	}
	return s, nil
}

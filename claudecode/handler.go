package claudecode

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
)

// HookPath is the collector's endpoint for raw Claude Code payloads; an
// http handler whose URL path ends with it is hookwatch's.
const HookPath = "/v1/hooks/claude"

// HostHeader is the request header in which hookwatch's http handlers send
// the name of the machine Claude Code runs on (HostEnv, which Claude Code
// fills in from its environment), for the collector to record.
const HostHeader = "X-Hookwatch-Host"

// HostEnv is the environment variable that names this machine in its
// events, when set: the hook stamps it, and the http handlers send it in
// HostHeader. Unset, the hook stamps the system's host name.
const HostEnv = "HOOKWATCH_HOST"

// PluginLauncher is the command of every handler in hookwatch's plugin
// (hooks/hooks.json). A plugin cannot rely on the hookwatch binary being on
// PATH, and its directory holds the sources, not a binary, so the handler is
// a shell-form one-liner that runs the first hookwatch it finds:
//
//  1. ${CLAUDE_PLUGIN_ROOT}/bin/hookwatch, built inside the plugin's copy
//     of the repository (go build -o bin/hookwatch ./cmd/hookwatch);
//  2. hookwatch on PATH;
//  3. $GOBIN/hookwatch, else $HOME/go/bin/hookwatch, where go install puts it.
//
// When there is none it exits 0 without output: a missing binary must never
// block the agent (exit 2 would deny every tool call). exec hands stdin, and
// the exit code a policy decides, straight to the binary. It is a one-liner
// in hooks.json rather than a script file so that the plugin needs no file
// with an executable bit.
const PluginLauncher = `for b in "${CLAUDE_PLUGIN_ROOT}/bin/hookwatch" "$(command -v hookwatch)" "${GOBIN:-$HOME/go/bin}/hookwatch"; do [ -f "$b" ] && [ -x "$b" ] && exec "$b" hook; done; exit 0`

// Plugin is the name hookwatch's plugin gives itself in its manifest
// (.claude-plugin/plugin.json, read by PluginName).
const Plugin = "hookwatch"

// IsOurPlugin reports whether a key of the settings' enabledPlugins,
// <plugin>@<marketplace>, names hookwatch's plugin.
func IsOurPlugin(key string) bool {
	name, _, ok := strings.Cut(key, "@")
	return ok && name == Plugin
}

// PluginName returns the name the manifest of a plugin in dir,
// dir/.claude-plugin/plugin.json, gives it: "" when dir holds no readable
// manifest.
func PluginName(dir string) string {
	b, ok, err := ReadConfigFile(filepath.Join(dir, ".claude-plugin", "plugin.json"))
	if !ok || err != nil {
		return ""
	}
	var m struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(b, &m) != nil {
		return ""
	}
	return m.Name
}

// Handler is one entry of a matcher group's "hooks" array, with the fields
// that tell whose it is.
type Handler struct {
	// Type is "command", "http", "mcp_tool", "prompt" or "agent".
	Type string
	// Command is a command handler's executable (exec form) or command
	// line for sh (shell form).
	Command string
	// Args are the exec form's arguments.
	Args []string
	// Exec reports the exec form: the handler has "args", and Claude Code
	// runs Command without a shell.
	Exec bool
	// URL is an http handler's URL, Headers the headers it sends, as
	// written, and AllowedEnvVars the variables Claude Code fills in
	// there (Handler.HTTPHeaders).
	URL            string
	Headers        map[string]string
	AllowedEnvVars []string

	malformed bool // a field of the wrong type: the client does not run it
}

// ParseHandler reads one handler of a settings file. ok is false when raw
// is not a JSON object. Fields of the wrong type make a handler Claude Code
// does not run, which is nobody's (Kind NotHookwatch). Of a key written
// twice the last counts, as for the client's JSON.parse.
func ParseHandler(raw []byte) (h Handler, ok bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return Handler{}, false
	}
	str := func(key string) string {
		var s string
		if v, ok := m[key]; ok && json.Unmarshal(v, &s) != nil {
			h.malformed = true
		}
		return s
	}
	h.Type = str("type")
	switch h.Type {
	case "command":
		h.Command = str("command")
		if v, ok := m["args"]; ok {
			h.Exec = true
			if json.Unmarshal(v, &h.Args) != nil || h.Args == nil {
				h.malformed = true
			}
		}
	case "http":
		h.URL = str("url")
		if v, ok := m["headers"]; ok && json.Unmarshal(v, &h.Headers) != nil {
			h.malformed = true
		}
		if v, ok := m["allowedEnvVars"]; ok && json.Unmarshal(v, &h.AllowedEnvVars) != nil {
			h.malformed = true
		}
	}
	return h, true
}

// HTTPHeaders returns the headers an http handler sends, as Claude Code
// fills them in: $VAR and ${VAR} replaced by getenv's value of VAR when
// AllowedEnvVars lists it, any other left as written.
func (h Handler) HTTPHeaders(getenv func(string) string) map[string]string {
	out := make(map[string]string, len(h.Headers))
	for k, v := range h.Headers {
		var b strings.Builder
		for i := 0; i < len(v); {
			name, n := envRef(v[i:])
			if n > 0 && slices.Contains(h.AllowedEnvVars, name) {
				b.WriteString(getenv(name))
				i += n
				continue
			}
			b.WriteByte(v[i])
			i++
		}
		out[k] = b.String()
	}
	return out
}

// envRef reads the variable s starts with a reference to, $NAME or
// ${NAME}, and how many bytes the reference takes; 0 when s starts with
// none.
func envRef(s string) (name string, n int) {
	if len(s) < 2 || s[0] != '$' {
		return "", 0
	}
	if s[1] == '{' {
		end := strings.IndexByte(s, '}')
		if end < 3 {
			return "", 0
		}
		return s[2:end], end + 1
	}
	end := 1
	for end < len(s) && (s[end] == '_' || 'A' <= s[end] && s[end] <= 'Z' || 'a' <= s[end] && s[end] <= 'z' || end > 1 && '0' <= s[end] && s[end] <= '9') {
		end++
	}
	if end == 1 {
		return "", 0
	}
	return s[1:end], end
}

// Kind says whether a handler runs hookwatch, and whether it is one that
// install manages.
type Kind int

const (
	// NotHookwatch is a handler of the user's, or one Claude Code would
	// not run.
	NotHookwatch Kind = iota
	// Installed is a handler as install writes it: a hookwatch binary with
	// the one argument "hook" (exec or shell form), or an http handler
	// posting to the collector's HookPath. install replaces and removes
	// these.
	Installed
	// Custom runs hookwatch's hook with arguments or, in shell form,
	// environment of its own: install leaves it to the user.
	Custom
	// Launcher is hookwatch's plugin launcher (PluginLauncher) pasted
	// into a settings file.
	Launcher
)

// Kind classifies h. binary is the hookwatch binary being installed, which
// is recognised whatever its name; "" recognises binaries by name only
// (BinaryName and HookBinaryName, with a Windows .exe suffix).
func (h Handler) Kind(binary string) Kind {
	if h.malformed {
		return NotHookwatch
	}
	switch h.Type {
	case "http":
		if _, ok := h.CollectorURL(); ok {
			return Installed
		}
	case "command":
		if !h.Exec && h.Command == PluginLauncher {
			return Launcher
		}
		prog, args, env, ok := h.argv()
		if !ok {
			return NotHookwatch
		}
		k := hookKind(prog, args, binary)
		if k == Installed && env {
			k = Custom
		}
		return k
	}
	return NotHookwatch
}

// CollectorURL returns the base URL of the collector an http handler of
// hookwatch's posts to: its URL without query, fragment and HookPath. ok is
// false when h is not an http handler whose URL path ends with HookPath.
func (h Handler) CollectorURL() (base string, ok bool) {
	if h.Type != "http" || h.malformed {
		return "", false
	}
	u := h.URL
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		u = u[:i]
	}
	return strings.CutSuffix(u, HookPath)
}

// Program returns the program a command handler runs and its arguments:
// Command and Args in exec form, the words of the command line in shell form
// (after any leading NAME=value assignments). ok is false for another type,
// a malformed handler, or a command line sh could not split.
func (h Handler) Program() (prog string, args []string, ok bool) {
	prog, args, _, ok = h.argv()
	return prog, args, ok
}

func (h Handler) argv() (prog string, args []string, env, ok bool) {
	if h.Type != "command" || h.malformed {
		return "", nil, false, false
	}
	if h.Exec {
		return h.Command, h.Args, false, h.Command != ""
	}
	w, ok := ShellWords(h.Command)
	for len(w) > 0 && isAssignment(w[0]) {
		w, env = w[1:], true
	}
	if !ok || len(w) == 0 {
		return "", nil, false, false
	}
	return w[0], w[1:], env, true
}

// isAssignment reports whether a shell word is a NAME=value prefix.
func isAssignment(w string) bool {
	name, _, ok := strings.Cut(w, "=")
	if !ok || name == "" || name[0] >= '0' && name[0] <= '9' {
		return false
	}
	for _, c := range []byte(name) {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// hookKind classifies the command prog args: hookwatch-hook is nothing but
// the hook, whatever its arguments; hookwatch (or binary) runs it as
// "hookwatch hook …".
func hookKind(prog string, args []string, binary string) Kind {
	switch {
	case BaseName(prog) == HookBinaryName:
	case BaseName(prog) == BinaryName || binary != "" && prog == binary:
		if len(args) == 0 || args[0] != "hook" {
			return NotHookwatch
		}
	default:
		return NotHookwatch
	}
	if slices.Equal(args, []string{"hook"}) {
		return Installed
	}
	return Custom
}

// BaseName is the file name of a slash or backslash separated path without
// a Windows .exe suffix: what names one of hookwatch's binaries.
func BaseName(path string) string {
	b := path[strings.LastIndexAny(path, `/\`)+1:]
	return strings.TrimSuffix(strings.TrimSuffix(b, ".exe"), ".EXE")
}

// StatusKind classifies a statusLine command.
type StatusKind int

const (
	StatusOther  StatusKind = iota // not hookwatch's
	StatusPlain                    // '<bin>' statusline, as StatusLineCommand writes it
	StatusWrap                     // '<bin>' statusline --wrap '<theirs>', as StatusLineCommand writes it
	StatusCustom                   // hookwatch statusline with flags of the user's own
)

// ClassifyStatusLine tells whether cmd, a statusLine command, runs
// hookwatch's statusline and, for a wrapper, returns the wrapped command.
// Only the full binary has the statusline subcommand; binary is recognised
// as in Handler.Kind.
func ClassifyStatusLine(cmd, binary string) (kind StatusKind, wrapped string) {
	w, ok := ShellWords(cmd)
	if !ok || len(w) < 2 || w[1] != "statusline" || !(BaseName(w[0]) == BinaryName || binary != "" && w[0] == binary) {
		return StatusOther, ""
	}
	switch {
	case len(w) == 2:
		return StatusPlain, ""
	case len(w) == 4 && w[2] == "--wrap":
		return StatusWrap, w[3]
	}
	return StatusCustom, ""
}

// StatusLineCommand is the statusLine command that runs binary's
// statusline, wrapping the command wrapped when wrap is set. The statusLine
// runs in a shell and has no args field, hence the quoting.
func StatusLineCommand(binary, wrapped string, wrap bool) string {
	s := ShellQuote(binary) + " statusline"
	if wrap {
		s += " --wrap " + ShellQuote(wrapped)
	}
	return s
}

// ShellHookCommand is the shell-form command line of a handler that runs
// binary's hook, for clients that predate the exec form.
func ShellHookCommand(binary string) string { return ShellQuote(binary) + " hook" }

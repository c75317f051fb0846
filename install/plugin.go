package install

// PluginLauncher is the command of every handler in the plugin's
// hooks/hooks.json. A plugin cannot rely on the hookwatch binary being on
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

// pluginDescription is the top-level description of hooks.json.
const pluginDescription = "hookwatch: records every Claude Code hook event and applies hookwatch policies. " +
	"Needs the hookwatch binary: go install github.com/hookwatch/hookwatch/cmd/hookwatch@latest"

// PluginMinClaudeVersion is the oldest Claude Code version whose events the
// plugin registers. Unlike settings files, a plugin's hooks file is
// validated as a whole: one event name the client does not know (such as
// DirectoryAdded before 2.1.219) and none of the plugin's hooks load. It is
// the version the end-to-end tests run.
const PluginMinClaudeVersion = "2.1.197"

// PluginHooks returns the content of the plugin's hooks/hooks.json: the
// events of Install known to PluginMinClaudeVersion, with the same
// sync/async split and timeouts, each running PluginLauncher. A test keeps
// the checked-in file equal to it.
func PluginHooks() []byte {
	v, _ := ParseVersion(PluginMinClaudeVersion)
	var hooks obj
	for _, e := range eventsFor(v) {
		h := obj{{"type", "command"}, {"command", PluginLauncher}}
		if e.Async {
			h = append(h, kv{"async", true})
		}
		h = append(h, kv{"timeout", e.Timeout})
		hooks = append(hooks, kv{e.Name, []any{obj{{"hooks", []any{h}}}}})
	}
	doc := obj{{"description", pluginDescription}, {"hooks", hooks}}
	return []byte(defaultStyle.render(doc, "", true) + "\n")
}

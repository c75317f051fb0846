package install

import "github.com/hookwatch/hookwatch/claudecode"

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
// sync/async split and timeouts, each running claudecode.PluginLauncher. A test keeps
// the checked-in file equal to it.
func PluginHooks() []byte {
	v, _ := ParseVersion(PluginMinClaudeVersion)
	var hooks obj
	for _, e := range eventsFor(v) {
		h := obj{{"type", "command"}, {"command", claudecode.PluginLauncher}}
		if e.Async {
			h = append(h, kv{"async", true})
		}
		h = append(h, kv{"timeout", e.Timeout})
		hooks = append(hooks, kv{e.Name, []any{obj{{"hooks", []any{h}}}}})
	}
	doc := obj{{"description", pluginDescription}, {"hooks", hooks}}
	return []byte(defaultStyle.render(doc, "", true) + "\n")
}

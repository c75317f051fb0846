// Package install adds hookwatch to Claude Code's settings files and takes it
// out again, and renders the plugin's hooks.json and the collector's service
// unit.
//
// Install edits the user's settings.json in place: the user's own hooks, keys,
// key order and formatting stay as they are, and hookwatch's entries live in
// matcher groups of their own so that Uninstall can remove exactly them. After
// Install then Uninstall, with nothing else changed in between, the file is
// byte for byte what it was before.
package install

// DefaultTimeout is the timeout, in seconds, of every handler hookwatch
// registers. The hook answers in milliseconds; the timeout only bounds the
// damage of a wedged process or collector. Claude Code's own default is 600 s,
// which would let a hung hook stall a tool call for ten minutes.
const DefaultTimeout = 10

// Event is one Claude Code hook event and how hookwatch registers for it.
type Event struct {
	// Name is the event name, the key under "hooks" in settings.json.
	Name string
	// Async marks pure telemetry: the handler runs in the background
	// ("async": true) because nothing it could answer would take effect, so
	// the agent should not wait for it.
	Async bool
	// HTTP reports whether --mode http registers a "type": "http" handler;
	// when false, a command handler is registered in both modes.
	HTTP bool
	// Timeout is the handler timeout in seconds.
	Timeout int
	// Why says why the event is synchronous or asynchronous.
	Why string
}

// events is the table of every Claude Code hook event hookwatch registers
// for, in the order of the spec's catalogue (claude-code-hooks.md §1.1, 31
// events as of v2.1.240) minus WorktreeCreate.
//
// WorktreeCreate is left out on purpose: its handler must print the worktree
// path, and any non-zero exit or missing path fails the worktree creation, so
// an observe-only handler there would break --worktree and isolated subagents.
//
// Synchronous events are the ones a policy can block or answer; a handler
// that runs async cannot decide anything (spec §1.7.7). Everything else is
// async so that the agent never waits on telemetry. Two deliberate exceptions:
//   - SessionEnd is synchronous although nothing can answer it: async hooks
//     still running at teardown are killed ("cancelled"), which would lose the
//     event that closes the session. Its output is discarded anyway, and the
//     hook answers in milliseconds.
//   - SubagentStart is async, and a command handler even with --mode http: the
//     client writes the subagent's sidecar meta file (which names the spawning
//     tool call) only after synchronous SubagentStart handlers return, and an
//     http handler is always synchronous.
//
// SessionStart and Setup accept no http handlers (spec §1.2): they get
// command handlers in both modes.
var events = []Event{
	syncEvent("SessionStart", commandOnly, "a policy can add context at session start; no http handlers allowed"),
	syncEvent("Setup", commandOnly, "a policy can add context at init/maintenance; no http handlers allowed"),
	asyncEvent("InstructionsLoaded", withHTTP, "output is discarded"),
	syncEvent("UserPromptSubmit", withHTTP, "can block or scrub the prompt"),
	syncEvent("UserPromptExpansion", withHTTP, "can block a /command expansion"),
	asyncEvent("MessageDisplay", withHTTP, "display-only rewrite nobody uses; fires per rendered batch, waiting would slow the terminal"),
	syncEvent("PreToolUse", withHTTP, "allow/deny/ask/defer or rewrite the tool input"),
	syncEvent("PermissionRequest", withHTTP, "can answer the permission dialog"),
	syncEvent("PermissionDenied", withHTTP, "can ask for a retry"),
	syncEvent("PostToolUse", withHTTP, "can block, rewrite the tool output or add context"),
	syncEvent("PostToolUseFailure", withHTTP, "can add context to a failure"),
	syncEvent("PostToolBatch", withHTTP, "can stop the agentic loop"),
	asyncEvent("Notification", withHTTP, "cannot block; only terminalSequence is honoured"),
	asyncEvent("SubagentStart", commandOnly, "the subagent's meta sidecar is written only after synchronous SubagentStart handlers return"),
	syncEvent("SubagentStop", withHTTP, "can keep the subagent running"),
	syncEvent("TaskCreated", withHTTP, "can roll the task back"),
	syncEvent("TaskCompleted", withHTTP, "can refuse completion"),
	syncEvent("Stop", withHTTP, "can keep the conversation going"),
	asyncEvent("StopFailure", withHTTP, "output and exit code are ignored"),
	syncEvent("TeammateIdle", withHTTP, "can keep the teammate working"),
	syncEvent("ConfigChange", withHTTP, "can block a settings change"),
	asyncEvent("CwdChanged", withHTTP, "cannot block; watchPaths is not a policy concern"),
	asyncEvent("DirectoryAdded", withHTTP, "cannot block"),
	asyncEvent("FileChanged", withHTTP, "cannot block"),
	asyncEvent("WorktreeRemove", withHTTP, "cannot block"),
	syncEvent("PreCompact", withHTTP, "can block compaction"),
	asyncEvent("PostCompact", withHTTP, "cannot block"),
	syncEvent("SessionEnd", withHTTP, "cannot block, but async handlers are killed at teardown and the event would be lost"),
	syncEvent("Elicitation", withHTTP, "can answer or deny an MCP elicitation"),
	syncEvent("ElicitationResult", withHTTP, "can override the user's elicitation answer"),
}

// withHTTP and commandOnly name the http argument of syncEvent and asyncEvent.
const (
	withHTTP    = true
	commandOnly = false
)

// syncEvent returns a synchronous table entry.
func syncEvent(name string, http bool, why string) Event {
	return Event{Name: name, HTTP: http, Timeout: DefaultTimeout, Why: why}
}

// asyncEvent returns a background table entry.
func asyncEvent(name string, http bool, why string) Event {
	return Event{Name: name, Async: true, HTTP: http, Timeout: DefaultTimeout, Why: why}
}

// Events returns a copy of the table of events hookwatch registers for, in
// the order Install writes them.
func Events() []Event {
	return append([]Event(nil), events...)
}

// eventByName returns the table entry of name.
func eventByName(name string) (Event, bool) {
	for _, e := range events {
		if e.Name == name {
			return e, true
		}
	}
	return Event{}, false
}

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

import (
	"strings"

	"github.com/hookwatch/hookwatch/event"
)

// DefaultTimeout is the timeout, in seconds, of every handler hookwatch
// registers. The hook answers in milliseconds; the timeout only bounds the
// damage of a wedged process or collector. Claude Code's own default is 600 s,
// which would let a hung hook stall a tool call for ten minutes.
const DefaultTimeout = 10

// Event is one Claude Code hook event and how hookwatch registers for it.
type Event struct {
	// Name is the event name, the key under "hooks" in settings.json.
	Name string
	// Since is the oldest Claude Code version known to accept the event:
	// the changelog's version where it names the event, else the oldest
	// version seen to accept it. Older versions reject the whole plugin
	// hooks file (and, before 2.1.101, the whole settings file) over an
	// event name they do not know.
	Since string
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
// async so that the agent never waits on telemetry. Three deliberate exceptions:
//   - SessionEnd is synchronous although nothing can answer it: async hooks
//     still running at teardown are killed ("cancelled"), which would lose the
//     event that closes the session. Its output is discarded anyway, and the
//     hook answers in milliseconds.
//   - PostCompact is synchronous for the same reason: a compaction is often
//     the last thing a process does (claude -p /compact exits right after
//     it), and its handler, killed at teardown, lost the summary's event. It
//     costs milliseconds once per compaction, which itself takes seconds.
//   - SubagentStart is async, and a command handler even with --mode http: the
//     client writes the subagent's sidecar meta file (which names the spawning
//     tool call) only after synchronous SubagentStart handlers return, and an
//     http handler is always synchronous.
//
// SessionStart and Setup accept no http handlers (spec §1.2): they get
// command handlers in both modes.
var events = []Event{
	syncEvent("SessionStart", "1.0.62", commandOnly, "a policy can add context at session start; no http handlers allowed"),
	syncEvent("Setup", "2.1.10", commandOnly, "a policy can add context at init/maintenance; no http handlers allowed"),
	asyncEvent("InstructionsLoaded", "2.1.69", withHTTP, "output is discarded"),
	syncEvent("UserPromptSubmit", "1.0.54", withHTTP, "can block or scrub the prompt"),
	syncEvent("UserPromptExpansion", "2.1.197", withHTTP, "can block a /command expansion"),
	asyncEvent("MessageDisplay", "2.1.152", withHTTP, "display-only rewrite nobody uses; fires per rendered batch, waiting would slow the terminal"),
	syncEvent("PreToolUse", "1.0.38", withHTTP, "allow/deny/ask/defer or rewrite the tool input"),
	syncEvent("PermissionRequest", "2.0.45", withHTTP, "can answer the permission dialog"),
	syncEvent("PermissionDenied", "2.1.89", withHTTP, "can ask for a retry"),
	syncEvent("PostToolUse", "1.0.38", withHTTP, "can block, rewrite the tool output or add context"),
	syncEvent("PostToolUseFailure", "2.1.38", withHTTP, "can add context to a failure"),
	syncEvent("PostToolBatch", "2.1.197", withHTTP, "can stop the agentic loop"),
	asyncEvent("Notification", "1.0.38", withHTTP, "cannot block; only terminalSequence is honoured"),
	asyncEvent("SubagentStart", "2.0.43", commandOnly, "the subagent's meta sidecar is written only after synchronous SubagentStart handlers return"),
	syncEvent("SubagentStop", "1.0.41", withHTTP, "can keep the subagent running"),
	syncEvent("TaskCreated", "2.1.84", withHTTP, "can roll the task back"),
	syncEvent("TaskCompleted", "2.1.33", withHTTP, "can refuse completion"),
	syncEvent("Stop", "1.0.38", withHTTP, "can keep the conversation going"),
	asyncEvent("StopFailure", "2.1.78", withHTTP, "output and exit code are ignored"),
	syncEvent("TeammateIdle", "2.1.33", withHTTP, "can keep the teammate working"),
	syncEvent("ConfigChange", "2.1.49", withHTTP, "can block a settings change"),
	asyncEvent("CwdChanged", "2.1.83", withHTTP, "cannot block; watchPaths is not a policy concern"),
	asyncEvent("DirectoryAdded", "2.1.219", withHTTP, "cannot block"),
	asyncEvent("FileChanged", "2.1.83", withHTTP, "cannot block"),
	asyncEvent("WorktreeRemove", "2.1.50", withHTTP, "cannot block"),
	syncEvent("PreCompact", "1.0.48", withHTTP, "can block compaction"),
	syncEvent("PostCompact", "2.1.76", withHTTP, "cannot block, but a compaction is often the last thing before teardown (claude -p /compact), which kills async handlers"),
	syncEvent("SessionEnd", "1.0.85", withHTTP, "cannot block, but async handlers are killed at teardown and the event would be lost"),
	syncEvent("Elicitation", "2.1.76", withHTTP, "can answer or deny an MCP elicitation"),
	syncEvent("ElicitationResult", "2.1.76", withHTTP, "can override the user's elicitation answer"),
}

// withHTTP and commandOnly name the http argument of syncEvent and asyncEvent.
const (
	withHTTP    = true
	commandOnly = false
)

// syncEvent returns a synchronous table entry.
func syncEvent(name, since string, http bool, why string) Event {
	return Event{Name: name, Since: since, HTTP: http, Timeout: DefaultTimeout, Why: why}
}

// asyncEvent returns a background table entry.
func asyncEvent(name, since string, http bool, why string) Event {
	return Event{Name: name, Since: since, Async: true, HTTP: http, Timeout: DefaultTimeout, Why: why}
}

// Events returns a copy of the table of events hookwatch registers for, in
// the order Install writes them.
func Events() []Event {
	return append([]Event(nil), events...)
}

// eventByName returns the table entry of name.
func eventByName(name string) (Event, bool) {
	return lookup(events, name)
}

// lookup returns the entry of name in es.
func lookup(es []Event, name string) (Event, bool) {
	for _, e := range es {
		if e.Name == name {
			return e, true
		}
	}
	return Event{}, false
}

// eventsFor returns the events Claude Code version v accepts; all of them
// when v is nil.
func eventsFor(v Version) []Event {
	if v == nil {
		return events
	}
	var out []Event
	for _, e := range events {
		since, _ := ParseVersion(e.Since)
		if since.Compare(v) <= 0 {
			out = append(out, e)
		}
	}
	return out
}

// codexEvents are the Codex events hookwatch registers for: every one
// Codex 0.169 fires (event.CodexEvents). Codex clamps the timeout of
// SessionEnd and Interrupt to 3 s, with a warning on every run unless the
// file asks for no more.
var codexEvents = func() []Event {
	var out []Event
	for _, name := range event.CodexEvents {
		e := Event{Name: name, Timeout: DefaultTimeout, Why: "Codex"}
		if name == "SessionEnd" || name == "Interrupt" {
			e.Timeout = 3
		}
		out = append(out, e)
	}
	return out
}()

// CommandOnly returns the names of the events that take no http handler,
// in the table's order: --mode http registers the command hook for them.
func CommandOnly() []string {
	var names []string
	for _, e := range events {
		if !e.HTTP {
			names = append(names, e.Name)
		}
	}
	return names
}

// HTTPDownNote says what --mode http loses while the collector does not
// answer, and how it comes back: an http hook cannot spool, so Claude Code
// drops its event, and no policy answers it; the command hooks
// (CommandOnly) spool theirs and start the collector. What the transcripts
// hold comes back — read by a collector on this machine (local) as it
// follows them, by hookwatch import otherwise — and nothing else. install
// prints it for --mode http, and doctor for http hooks installed.
func HTTPDownNote(local bool) string {
	commands := "spools its event"
	back := "hookwatch import sends it from this machine"
	if local {
		commands = "spools its event and starts the collector (unless HOOKWATCH_AUTOSTART=0)"
		back = "the collector, once it runs again, reads it from the transcripts on (serve --watch-transcripts, on by default); " +
			"hookwatch import sends a session it never read that was untouched for a day"
	}
	return "while the collector is down, Claude Code's http hooks fail and their events are lost (an http hook cannot spool), and no policy answers them: " +
		"the tool calls run unchecked. " + strings.Join(CommandOnly(), ", ") + " run the command hook, which " + commands + ". " +
		"What the transcripts hold comes back — the prompts, the tool calls with their outcome, the subagents and the token usage: " + back + ". " +
		"The rest does not: Stop and SessionEnd (the session reads running), compactions, notifications and the other events, " +
		"the policies' decisions and the file states of the stale-context guard. Where that matters (policies, the audit trail), " +
		"command hooks lose nothing: hookwatch install --mode command"
}

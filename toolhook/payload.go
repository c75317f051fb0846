package toolhook

import (
	"encoding/json"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/audit"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/jsonstr"
	"github.com/hookwatch/hookwatch/privacy"
)

// A finished call is recorded as the hook events Claude Code would have
// fired for it: a PreToolUse, then a PostToolUse, or a PostToolUseFailure
// when it failed (none when it was refused: it never ran). The Forwarder
// sends them to a collector as envelopes; the AuditRecorder writes them to
// events.jsonl, and the call's line of tool_calls.jsonl previews the same
// members. Both build them here, so a session's trail written in process
// and the collector's export of the same session hold the same payloads.

// members are the members of a call's payloads that the privacy rules
// change, passed through them once (package privacy, Member): the
// PreToolUse and the PostToolUse share them, and the tool-call record
// previews them.
type members struct {
	// input is the tool_input; output the tool_response as captured (a
	// preview object by default); errText the error as a JSON string. Each
	// is nil when the call has none.
	input, output, errText json.RawMessage
	// decision is the merged decision's decision.Audit, nil when none.
	decision json.RawMessage
	// metadata is the call's Metadata, nil when none.
	metadata json.RawMessage
	// outputPreview is the preview of output, when privacy made it
	// (previewed).
	outputPreview string
	previewed     bool
}

// memberBufs are the buffers membersOf encodes a call's members into, for
// a recorder that encodes them at once and reuses the buffers; nil buffers
// are made.
type memberBufs struct {
	input, output, decision []byte
}

// membersOf encodes c's input, output and error and applies the privacy
// rules o to them. The members may share the memory of bufs (nil: fresh
// buffers), which then holds the grown buffers for the next call.
func membersOf(c *Call, o privacy.Options, bufs *memberBufs) members {
	var fresh memberBufs
	if bufs == nil {
		bufs = &fresh
	}
	buf := func(b *[]byte) []byte {
		if *b == nil {
			*b = make([]byte, 0, 128)
		}
		return (*b)[:0]
	}
	var m members
	var nb [64]byte
	name := jsonstr.AppendQuoted(nb[:0], c.ToolName)
	if c.Input != nil {
		b, err := appendValue(buf(&bufs.input), c.Input)
		bufs.input = b[:0]
		if err == nil {
			m.input, _ = privacy.Member("tool_input", b, name, o)
		}
	}
	if c.Err != nil {
		b := jsonstr.AppendQuoted(buf(&bufs.output), c.Err.Error())
		bufs.output = b[:0]
		m.errText, _ = privacy.Member("error", b, name, o)
	} else if c.Output != nil {
		b, err := appendValue(buf(&bufs.output), c.Output)
		bufs.output = b[:0]
		if err == nil {
			var head, tail string
			m.output, head, tail, m.previewed = privacy.ToolResponse(b, o)
			if m.previewed {
				m.outputPreview = audit.CapturedPreview(head, tail)
			}
		}
	}
	if len(c.Metadata) > 0 {
		// Rare, and fresh: hooks attach metadata to few calls.
		if b, err := appendValue(nil, c.Metadata); err == nil {
			m.metadata, _ = privacy.Member("metadata", b, name, o)
		}
	}
	if c.Decision != nil {
		if a := c.Decision.Audit(); a != nil {
			m.decision = a.AppendJSON(buf(&bufs.decision))
			bufs.decision = m.decision[:0]
		}
	}
	return m
}

// postEvent is the name of the event that ends c, "" when c never ran.
func postEvent(c *Call) string {
	switch {
	case c.Status == attribution.StatusDenied:
		return ""
	case c.Err != nil:
		return event.PostToolUseFailure
	}
	return event.PostToolUse
}

// payloadSize is about the size of a payload of c.
func payloadSize(c *Call, m *members) int {
	return 256 + len(c.AgentID) + len(c.AgentType) + len(c.TaskID) + len(c.Phase) + len(c.SessionID) + len(c.ToolName) +
		len(c.ToolUseID) + len(c.Cwd) + len(c.PermissionMode) + len(c.TranscriptPath) +
		len(m.input) + len(m.output) + len(m.errText) + len(m.metadata)
}

// appendPayload appends the payload of c's event name (PreToolUse or
// postEvent's), its members sorted by key as encoding/json sorts a map's.
// The task is the payload's prompt_id: the turn the call belongs to; cwd,
// permission_mode and transcript_path are the session's (Executor.Dir,
// PermissionMode, TranscriptPath), as on every Claude Code payload. The
// phase (WithPhase) and the hooks' Metadata have no member in Claude
// Code's payloads: they are the Go SDK's own members "phase" and
// "metadata" (docs/audit.md), which readers keep as unknown members.
func appendPayload(b []byte, c *Call, name string, m *members) []byte {
	w := object{b: append(b, '{')}
	post := name != event.PreToolUse
	w.str("agent_id", c.AgentID)
	if c.AgentID != "" {
		// A sub-agent's type, "" included, as Claude Code sends it.
		w.member("agent_type", c.AgentType)
	}
	w.str("cwd", c.Cwd)
	if post {
		w.raw("error", m.errText)
	}
	w.str("hook_event_name", name)
	if post && m.errText != nil && c.Status == attribution.StatusInterrupted {
		w.raw("is_interrupt", json.RawMessage("true"))
	}
	w.raw("metadata", m.metadata)
	w.str("permission_mode", c.PermissionMode)
	w.str("phase", c.Phase)
	w.str("prompt_id", c.TaskID)
	w.str("session_id", c.SessionID)
	w.raw("tool_input", m.input)
	w.str("tool_name", c.ToolName)
	if post {
		w.raw("tool_response", m.output)
	}
	w.str("tool_use_id", c.ToolUseID)
	w.str("transcript_path", c.TranscriptPath)
	return append(w.b, '}')
}

// object appends the members of a payload's JSON object to b, after its
// '{'. The keys are plain words: written as they are, not escaped.
type object struct {
	b   []byte
	sep bool
}

func (w *object) key(k string) {
	if w.sep {
		w.b = append(w.b, ',')
	}
	w.b = append(append(append(w.b, '"'), k...), '"', ':')
	w.sep = true
}

// member appends the string member k.
func (w *object) member(k, v string) {
	w.key(k)
	w.b = jsonstr.AppendQuoted(w.b, v)
}

// str appends the string member k unless v is "".
func (w *object) str(k, v string) {
	if v != "" {
		w.member(k, v)
	}
}

// raw appends the member k of JSON value v unless v is nil.
func (w *object) raw(k string, v json.RawMessage) {
	if v != nil {
		w.key(k)
		w.b = append(w.b, v...)
	}
}

// appendEndPayload appends the payload of the SessionEnd event e, its
// members sorted by key: those Claude Code's SessionEnd has, but for the
// prompt_id of a turn, which the end of a session belongs to none of.
func appendEndPayload(b []byte, e *SessionEnd) []byte {
	w := object{b: append(b, '{')}
	w.str("cwd", e.Cwd)
	w.str("hook_event_name", event.SessionEnd)
	w.str("reason", e.Reason)
	w.str("session_id", e.SessionID)
	w.str("transcript_path", e.TranscriptPath)
	return append(w.b, '}')
}

// appendAgentPayload appends the payload of a sub-agent's start or stop
// (SubagentStart, SubagentStop), its members sorted by key: those Claude
// Code's carry — a stop its permission_mode and stop_hook_active, which a
// start has not — but for agent_transcript_path and last_assistant_message,
// which an agent in Go has not.
func appendAgentPayload(b []byte, e *AgentEvent) []byte {
	stop := attribution.TellsOf(e.Event) == attribution.ToldAgentStop
	w := object{b: append(b, '{')}
	w.str("agent_id", e.AgentID)
	// The type, "" included, as Claude Code sends it.
	w.member("agent_type", e.AgentType)
	w.str("cwd", e.Cwd)
	w.str("hook_event_name", e.Event)
	if stop {
		w.str("permission_mode", e.PermissionMode)
	}
	w.str("prompt_id", e.TaskID)
	w.str("session_id", e.SessionID)
	if stop {
		w.raw("stop_hook_active", json.RawMessage("false"))
	}
	w.str("transcript_path", e.TranscriptPath)
	return append(w.b, '}')
}

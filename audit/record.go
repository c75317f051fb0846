// Package audit owns hookwatch's audit trail: the records of its two JSONL
// files per session (events.jsonl, tool_calls.jsonl), their one canonical
// encoding, the SHA-256 hash chain that makes an edit, a removal, a
// reordering or a truncation evident, the Writer that appends them (one
// directory per session, files 0600, rotated by size) and Verify.
//
// Records are built from what hookwatch already holds — a stored event
// (already redacted) and the session model's tool calls (package
// attribution) — never derived again here. The collector's continuous audit
// directory, `hookwatch export --format jsonl` and any in-process producer
// use the same builders, encoder and Writer, so every trail has the same
// bytes for the same facts. The schema is documented in docs/audit.md and
// published as JSON Schema in docs/audit/.
package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/jsonscan"
	"github.com/hookwatch/hookwatch/privacy"
	"github.com/hookwatch/hookwatch/store"
)

// Schema identifiers, the first member of every line. A change that breaks
// a reader (a field removed, renamed or given another type) takes a new
// version; new fields do not.
const (
	EventSchema    = "hookwatch.audit.event/v1"
	ToolCallSchema = "hookwatch.audit.tool_call/v1"
)

// File names of the two streams in a session's directory (see Writer for
// the names of rotated segments).
const (
	EventsFile    = "events.jsonl"
	ToolCallsFile = "tool_calls.jsonl"
)

// PreviewBytes caps a tool call's input and output previews (a cut preview
// ends with "…"). The input is kept whole in events.jsonl.
const PreviewBytes = 512

// Event is one line of events.jsonl: one stored hook event. The field order
// is the encoding's order.
type Event struct {
	Schema    string `json:"schema"`
	SessionID string `json:"session_id"`
	// Seq is the store's sequence number of the event: increasing in the
	// order the collector committed events, unique across sessions.
	Seq int64 `json:"seq"`
	// ID is the envelope id (a UUIDv7 made by the hook).
	ID string `json:"id"`
	// Time is when the hook read the payload.
	Time    time.Time `json:"time"`
	Runtime string    `json:"runtime"`
	// Kind is where the event came from: a hook ("hook", "statusline"),
	// or a record of the client's files ("rollout", "transcript"), which
	// may tell of a call a hook told of too (event.IsEvidence).
	Kind string `json:"kind"`
	// Event is the hook event name ("" when the payload names none).
	Event string `json:"event"`
	// AgentID is "" for the main agent. AgentType is null when the payload
	// had none and "" for the compaction agent.
	AgentID   string  `json:"agent_id"`
	AgentType *string `json:"agent_type"`
	ToolName  string  `json:"tool_name"`
	ToolUseID string  `json:"tool_use_id"`
	PromptID  string  `json:"prompt_id"`
	// Payload is the hook payload as stored: redacted, tool output cut to
	// the capture setting. Like Decision, it must be valid JSON (EventOf's
	// is: the store validated it).
	Payload json.RawMessage `json:"payload"`
	// Decision is the policy decision the hook answered with
	// (decision.Audit), null when none.
	Decision json.RawMessage `json:"decision"`
}

// ToolCall is one line of tool_calls.jsonl: one tool call of the session
// model.
type ToolCall struct {
	Schema    string `json:"schema"`
	SessionID string `json:"session_id"`
	ToolUseID string `json:"tool_use_id"`
	ToolName  string `json:"tool_name"`
	// AgentID is the agent that made the call ("" the main agent);
	// AgentType as in Event.
	AgentID   string  `json:"agent_id"`
	AgentType *string `json:"agent_type"`
	// ParentToolUseID is the call that spawned the calling agent ("" for
	// the main agent); Depth is the calling agent's depth (0 main).
	ParentToolUseID string `json:"parent_tool_use_id"`
	Depth           int    `json:"depth"`
	// PromptID is the turn the call belongs to (Claude Code's prompt_id,
	// Codex's turn_id), "" when the client sent none.
	PromptID  string     `json:"prompt_id"`
	StartedAt time.Time  `json:"started_at"`
	EndedAt   *time.Time `json:"ended_at"`
	// DurationMS is the client's duration when it reported one, else
	// EndedAt - StartedAt; null while the call has no end.
	DurationMS *int64 `json:"duration_ms"`
	// Status is pending, ok, error, interrupted, denied or rejected.
	Status string `json:"status"`
	Error  string `json:"error"`
	// InputPreview and OutputPreview are the call's input and its output
	// (the PostToolUse tool_response as stored) as compact JSON text — a
	// string's own text — cut to PreviewBytes.
	InputPreview  string `json:"input_preview"`
	OutputPreview string `json:"output_preview"`
	// Decision is the policy decision that counted most for the call
	// (decision.Audit), null when none.
	Decision json.RawMessage `json:"decision"`
}

// EventOf returns the audit record of a stored event. Its payload and
// decision are read from the envelope as stored: redaction happened before
// the store.
func EventOf(e *store.Event) (Event, error) {
	payload, decision, err := envelopeParts(e)
	if err != nil {
		return Event{}, err
	}
	return Event{
		Schema: EventSchema, SessionID: e.SessionID, Seq: e.Seq, ID: e.ID, Time: e.Time.UTC(),
		Runtime: e.Runtime, Kind: e.Kind, Event: e.Event, AgentID: e.AgentID, AgentType: e.AgentType,
		ToolName: e.ToolName, ToolUseID: e.ToolUseID, PromptID: e.PromptID,
		Payload: orNull(payload), Decision: orNull(decision),
	}, nil
}

// ToolCallOf returns the audit record of a call of the session model;
// output is the preview of its output (Outputs), "" when none.
func ToolCallOf(c *attribution.ToolCall, output string) ToolCall {
	r := ToolCall{
		Schema: ToolCallSchema, SessionID: c.SessionID, ToolUseID: c.ToolUseID, ToolName: c.ToolName,
		AgentID: c.AgentID, AgentType: c.AgentType, ParentToolUseID: c.ParentToolUseID, Depth: c.Depth,
		PromptID: c.PromptID, StartedAt: c.StartedAt.UTC(), DurationMS: c.DurationMS,
		Status: c.Status, Error: c.Error, InputPreview: Preview(c.Input), OutputPreview: output,
		Decision: orNull(c.Decision),
	}
	if c.EndedAt != nil {
		t := c.EndedAt.UTC()
		r.EndedAt = &t
	}
	return r
}

// Outputs are the previews of calls' outputs, by tool_use_id, read from
// their PostToolUse events: the model keeps no output.
type Outputs map[string]string

// Add keeps the output of e when it is a PostToolUse with a tool_response.
func (o Outputs) Add(e *store.Event) {
	if e.Event != event.PostToolUse || e.ToolUseID == "" {
		return
	}
	payload, _, err := envelopeParts(e)
	if err != nil {
		return
	}
	var p struct {
		ToolResponse json.RawMessage `json:"tool_response"`
	}
	if json.Unmarshal(payload, &p) == nil && len(p.ToolResponse) > 0 {
		o[e.ToolUseID] = Preview(p.ToolResponse)
	}
}

// Preview returns raw JSON as preview text: a string's own text, the head
// (and tail) of what the privacy rules kept of a tool's output, any other
// value compact, cut at a character boundary to PreviewBytes with "…"
// appended; "" for nothing or null.
func Preview(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	if raw[0] == '"' {
		if s, ok := jsonscan.Unquote(raw); ok {
			return cut(s)
		}
	}
	// What the privacy rules kept of a tool's output: its head and tail.
	// A patch's input reduced to its headers is previewed as any input.
	if raw[0] == '{' && bytes.Contains(raw, []byte(`"hookwatch_capture"`)) {
		if c, ok := privacy.ReadCapture(raw); ok && c.Mode != privacy.CapturePatch {
			return CapturedPreview(c.Head, c.Tail)
		}
	}
	if !bytes.ContainsAny(raw, " \t\r\n") {
		// Compact already (what a hand encoder or encoding/json wrote), or
		// not JSON: either way its text as it is, without a second pass.
		return cut(string(raw))
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return cut(string(raw))
	}
	return cut(b.String())
}

// CapturedPreview is Preview of a privacy preview object holding head and
// tail (privacy.ToolResponse), for its producer, which need not decode it.
func CapturedPreview(head, tail string) string {
	if tail != "" {
		return cut(head + " … " + tail)
	}
	return cut(head)
}

func cut(s string) string {
	if len(s) <= PreviewBytes {
		return s
	}
	n := PreviewBytes
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// envelopeParts returns the payload and the decision of a stored event's
// envelope.
func envelopeParts(e *store.Event) (payload, decision json.RawMessage, err error) {
	if e.Decoded != nil {
		return e.Decoded.Payload, e.Decoded.Decision, nil
	}
	var env struct {
		Decision json.RawMessage `json:"decision"`
		Payload  json.RawMessage `json:"payload"`
	}
	if err := json.Unmarshal(e.Envelope, &env); err != nil {
		return nil, nil, fmt.Errorf("cannot read the envelope of event %d: %w", e.Seq, err)
	}
	return env.Payload, env.Decision, nil
}

func orNull(raw json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(raw)) == 0 {
		return json.RawMessage("null")
	}
	return raw
}

package audit

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"

	"github.com/hookwatch/hookwatch/internal/jsonstr"
)

// The records append themselves without reflection: the trail is written
// for every event the collector commits, and encoding/json spent most of
// that time validating and compacting payloads the store has validated
// already. Members come in the order of the fields and their JSON names
// are the fields' tags (a test decodes every golden line back into the
// record it was written from). Raw JSON (a payload, a decision) is written
// as stored, compacted only when it spans lines, which a JSONL line cannot.

func (r *Event) appendJSON(b []byte) []byte {
	b = append(b, `{"schema":`...)
	b = jsonstr.AppendQuoted(b, r.Schema)
	b = append(b, `,"session_id":`...)
	b = jsonstr.AppendQuoted(b, r.SessionID)
	b = append(b, `,"seq":`...)
	b = strconv.AppendInt(b, r.Seq, 10)
	b = append(b, `,"id":`...)
	b = jsonstr.AppendQuoted(b, r.ID)
	b = append(b, `,"time":`...)
	b = appendTime(b, r.Time)
	b = append(b, `,"runtime":`...)
	b = jsonstr.AppendQuoted(b, r.Runtime)
	b = append(b, `,"kind":`...)
	b = jsonstr.AppendQuoted(b, r.Kind)
	b = append(b, `,"event":`...)
	b = jsonstr.AppendQuoted(b, r.Event)
	b = append(b, `,"agent_id":`...)
	b = jsonstr.AppendQuoted(b, r.AgentID)
	b = append(b, `,"agent_type":`...)
	b = appendOptString(b, r.AgentType)
	b = append(b, `,"tool_name":`...)
	b = jsonstr.AppendQuoted(b, r.ToolName)
	b = append(b, `,"tool_use_id":`...)
	b = jsonstr.AppendQuoted(b, r.ToolUseID)
	b = append(b, `,"prompt_id":`...)
	b = jsonstr.AppendQuoted(b, r.PromptID)
	b = append(b, `,"payload":`...)
	b = appendRaw(b, r.Payload)
	b = append(b, `,"decision":`...)
	b = appendRaw(b, r.Decision)
	return append(b, '}')
}

func (r *ToolCall) appendJSON(b []byte) []byte {
	b = append(b, `{"schema":`...)
	b = jsonstr.AppendQuoted(b, r.Schema)
	b = append(b, `,"session_id":`...)
	b = jsonstr.AppendQuoted(b, r.SessionID)
	b = append(b, `,"tool_use_id":`...)
	b = jsonstr.AppendQuoted(b, r.ToolUseID)
	b = append(b, `,"tool_name":`...)
	b = jsonstr.AppendQuoted(b, r.ToolName)
	b = append(b, `,"agent_id":`...)
	b = jsonstr.AppendQuoted(b, r.AgentID)
	b = append(b, `,"agent_type":`...)
	b = appendOptString(b, r.AgentType)
	b = append(b, `,"parent_tool_use_id":`...)
	b = jsonstr.AppendQuoted(b, r.ParentToolUseID)
	b = append(b, `,"depth":`...)
	b = strconv.AppendInt(b, int64(r.Depth), 10)
	b = append(b, `,"prompt_id":`...)
	b = jsonstr.AppendQuoted(b, r.PromptID)
	b = append(b, `,"started_at":`...)
	b = appendTime(b, r.StartedAt)
	b = append(b, `,"ended_at":`...)
	if r.EndedAt == nil {
		b = append(b, "null"...)
	} else {
		b = appendTime(b, *r.EndedAt)
	}
	b = append(b, `,"duration_ms":`...)
	if r.DurationMS == nil {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, *r.DurationMS, 10)
	}
	b = append(b, `,"status":`...)
	b = jsonstr.AppendQuoted(b, r.Status)
	b = append(b, `,"error":`...)
	b = jsonstr.AppendQuoted(b, r.Error)
	b = append(b, `,"input_preview":`...)
	b = jsonstr.AppendQuoted(b, r.InputPreview)
	b = append(b, `,"output_preview":`...)
	b = jsonstr.AppendQuoted(b, r.OutputPreview)
	b = append(b, `,"decision":`...)
	b = appendRaw(b, r.Decision)
	return append(b, '}')
}

func appendTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.UTC().AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}

func appendOptString(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return jsonstr.AppendQuoted(b, *s)
}

// appendRaw appends stored JSON: null for none, compacted when it holds a
// line break (JSON text has raw line breaks only between tokens). It is
// not validated again: records hold what the store validated.
func appendRaw(b []byte, raw json.RawMessage) []byte {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return append(b, "null"...)
	}
	if bytes.IndexByte(raw, '\n') < 0 && bytes.IndexByte(raw, '\r') < 0 {
		return append(b, raw...)
	}
	var c bytes.Buffer
	if err := json.Compact(&c, raw); err != nil {
		// Not JSON after all: its text, so that the line stays one object.
		return jsonstr.AppendQuoted(b, string(raw))
	}
	return append(b, c.Bytes()...)
}

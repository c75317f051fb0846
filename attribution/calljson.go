package attribution

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/jsonscan"
	"github.com/hookwatch/hookwatch/internal/jsonstr"
)

// AppendJSON appends to b the JSON document of c: byte for byte what
// json.Marshal(c) returns, or its error. The collector stores one per call
// it writes, and encoding/json's reflection was most of that cost. The
// struct tags stay the document's one definition: TestToolCallJSON and
// FuzzToolCallJSON hold this encoder to json.Marshal on calls with every
// field set (a field added without its place here fails them) and on the
// calls of the real captures. A command's analysis is shell.Analysis's
// AppendJSON; a call with a time or a raw document json.Marshal refuses is
// left to encoding/json, for its error.
func (c *ToolCall) AppendJSON(b []byte) ([]byte, error) {
	start := len(b)
	if b, ok := c.appendJSON(b); ok {
		return b, nil
	}
	doc, err := json.Marshal(c)
	if err != nil {
		return b[:start], err
	}
	return append(b[:start], doc...), nil
}

// appendJSON is AppendJSON; it reports false, having appended part of the
// document, when a value is one that AppendJSON leaves to encoding/json.
func (c *ToolCall) appendJSON(b []byte) ([]byte, bool) {
	ok := true
	str := func(name, s string) {
		b = append(b, name...)
		b = jsonstr.AppendQuotedHTML(b, s)
	}
	optStr := func(name, s string) {
		if s != "" {
			str(name, s)
		}
	}
	at := func(name string, t time.Time) {
		b = append(b, name...)
		b, ok = appendTime(b, t, ok)
	}
	optAt := func(name string, t *time.Time, omitEmpty bool) {
		switch {
		case t != nil:
			at(name, *t)
		case !omitEmpty:
			b = append(b, name...)
			b = append(b, "null"...)
		}
	}
	raw := func(name string, m json.RawMessage) {
		b = append(b, name...)
		b, ok = appendRaw(b, m, ok)
	}
	strs := func(name string, ss []string) {
		if len(ss) == 0 {
			return
		}
		b = jsonstr.AppendArrayHTML(append(b, name...), ss)
	}

	str(`{"tool_use_id":`, c.ToolUseID)
	if c.SyntheticID {
		b = append(b, `,"synthetic_id":true`...)
	}
	if c.Failed {
		b = append(b, `,"failed":true`...)
	}
	if c.StartSources != 0 {
		b = c.StartSources.appendJSON(append(b, `,"start_sources":`...))
	}
	if c.EndSources != 0 {
		b = c.EndSources.appendJSON(append(b, `,"end_sources":`...))
	}
	str(`,"session_id":`, c.SessionID)
	str(`,"agent_id":`, c.AgentID)
	if c.AgentType == nil {
		b = append(b, `,"agent_type":null`...)
	} else {
		str(`,"agent_type":`, *c.AgentType)
	}
	str(`,"tool_name":`, c.ToolName)
	str(`,"family":`, c.Family)
	str(`,"status":`, c.Status)
	at(`,"started_at":`, c.StartedAt)
	optAt(`,"ended_at":`, c.EndedAt, false)
	b = append(b, `,"duration_ms":`...)
	if c.DurationMS == nil {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, *c.DurationMS, 10)
	}
	if len(c.Input) > 0 {
		raw(`,"input":`, c.Input)
	}
	optStr(`,"prompt_id":`, c.PromptID)

	// classify.Meta, embedded: its fields in its place.
	m := &c.Meta
	str(`,"subtype":`, m.Subtype)
	str(`,"subtype_group":`, m.Group)
	str(`,"operation":`, m.Operation)
	optStr(`,"entity_type":`, m.EntityType)
	optStr(`,"entity_name":`, m.EntityName)
	str(`,"importance":`, m.Importance)
	optStr(`,"effect":`, string(m.Effect))
	strs(`,"files_read":`, m.FilesRead)
	strs(`,"files_written":`, m.FilesWritten)
	if m.Command != nil {
		b = m.Command.AppendJSON(append(b, `,"command":`...))
	}
	optStr(`,"mcp_server":`, m.MCPServer)
	optStr(`,"mcp_tool":`, m.MCPTool)

	str(`,"parent_tool_use_id":`, c.ParentToolUseID)
	b = append(b, `,"depth":`...)
	b = strconv.AppendInt(b, int64(c.Depth), 10)

	// CallDetail, embedded: its fields in its place, none when it is nil.
	x := c.CallDetail
	if x == nil {
		return append(b, '}'), ok
	}
	optStr(`,"error":`, x.Error)
	if x.ExitCode != nil {
		b = append(b, `,"exit_code":`...)
		b = strconv.AppendInt(b, int64(*x.ExitCode), 10)
	}
	if len(x.Files) > 0 {
		b = append(b, `,"files":`...)
		b = appendPatchFiles(b, x.Files)
	}
	if len(x.FileStates) > 0 {
		b = append(b, `,"file_states":`...)
		b = event.AppendFileStates(b, x.FileStates, jsonstr.AppendQuotedHTML)
	}
	optStr(`,"spawned_agent_id":`, x.SpawnedAgentID)
	optAt(`,"notified_at":`, x.NotifiedAt, true)
	optStr(`,"notification_status":`, x.NotificationStatus)
	raw(`,"decision":`, x.Decision)
	if len(x.Decisions) > 0 {
		b = append(b, `,"decisions":[`...)
		for i := range x.Decisions {
			d := &x.Decisions[i]
			if i > 0 {
				b = append(b, ',')
			}
			str(`{"event":`, d.Event)
			at(`,"at":`, d.At)
			raw(`,"decision":`, d.Decision)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if pr := x.PermissionRequest; pr != nil {
		at(`,"permission_request":{"at":`, pr.At)
		str(`,"matched_by":`, pr.MatchedBy)
		if len(pr.Decision) > 0 {
			raw(`,"decision":`, pr.Decision)
		}
		b = append(b, '}')
	}
	if pd := x.PermissionDenied; pd != nil {
		at(`,"permission_denied":{"at":`, pd.At)
		optStr(`,"reason":`, pd.Reason)
		b = append(b, '}')
	}
	optStr(`,"traceparent":`, x.Traceparent)
	return append(b, '}'), ok
}

func appendPatchFiles(b []byte, fs []event.PatchFile) []byte {
	b = append(b, '[')
	for i, f := range fs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"op":`...)
		b = jsonstr.AppendQuotedHTML(b, f.Op)
		b = append(b, `,"path":`...)
		b = jsonstr.AppendQuotedHTML(b, f.Path)
		if f.MoveTo != "" {
			b = append(b, `,"move_to":`...)
			b = jsonstr.AppendQuotedHTML(b, f.MoveTo)
		}
		b = append(b, '}')
	}
	return append(b, ']')
}

// appendTime appends t as time.Time's MarshalJSON does; ok false (and ok
// passed on otherwise) for a time it refuses: a year outside 0–9999 or a
// zone offset of a day or more.
func appendTime(b []byte, t time.Time, ok bool) ([]byte, bool) {
	b = append(b, '"')
	n := len(b)
	b = t.AppendFormat(b, time.RFC3339Nano)
	switch end := b[n:]; {
	case len(end) < len("0000-") || end[4] != '-':
		ok = false
	case end[len(end)-1] != 'Z':
		// ±hh:mm: MarshalJSON refuses hh ≥ 24, which AppendFormat
		// writes with more than two digits or as two from 24 on.
		zone := end[len(end)-len("07:00"):]
		if c := end[len(end)-len("Z07:00")]; c >= '0' && c <= '9' || zone[0] > '2' || zone[0] == '2' && zone[1] >= '4' {
			ok = false
		}
	}
	return append(b, '"'), ok
}

// appendRaw appends m as encoding/json writes a json.RawMessage: null for
// nil, else compacted, with '<', '>', '&', U+2028 and U+2029 escaped as
// json.Marshal escapes them; ok false (and ok passed on otherwise) for a
// value it refuses (empty, or not valid JSON).
func appendRaw(b []byte, m json.RawMessage, ok bool) ([]byte, bool) {
	if m == nil {
		return append(b, "null"...), ok
	}
	if _, valid := jsonscan.Valid(m); !valid {
		return b, false
	}
	const hex = "0123456789abcdef"
	in := false // in a string
	start := 0
	for i := 0; i < len(m); i++ {
		switch c := m[i]; {
		case in && c == '\\':
			i++ // the escaped byte, which ends nothing
		case c == '"':
			in = !in
		case !in && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			b = append(b, m[start:i]...)
			start = i + 1
		case c == '<' || c == '>' || c == '&':
			b = append(b, m[start:i]...)
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			start = i + 1
		case c == 0xe2 && i+2 < len(m) && m[i+1] == 0x80 && m[i+2]&^1 == 0xa8:
			b = append(b, m[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[m[i+2]&0xf])
			i += 2
			start = i + 1
		}
	}
	return append(b, m[start:]...), ok
}

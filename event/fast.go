package event

import "encoding/json"

// The hook decodes one payload per process, where the reflective decoder's
// first walk of a struct type costs more than the rest of the decode. The
// fields every event carries (Common) and those of PreToolUse, the event
// every tool call waits for, are therefore read by the hand-written code
// below; TestFastDecodeMatchesReflection holds it to the reflective decoder,
// field for field.

// fieldRef is one field to read: its JSON key and where to put it.
type fieldRef struct {
	key string
	dst any // *string, *OptString, **Effort or *json.RawMessage
}

// commonFields lists Common's fields in struct order (the order the
// reflective decoder reports mistyped fields in).
func commonFields(c *Common) [12]fieldRef {
	return [12]fieldRef{
		{"session_id", &c.SessionID},
		{"transcript_path", &c.TranscriptPath},
		{"cwd", &c.CWD},
		{"hook_event_name", &c.HookEventName},
		{"permission_mode", &c.PermissionMode},
		{"prompt_id", &c.PromptID},
		{"agent_id", &c.AgentID},
		{"agent_type", &c.AgentType},
		{"effort", &c.Effort},
		{"scratchpad_dir", &c.ScratchpadDir},
		{"model", &c.Model},
		{"turn_id", &c.TurnID},
	}
}

// decodeFields reads fields from raw with the reflective decoder's rules.
func decodeFields(raw Object, fields []fieldRef, mistyped *[]string) {
	for _, f := range fields {
		rv, present := raw[f.key]
		if !present {
			continue
		}
		if !decodeField(trimJSON(rv), f.dst) {
			*mistyped = append(*mistyped, f.key)
		}
	}
}

func decodeField(rv json.RawMessage, dst any) bool {
	if len(rv) == 0 || string(rv) == "null" {
		return true // null is absent
	}
	switch d := dst.(type) {
	case *string:
		s, ok := lenientString(rv)
		if ok {
			*d = s
		}
		return ok && rv[0] == '"'
	case *OptString:
		s, ok := lenientString(rv)
		if ok {
			*d = OptString{Value: s, Set: true}
		}
		return ok && rv[0] == '"'
	case **Effort:
		e, ok := decodeEffort(rv)
		if ok {
			*d = e
		}
		return ok
	case *json.RawMessage:
		*d = append(json.RawMessage(nil), rv...)
		return true
	}
	panic("event: decodeField of an unexpected type") // a programming error, caught by the tests
}

// decodePreToolUse reads PreToolUse's fields.
func decodePreToolUse(raw Object, e *PreToolUseInput, mistyped *[]string) {
	fields := [3]fieldRef{
		{"tool_name", &e.ToolName},
		{"tool_input", &e.ToolInput},
		{"tool_use_id", &e.ToolUseID},
	}
	decodeFields(raw, fields[:], mistyped)
}

func trimJSON(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\n' || b[0] == '\r') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

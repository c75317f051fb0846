package event

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/hookwatch/hookwatch/internal/jsonscan"
)

// The hook decodes one payload per process, where the reflective decoder's
// first walk of a struct type costs more than the rest of the decode. The
// fields every event carries (Common) and those of the events of every tool
// call — PreToolUse, PostToolUse and PostToolBatch — are therefore read by
// the hand-written code below; TestFastDecodeMatchesReflection holds it to
// the reflective decoder, field for field.

// fieldRef is one field to read: its JSON key and where to put it.
type fieldRef struct {
	key string
	dst any // *string, *OptString, **Effort, **float64 or *json.RawMessage
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
// Strings are shared through repeatedStrings when repeated says that their
// values repeat from one event to the next; raw JSON values are raw's own
// when share says so (FromObjectShared), else copies.
func decodeFields(raw Object, fields []fieldRef, mistyped *[]string, repeated, share bool) {
	for _, f := range fields {
		rv, present := raw[f.key]
		if !present {
			continue
		}
		if !decodeField(trimJSON(rv), f.dst, repeated, share) {
			*mistyped = append(*mistyped, f.key)
		}
	}
}

func decodeField(rv json.RawMessage, dst any, repeated, share bool) bool {
	if len(rv) == 0 || string(rv) == "null" {
		return true // null is absent
	}
	str := lenientString
	if repeated {
		str = repeatedString
	}
	switch d := dst.(type) {
	case *string:
		s, ok := str(rv)
		if ok {
			*d = s
		}
		return ok && rv[0] == '"'
	case *OptString:
		s, ok := str(rv)
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
		if share {
			*d = rv[:len(rv):len(rv)] // an append copies
		} else {
			*d = append(json.RawMessage(nil), rv...)
		}
		return true
	case **float64: // as decodeScalarPtr
		f, err := strconv.ParseFloat(string(rv), 64)
		if err != nil {
			return false
		}
		*d = &f
		return true
	}
	panic("event: decodeField of an unexpected type") // a programming error, caught by the tests
}

// decodePreToolUse reads PreToolUse's fields.
func decodePreToolUse(raw Object, e *PreToolUseInput, mistyped *[]string, share bool) {
	fields := [3]fieldRef{
		{"tool_name", &e.ToolName},
		{"tool_input", &e.ToolInput},
		{"tool_use_id", &e.ToolUseID},
	}
	decodeFields(raw, fields[:], mistyped, false, share)
}

// decodePostToolUse reads PostToolUse's fields.
func decodePostToolUse(raw Object, e *PostToolUseInput, mistyped *[]string, share bool) {
	fields := [5]fieldRef{
		{"tool_name", &e.ToolName},
		{"tool_input", &e.ToolInput},
		{"tool_use_id", &e.ToolUseID},
		{"tool_response", &e.ToolResponse},
		{"duration_ms", &e.DurationMS},
	}
	decodeFields(raw, fields[:], mistyped, false, share)
}

// decodePostToolBatch reads PostToolBatch's tool_calls. The reflective
// decoder hands a slice to encoding/json, whose reflection on its first
// use is most of the cost of a hook run's decode; batchedCalls reads the
// plain case without it and leaves anything else to encoding/json.
func decodePostToolBatch(raw Object, e *PostToolBatchInput, mistyped *[]string) {
	rv, present := raw["tool_calls"]
	if !present {
		return
	}
	rv = trimJSON(rv)
	if len(rv) == 0 || string(rv) == "null" {
		return // null is absent
	}
	calls, plain := batchedCalls(rv)
	if !plain {
		calls = nil
		if json.Unmarshal(rv, &calls) != nil {
			*mistyped = append(*mistyped, "tool_calls")
			return
		}
	}
	e.ToolCalls = calls
}

// batchedCalls decodes a tool_calls array as json.Unmarshal into
// []BatchedToolCall does, when it is plain: an array of objects whose
// fields are spelled as the client spells them, with strings (or null)
// where strings go. plain is false for anything else (a key that matches a
// field only by case, an element that is not an object, a mistyped field),
// which the caller leaves to encoding/json.
func batchedCalls(rv []byte) (calls []BatchedToolCall, plain bool) {
	if rv[0] != '[' {
		return nil, false
	}
	calls, plain = []BatchedToolCall{}, true
	str := func(dst *string, val []byte) { plain = intoString(dst, val) && plain }
	_, ok := jsonscan.Elements(rv, func(elem []byte) {
		if !plain || elem[0] != '{' {
			plain = false
			return
		}
		var c BatchedToolCall
		_, ok := jsonscan.Members(elem, func(key, val []byte) {
			switch string(key) {
			case `"tool_name"`:
				str(&c.ToolName, val)
			case `"tool_use_id"`:
				str(&c.ToolUseID, val)
			case `"tool_input"`:
				c.ToolInput = append(json.RawMessage(nil), val...)
			case `"tool_response"`:
				c.ToolResponse = append(json.RawMessage(nil), val...)
			default:
				plain = plain && !foldsToBatchedField(key)
			}
		})
		plain = plain && ok
		calls = append(calls, c)
	})
	return calls, ok && plain
}

// foldsToBatchedField reports whether encoding/json might match key (as
// written, quotes included) to a field of BatchedToolCall by its
// case-insensitive rule: any key with an escape or a non-ASCII byte, to be
// safe, or one equal to a field's name but for case.
func foldsToBatchedField(key []byte) bool {
	name := string(key[1 : len(key)-1])
	for i := 0; i < len(name); i++ {
		if name[i] == '\\' || name[i] >= 0x80 {
			return true
		}
	}
	for _, f := range [...]string{"tool_name", "tool_input", "tool_use_id", "tool_response"} {
		if strings.EqualFold(name, f) {
			return true
		}
	}
	return false
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

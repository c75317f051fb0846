package event

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/hookwatch/hookwatch/internal/jsonscan"
)

// The hook decodes one payload per process, where the reflective decoder's
// first walk of a struct type costs more than the rest of the decode. The
// fields every event carries (Common) and those of the events of every tool
// call — PreToolUse, PostToolUse and PostToolBatch — are therefore read by
// the hand-written code below; TestFastDecodeMatchesReflection holds it to
// the reflective decoder, field for field.

// fieldRef is one field to read: its JSON key, its slot among the keys
// the code below reads (fieldSlot) and where to put it.
type fieldRef struct {
	key  string
	slot int
	dst  any // *string, *OptString, **Effort, **float64 or *json.RawMessage
}

// slotHookEventName is hook_event_name's slot among Common's (commonFields),
// which the name of the event picks a payload's object by.
const slotHookEventName = 3

// The slots of the keys the code below reads, in a fields' values, after
// Common's.
const (
	slotToolName = 13 + iota
	slotToolInput
	slotToolUseID
	slotToolResponse
	slotDurationMS
	numSlots
)

// fieldSlot returns the slot of a key the code below reads, -1 for any
// other.
func fieldSlot(k string) int {
	switch k {
	case "session_id":
		return 0
	case "transcript_path":
		return 1
	case "cwd":
		return 2
	case "hook_event_name":
		return slotHookEventName
	case "permission_mode":
		return 4
	case "prompt_id":
		return 5
	case "agent_id":
		return 6
	case "agent_type":
		return 7
	case "effort":
		return 8
	case "scratchpad_dir":
		return 9
	case "model":
		return 10
	case "turn_id":
		return 11
	case "agent_nickname":
		return 12
	case "tool_name":
		return slotToolName
	case "tool_input":
		return slotToolInput
	case "tool_use_id":
		return slotToolUseID
	case "tool_response":
		return slotToolResponse
	case "duration_ms":
		return slotDurationMS
	}
	return -1
}

// fields is where the code below finds a payload's members: its map, or,
// for a payload given as its members (FromMembers, ViewsOf), their values
// by slot, found in one pass over them rather than a lookup of the map
// each, and the map made only for a reader that needs it (object).
type fields struct {
	raw     Object
	ms      Members
	indexed bool
	vals    [numSlots]json.RawMessage
}

// maxOtherKeys is how many keys that have no slot index compares one with
// another to find a repeated one; past it, the map finds it.
const maxOtherKeys = 16

// index reads the values of ms into fs, and reports whether their keys are
// distinct (known, false when it cannot tell).
func (fs *fields) index(ms Members) (distinct, known bool) {
	fs.indexed, fs.ms = true, ms
	var seen uint32
	var othersBuf [maxOtherKeys]string
	others := othersBuf[:0]
	for _, m := range ms {
		if s := fieldSlot(m.Key); s >= 0 {
			if seen&(1<<s) != 0 {
				return false, true
			}
			seen |= 1 << s
			fs.vals[s] = m.Value
			continue
		}
		if len(others) == len(othersBuf) {
			return false, false
		}
		for _, k := range others {
			if k == m.Key {
				return false, true
			}
		}
		others = append(others, m.Key)
	}
	return true, true
}

// object returns the map of the payload's members, made of them if need be.
func (fs *fields) object() Object {
	if fs.raw == nil && fs.ms != nil {
		fs.raw = fs.ms.Object()
	}
	return fs.raw
}

// value returns the member of the field.
func (fs *fields) value(f fieldRef) (json.RawMessage, bool) {
	if fs.indexed {
		v := fs.vals[f.slot]
		return v, v != nil // a member's value is never empty
	}
	v, ok := fs.raw[f.key]
	return v, ok
}

// commonFields lists Common's fields in struct order (the order the
// reflective decoder reports mistyped fields in).
func commonFields(c *Common) [13]fieldRef {
	return [13]fieldRef{
		{"session_id", 0, &c.SessionID},
		{"transcript_path", 1, &c.TranscriptPath},
		{"cwd", 2, &c.CWD},
		{"hook_event_name", slotHookEventName, &c.HookEventName},
		{"permission_mode", 4, &c.PermissionMode},
		{"prompt_id", 5, &c.PromptID},
		{"agent_id", 6, &c.AgentID},
		{"agent_type", 7, &c.AgentType},
		{"effort", 8, &c.Effort},
		{"scratchpad_dir", 9, &c.ScratchpadDir},
		{"model", 10, &c.Model},
		{"turn_id", 11, &c.TurnID},
		{"agent_nickname", 12, &c.AgentNickname},
	}
}

// decodeFields reads fields from src with the reflective decoder's rules.
// Strings are shared through repeatedStrings when repeated says that their
// values repeat from one event to the next; raw JSON values, and the other
// strings where they are written as they read, are the members' own bytes
// when share says so (FromObjectShared), else copies.
func decodeFields(src *fields, refs []fieldRef, mistyped *[]string, repeated, share bool) {
	for _, f := range refs {
		rv, present := src.value(f)
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
	switch {
	case repeated:
		str = repeatedString
	case share:
		str = sharedString
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
func decodePreToolUse(src *fields, e *PreToolUseInput, mistyped *[]string, share bool) {
	refs := [3]fieldRef{
		{"tool_name", slotToolName, &e.ToolName},
		{"tool_input", slotToolInput, &e.ToolInput},
		{"tool_use_id", slotToolUseID, &e.ToolUseID},
	}
	decodeFields(src, refs[:], mistyped, false, share)
}

// decodePostToolUse reads PostToolUse's fields; duration, when not nil, is
// where DurationMS is kept (in the object of the event, not a float of its
// own).
func decodePostToolUse(src *fields, e *PostToolUseInput, mistyped *[]string, share bool, duration *float64) {
	refs := [5]fieldRef{
		{"tool_name", slotToolName, &e.ToolName},
		{"tool_input", slotToolInput, &e.ToolInput},
		{"tool_use_id", slotToolUseID, &e.ToolUseID},
		{"tool_response", slotToolResponse, &e.ToolResponse},
		{"duration_ms", slotDurationMS, &e.DurationMS},
	}
	if duration == nil {
		decodeFields(src, refs[:], mistyped, false, share)
		return
	}
	decodeFields(src, refs[:4], mistyped, false, share)
	// duration_ms last, as decodeFields would.
	d := refs[4]
	rv, present := src.value(d)
	if !present {
		return
	}
	if rv = trimJSON(rv); len(rv) == 0 || string(rv) == "null" {
		return // null is absent
	}
	f, err := strconv.ParseFloat(string(rv), 64) // as decodeField
	if err != nil {
		*mistyped = append(*mistyped, d.key)
		return
	}
	*duration = f
	e.DurationMS = duration
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

// sharedString is lenientString for the members of a payload whose bytes
// nothing changes and that the typed views keep (FromObjectShared): a
// string written as it reads (no escape, valid UTF-8) is those bytes, not
// a copy of them.
func sharedString(rv json.RawMessage) (string, bool) {
	if n := len(rv); n > 2 && rv[0] == '"' && rv[n-1] == '"' {
		c := rv[1 : n-1]
		if s, ok := constantValue(c); ok {
			return s, true
		}
		if bytes.IndexByte(c, '\\') < 0 && utf8.Valid(c) {
			return unsafe.String(&c[0], len(c)), true
		}
	}
	return lenientString(rv)
}

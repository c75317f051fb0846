// Package event holds the typed payloads of every Claude Code and Codex hook
// event, their lenient reader, and the envelope in which hookwatch carries a
// payload from the hook to the collector.
//
// Payloads are hostile input: they contain file contents and command output,
// and their shape changes between client versions. Decode therefore never
// panics, never rejects a JSON object for a missing, null, unknown or
// wrongly-typed field, and keeps every field it received so that a re-encode
// loses nothing.
package event

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/hookwatch/hookwatch/internal/jsonscan"
)

// Object is a JSON object as a map from key to the raw value received.
type Object map[string]json.RawMessage

// Payload is one decoded hook payload.
type Payload struct {
	// Raw holds every top-level field exactly as received. It is the source of
	// truth for re-encoding: fields hookwatch does not model, and fields whose
	// value had an unexpected type, survive a round trip unchanged.
	Raw Object

	// Common is the typed view of the fields every event may carry.
	Common

	// Event is the typed view of the event-specific fields: a pointer to the
	// struct registered for the event name (*PreToolUseInput, …), or nil when
	// the event is unknown to this version of hookwatch.
	Event any

	// Mistyped names the modelled fields whose value had an unexpected type
	// (an object where a string belongs, …). Their typed view is empty; their
	// raw value is kept in Raw.
	Mistyped []string

	// InvalidUTF8 reports that the input held invalid UTF-8, which Decode
	// replaced with U+FFFD.
	InvalidUTF8 bool

	// RepeatedKeys reports that a top-level key came more than once (keys
	// compared as decoded: "pro\u006dpt" repeats "prompt"). Raw holds the
	// last value of each, as encoding/json reads them; the earlier ones are
	// in the input alone, which a reader that stores the payload must
	// therefore not keep as it came: the privacy rules see only Raw.
	RepeatedKeys bool
}

// MaxDepth is the deepest nesting of objects and arrays Decode accepts. Real
// payloads stay far below it; a deeper one is an attack on whoever walks it
// later (redaction, the dashboard's JSON viewer).
const MaxDepth = 512

// ErrNotObject is returned by Decode when the input is not a JSON object.
var ErrNotObject = errors.New("payload is not a JSON object")

// Decode reads a hook payload. It fails only when data is not a single JSON
// object (ErrNotObject, or the JSON syntax error); any object decodes, whatever
// fields it has or lacks. Invalid UTF-8 inside strings is replaced by U+FFFD.
// The values in the payload's Raw map share data's memory: the caller must
// not modify data afterwards. A key that repeats keeps its last value
// (RepeatedKeys).
func Decode(data []byte) (*Payload, error) {
	var buf [16]Member
	ms, invalidUTF8, err := SplitMembers(data, buf[:0])
	if err != nil {
		return nil, err
	}
	raw := ms.Object()
	p := FromObject(raw)
	p.InvalidUTF8, p.RepeatedKeys = invalidUTF8, len(raw) != len(ms)
	return p, nil
}

// Split is the first half of Decode: it validates data as Decode does and
// splits it into its top-level members, without the typed views, for a
// reader that needs only the members (the privacy rules) and would pay for
// the views for nothing. invalidUTF8 reports that data held invalid UTF-8,
// replaced with U+FFFD in the members. FromObject of the members gives what
// Decode gives, but for InvalidUTF8 and RepeatedKeys: a key that repeats
// keeps its last value, and nothing says that it repeated (SplitMembers
// does).
func Split(data []byte) (raw Object, invalidUTF8 bool, err error) {
	// The members are gathered first, so that the map is made once at its
	// size rather than grown (a payload has ten to fifteen members).
	var buf [16]Member
	ms, invalidUTF8, err := SplitMembers(data, buf[:0])
	if err != nil {
		return nil, false, err
	}
	return ms.Object(), invalidUTF8, nil
}

// Member is one top-level member of a payload: its key, decoded, and its
// value as received.
type Member struct {
	Key   string
	Value json.RawMessage
}

// Members are the top-level members of a payload in the order they came,
// a key possibly more than once.
type Members []Member

// Object returns the members as a map made at their number, a later
// duplicate winning, as with encoding/json.
func (ms Members) Object() Object {
	raw := make(Object, len(ms))
	for _, m := range ms {
		raw[m.Key] = m.Value
	}
	return raw
}

// SplitMembers is Split for a reader that goes through the members once,
// in order, before it needs them as a map (the collector's admission, which
// makes the map once, of the members as stored): it validates data as
// Split does and appends its members to dst, in their order, duplicates
// included. invalidUTF8 and err are Split's.
func SplitMembers(data []byte, dst Members) (ms Members, invalidUTF8 bool, err error) {
	data = jsonscan.TrimBlank(data)
	if len(data) == 0 || data[0] != '{' {
		return nil, false, ErrNotObject
	}
	invalidUTF8 = !utf8.Valid(data)
	if invalidUTF8 {
		// Invalid bytes can only sit inside strings of valid JSON, so replacing
		// them keeps the document valid and makes it safe to store and show.
		data = bytes.ToValidUTF8(data, []byte("\uFFFD"))
	}
	// One validating scan of the top level costs a fraction of
	// json.Unmarshal into a map, whose reflection a one-event hook process
	// pays in full.
	ms = dst
	d, ok := jsonscan.Members(data, func(key, val []byte) {
		ms = append(ms, Member{memberKey(jsonscan.Name(key)), val})
	})
	if !ok {
		var v Object
		err := json.Unmarshal(data, &v) // let encoding/json say what is wrong
		if err == nil {
			err = ErrNotObject
		}
		return nil, false, fmt.Errorf("cannot decode payload: %w", err)
	}
	if d > MaxDepth {
		return nil, false, fmt.Errorf("cannot decode payload: nested %d levels deep, more than %d", d, MaxDepth)
	}
	return ms, invalidUTF8, nil
}

// FromObject builds the typed views of an already split payload object. The
// map is kept, not copied.
func FromObject(raw Object) *Payload { return fromObject(raw, false) }

// FromObjectShared is FromObject, except that the typed views' raw JSON
// values (tool_input, tool_response) are raw's values, not copies: for a
// caller whose members are bytes of their own that nothing changes, and
// that keeps them with the views (the collector's admission, whose session
// model keeps each payload), so that its largest members are not held
// twice.
func FromObjectShared(raw Object) *Payload { return fromObject(raw, true) }

// FromMembers is FromObjectShared of raw, the map of the members ms, each
// key once: the typed views are read from ms in one pass rather than
// looked up in raw one by one (the collector's admission, which has both).
func FromMembers(raw Object, ms Members) *Payload {
	src := fields{raw: raw}
	src.index(ms)
	return fromFields(&src, true)
}

// ViewsOf is FromObjectShared of the map of the members ms, without the map:
// Raw is nil, and HookEventName holds what Name answers (DropRaw), as a
// reader of the typed views alone keeps them (the collector's model). ok is
// false when a key of ms repeats.
func ViewsOf(ms Members) (p *Payload, ok bool) {
	var src fields
	distinct, known := src.index(ms)
	if !known {
		distinct = len(src.object()) == len(ms)
	}
	if !distinct {
		return nil, false
	}
	p = fromFields(&src, true)
	if p.HookEventName == "" {
		p.Raw = src.object() // for Name, which reads a statusLine's name from it
	}
	p.DropRaw()
	return p, true
}

// DropRaw drops p's map of members (Raw), which none of the readers of
// its typed views alone reads, keeping in HookEventName what Name answers
// (a statusLine's name, which Name reads from the map).
func (p *Payload) DropRaw() {
	p.HookEventName = p.Name()
	p.Raw = nil
}

func fromObject(raw Object, share bool) *Payload {
	return fromFields(&fields{raw: raw}, share)
}

// toolCallPayload and toolResultPayload are a payload with its event, in one
// object: most payloads are of a tool call, and a collector keeps them.
type toolCallPayload struct {
	p Payload
	e PreToolUseInput
}

type toolResultPayload struct {
	p        Payload
	e        PostToolUseInput
	duration float64 // what e.DurationMS points to
}

func fromFields(src *fields, share bool) *Payload {
	// The event's name as sent picks the object; the name as decoded, below,
	// what is read into it (the same but for escapes).
	var p *Payload
	var pre *PreToolUseInput
	var post *PostToolUseInput
	var duration *float64
	switch v, _ := src.value(fieldRef{key: "hook_event_name", slot: slotHookEventName}); string(trimJSON(v)) {
	case `"` + PreToolUse + `"`:
		t := new(toolCallPayload)
		p, pre = &t.p, &t.e
	case `"` + PostToolUse + `"`:
		t := new(toolResultPayload)
		p, post, duration = &t.p, &t.e, &t.duration
	default:
		p = new(Payload)
	}
	p.Raw = src.raw
	refs := commonFields(&p.Common)
	decodeFields(src, refs[:], &p.Mistyped, true, false)
	p.PromptID = PromptOf(p.PromptID, p.TurnID, p.AgentID)
	name := p.HookEventName
	if name == "" && looksLikeStatusLine(src.object()) {
		name = StatusLine
		// Its model is an object, StatusLineInput's, not Common's string.
		p.Mistyped = slices.DeleteFunc(p.Mistyped, func(f string) bool { return f == "model" })
	}
	switch name {
	case PreToolUse:
		if pre == nil {
			pre = new(PreToolUseInput)
		}
		decodePreToolUse(src, pre, &p.Mistyped, share)
		p.Event = pre
		return p
	case PostToolUse:
		if post == nil {
			post = new(PostToolUseInput)
		}
		decodePostToolUse(src, post, &p.Mistyped, share, duration)
		p.Event = post
		return p
	case PostToolBatch:
		e := new(PostToolBatchInput)
		decodePostToolBatch(src.object(), e, &p.Mistyped)
		p.Event = e
		return p
	}
	if v := newEvent(name); v != nil {
		decodeStruct(src.object(), reflect.ValueOf(v).Elem(), &p.Mistyped)
		p.Event = v
	}
	return p
}

// PromptOf is the prompt id of a payload that carries promptID, turnID
// and agentID: promptID, else the turn_id of a Codex main agent's event. A
// Codex turn of the main agent is one user prompt's, so that the model's
// turns, the store's column and the exports group Codex's events as they
// group Claude Code's. A subagent's turn is its own, prompted by its
// parent: Claude Code names the user's prompt there, Codex does not, and a
// subagent's turn taken for a user's would be counted as one.
func PromptOf(promptID, turnID, agentID string) string {
	if promptID == "" && agentID == "" {
		return turnID
	}
	return promptID
}

// Name returns the event name: hook_event_name, or StatusLine for a statusLine
// payload, or "" when neither applies.
func (p *Payload) Name() string {
	if p.HookEventName != "" {
		return p.HookEventName
	}
	if looksLikeStatusLine(p.Raw) {
		return StatusLine
	}
	return ""
}

// IsSubagent reports whether the event fired inside a subagent. Only the
// presence of agent_id says so: agent_type alone also appears on main threads
// started with --agent (spec §1.6.1).
func (p *Payload) IsSubagent() bool { return p.AgentID != "" }

// MarshalJSON encodes every field the payload holds.
func (p *Payload) MarshalJSON() ([]byte, error) { return json.Marshal(p.Raw) }

// Set replaces (or adds) a top-level field and refreshes the typed views.
func (p *Payload) Set(key string, value json.RawMessage) {
	p.Raw[key] = value
	q := FromObject(p.Raw)
	p.Common, p.Event, p.Mistyped = q.Common, q.Event, q.Mistyped
}

// looksLikeStatusLine recognises the statusLine payload, which has no
// hook_event_name (spec §2): it carries a context_window or a cost object.
func looksLikeStatusLine(raw Object) bool {
	if _, ok := raw["hook_event_name"]; ok {
		return false
	}
	_, cw := raw["context_window"]
	_, cost := raw["cost"]
	return cw || cost
}

// OptString is a string that remembers whether it was present. agent_type
// needs it: "" is the compaction agent, absent is "no type".
type OptString struct {
	Value string
	Set   bool
}

// Ptr returns nil when absent, else a pointer to the value.
func (o OptString) Ptr() *string {
	if !o.Set {
		return nil
	}
	v := o.Value
	return &v
}

// MarshalJSON encodes an absent value as null.
func (o OptString) MarshalJSON() ([]byte, error) {
	if !o.Set {
		return []byte("null"), nil
	}
	return json.Marshal(o.Value)
}

var (
	optStringType = reflect.TypeFor[OptString]()
	rawType       = reflect.TypeFor[json.RawMessage]()
)

// fieldInfo is the decoding plan for one struct field.
type fieldInfo struct {
	index    []int
	name     string
	embedded bool
}

var planCache sync.Map // reflect.Type → []fieldInfo

func plan(t reflect.Type) []fieldInfo {
	if v, ok := planCache.Load(t); ok {
		return v.([]fieldInfo)
	}
	var fields []fieldInfo
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			fields = append(fields, fieldInfo{index: f.Index, embedded: true})
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		fields = append(fields, fieldInfo{index: f.Index, name: name})
	}
	planCache.Store(t, fields)
	return fields
}

// decodeStruct fills the tagged fields of v from raw, leniently: a value of the
// wrong type leaves the field at its zero value (the raw value stays in the
// payload's Raw map, so nothing is lost).
func decodeStruct(raw Object, v reflect.Value, mistyped *[]string) {
	for _, f := range plan(v.Type()) {
		fv := v.FieldByIndex(f.index)
		if f.embedded {
			decodeStruct(raw, fv, mistyped)
			continue
		}
		if rv, ok := raw[f.name]; ok && !decodeValue(rv, fv) {
			*mistyped = append(*mistyped, f.name)
		}
	}
}

// decodeValue sets fv from rv and reports whether rv had the expected type.
func decodeValue(rv json.RawMessage, fv reflect.Value) bool {
	rv = jsonscan.TrimBlank(rv)
	if len(rv) == 0 || string(rv) == "null" {
		return true // null is absent
	}
	switch {
	case fv.Type() == optStringType:
		s, ok := lenientString(rv)
		if ok {
			fv.Set(reflect.ValueOf(OptString{Value: s, Set: true}))
		}
		return ok && rv[0] == '"'
	case fv.Type() == rawType:
		fv.SetBytes(append([]byte(nil), rv...))
		return true
	case fv.Kind() == reflect.String:
		s, ok := lenientString(rv)
		if ok {
			fv.SetString(s)
		}
		return ok && rv[0] == '"' // a number read as text is still worth reporting
	}
	if ok, handled := decodeScalarPtr(rv, fv); handled {
		return ok
	}
	ptr := reflect.New(fv.Type())
	if err := json.Unmarshal(rv, ptr.Interface()); err != nil {
		return false
	}
	fv.Set(ptr.Elem())
	return true
}

var (
	boolPtrType    = reflect.TypeFor[*bool]()
	float64PtrType = reflect.TypeFor[*float64]()
	intPtrType     = reflect.TypeFor[*int]()
	effortPtrType  = reflect.TypeFor[*Effort]()
)

// decodeEffort reads an effort object as encoding/json would: a level that
// is not a string (or null) fails it.
func decodeEffort(rv json.RawMessage) (*Effort, bool) {
	if rv[0] != '{' {
		return nil, false
	}
	e, bad := &Effort{}, false
	ScanObject(rv, func(key, val []byte) {
		switch {
		case string(key) != "level", string(val) == "null":
		case val[0] == '"':
			e.Level, _ = lenientString(val)
		default:
			bad = true
		}
	})
	return e, !bad
}

// decodeScalarPtr reads the optional scalars most events carry, and effort,
// without encoding/json: its first use of a type builds a decoder by
// reflection, which a one-event hook process would pay for each of them.
// handled is false for types it leaves to encoding/json.
func decodeScalarPtr(rv json.RawMessage, fv reflect.Value) (ok, handled bool) {
	switch fv.Type() {
	case boolPtrType:
		var b bool
		switch string(rv) {
		case "true":
			b = true
		case "false":
		default:
			return false, true
		}
		fv.Set(reflect.ValueOf(&b))
	case float64PtrType:
		f, err := strconv.ParseFloat(string(rv), 64)
		if err != nil {
			return false, true
		}
		fv.Set(reflect.ValueOf(&f))
	case intPtrType:
		n, err := strconv.Atoi(string(rv))
		if err != nil {
			return false, true
		}
		fv.Set(reflect.ValueOf(&n))
	case effortPtrType:
		e, ok := decodeEffort(rv)
		if !ok {
			return false, true
		}
		fv.Set(reflect.ValueOf(e))
	default:
		return false, false
	}
	return true, true
}

// repeatedString is lenientString for a value that repeats from one event
// to the next: a string the table holds is shared rather than made anew.
func repeatedString(rv json.RawMessage) (string, bool) {
	if rv[0] == '"' {
		if n := len(rv); n >= 2 && n <= 32 && rv[n-1] == '"' {
			if s, ok := constantValue(rv[1 : n-1]); ok {
				return s, true
			}
		}
		if s, ok := repeatedStrings.Unquote(rv); ok {
			return s, true
		}
	}
	return lenientString(rv)
}

// lenientString accepts a JSON string, and also a number or boolean as its
// literal text (a client that sends 123 for an id still gets attributed).
// Objects and arrays are not strings.
func lenientString(rv json.RawMessage) (string, bool) {
	switch rv[0] {
	case '"':
		if n := len(rv); n >= 2 && n <= 32 && rv[n-1] == '"' {
			if s, ok := constantValue(rv[1 : n-1]); ok {
				return s, true
			}
		}
		if s, ok := jsonscan.Unquote(rv); ok {
			return s, true // what encoding/json gives, without its reflection
		}
		var s string
		if json.Unmarshal(rv, &s) != nil {
			return "", false
		}
		return s, true
	case '{', '[':
		return "", false
	default:
		return string(rv), true
	}
}

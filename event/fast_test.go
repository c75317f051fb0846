package event

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
)

// reflectiveDecode is FromObject through the reflective decoder alone: the
// reference the hand-written fast path must match.
func reflectiveDecode(raw Object) (Common, any, []string) {
	var c Common
	var mistyped []string
	decodeStruct(raw, reflect.ValueOf(&c).Elem(), &mistyped)
	var ev any
	if fastEvent(c.HookEventName) {
		ev = newEvent(c.HookEventName)
		decodeStruct(raw, reflect.ValueOf(ev).Elem(), &mistyped)
	}
	return c, ev, mistyped
}

func checkFastMatches(t *testing.T, data []byte) {
	t.Helper()
	p, err := Decode(data)
	if err != nil {
		return
	}
	c, ev, mistyped := reflectiveDecode(p.Raw)
	if !reflect.DeepEqual(p.Common, c) {
		t.Fatalf("%s:\nfast       %+v\nreflective %+v", data, p.Common, c)
	}
	if ev != nil && !reflect.DeepEqual(p.Event, ev) {
		t.Fatalf("%s: event fast %+v, reflective %+v", data, p.Event, ev)
	}
	if fastEvent(p.Name()) || p.Event == nil {
		if fmt.Sprint(p.Mistyped) != fmt.Sprint(mistyped) {
			t.Fatalf("%s: mistyped fast %v, reflective %v", data, p.Mistyped, mistyped)
		}
	}
}

// fastEvent reports whether FromObject reads the event's own fields by
// hand.
func fastEvent(name string) bool {
	return name == PreToolUse || name == PostToolUse || name == PostToolBatch
}

func TestFastDecodeMatchesReflection(t *testing.T) {
	for _, in := range []string{
		`{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"t","effort":{"level":"high"},"agent_type":""}`,
		`{"hook_event_name":"PreToolUse","session_id":12,"tool_name":{"x":1},"tool_input":"text","tool_use_id":true,"effort":{"level":3},"agent_type":null,"cwd":[1]}`,
		`{"hook_event_name":"PreToolUse","effort":"high","agent_id":"a1","model":{"id":"m"},"turn_id":null}`,
		`{"hook_event_name":"Stop","session_id":"s","prompt_id":" p ","effort":null}`,
		`{"session_id":"s","cost":{"total_cost_usd":1}}`,
		`{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"t","tool_response":{"stdout":"a\nb"},"duration_ms":12.5}`,
		`{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_response":null,"duration_ms":"12"}`,
		`{"hook_event_name":"PostToolUse","tool_input":null,"duration_ms":1e3,"tool_use_id":7}`,
		`{"hook_event_name":"PostToolBatch","tool_calls":[{"tool_name":"Read","tool_input":{"file_path":"/a"},"tool_use_id":"t1","tool_response":"x"},{"tool_name":"Bash","tool_input":{},"tool_use_id":"t2","tool_response":[{"type":"text","text":"ok"}]}]}`,
		`{"hook_event_name":"PostToolBatch","tool_calls":[]}`,
		`{"hook_event_name":"PostToolBatch","tool_calls":null}`,
		`{"hook_event_name":"PostToolBatch","tool_calls":[null,{"tool_name":"A"}]}`,
		`{"hook_event_name":"PostToolBatch","tool_calls":[{"TOOL_NAME":"A","tool_name":"B"}]}`,
		`{"hook_event_name":"PostToolBatch","tool_calls":[{"tool_name":"A","tool_name":null,"tool_input":null,"extra":1}]}`,
		`{"hook_event_name":"PostToolBatch","tool_calls":[{"tool_name":3}]}`,
		`{"hook_event_name":"PostToolBatch","tool_calls":[{"tool_name":"\u00e9\ud800"}],"x":1}`,
		`{"hook_event_name":"PostToolBatch","tool_calls":{"tool_name":"A"}}`,
		`{"hook_event_name":"PostToolBatch","tool_calls":[1]}`,
		`{"hook_event_name":"PostToolBatch","tool_calls":"x"}`,
		`{"hook_event_name":"PostToolBatch","tool_calls":[{"tool_n\u0061me":"A"}]}`,
	} {
		checkFastMatches(t, []byte(in))
	}
}

func FuzzFastDecode(f *testing.F) {
	f.Add([]byte(`{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_input":{},"tool_use_id":"t","effort":{"level":"x"}}`))
	f.Add([]byte(`{"hook_event_name":"PreToolUse","agent_type":1e3,"effort":{"level":[1]}}`))
	f.Add([]byte(`{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{},"tool_response":{"stdout":""},"duration_ms":3}`))
	f.Add([]byte(`{"hook_event_name":"PostToolBatch","tool_calls":[{"tool_name":"Read","tool_input":{"file_path":"/a"},"tool_use_id":"t1","tool_response":"x"},{"Tool_Name":null}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var probe map[string]json.RawMessage
		if json.Unmarshal(data, &probe) != nil {
			return
		}
		checkFastMatches(t, data)
	})
}

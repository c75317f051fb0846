package importer

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/hookwatch/hookwatch/event"
)

// checkMarshalPayload compares marshalPayload with json.Marshal on a payload
// holding raw (valid JSON) and s as the importer's payloads hold them.
func checkMarshalPayload(t *testing.T, raw []byte, s string) {
	t.Helper()
	p := map[string]any{
		"hook_event_name": "PostToolUse", "tool_response": json.RawMessage(raw), "prompt": s,
		"stop_hook_active": false, "usage": &event.Usage{InputTokens: 3}, "tool_input": json.RawMessage(nil),
	}
	want, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	got, err := marshalPayload(p)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("marshalPayload(%q, %q) =\n%s, %v\njson.Marshal:\n%s", raw, s, got, err, want)
	}
}

func TestMarshalPayload(t *testing.T) {
	f := func(raw, s string) { t.Helper(); checkMarshalPayload(t, []byte(raw), s) }
	f(`null`, "")
	f(` { "a" : [ 1 , "x < y && z > w" ] ,"b":"\u2028\"\\"} `, "<b>&\u2028\u2029\x00\x7f\xff")
	f("{\"k\":\"\xe2\x80\xa8 \xe2\x80\xa9 \xe2\x80\xaa \xe2\x80\"}", "\t\n\r\b\f")
	f("[\"\\\\\", \"\\\"<\"]\n", `a"b\c`)
}

func FuzzMarshalPayload(f *testing.F) {
	f.Add([]byte(`{"stdout":"a < b && c\n","stderr":"", "x" : [1, 2.5e3, true, null]}`), "<x>")
	f.Add([]byte("\"\xe2\x80\xa8\xe2\x80\xa9\""), "\xe2\x80\xa8")
	f.Fuzz(func(t *testing.T, raw []byte, s string) {
		if !json.Valid(raw) {
			return // the importer's raw members are valid: jsonscan read them
		}
		checkMarshalPayload(t, raw, s)
	})
}

package privacy_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hookwatch/hookwatch/privacy"
)

func apply(t *testing.T, in string, o privacy.Options) map[string]json.RawMessage {
	t.Helper()
	var p map[string]json.RawMessage
	if err := json.Unmarshal([]byte(in), &p); err != nil {
		t.Fatal(err)
	}
	privacy.Apply(p, o)
	// Idempotent: a second pass changes nothing.
	if privacy.Apply(p, o) {
		t.Errorf("second Apply changed %s", in)
	}
	return p
}

func TestApply(t *testing.T) {
	long := strings.Repeat("a", 5000)
	in := `{"hook_event_name":"PostToolUse","prompt":"use sk-ant-api03-` + strings.Repeat("x", 90) + `","tool_input":{"command":"export DB_PASSWORD=hunter22"},"tool_response":{"stdout":"` + long + `"}}`

	p := apply(t, in, privacy.DefaultOptions())
	var c struct {
		Capture string `json:"hookwatch_capture"`
		Bytes   int
		Head    string
		Tail    string
	}
	if err := json.Unmarshal(p["tool_response"], &c); err != nil || c.Capture != "preview" || c.Bytes < 5000 || len(c.Head) != 512 || len(c.Tail) != 256 {
		t.Errorf("preview = %s (%v)", p["tool_response"], err)
	}
	if strings.Contains(string(p["prompt"]), "sk-ant-") || !strings.Contains(string(p["prompt"]), "[REDACTED:") {
		t.Errorf("prompt = %s", p["prompt"])
	}
	if strings.Contains(string(p["tool_input"]), "hunter22") {
		t.Errorf("tool_input = %s", p["tool_input"])
	}

	p = apply(t, in, privacy.Options{Capture: privacy.CaptureNone, Redact: true})
	if string(p["tool_response"]) != `{"hookwatch_capture":"none","bytes":5013}` {
		t.Errorf("none = %s", p["tool_response"])
	}
	p = apply(t, in, privacy.Options{Capture: privacy.CaptureFull, Redact: false})
	if !strings.Contains(string(p["tool_response"]), long) || !strings.Contains(string(p["prompt"]), "sk-ant-") {
		t.Errorf("full without redaction changed the payload: %s", p["tool_response"][:40])
	}
}

func TestApplyBatch(t *testing.T) {
	in := `{"hook_event_name":"PostToolBatch","tool_calls":[{"tool_name":"Bash","tool_input":{"command":"curl -H 'Authorization: Bearer abcdefghijklmnop1234'"},"tool_use_id":"t1","tool_response":"` + strings.Repeat("z", 2000) + `"}]}`
	p := apply(t, in, privacy.DefaultOptions())
	s := string(p["tool_calls"])
	if strings.Contains(s, "abcdefghijklmnop1234") || !strings.Contains(s, `"hookwatch_capture":"preview"`) || !strings.Contains(s, `"tool_use_id":"t1"`) {
		t.Errorf("tool_calls = %s", s)
	}
}

func TestParseCapture(t *testing.T) {
	f := func(in string, want privacy.Capture, wantErr bool) {
		t.Helper()
		got, err := privacy.ParseCapture(in)
		if got != want || (err != nil) != wantErr {
			t.Errorf("ParseCapture(%q) = %q, %v", in, got, err)
		}
	}
	f("", privacy.CapturePreview, false)
	f("FULL", privacy.CaptureFull, false)
	f("none", privacy.CaptureNone, false)
	f("all", privacy.CapturePreview, true)
}

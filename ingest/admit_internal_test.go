package ingest

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/corpus"
	"github.com/hookwatch/hookwatch/privacy"
)

// admitOptions are the privacy settings the member path is held to the
// map path under.
var admitOptions = []privacy.Options{privacy.DefaultOptions(), {Capture: privacy.CaptureNone, Redact: true},
	{Capture: privacy.CaptureFull, Redact: true}, {Capture: privacy.CapturePreview, PreviewBytes: 40, Redact: true}, {}}

// checkAdmitPaths fails when Admit, which goes through a payload's members
// in order, stores or decodes payload otherwise than admitObject, which
// goes through the map of its members as Admit did before, or when
// AdmitSplit does otherwise but for the map it leaves out.
func checkAdmitPaths(t *testing.T, payload []byte) {
	t.Helper()
	for _, o := range admitOptions {
		pl := Pipeline{Privacy: o}
		got := event.Envelope{Payload: bytes.Clone(payload)}
		want := event.Envelope{Payload: bytes.Clone(payload)}
		dg, dw := pl.Admit(&got), pl.admitObject(&want, true)
		if !bytes.Equal(got.Payload, want.Payload) {
			t.Fatalf("%+v: Admit(%q) stored\n%s\nthe map's way stores\n%s", o, payload, got.Payload, want.Payload)
		}
		if !reflect.DeepEqual(dg, dw) {
			t.Fatalf("%+v: Admit(%q) decoded %+v, the map's way %+v", o, payload, dg, dw)
		}
		// Without the map: the same bytes, the same views.
		views := event.Envelope{Payload: bytes.Clone(payload)}
		dv := pl.AdmitSplit(&views, nil)
		if !bytes.Equal(views.Payload, want.Payload) {
			t.Fatalf("%+v: AdmitSplit(%q) stored\n%s\nthe map's way stores\n%s", o, payload, views.Payload, want.Payload)
		}
		if dw != nil {
			dw.DropRaw()
		}
		if !reflect.DeepEqual(dv, dw) {
			t.Fatalf("%+v: AdmitSplit(%q) decoded %+v, the map's way without its map %+v", o, payload, dv, dw)
		}
	}
}

// TestAdmitPaths: for every real payload, each with secrets in its values
// and in a key, and payloads Admit leaves to the map (a key that repeats or
// holds a secret, line breaks, invalid UTF-8, more members than its
// buffer), Admit stores and decodes what the map's way does.
func TestAdmitPaths(t *testing.T) {
	const ghp = "ghp_" + "aB3dE6gH9jaB3dE6gH9jaB3dE6gH9jkLmNoP"
	for _, p := range corpus.Load(t) {
		checkAdmitPaths(t, p.JSON)
		var m map[string]any
		if json.Unmarshal(p.JSON, &m) != nil {
			continue
		}
		m["prompt"] = "deploy with " + ghp
		m["tool_response"] = map[string]any{"stdout": "ok\n\tTOKEN=" + ghp}
		m[ghp] = "a key"
		b, _ := json.Marshal(m)
		checkAdmitPaths(t, b)
	}
	many := `{"hook_event_name":"Stop"`
	for i := range 20 {
		many += `,"k` + strings.Repeat("x", i) + `":"v"`
	}
	for _, p := range []string{
		many + "}",
		`{"hook_event_name":"Stop","session_id":"a","session_id":"b"}`,
		`{"tool_name":"Bash","tool_name":"apply_patch","tool_input":{"command":"*** Begin Patch\n*** Update File: a\n+x\n*** End Patch"}}`,
		"{\n\"hook_event_name\": \"Stop\",\n\"session_id\": \"s\"\n}",
		"{\"hook_event_name\":\"Stop\",\"x\":\"\xff\",\"y\":[1,\n2]}",
		`{"hook_event_name":"UserPromptSubmit","api_key=sk-ant-api03-` + strings.Repeat("a", 90) + `":"v","prompt":"p"}`,
		`{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_response":{"hookwatch_capture":"none","bytes":3}}`,
		`{}`, `[]`, `{"a":`,
	} {
		checkAdmitPaths(t, []byte(p))
	}
}

// FuzzAdmitPaths: whatever the payload, Admit stores and decodes what the
// map's way does.
func FuzzAdmitPaths(f *testing.F) {
	f.Add([]byte(`{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"t"}`))
	f.Add([]byte(`{"hook_event_name":"PostToolUse","tool_name":"Read","tool_response":{"file":{"content":"a\nb"}},"tool_response":1}`))
	f.Add([]byte("{\n\"hook_event_name\": \"Stop\",\n\"session_id\": \"s\"\n}"))
	f.Add([]byte(`{"a":{"b":[1,2,{"c":"\u00e9"}]},"a":2,"token":"x","ghp_aB3dE6gH9jaB3dE6gH9jaB3dE6gH9jkLmNoP":1}`))
	f.Add([]byte("{\"x\":\"\xff\"}"))
	f.Fuzz(func(t *testing.T, payload []byte) {
		checkAdmitPaths(t, payload)
	})
}

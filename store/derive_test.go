package store

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/corpus"
)

// checkDerive fails unless derive agrees with the event.Decode reference on
// data: same failure, same fields, same stored payload.
func checkDerive(t *testing.T, data []byte) {
	t.Helper()
	got, gotPayload, gotErr := derive(data)
	want, wantPayload, wantErr := deriveSlow(data)
	if (gotErr == nil) != (wantErr == nil) {
		t.Fatalf("derive(%q): error %v, event.Decode: %v", data, gotErr, wantErr)
	}
	if gotErr != nil {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("derive(%q)\n got %+v\nwant %+v", data, got, want)
	}
	if !bytes.Equal(gotPayload, wantPayload) {
		t.Fatalf("derive(%q): payload %q, want %q", data, gotPayload, wantPayload)
	}
}

func corpusPayloads(tb testing.TB) [][]byte {
	files, _ := filepath.Glob("../testdata/payloads/*.jsonl")
	if len(files) == 0 {
		tb.Fatal("no corpus")
	}
	var out [][]byte
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			var wrap struct {
				Payload json.RawMessage `json:"payload"`
			}
			line := append([]byte(nil), sc.Bytes()...)
			if json.Unmarshal(line, &wrap) == nil && len(wrap.Payload) > 0 {
				line = wrap.Payload
			}
			out = append(out, line)
		}
	}
	return out
}

var deriveCases = []string{
	`{}`,
	` {"session_id":"s"} `,
	`{"session_id":123,"agent_id":true,"prompt_id":1.5e3,"cwd":null,"model":{"id":"m"}}`,
	`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_use_id":"t","agent_type":""}`,
	`{"tool_name":"Bash","hook_event_name":"PostToolUseFailure","tool_use_id":["x"]}`,
	`{"hook_event_name":"PermissionRequest","tool_name":"Bash"}`,
	`{"hook_event_name":"PostToolBatch","tool_name":"Bash","tool_use_id":"t"}`,
	`{"hook_event_name":"Stop","tool_name":"Bash","source":"x","reason":"y","session_title":"z"}`,
	`{"hook_event_name":"SessionStart","source":"resume","session_title":"T","reason":"r"}`,
	`{"hook_event_name":"SessionEnd","reason":"logout","source":"s"}`,
	`{"hook_event_name":"UserPromptSubmit","session_title":"T","source":"s"}`,
	`{"agent_type":null}`, `{"agent_type":7}`, `{"agent_type":{}}`, `{"agent_type":"x","agent_type":null}`,
	`{"session_id":"a","session_id":"b"}`, `{"session_id":"a","session_id":{}}`, `{"session_id":"a","session_id":null}`,
	`{"session\u005fid":"escaped key","Session_ID":"other case"}`,
	`{"session_id":"esc\"aped \\ \u00e9 \ud83d\ude00 \ud800"}`,
	`{"cost":{"total_cost_usd":1},"model":{"id":"claude"},"workspace":{"current_dir":"/w"},"session_name":"n"}`,
	`{"context_window":null}`,
	`{"hook_event_name":null,"cost":{}}`,
	`{"hook_event_name":"","cost":{}}`,
	`{"hook_event_name":"StatusLine","model":{"id":"m"}}`,
	`{"hook_event_name":"NewEvent","tool_name":"Bash"}`,
	`{"a":[{"b":[[[]]]}],"session_id":"deep"}`,
	"{\"session_id\":\"bad \xff utf8\",\"x\":\"\xfe\"}",
	"{\"session_id\"\t:\n\"ws\" ,\r\"cwd\" : \"/x\" }",
	`{"session_id":"s"`, `{"session_id":}`, `{"a":1}x`, `[]`, `null`, ``, `"x"`, `{"a":1,}`,
	"\f{}", "{}\u00a0", // not blanks to JSON
	`{"x":` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `}`,
	`{"x":` + strings.Repeat("[", 510) + strings.Repeat("]", 510) + `}`,
	`{"x":` + strings.Repeat("[", 511) + strings.Repeat("]", 511) + `}`,
	`{"x":"` + strings.Repeat("[", 600) + `"}`,
}

func TestDeriveMatchesDecode(t *testing.T) {
	for _, p := range corpusPayloads(t) {
		checkDerive(t, p)
	}
	for _, c := range deriveCases {
		checkDerive(t, []byte(c))
	}
}

// FuzzDerive holds derive to event.Decode's semantics on any input.
func FuzzDerive(f *testing.F) {
	for _, p := range corpusPayloads(f) {
		f.Add(p)
	}
	for _, c := range deriveCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkDerive(t, data) })
}

// marshalEnvelope is what FromEnvelope stores for env with payload in place
// of its payload (already checked to be a JSON object).
func marshalEnvelope(env event.Envelope, payload []byte) (json.RawMessage, error) {
	stored, err := storedForm(env, payload)
	if err != nil {
		return nil, fmt.Errorf("decision: %w", err)
	}
	return encodeStored(stored)
}

// TestMarshalEnvelope holds marshalEnvelope to json.Marshal, and fails when
// event.Envelope gains a field it does not write.
func TestMarshalEnvelope(t *testing.T) {
	known := []string{"ID", "Runtime", "Kind", "ReceivedAt", "Host", "User", "HookwatchVersion", "Subagent", "ForkOf", "ExitCode", "Files", "Traceparent", "Decision", "Payload"}
	var fields []string
	rt := reflect.TypeFor[event.Envelope]()
	for i := range rt.NumField() {
		fields = append(fields, rt.Field(i).Name)
	}
	if !reflect.DeepEqual(fields, known) {
		t.Fatalf("event.Envelope has fields %v; marshalEnvelope writes %v: teach it the new ones", fields, known)
	}
	f := func(env event.Envelope) {
		t.Helper()
		got, err := marshalEnvelope(env, env.Payload)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(env)
		if err != nil {
			t.Fatal(err)
		}
		var g, w any
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("marshalEnvelope wrote invalid JSON %s: %v", got, err)
		}
		json.Unmarshal(want, &w)
		if !reflect.DeepEqual(g, w) {
			t.Fatalf("marshalEnvelope\n got %s\nwant %s", got, want)
		}
	}
	at := time.Date(2026, 11, 21, 15, 0, 0, 123_000_000, time.FixedZone("CET", 3600))
	f(event.Envelope{ID: "x", ReceivedAt: at, Payload: json.RawMessage(`{}`)})
	f(event.Envelope{ID: "x", Runtime: "claude-code", Kind: "hook", ReceivedAt: at, Host: "h\"<&>\u2028", User: "ü\x01",
		HookwatchVersion: "1", Subagent: &event.SubagentMeta{AgentType: "Explore", Description: "<b>", ToolUseID: "t", SpawnDepth: 2}, ForkOf: "p<&>",
		Traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		Decision:    json.RawMessage(` { "permissionDecision" : "deny" } `), Payload: json.RawMessage(`{"a":[1,2,{"b":"<c>"}]}`)})
	three := 3
	f(event.Envelope{ID: "x", Runtime: "codex", Kind: "rollout", ReceivedAt: at, ExitCode: &three, Payload: json.RawMessage(`{}`)})
	f(event.Envelope{ID: "x", ReceivedAt: at, Files: []event.FileState{{Path: "/src/<a>.go", MtimeNS: 1, Size: 2, Hash: "h"}, {Path: "b"}},
		Payload: json.RawMessage(`{}`)})
	if _, err := marshalEnvelope(event.Envelope{ID: "x", ReceivedAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}, []byte(`{}`)); err == nil {
		t.Fatal("a year beyond 9999 was encoded")
	}
	// Invalid UTF-8 in a string field still gives valid JSON.
	b, err := marshalEnvelope(event.Envelope{ID: "x", ReceivedAt: at, Host: "bad\xff"}, []byte(`{}`))
	if err != nil || !json.Valid(b) {
		t.Fatalf("%q %v", b, err)
	}
}

// TestDecodedAs holds Event.Decoded to what decoding Event.Envelope gives,
// on the real corpus and on envelopes with every optional field, and wants
// nil where only decoding can tell (invalid UTF-8).
func TestDecodedAs(t *testing.T) {
	f := func(env event.Envelope, wantNil bool) {
		t.Helper()
		e, err := FromEnvelope(env)
		if err != nil {
			t.Fatal(err)
		}
		if wantNil {
			if e.Decoded != nil {
				t.Fatalf("Decoded set for %q", e.Envelope)
			}
			return
		}
		var want event.Envelope
		if err := json.Unmarshal(e.Envelope, &want); err != nil {
			t.Fatal(err)
		}
		got := *e.Decoded
		if !got.ReceivedAt.Equal(want.ReceivedAt) || got.ReceivedAt.String() != got.ReceivedAt.Round(0).String() {
			t.Fatalf("received_at %v, want %v without a monotonic reading", got.ReceivedAt, want.ReceivedAt)
		}
		got.ReceivedAt, want.ReceivedAt = time.Time{}, time.Time{}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Decoded\n got %+v\nwant %+v", got, want)
		}
	}
	at := time.Now()
	for i, p := range corpus.Load(t) {
		f(event.Envelope{ID: fmt.Sprint("e", i), Runtime: p.Runtime, ReceivedAt: at, Payload: p.JSON}, false)
	}
	f(event.Envelope{ID: "x", Runtime: "claude-code", Kind: "hook", ReceivedAt: at, Host: "h\"<&>\u2028", User: "ü\x01",
		HookwatchVersion: "1", Subagent: &event.SubagentMeta{AgentType: "Explore", Description: "<b>", ToolUseID: "t", SpawnDepth: 2}, ForkOf: "p<&>",
		Traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		Decision:    json.RawMessage(` { "permissionDecision" : "deny" } `), Payload: json.RawMessage("  {\"a\":[1,2,{\"b\":\"<c>\"}]}\n")}, false)
	f(event.Envelope{ID: "x", ReceivedAt: at, Host: "bad\xff", Payload: json.RawMessage(`{}`)}, true)
	f(event.Envelope{ID: "x", ReceivedAt: at, Subagent: &event.SubagentMeta{Description: "\xfe"}, Payload: json.RawMessage(`{}`)}, true)
	f(event.Envelope{ID: "x", ReceivedAt: at, ForkOf: "\xfe", Payload: json.RawMessage(`{}`)}, true)
	zero := 0
	f(event.Envelope{ID: "x", Runtime: "codex", Kind: "rollout", ReceivedAt: at, ExitCode: &zero, Payload: json.RawMessage(`{}`)}, false)
	f(event.Envelope{ID: "x", ReceivedAt: at, Files: []event.FileState{{Path: "/src/a.go", MtimeNS: 1, Size: 2, Hash: "h"}}, Payload: json.RawMessage(`{}`)}, false)
	f(event.Envelope{ID: "x", ReceivedAt: at, Files: []event.FileState{}, Payload: json.RawMessage(`{}`)}, false)
	f(event.Envelope{ID: "x", ReceivedAt: at, Files: []event.FileState{{Path: "bad\xff"}}, Payload: json.RawMessage(`{}`)}, true)
}

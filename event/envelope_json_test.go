package event_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/jsonscan"
)

// TestAppendJSON: the hand-written encoding decodes to what encoding/json
// writes, for ordinary and hostile field values.
func TestAppendJSON(t *testing.T) {
	f := func(e event.Envelope) {
		t.Helper()
		want, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		if got := e.AppendJSON(nil); !sameJSON(got, want) {
			t.Errorf("AppendJSON\n got %s\nwant %s", got, want)
		}
	}
	at := time.Date(2026, 11, 21, 16, 0, 0, 123456789, time.UTC)
	f(event.Envelope{ID: "0190a0b0-0000-7000-8000-000000000001", Runtime: "claude-code", Kind: "hook", ReceivedAt: at, Payload: json.RawMessage(`{"a":1}`)})
	f(event.Envelope{ID: "x", Runtime: "codex", ReceivedAt: at.Truncate(time.Second), Host: "h\"o\\st\n\t<&>\x01", User: "ü\u2028\u2029", HookwatchVersion: "v\xff1", Payload: json.RawMessage(`{"b":[1,2]}`)})
	f(event.Envelope{ID: "y", ReceivedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600)), Subagent: &event.SubagentMeta{AgentType: "w", ToolUseID: "toolu_1", SpawnDepth: 2}, ForkOf: "x\u2028", Traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", Decision: json.RawMessage(`{"action":"deny"}`), Payload: json.RawMessage(`{}`)})
	for _, code := range []int{0, 3, -1, 255} {
		f(event.Envelope{ID: "z", Runtime: "codex", Kind: "hook", ReceivedAt: at, ExitCode: &code, Payload: json.RawMessage(`{}`)})
	}
	f(event.Envelope{ID: "f", ReceivedAt: at, Files: []event.FileState{{Path: "/p/a \"b\"\n.go", MtimeNS: 1764300000123456789, Size: 42, Hash: "fnv1a64:0a1b2c3d4e5f6071"}, {Path: "/big", MtimeNS: -1, Size: 1 << 40}}, Payload: json.RawMessage(`{}`)})
	f(event.Envelope{ID: "g", ReceivedAt: at, Files: []event.FileState{}, Payload: json.RawMessage(`{}`)})
}

func TestValidTraceparent(t *testing.T) {
	f := func(s string, want bool) {
		t.Helper()
		if got := event.ValidTraceparent(s); got != want {
			t.Errorf("ValidTraceparent(%q) = %v, want %v", s, got, want)
		}
	}
	f("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", true)
	f("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", true)
	f("", false)
	f("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 ", false)  // one more byte
	f("00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", false)   // uppercase
	f("ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false)   // invalid version
	f("00-00000000000000000000000000000000-00f067aa0ba902b7-01", false)   // zero trace id
	f("00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", false)   // zero span id
	f("00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false)   // separator
	f("00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01", false)   // not hex
	f("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\n", false) // trailing newline
}

func FuzzAppendJSON(f *testing.F) {
	f.Add("id", "host", "user \xff", "v")
	f.Fuzz(func(t *testing.T, id, host, user, version string) {
		e := event.Envelope{ID: id, Runtime: "claude-code", Host: host, User: user, HookwatchVersion: version, ReceivedAt: time.Unix(1780000000, 5).UTC(), Payload: json.RawMessage(`{}`)}
		want, err := json.Marshal(e)
		if err != nil {
			t.Skip()
		}
		if got := e.AppendJSON(nil); !sameJSON(got, want) {
			t.Fatalf("AppendJSON\n got %s\nwant %s", got, want)
		}
	})
}

// sameJSON reports whether a and b are valid JSON documents of equal value.
func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// FuzzUnmarshalEnvelope holds Envelope's decoder to encoding/json's
// decoding of the same struct by reflection: the same value, or the same
// error.
func FuzzUnmarshalEnvelope(f *testing.F) {
	at := time.Date(2026, 11, 21, 16, 0, 0, 123456789, time.UTC)
	for _, e := range []event.Envelope{
		{ID: "0190a0b0-0000-7000-8000-000000000001", Runtime: "claude-code", Kind: "hook", ReceivedAt: at, Host: "h", User: "u", HookwatchVersion: "v", Payload: json.RawMessage(`{"a":1}`)},
		{ID: "y", ReceivedAt: at, Subagent: &event.SubagentMeta{AgentType: "w", ToolUseID: "toolu_1", SpawnDepth: 2}, ForkOf: "x\u2028", Decision: json.RawMessage(`{"action":"deny"}`), Payload: json.RawMessage(`{}`)},
		{ID: "t", ReceivedAt: at, Traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", Payload: json.RawMessage(`{}`)},
		{ID: "f", ReceivedAt: at, Files: []event.FileState{{Path: "/a", MtimeNS: 1, Size: 2, Hash: "fnv1a64:0000000000000000"}}, Payload: json.RawMessage(`{}`)},
	} {
		f.Add(e.AppendJSON(nil))
	}
	for _, s := range []string{`{"ID":"x","payload":{}}`, `{"id":"a","id":"b"}`, `{"id":1}`, `{"payload":null}`, `{"received_at":"nope"}`,
		`{"received_at":null,"decision":null}`, `{"subagent":{"spawnDepth":"deep"}}`, `{"subagent":null}`, `{"exit_code":3}`, `{"exit_code":-1,"id":"x"}`, `{"exit_code":1e2}`, `{"exit_code":99999999999999999999}`, `{"exit_code":null}`, `{"traceparent":null}`, `{"files":[]}`, `{"files":null}`, `{"files":[null,{"size":"1"}]}`, `{"files":[{"path":"a"}],"files":[{}]}`, `{"traceparent":"a","traceparent":"b"}`, `{"i\u0064":"x"}`, `[1]`, `"s"`, `1`, `{"extra":[1,{}],"id":"\ud800\xff"}`, `{}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		type plain event.Envelope
		var got event.Envelope
		var want plain
		gotErr := json.Unmarshal(data, &got)
		wantErr := json.Unmarshal(data, &want)
		if (gotErr == nil) != (wantErr == nil) {
			t.Fatalf("%q: error %v, encoding/json %v", data, gotErr, wantErr)
		}
		if gotErr != nil {
			return
		}
		if !reflect.DeepEqual(got, event.Envelope(want)) {
			t.Fatalf("%q:\n got %#v\nwant %#v", data, got, want)
		}
		// Read in place from a scanner, where it answers, it answers the
		// same, and consumes the envelope's text whole.
		s := jsonscan.NewScanner(data)
		if s.Next().Kind != jsonscan.BeginObject {
			return
		}
		var scanned event.Envelope
		if _, ok := scanned.UnmarshalScanned(&s); ok {
			if s.Next().Kind != jsonscan.End {
				t.Fatalf("%q: UnmarshalScanned left text of the envelope", data)
			}
			if !reflect.DeepEqual(scanned, event.Envelope(want)) {
				t.Fatalf("%q:\nscanned %#v\n   want %#v", data, scanned, want)
			}
		}
	})
}

package store_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/storetest"
)

var t0 = time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC)

func env(id, payload string) event.Envelope {
	return event.Envelope{ID: id, Runtime: event.RuntimeClaudeCode, ReceivedAt: t0, Payload: json.RawMessage(payload)}
}

func TestFromEnvelopeRejects(t *testing.T) {
	f := func(e event.Envelope, field string) {
		t.Helper()
		_, err := store.FromEnvelope(e)
		var ve *store.ValidationError
		if !errors.As(err, &ve) || ve.Field != field {
			t.Errorf("FromEnvelope(id %q, payload %q) = %v, want a ValidationError on %s", e.ID, e.Payload, err, field)
		}
	}
	ok := `{"session_id":"s"}`
	f(env("", ok), "id")
	f(env(strings.Repeat("a", store.MaxIDLen+1), ok), "id")
	f(env("id with space", ok), "id")
	f(env("id\x00", ok), "id")
	f(env("é", ok), "id")
	f(env("x", ""), "payload")
	f(env("x", "  "), "payload")
	f(env("x", "null"), "payload")
	f(env("x", "[1]"), "payload")
	f(env("x", `"str"`), "payload")
	f(env("x", "{"), "payload")
	f(env("x", strings.Repeat("[", event.MaxDepth+1)), "payload")
	e := env("x", ok)
	e.ReceivedAt = time.Time{}
	f(e, "received_at")
	e = env("x", ok)
	e.Decision = json.RawMessage("{bad")
	f(e, "decision")
}

func TestFromEnvelopeDerives(t *testing.T) {
	e := env(event.NewID(t0), `{"session_id":"s1","hook_event_name":"PreToolUse","agent_id":"a1","agent_type":"","tool_name":"Bash",
		"tool_use_id":"toolu_1","prompt_id":"p1","cwd":"/w","permission_mode":"plan","tool_input":{"command":"echo <b>&"}}`)
	e.Kind = ""
	e.Host, e.User = "h", "u"
	got, err := store.FromEnvelope(e)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != e.ID || got.SessionID != "s1" || got.Event != "PreToolUse" || got.AgentID != "a1" ||
		got.AgentType == nil || *got.AgentType != "" || got.ToolName != "Bash" || got.ToolUseID != "toolu_1" ||
		got.PromptID != "p1" || got.Kind != event.KindHook || got.Runtime != event.RuntimeClaudeCode || !got.Time.Equal(t0) || got.Seq != 0 {
		t.Errorf("derived %+v", got)
	}
	if got.Facts != (store.SessionFacts{CWD: "/w", Host: "h", User: "u"}) {
		t.Errorf("facts %+v", got.Facts)
	}
	// The stored envelope is the envelope, unescaped for people and jq.
	if !strings.Contains(string(got.Envelope), `"command":"echo <b>&"`) {
		t.Errorf("envelope %s", got.Envelope)
	}
	var back event.Envelope
	if err := json.Unmarshal(got.Envelope, &back); err != nil || back.ID != e.ID || !back.ReceivedAt.Equal(t0) {
		t.Errorf("envelope does not decode back: %v %+v", err, back)
	}

	// Invalid UTF-8 is replaced so that the stored JSON is valid.
	bad := env("y", "{\"session_id\":\"s\xff\",\"x\":\"\xfe\"}")
	got, err = store.FromEnvelope(bad)
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(got.Envelope) || got.SessionID != "s\uFFFD" {
		t.Errorf("invalid UTF-8: %q, session %q", got.Envelope, got.SessionID)
	}
}

func TestCursors(t *testing.T) {
	f := func(seq int64) {
		t.Helper()
		got, err := store.ParseEventCursor(store.EventCursor(seq))
		if err != nil || got != seq {
			t.Errorf("event cursor %d round-trips to %d, %v", seq, got, err)
		}
	}
	f(0)
	f(1)
	f(1 << 62)
	if seq, err := store.ParseEventCursor(""); seq != 0 || err != nil {
		t.Errorf("empty cursor: %d %v", seq, err)
	}
	at := t0.Add(123 * time.Nanosecond)
	ts, id, ok, err := store.ParseSessionCursor(store.SessionCursor(at, "a:b:c"))
	if err != nil || !ok || !ts.Equal(at) || id != "a:b:c" {
		t.Errorf("session cursor round trip: %v %q %v %v", ts, id, ok, err)
	}
	bad := func(c string) {
		t.Helper()
		if _, err := store.ParseEventCursor(c); !errors.Is(err, store.ErrInvalidCursor) {
			t.Errorf("ParseEventCursor(%q) = %v", c, err)
		}
		if _, _, _, err := store.ParseSessionCursor(c); !errors.Is(err, store.ErrInvalidCursor) {
			t.Errorf("ParseSessionCursor(%q) = %v", c, err)
		}
	}
	bad("%%%")
	bad("e")
	bad("ZS0x") // "e-1"
	bad("cw")   // "s"
}

func TestClampLimit(t *testing.T) {
	f := func(in, want int) {
		t.Helper()
		if got := store.ClampLimit(in); got != want {
			t.Errorf("ClampLimit(%d) = %d, want %d", in, got, want)
		}
	}
	f(-1, store.DefaultLimit)
	f(0, store.DefaultLimit)
	f(1, 1)
	f(store.MaxLimit, store.MaxLimit)
	f(store.MaxLimit+1, store.MaxLimit)
}

func TestSummarize(t *testing.T) {
	mk := func(seq int64, sid, name string, ms int, facts store.SessionFacts) store.Event {
		return store.Event{Seq: seq, SessionID: sid, Event: name, Runtime: "claude-code", Time: t0.Add(time.Duration(ms) * time.Millisecond), Facts: facts}
	}
	events := []store.Event{
		mk(1, "a", event.SessionStart, 10, store.SessionFacts{CWD: "/1", Host: "h1"}),
		mk(0, "a", event.Stop, 99, store.SessionFacts{CWD: "/skipped"}), // a duplicate: not stored
		mk(2, "b", event.Stop, 5, store.SessionFacts{}),
		mk(3, "a", event.PreToolUse, 30, store.SessionFacts{CWD: "/3", Host: "h2"}),
		mk(4, "a", event.PreToolUse, 20, store.SessionFacts{CWD: "/2", TranscriptPath: "/t"}),
		mk(5, "a", event.SessionEnd, 25, store.SessionFacts{}),
		mk(6, "", event.Notification, 1, store.SessionFacts{}),
		mk(7, "b", event.PreToolUse, 6, store.SessionFacts{}),  // from a rollout: not counted
		mk(8, "b", event.PostToolUse, 7, store.SessionFacts{}), // from a transcript: not counted
	}
	events[len(events)-2].Kind = event.KindRollout
	events[len(events)-1].Kind = event.KindTranscript
	got := store.Summarize(events)
	if len(got) != 2 || got[0].ID != "a" || got[1].ID != "b" {
		t.Fatalf("deltas %+v", got)
	}
	a := got[0]
	if a.Count != 4 || a.LastSeq != 5 || !a.FirstEventAt.Equal(t0.Add(10*time.Millisecond)) || !a.LastEventAt.Equal(t0.Add(30*time.Millisecond)) {
		t.Errorf("bounds %+v", a)
	}
	if a.CWD != "/3" || a.TranscriptPath != "/t" || a.Host != "h1" {
		t.Errorf("facts %+v", a)
	}
	if got[1].Count != 1 || got[1].CWD != "" || got[1].LastSeq != 8 {
		t.Errorf("b %+v", got[1])
	}
}

func TestValidateIDMessage(t *testing.T) {
	f := func(id, want string) {
		t.Helper()
		err := store.ValidateID(id)
		got := "<nil>"
		if err != nil {
			got = err.Error()
		}
		if got != want {
			t.Errorf("ValidateID(%q) = %s, want %s", id, got, want)
		}
	}
	f("0194f1a2-7b3c-7d4e-8f50-123456789abc", "<nil>")
	f("", "missing")
	// A non-ASCII character is quoted whole, not as its first byte ('Ã').
	f("idé", `contains 'é' at offset 2; only letters, digits and -_.: are allowed`)
	f("a b", `contains ' ' at offset 1; only letters, digits and -_.: are allowed`)
	f("a\xffb", `contains byte 0xff at offset 1; only letters, digits and -_.: are allowed`)
	f("a\nb", `contains '\n' at offset 1; only letters, digits and -_.: are allowed`)
}

// TestEnvelopeOf: an event just stored gives the envelope FromEnvelope
// decoded, not a second decoding; one read back gives its stored JSON
// decoded; a broken one an error.
func TestEnvelopeOf(t *testing.T) {
	in, err := store.FromEnvelope(env("s1", `{"session_id":"s","hook_event_name":"Stop"}`))
	if err != nil || in.Decoded == nil {
		t.Fatalf("%v %+v", err, in)
	}
	marked := *in.Decoded
	marked.Host = "as decoded"
	in.Decoded = &marked
	if got, err := store.EnvelopeOf(&in); err != nil || got.Host != "as decoded" {
		t.Errorf("just stored: %+v, %v; want the envelope FromEnvelope decoded", got, err)
	}
	back := store.Event{ID: in.ID, Envelope: in.Envelope}
	got, err := store.EnvelopeOf(&back)
	want, _ := store.StoredEnvelope(&back)
	if err != nil || got.ID != in.ID || got.Host != "" || !bytes.Equal(got.Payload, want.Payload) {
		t.Errorf("read back: %+v, %v; want %+v", got, err, want)
	}
	if _, err := store.EnvelopeOf(&store.Event{Envelope: json.RawMessage(`{"id":`)}); err == nil {
		t.Error("a broken envelope decoded")
	}
}

// TestRedecode: an event read back (its stored envelope alone) redecoded
// has the facts, the decoded envelope and the payload FromEnvelope gave it,
// for every real payload of the corpus and for a status line, whose cwd is
// its workspace's.
func TestRedecode(t *testing.T) {
	envs := []event.Envelope{env("status", `{"session_id":"s","hook_event_name":"StatusLine","workspace":{"current_dir":"/w/status"}}`)}
	for i, p := range storetest.Corpus(t) {
		e := storetest.Envelope(p.Runtime, storetest.At(i), p.JSON)
		e.Host, e.User = "h", "u"
		envs = append(envs, e)
	}
	for _, env := range envs {
		in, err := store.FromEnvelope(env)
		if err != nil {
			t.Fatal(err)
		}
		back := store.Event{Seq: 7, ID: in.ID, SessionID: in.SessionID, Envelope: in.Envelope}
		if err := store.Redecode(&back); err != nil {
			t.Fatalf("%s: %v", in.ID, err)
		}
		if env.ID == "status" && back.Facts.CWD != "/w/status" {
			t.Errorf("status line: facts %+v, want its workspace's cwd", back.Facts)
		}
		if back.Facts != in.Facts {
			t.Errorf("%s: facts %+v, want %+v", in.ID, back.Facts, in.Facts)
		}
		want, err := event.Decode(in.Decoded.Payload)
		if err != nil {
			t.Fatal(err)
		}
		if back.Decoded == nil || back.Decoded.ID != in.ID || !bytes.Equal(back.Decoded.Payload, in.Decoded.Payload) ||
			back.Payload == nil || back.Payload.Name() != want.Name() || back.Payload.SessionID != want.SessionID {
			t.Errorf("%s: decoded %+v, payload %+v", in.ID, back.Decoded, back.Payload)
		}
	}
	broken := store.Event{Envelope: json.RawMessage(`{"id":`)}
	if err := store.Redecode(&broken); err == nil || broken.Decoded != nil {
		t.Errorf("a broken envelope redecoded: %v %+v", err, broken)
	}
}

package demo

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/store"
)

var t0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// valid checks that every envelope is one the collector stores, with a
// unique id and times that never go backwards.
func valid(t *testing.T, envs []event.Envelope) []store.Event {
	t.Helper()
	ids := map[string]bool{}
	var out []store.Event
	var last time.Time
	for i, e := range envs {
		if ids[e.ID] {
			t.Fatalf("envelope %d: duplicate id %s", i, e.ID)
		}
		ids[e.ID] = true
		if e.ReceivedAt.Before(last) {
			t.Fatalf("envelope %d goes back in time: %v < %v", i, e.ReceivedAt, last)
		}
		last = e.ReceivedAt
		ev, err := store.FromEnvelope(e)
		if err != nil {
			t.Fatalf("envelope %d: %v", i, err)
		}
		out = append(out, ev)
	}
	return out
}

func TestPayloads(t *testing.T) {
	f, err := os.Open("../../testdata/payloads/claude-code-2.1.197.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	envs, err := Payloads(f, t0)
	if err != nil {
		t.Fatal(err)
	}
	evs := valid(t, envs)
	if len(evs) != 57 {
		t.Fatalf("%d events, want the 57 lines of the capture", len(evs))
	}
	// A tool call lasts at least its duration_ms.
	pre := map[string]time.Time{}
	for _, e := range evs {
		switch e.Event {
		case event.PreToolUse:
			pre[e.ToolUseID] = e.Time
		case event.PostToolUse, event.PostToolUseFailure:
			var p struct {
				DurationMS int64 `json:"duration_ms"`
			}
			json.Unmarshal(mustPayload(t, e), &p)
			if s, ok := pre[e.ToolUseID]; ok && e.Time.Sub(s) < time.Duration(p.DurationMS)*time.Millisecond {
				t.Errorf("%s lasts %v, less than its duration_ms %d", e.ToolUseID, e.Time.Sub(s), p.DurationMS)
			}
		}
	}

	f2 := func(in string, wantErr bool) {
		t.Helper()
		_, err := Payloads(strings.NewReader(in), t0)
		if (err != nil) != wantErr {
			t.Errorf("Payloads(%q) error = %v, want error %v", in, err, wantErr)
		}
	}
	f2("", false)
	f2("\n\n", false)
	f2(`{"hook_event_name":"Stop","session_id":"s"}`, false)
	f2("not json", true)
}

func mustPayload(t *testing.T, e store.Event) json.RawMessage {
	t.Helper()
	var env event.Envelope
	if err := json.Unmarshal(e.Envelope, &env); err != nil {
		t.Fatal(err)
	}
	return env.Payload
}

// strings appends every key and string value in v.
func collect(v any, out *strings.Builder) {
	switch v := v.(type) {
	case string:
		out.WriteString(v + "\n")
	case []any:
		for _, x := range v {
			collect(x, out)
		}
	case map[string]any:
		for k, x := range v {
			out.WriteString(k + "\n")
			collect(x, out)
		}
	}
}

func TestXSS(t *testing.T) {
	evs := valid(t, XSS(t0))
	var all strings.Builder
	for _, e := range evs {
		if e.SessionID != XSSSessionID {
			t.Fatalf("event of session %q", e.SessionID)
		}
		var v any
		if err := json.Unmarshal(e.Envelope, &v); err != nil {
			t.Fatal(err)
		}
		collect(v, &all)
	}
	for _, x := range XSSStrings {
		if !strings.Contains(all.String(), x) {
			t.Errorf("no event carries %q", x)
		}
	}
}

func TestBig(t *testing.T) {
	f := func(spec BigSpec) {
		t.Helper()
		evs := valid(t, Big(spec))
		hooks, agents, status := 0, map[string]bool{}, 0
		for _, e := range evs {
			if e.Kind == event.KindStatusLine {
				status++
				continue
			}
			hooks++
			if e.AgentID != "" {
				agents[e.AgentID] = true
			}
		}
		// The compaction agent comes on top of the spawned ones.
		if len(agents) != spec.Agents+1 {
			t.Errorf("%d subagents, want %d and the compaction agent", len(agents), spec.Agents)
		}
		if d := float64(hooks-spec.Events) / float64(spec.Events); d < -0.05 || d > 0.06 {
			t.Errorf("%d hook events, want about %d", hooks, spec.Events)
		}
		if status == 0 {
			t.Error("no statusLine snapshots")
		}
	}
	f(BigSpec{SessionID: "s1", Start: t0, Events: 20000, Agents: 50})
	f(BigSpec{SessionID: "s2", Start: t0, Events: 500, Agents: 6, Wave: 3, Seed: 2})
}

func TestSessions(t *testing.T) {
	evs := valid(t, Sessions(300, t0, 1))
	ids := map[string]bool{}
	sources := map[string]int{}
	for _, e := range evs {
		ids[e.SessionID] = true
		if e.Event == event.SessionStart {
			var p struct {
				Source string `json:"source"`
			}
			if err := json.Unmarshal(e.Decoded.Payload, &p); err != nil {
				t.Fatal(err)
			}
			sources[p.Source]++
		}
	}
	if len(ids) != 300 {
		t.Errorf("%d sessions, want 300", len(ids))
	}
	for _, s := range []string{"startup", "resume", "fork"} {
		if sources[s] == 0 {
			t.Errorf("no session started by %s", s)
		}
	}
}

func TestStory(t *testing.T) {
	const id = "01a212b9-c116-7aa7-b427-30e37ff12468"
	envs := Story(id, t0, 1)
	evs := valid(t, envs)
	if d := envs[len(envs)-1].ReceivedAt.Sub(t0); d < 10*time.Second || d > 40*time.Second {
		t.Errorf("the story lasts %v at speed 1, want about 20 s", d)
	}
	count := map[string]int{}
	for i, e := range evs {
		if e.SessionID != id {
			t.Fatalf("event %d in session %q", i, e.SessionID)
		}
		if len(envs[i].ID) != 36 || envs[i].ID[14] != '7' {
			t.Fatalf("envelope %d: id %q is not a UUIDv7, as the hook makes", i, envs[i].ID)
		}
		count[e.Event]++
		if e.Event == event.SubagentStart && envs[i].Subagent == nil {
			t.Errorf("SubagentStart %d without the sidecar metadata the hook sends", i)
		}
	}
	for name, want := range map[string]int{event.SubagentStart: 5, event.PostToolUseFailure: 1, event.PreCompact: 1, event.SessionEnd: 1} {
		if count[name] != want {
			t.Errorf("%d %s events, want %d", count[name], name, want)
		}
	}
	// Faster, the same events in less time.
	fast := Story(id, t0, 10)
	if len(fast) != len(envs) || fast[len(fast)-1].ReceivedAt.Sub(t0) != envs[len(envs)-1].ReceivedAt.Sub(t0)/10 {
		t.Errorf("at speed 10: %d events over %v; at 1: %d over %v", len(fast), fast[len(fast)-1].ReceivedAt.Sub(t0), len(envs), envs[len(envs)-1].ReceivedAt.Sub(t0))
	}
}

// TestSignalSessions: FanOut and Stalled make valid envelopes of the
// capture's payloads, under the session and ids they are given.
func TestSignalSessions(t *testing.T) {
	capture, err := os.ReadFile("../../testdata/payloads/claude-code-2.1.197.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	envs, err := FanOut(capture, "fan", 4, t0, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	evs := valid(t, envs)
	// Start and prompt; per subagent spawn, start, 2 events per call, stop
	// and the spawn's result.
	if len(evs) != 2+(4+2*1)+(4+2*3) {
		t.Fatalf("%d events", len(evs))
	}
	subs := map[string]int{}
	for _, e := range evs {
		if e.SessionID != "fan" || strings.Contains(string(mustPayload(t, e)), captureSession) {
			t.Fatalf("an event of another session: %s", mustPayload(t, e))
		}
		if e.AgentID != "" && e.Event == event.PreToolUse {
			subs[e.AgentID]++
		}
	}
	if len(subs) != 2 || subs["a0000000000000005"] != 1 || subs["a0000000000000006"] != 3 {
		t.Fatalf("calls per subagent: %v", subs)
	}
	envs, err = Stalled(capture, "stuck", t0)
	if err != nil {
		t.Fatal(err)
	}
	if evs := valid(t, envs); len(evs) != 3 || evs[2].Event != event.PreToolUse || evs[2].ToolUseID != StalledCall {
		t.Fatalf("stalled: %+v", evs)
	}
	if _, err := FanOut([]byte(`{"hook_event_name":"Stop"}`), "x", 0, t0, 1); err == nil {
		t.Fatal("a capture without the payloads: no error")
	}
}

// TestSent: a hook's stamps on a copy, in the batch's order, the ids
// sorting as their times do.
func TestSent(t *testing.T) {
	envs := Big(BigSpec{SessionID: "sent", Start: time.Unix(1_780_000_000, 0), Events: 40, Agents: 2, Seed: 1})
	ids := make([]string, len(envs))
	for i := range envs {
		ids[i] = envs[i].ID
	}
	now := time.Date(2026, 11, 28, 12, 0, 0, 999_990_000, time.UTC) // the batch crosses a millisecond
	sent := Sent(envs, now)
	for i := range envs {
		if envs[i].ID != ids[i] {
			t.Fatalf("Sent changed its argument's envelope %d", i)
		}
		if want := now.Add(time.Duration(i) * time.Microsecond); !sent[i].ReceivedAt.Equal(want) {
			t.Errorf("envelope %d received at %v, want %v", i, sent[i].ReceivedAt, want)
		}
		if sent[i].ID == ids[i] || len(sent[i].ID) != 36 || sent[i].ID[14] != '7' {
			t.Errorf("envelope %d: id %q is not a new UUIDv7", i, sent[i].ID)
		}
		if i > 0 && sent[i].ReceivedAt.UnixMilli() > sent[i-1].ReceivedAt.UnixMilli() && sent[i].ID <= sent[i-1].ID {
			t.Errorf("ids of later milliseconds sort before earlier ones: %s after %s", sent[i].ID, sent[i-1].ID)
		}
		if string(sent[i].Payload) != string(envs[i].Payload) {
			t.Errorf("envelope %d: payload changed", i)
		}
	}
}

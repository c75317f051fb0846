package ingest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/ingest"
	"github.com/hookwatch/hookwatch/internal/corpus"
	"github.com/hookwatch/hookwatch/internal/secrettest"
	"github.com/hookwatch/hookwatch/privacy"
)

// Secrets of formats the redactor knows, built at run time so that the
// source holds none.
var (
	ghp   = "ghp_" + strings.Repeat("aB3dE6gH9j", 3) + "kLmNoP"
	akia  = "AKIA" + "IOSFODNN7EXAMPLE"
	slack = "xoxb-123456789012-1234567890123-" + "AbCdEfGhIjKlMnOpQrStUvWx"
)

// payloads returns every real payload of the repository's corpus, and each
// again with secrets in its prompt, tool input and tool output.
func payloads(t testing.TB) [][]byte {
	t.Helper()
	var out [][]byte
	for _, p := range corpus.Load(t) {
		out = append(out, p.JSON)
		var m map[string]any
		if json.Unmarshal(p.JSON, &m) != nil {
			continue
		}
		m["prompt"] = "deploy with " + ghp
		m["tool_input"] = map[string]any{"command": "aws s3 ls # key " + akia}
		m["tool_response"] = map[string]any{"stdout": "ok\n\tSLACK=" + slack}
		b, _ := json.Marshal(m)
		out = append(out, b)
	}
	return out
}

// TestRunStampsTheEnvelope: whatever the payload, the envelope carries the
// pipeline's origin, the time, the sidecar and the decision.
func TestRunStampsTheEnvelope(t *testing.T) {
	dir := t.TempDir()
	transcript := filepath.Join(dir, "s-1.jsonl")
	meta := filepath.Join(dir, "s-1", "subagents", "agent-a1.meta.json")
	if err := os.MkdirAll(filepath.Dir(meta), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(meta, []byte(`{"agentType":"Explore","description":"look","toolUseId":"toolu_spawn","spawnDepth":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 25, 12, 0, 0, 5, time.FixedZone("CET", 3600))
	var delivered []*event.Envelope
	decided := 0
	pl := ingest.Pipeline{
		Origin:  ingest.Origin{Host: "box", User: "dev", Version: "1.2.3"},
		Privacy: privacy.DefaultOptions(),
		Now:     func() time.Time { return at },
		Decide: func(ctx context.Context, p *event.Payload, data []byte) func() (ingest.Verdict, error) {
			decided++
			return func() (ingest.Verdict, error) {
				return ingest.Verdict{Stdout: []byte(`{"x":1}`), Code: 0, Audit: json.RawMessage(`{"action":"deny"}`)}, nil
			}
		},
		Deliver: func(ctx context.Context, env *event.Envelope) error {
			delivered = append(delivered, env)
			return nil
		},
	}
	f := func(payload string, wantKind, wantRuntime string, wantDecided bool, wantSubagent bool) {
		t.Helper()
		delivered, decided = nil, 0
		out, err := pl.Run(context.Background(), []byte(payload))
		if err != nil {
			t.Fatalf("Run(%s): %v", payload, err)
		}
		if len(delivered) != 1 || delivered[0] != out.Envelope {
			t.Fatalf("Run(%s) delivered %v, want its envelope once", payload, delivered)
		}
		env := out.Envelope
		if env.Host != "box" || env.User != "dev" || env.HookwatchVersion != "1.2.3" || !env.ReceivedAt.Equal(at) ||
			env.ReceivedAt.Location() != time.UTC || env.Kind != wantKind || env.Runtime != wantRuntime || len(env.ID) != 36 {
			t.Errorf("Run(%s) envelope %+v", payload, env)
		}
		if got := decided == 1; got != wantDecided || (string(env.Decision) == `{"action":"deny"}`) != wantDecided {
			t.Errorf("Run(%s): decided %d times, decision %s", payload, decided, env.Decision)
		}
		if got := env.Subagent != nil; got != wantSubagent {
			t.Errorf("Run(%s): subagent %+v", payload, env.Subagent)
		} else if got && (env.Subagent.ToolUseID != "toolu_spawn" || env.Subagent.AgentType != "Explore" || env.Subagent.SpawnDepth != 1) {
			t.Errorf("Run(%s): subagent %+v", payload, *env.Subagent)
		}
		if !json.Valid(env.AppendJSON(nil)) {
			t.Errorf("Run(%s): envelope encodes to invalid JSON", payload)
		}
	}
	tp := `"transcript_path":` + string(mustJSON(t, transcript))
	f(`{"session_id":"s-1",`+tp+`,"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`,
		event.KindHook, event.RuntimeClaudeCode, true, false)
	f(`{"session_id":"s-1",`+tp+`,"agent_id":"a1","agent_type":"Explore","hook_event_name":"PreToolUse","tool_name":"Bash"}`,
		event.KindHook, event.RuntimeClaudeCode, true, true)
	// A subagent id that would walk out of the transcript directory.
	f(`{"session_id":"s-1",`+tp+`,"agent_id":"../a1","hook_event_name":"PreToolUse"}`,
		event.KindHook, event.RuntimeClaudeCode, true, false)
	f(`{"session_id":"s-1","transcript_path":"/home/dev/.codex/sessions/rollout-1.jsonl","hook_event_name":"Stop"}`,
		event.KindHook, event.RuntimeCodex, true, false)
	// A statusLine snapshot answers nothing.
	f(`{"session_id":"s-1","model":{"id":"m"},"workspace":{"current_dir":"/x"},"cost":{"total_cost_usd":1}}`,
		event.KindStatusLine, event.RuntimeClaudeCode, false, false)

	pl.Origin.Runtime = event.RuntimeCodex
	f(`{"session_id":"s-1","hook_event_name":"Stop"}`, event.KindHook, event.RuntimeCodex, true, false)
}

// TestRunTraceparent: the agent's trace context is kept when well formed,
// dropped otherwise (it comes from the environment: hostile like a payload).
func TestRunTraceparent(t *testing.T) {
	f := func(tp, want string) {
		t.Helper()
		pl := ingest.Pipeline{Privacy: privacy.DefaultOptions(), Traceparent: tp}
		out, err := pl.Run(context.Background(), []byte(`{"session_id":"s-1","hook_event_name":"Stop"}`))
		if err != nil {
			t.Fatal(err)
		}
		if out.Envelope.Traceparent != want {
			t.Errorf("Traceparent %q: envelope has %q, want %q", tp, out.Envelope.Traceparent, want)
		}
	}
	const valid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	f(valid, valid)
	f("", "")
	f(valid+`","x":"`, "")
	f("00-"+strings.Repeat("0", 32)+"-00f067aa0ba902b7-01", "")
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRunRecorded: an answer that also recorded the event (the full binary)
// is returned, and nothing is delivered.
func TestRunRecorded(t *testing.T) {
	pl := ingest.Pipeline{
		Decide: func(ctx context.Context, p *event.Payload, data []byte) func() (ingest.Verdict, error) {
			return func() (ingest.Verdict, error) {
				return ingest.Verdict{Stdout: []byte("answer"), Code: 2, Recorded: true}, errors.New("slow")
			}
		},
		Deliver: func(ctx context.Context, env *event.Envelope) error {
			t.Fatal("delivered an event the full binary recorded")
			return nil
		},
	}
	out, err := pl.Run(context.Background(), []byte(`{"session_id":"s","hook_event_name":"PreToolUse"}`))
	if err != nil || out.Envelope != nil || string(out.Verdict.Stdout) != "answer" || out.Verdict.Code != 2 || out.DecideErr == nil {
		t.Fatalf("Run = %+v, %v", out, err)
	}
}

// TestRunErrors: what is not a payload is refused as such; a delivery
// failure is returned with the policies' answer.
func TestRunErrors(t *testing.T) {
	fail := errors.New("disk full")
	pl := ingest.Pipeline{Deliver: func(ctx context.Context, env *event.Envelope) error { return fail }}
	for _, bad := range []string{"", "not json", "[1]", `{"a":`} {
		if _, err := pl.Run(context.Background(), []byte(bad)); !errors.Is(err, ingest.ErrPayload) {
			t.Errorf("Run(%q) = %v, want ErrPayload", bad, err)
		}
	}
	out, err := pl.Run(context.Background(), []byte(`{"hook_event_name":"Nope","session_id":7}`))
	if !errors.Is(err, fail) || out.Envelope == nil {
		t.Errorf("Run = %+v, %v; want the delivery's error", out, err)
	}
	if got := strings.Join(out.Oddities, "; "); !strings.Contains(got, `unknown event "Nope"`) || !strings.Contains(got, "session_id") {
		t.Errorf("oddities %q", got)
	}
}

// TestAdmitIsIdempotent: for every real payload (and each with secrets in
// it), the collector admitting what a hook's pipeline made changes no byte,
// and admitting the raw payload wrapped by someone else stores the bytes
// the hook would have sent: the path does not change what is stored.
func TestAdmitIsIdempotent(t *testing.T) {
	for _, o := range []privacy.Options{privacy.DefaultOptions(), {Capture: privacy.CaptureNone, Redact: true},
		{Capture: privacy.CaptureFull, Redact: true}, {Capture: privacy.CapturePreview, PreviewBytes: 40, Redact: true}} {
		pl := ingest.Pipeline{Privacy: o}
		for _, data := range payloads(t) {
			out, err := pl.Run(context.Background(), data)
			if err != nil {
				t.Fatalf("Run(%s): %v", data, err)
			}
			made := append(json.RawMessage(nil), out.Envelope.Payload...)
			again := event.Envelope{Payload: append(json.RawMessage(nil), made...)}
			decoded := pl.Admit(&again)
			if !bytes.Equal(again.Payload, made) {
				t.Fatalf("%+v: admitting the hook's payload changed it\n got %s\nwant %s", o, again.Payload, made)
			}
			// What it did not change it hands on decoded, as Decode reads it.
			if decoded == nil {
				t.Fatalf("%+v: no decoded payload for an unchanged %s", o, made)
			}
			if want, err := event.Decode(again.Payload); err != nil || !reflect.DeepEqual(decoded, want) {
				t.Fatalf("%+v: decoded payload differs from Decode of %s: %v", o, again.Payload, err)
			}
			// What it changed too: the payload as stored, decoded.
			raw := event.Envelope{Payload: append(json.RawMessage(nil), data...)}
			d := pl.Admit(&raw)
			if d == nil {
				t.Fatalf("%+v: no decoded payload for %s", o, data)
			}
			if want, _ := event.Decode(raw.Payload); !reflect.DeepEqual(d, want) {
				t.Fatalf("%+v: decoded raw payload differs from Decode of %s", o, raw.Payload)
			}
			if !bytes.Equal(raw.Payload, made) {
				t.Fatalf("%+v: admitted raw payload differs from the hook's\n got %s\nwant %s", o, raw.Payload, made)
			}
			if o.Redact {
				for _, s := range []string{ghp, akia, slack} {
					if bytes.Contains(made, []byte(s)) {
						t.Fatalf("%+v: secret %s kept in %s", o, s, made)
					}
				}
			}
		}
	}
}

// TestAdmitLeavesWhatIsNotAPayload: the store, not Admit, refuses it.
func TestAdmitLeavesWhatIsNotAPayload(t *testing.T) {
	pl := ingest.Pipeline{Privacy: privacy.DefaultOptions()}
	for _, p := range []string{"", "[1]", `"s"`, `{"a":`} {
		env := event.Envelope{Payload: json.RawMessage(p)}
		pl.Admit(&env)
		if string(env.Payload) != p {
			t.Errorf("Admit(%q) = %q", p, env.Payload)
		}
	}
}

// BenchmarkAdmit is the collector's cost per envelope of applying the
// privacy rules again, on the real payloads: as the batch endpoint sees
// them from a hook (shaped: already redacted), and as sent by a script or
// an older hook (raw: the rules change them, and they are encoded again).
func BenchmarkAdmit(b *testing.B) {
	pl := ingest.Pipeline{Privacy: privacy.DefaultOptions()}
	var shaped, raw []json.RawMessage
	for _, data := range payloads(b) {
		out, err := pl.Run(context.Background(), data)
		if err != nil {
			b.Fatal(err)
		}
		shaped = append(shaped, out.Envelope.Payload)
		raw = append(raw, data)
	}
	for _, set := range []struct {
		name string
		made []json.RawMessage
	}{{"shaped", shaped}, {"raw", raw}} {
		b.Run(set.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				env := event.Envelope{Payload: set.made[i%len(set.made)]}
				pl.Admit(&env)
			}
		})
	}
}

// TestRunForkParent: on a SessionStart(fork) of 2.1.332, which names only
// the new session, the pipeline finds the parent from the transcripts laid
// out as the client writes them: the fork's file starts with copies of the
// parent's messages (same uuid, sessionId rewritten).
func TestRunForkParent(t *testing.T) {
	const x, y, other = "74975720-1a50-4d17-9463-df6fabfdeb7c", "03760423-27f3-4a00-8d63-b14ec37ed695", "11111111-2222-4333-8444-555555555555"
	project := filepath.Join(t.TempDir(), ".claude", "projects", "-home-dev-src-demo")
	if err := os.MkdirAll(project, 0o700); err != nil {
		t.Fatal(err)
	}
	msg := func(session, uuid, parent, text string) string {
		p := "null"
		if parent != "" {
			p = `"` + parent + `"`
		}
		return `{"parentUuid":` + p + `,"isSidechain":false,"userType":"external","cwd":"/home/dev/src/demo","sessionId":"` + session +
			`","version":"2.1.332","type":"user","message":{"role":"user","content":"` + text + `"},"uuid":"` + uuid + `","timestamp":"2026-11-24T10:00:00.000Z"}` + "\n"
	}
	write := func(id string, lines ...string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(project, id+".jsonl"), []byte(strings.Join(lines, "")), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	const u1, u2 = "9f0c4c1e-7a57-4d2a-9a3e-0c5b8e1d2f31", "0b6f1f62-33a4-4a0e-8f5e-6f7b8a9c0d12"
	write(x, `{"type":"summary","summary":"demo","leafUuid":"`+u2+`"}`+"\n", msg(x, u1, "", "hello"), msg(x, u2, u1, "more"))
	write(other, msg(other, "aaaaaaaa-0000-4000-8000-000000000000", "", "unrelated"))
	pl := ingest.Pipeline{}
	f := func(payload, want string) {
		t.Helper()
		out, err := pl.Run(context.Background(), []byte(payload))
		if err != nil {
			t.Fatal(err)
		}
		if got := out.Envelope.ForkOf; got != want {
			t.Errorf("ForkOf of %s = %q, want %q", payload, got, want)
		}
	}
	start := func(id, source string) string {
		return `{"session_id":"` + id + `","transcript_path":"` + filepath.Join(project, id+".jsonl") + `","cwd":"/home/dev/src/demo","hook_event_name":"SessionStart","source":"` + source + `"}`
	}
	end := func(id string) string {
		return strings.Replace(start(id, "x"), `"SessionStart"`, `"SessionEnd","reason":"other"`, 1)
	}
	// 2.1.332 writes the fork's transcript only after its first answer:
	// at SessionStart there is nothing to prove the parent from.
	f(start(y, "fork"), "")
	// Then, as the client writes it: its own lines, then the copies.
	write(y, `{"type":"mode","mode":"normal","sessionId":"`+y+`"}`+"\n",
		`{"type":"queue-operation","operation":"enqueue","timestamp":"2026-11-25T14:18:03.790Z","sessionId":"`+y+`","content":"again"}`+"\n",
		msg(y, u1, "", "hello"), msg(y, u2, u1, "more"))
	f(end(y), x)
	f(start(y, "fork"), x)
	// Only a fork's SessionStart and SessionEnd read transcripts.
	f(start(y, "resume"), "")
	f(strings.Replace(start(y, "fork"), "SessionStart", "UserPromptSubmit", 1), "")
	f(strings.Replace(end(y), "SessionEnd", "Stop", 1), "")
	// The parent's own end names nothing: its transcript is no fork's.
	f(end(x), "")
	// A transcript_path that is not the session's own file proves nothing.
	f(strings.Replace(start(y, "fork"), y+".jsonl", x+".jsonl", 1), "")
	// Hostile heads: a uuid that is not one, a line cut by the bound.
	write(y, msg(y, `\" or 1`, "", "x"))
	f(start(y, "fork"), "")
	write(y, `{"uuid":"`+u1+`","pad":"`+strings.Repeat("a", 70<<10)+`"}`+"\n")
	f(start(y, "fork"), "")
}

// TestRunCodexForkParent: on a Codex SessionStart(fork), which names only
// the new thread, the pipeline reads the parent from the fork's rollout
// (its session_meta's forked_from_id): a real one of Codex 0.169's
// app-server thread/fork.
func TestRunCodexForkParent(t *testing.T) {
	const fork, parent = "01a23316-3758-7a81-a9c2-a6bb4415263b", "01a23316-345b-74a0-a31e-017bc0d13103"
	real, err := os.ReadFile("../codex/testdata/rollout-2026-12-01T19-30-23-" + fork + ".jsonl")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), ".codex", "sessions", "2026", "12", "01")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "rollout-2026-12-01T19-30-23-"+fork+".jsonl")
	if err := os.WriteFile(path, real, 0o600); err != nil {
		t.Fatal(err)
	}
	f := func(pl ingest.Pipeline, payload, want string) {
		t.Helper()
		out, err := pl.Run(context.Background(), []byte(payload))
		if err != nil {
			t.Fatal(err)
		}
		if got := out.Envelope.ForkOf; got != want || out.Envelope.Runtime != event.RuntimeCodex {
			t.Errorf("ForkOf of %s = %q (runtime %s), want %q", payload, got, out.Envelope.Runtime, want)
		}
	}
	// As Codex sends them.
	start := `{"cwd":"/home/dev/proj","hook_event_name":"SessionStart","model":"gpt-5.5","permission_mode":"default","session_id":"` + fork +
		`","source":"fork","transcript_path":"` + path + `"}`
	end := `{"cwd":"/home/dev/proj","hook_event_name":"SessionEnd","reason":"other","session_id":"` + fork + `","transcript_path":"` + path + `"}`
	f(ingest.Pipeline{}, start, parent)
	f(ingest.Pipeline{}, end, parent)
	f(ingest.Pipeline{Origin: ingest.Origin{Runtime: event.RuntimeCodex}}, start, parent)
	// Only a fork's SessionStart and a SessionEnd read it.
	f(ingest.Pipeline{}, strings.Replace(start, `"fork"`, `"resume"`, 1), "")
	f(ingest.Pipeline{}, strings.Replace(start, "SessionStart", "UserPromptSubmit", 1), "")
	// Nor does a sender's the collector cannot read.
	f(ingest.Pipeline{Remote: true}, start, "")
}

// TestAdmitDecodesWhatItStores: whatever the payload's layout — blanks and
// line breaks between tokens, invalid UTF-8, a member the rules change —
// Admit stores it on one line and hands on exactly event.Decode of what it
// stored.
func TestAdmitDecodesWhatItStores(t *testing.T) {
	pl := ingest.Pipeline{Privacy: privacy.DefaultOptions()}
	f := func(payload string) {
		t.Helper()
		env := event.Envelope{Payload: json.RawMessage(payload)}
		d := pl.Admit(&env)
		if bytes.ContainsAny(env.Payload, "\n\r") {
			t.Fatalf("Admit(%q) stored a line break: %q", payload, env.Payload)
		}
		want, err := event.Decode(env.Payload)
		if err != nil {
			t.Fatalf("Admit(%q) stored %q: %v", payload, env.Payload, err)
		}
		if !reflect.DeepEqual(d, want) {
			t.Fatalf("Admit(%q) = %+v, want %+v (Decode of %q)", payload, d, want, env.Payload)
		}
	}
	f(`{"hook_event_name":"UserPromptSubmit","session_id":"s","prompt":"fine"}`)
	f(`{"hook_event_name":"UserPromptSubmit","session_id":"s","prompt":"token ` + ghp + `"}`)
	f("{\n  \"hook_event_name\": \"PostToolUse\",\n  \"session_id\": \"s\",\n  \"tool_name\": \"Bash\",\n  \"tool_input\": {\n    \"command\": \"ls\"\n  },\n  \"tool_response\": {\"stdout\": \"a\\nb\"}\n}")
	f("{\n  \"hook_event_name\": \"Stop\",\n  \"session_id\": \"s\"\n}")
	f(`{"hook_event_name": "Stop" , "session_id" : "s", "last_assistant_message": [ 1, 2 ]}`)
	f("{\"hook_event_name\":\"UserPromptSubmit\",\"session_id\":\"s\",\"prompt\":\"bad \xff byte\"}")
	f("{\"hook_event_name\":\"PreToolUse\",\"session_id\":\"s\",\"tool_name\":\"Bash\",\"tool_input\":{\r\n\"command\":\"echo " + akia + "\"}}")
	f(`{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_input":{"command":"<b>&</b>"},"tool_use_id":"t"}`)
}

// TestAdmitOwnsItsBytes: a payload admitted from a buffer it shares (a
// request body holding a batch) is stored and decoded from bytes of its
// own, whether the rules changed it or not, and so is its decision:
// overwriting the buffer after Admit changes none of them.
func TestAdmitOwnsItsBytes(t *testing.T) {
	pl := ingest.Pipeline{Privacy: privacy.DefaultOptions()}
	f := func(payload string) {
		t.Helper()
		const decision = `{"action":"deny","rule_ids":["r"],"reason":"no","enforced":true}`
		body := []byte(`{"envelopes":[{"payload":` + payload + `,"decision":` + decision + `}, {"payload":{}}]}`)
		at, dat := bytes.Index(body, []byte(payload)), bytes.Index(body, []byte(decision))
		env := event.Envelope{Payload: json.RawMessage(body[at : at+len(payload)]), Decision: json.RawMessage(body[dat : dat+len(decision)])}
		d := pl.Admit(&env)
		stored := string(env.Payload)
		want, err := event.Decode([]byte(stored))
		if err != nil {
			t.Fatalf("Admit(%q) stored %q: %v", payload, stored, err)
		}
		for i := range body {
			body[i] = 'x'
		}
		if string(env.Payload) != stored {
			t.Fatalf("Admit(%q): the stored payload shares the body: %q", payload, env.Payload)
		}
		if string(env.Decision) != decision {
			t.Fatalf("Admit(%q): the decision shares the body: %q", payload, env.Decision)
		}
		if !reflect.DeepEqual(d, want) {
			t.Fatalf("Admit(%q): the decoded payload shares the body: %+v, want %+v", payload, d, want)
		}
	}
	f(`{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"t"}`)
	f(`{"hook_event_name":"UserPromptSubmit","session_id":"s","prompt":"token ` + ghp + `"}`)
	f(`{"hook_event_name":"PostToolUse","session_id":"s","tool_name":"Bash","tool_input":{"command":"ls"},"tool_response":{"stdout":"` + strings.Repeat("a", 64<<10) + `"}}`)
	f("{\n\"hook_event_name\": \"Stop\",\n\"session_id\": \"s\"\n}")
}

// FuzzAdmit: whatever a batch carries, Admit stores a payload that
// decodes to what it hands on, and neither shares the batch's buffer:
// overwriting the buffer afterwards changes nothing.
func FuzzAdmit(f *testing.F) {
	f.Add([]byte(`{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"t"}`))
	f.Add([]byte("{\n\"hook_event_name\": \"Stop\",\n\"session_id\": \"s\"\n}"))
	f.Add([]byte(`{"hook_event_name":"UserPromptSubmit","session_id":"s","prompt":"token ` + ghp + `"}`))
	f.Add([]byte(`{"a":{"b":[1,2,{"c":"\u00e9"}]},"a":2}`))
	f.Add([]byte("{\"x\":\"\xff\"}"))
	pl := ingest.Pipeline{Privacy: privacy.DefaultOptions()}
	f.Fuzz(func(t *testing.T, payload []byte) {
		body := append(append([]byte(`{"envelopes":[{"payload":`), payload...), `}]}`...)
		at := len(`{"envelopes":[{"payload":`)
		env := event.Envelope{Payload: json.RawMessage(body[at : at+len(payload)])}
		d := pl.Admit(&env)
		if d == nil {
			return
		}
		stored := string(env.Payload)
		want, err := event.Decode([]byte(stored))
		if err != nil {
			t.Fatalf("Admit(%q) stored %q: %v", payload, stored, err)
		}
		if !reflect.DeepEqual(d, want) {
			t.Fatalf("Admit(%q) = %+v, want %+v (Decode of %q)", payload, d, want, stored)
		}
		for i := range body {
			body[i] = ' '
		}
		if string(env.Payload) != stored || !reflect.DeepEqual(d, want) {
			t.Fatalf("Admit(%q): what it stored or decoded shares the batch's buffer", payload)
		}
	})
}

// TestNoSecretStoredOnAnyPath places a secret of every kind everywhere a
// payload carries text (secrettest.Placements: keys that repeat included,
// at the top level, by another escape and nested), written every way JSON
// allows, and finds none of them in what the pipeline stores of it: the
// envelope a hook or an http hook makes (Run), and the payload the
// collector admits from a posted or spooled envelope (Admit, and AdmitSplit
// of the members as the batch's scan splits them). What Run stores, Admit
// keeps byte for byte.
func TestNoSecretStoredOnAnyPath(t *testing.T) {
	pl := ingest.Pipeline{Privacy: privacy.DefaultOptions()}
	for _, s := range secrettest.Samples() {
		for _, place := range secrettest.Placements() {
			for _, l := range secrettest.Literals {
				payload := []byte(place.Payload(l.Lit, s.Text))
				where := s.Kind + " in " + place.Name + " (" + l.Name + ")"
				out, err := pl.Run(context.Background(), payload)
				if err != nil {
					t.Fatalf("%s: %v", where, err)
				}
				stored := out.Envelope.AppendJSON(nil)
				if secrettest.Leaks(stored, s.Secret) {
					t.Errorf("%s: the hook stores it in clear: %s", where, stored)
				}
				again := event.Envelope{Payload: bytes.Clone(out.Envelope.Payload)}
				if pl.Admit(&again); !bytes.Equal(again.Payload, out.Envelope.Payload) {
					t.Errorf("%s: Admit changed what the hook stored\n%s\n%s", where, out.Envelope.Payload, again.Payload)
				}
				env := event.Envelope{Payload: bytes.Clone(payload)}
				pl.Admit(&env)
				if secrettest.Leaks(env.Payload, s.Secret) {
					t.Errorf("%s: Admit stores it in clear: %s", where, env.Payload)
				}
				env = event.Envelope{Payload: bytes.Clone(payload)}
				ms, _, err := event.SplitMembers(env.Payload, nil)
				if err != nil {
					t.Fatal(err)
				}
				pl.AdmitSplit(&env, ms)
				if secrettest.Leaks(env.Payload, s.Secret) {
					t.Errorf("%s: AdmitSplit stores it in clear: %s", where, env.Payload)
				}
			}
		}
	}
}

// TestRepeatedKeys: a payload whose top-level key repeats — alike or by
// another escape — is stored with the last value of each, the one the
// policies and every reader decode, whichever way it comes.
func TestRepeatedKeys(t *testing.T) {
	pl := ingest.Pipeline{Privacy: privacy.DefaultOptions()}
	f := func(repeated bool, payload, want string) {
		t.Helper()
		out, err := pl.Run(context.Background(), []byte(payload))
		if err != nil {
			t.Fatal(err)
		}
		if got := string(out.Envelope.Payload); got != want {
			t.Errorf("Run(%s) stored\n%s\nwant\n%s", payload, got, want)
		}
		if strings.Contains(strings.Join(out.Oddities, "; "), "repeated key") != repeated {
			t.Errorf("Run(%s): oddities %q", payload, out.Oddities)
		}
		for _, admit := range []func(*event.Envelope) *event.Payload{pl.Admit, func(env *event.Envelope) *event.Payload { return pl.AdmitSplit(env, nil) }} {
			env := event.Envelope{Payload: json.RawMessage(payload)}
			admit(&env)
			if got := string(env.Payload); got != want {
				t.Errorf("admission of %s stored\n%s\nwant\n%s", payload, got, want)
			}
		}
	}
	f(true, `{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_use_id":"t61","tool_input":{"command":"echo `+ghp+`"},"tool_input":{"command":"ls"}}`,
		`{"hook_event_name":"PreToolUse","session_id":"s","tool_input":{"command":"ls"},"tool_name":"Bash","tool_use_id":"t61"}`)
	f(true, `{"session_id":"s","hook_event_name":"UserPromptSubmit","prompt":"`+ghp+`","prompt":"hello"}`,
		`{"hook_event_name":"UserPromptSubmit","prompt":"hello","session_id":"s"}`)
	f(true, `{"session_id":"s","hook_event_name":"UserPromptSubmit","pro\u006dpt":"`+ghp+`","prompt":"hello"}`,
		`{"hook_event_name":"UserPromptSubmit","prompt":"hello","session_id":"s"}`)
	f(true, `{"session_id":"s","hook_event_name":"UserPromptSubmit","prompt":"hello","pro\u006dpt":"`+ghp+`"}`,
		`{"hook_event_name":"UserPromptSubmit","prompt":"[REDACTED:github_token]","session_id":"s"}`)
	f(true, `{"session_id":"`+ghp+`","session_id":"s","hook_event_name":"Stop"}`,
		`{"hook_event_name":"Stop","session_id":"s"}`)
	f(true, `{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Bash","tool_response":{"stdout":"`+ghp+`"},"tool_response":null}`,
		`{"hook_event_name":"PostToolUse","session_id":"s","tool_name":"Bash","tool_response":null}`)
	// Nested: each copy is redacted where it is.
	f(false, `{"session_id":"s","hook_event_name":"PreToolUse","tool_input":{"command":"echo `+ghp+`","command":"ls"}}`,
		`{"hook_event_name":"PreToolUse","session_id":"s","tool_input":{"command":"echo [REDACTED:github_token]","command":"ls"}}`)
}

// TestRunRedactsTheEnvelope: the text the hook puts in an envelope beside
// the payload — the subagent's description read from its sidecar file, the
// policies' audit record, the origin — is redacted like the payload, the
// ids attribution matches are kept, and the sidecar a caller hands over
// (RunRecorded) is not written to.
func TestRunRedactsTheEnvelope(t *testing.T) {
	dir := t.TempDir()
	meta := filepath.Join(dir, "s-1", "subagents", "agent-a1.meta.json")
	if err := os.MkdirAll(filepath.Dir(meta), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(meta, []byte(`{"agentType":"Explore","description":"use `+ghp+` to push","toolUseId":"toolu_spawn","spawnDepth":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	pl := ingest.Pipeline{
		Origin:  ingest.Origin{Host: "ci-" + akia, User: "dev", Version: "1.2.3"},
		Privacy: privacy.DefaultOptions(),
		Decide: func(ctx context.Context, p *event.Payload, data []byte) func() (ingest.Verdict, error) {
			return func() (ingest.Verdict, error) {
				return ingest.Verdict{
					Stdout: []byte(`{"hookSpecificOutput":{"permissionDecisionReason":"saw ` + slack + `"}}`),
					Audit:  json.RawMessage(`{"action":"deny","rule_ids":["r"],"reason":"saw ` + slack + `","enforced":true}`),
				}, nil
			}
		},
	}
	tp := `"transcript_path":` + string(mustJSON(t, filepath.Join(dir, "s-1.jsonl")))
	out, err := pl.Run(context.Background(), []byte(`{"session_id":"s-1",`+tp+`,"agent_id":"a1","agent_type":"Explore","hook_event_name":"PreToolUse","tool_name":"Bash","tool_use_id":"t1","tool_input":{"command":"git push"}}`))
	if err != nil {
		t.Fatal(err)
	}
	env := out.Envelope
	stored := env.AppendJSON(nil)
	for _, secret := range []string{ghp, akia, slack} {
		if bytes.Contains(stored, []byte(secret)) {
			t.Errorf("%.8s… stored in clear: %s", secret, stored)
		}
	}
	if m := env.Subagent; m == nil || m.Description != "use [REDACTED:github_token] to push" || m.ToolUseID != "toolu_spawn" || m.AgentType != "Explore" {
		t.Errorf("subagent %+v", m)
	}
	if env.Host != "ci-[REDACTED:aws_access_key_id]" || !bytes.Contains(env.Decision, []byte(`"reason":"saw [REDACTED:slack_token]"`)) {
		t.Errorf("host %q, decision %s", env.Host, env.Decision)
	}
	// The answer to the agent is the policies', not the record's.
	if !bytes.Contains(out.Verdict.Stdout, []byte(slack)) {
		t.Errorf("the answer was redacted: %s", out.Verdict.Stdout)
	}

	sub := &event.SubagentMeta{AgentType: "Explore", Description: "use " + ghp, ToolUseID: "toolu_spawn"}
	out, err = pl.RunRecorded(context.Background(), []byte(`{"session_id":"s-1","agent_id":"a1","hook_event_name":"UserPromptSubmit","prompt":"p"}`), "rec-1", time.Now(), sub)
	if err != nil {
		t.Fatal(err)
	}
	if out.Envelope.Subagent.Description != "use [REDACTED:github_token]" || sub.Description != "use "+ghp {
		t.Errorf("recorded: envelope's sidecar %+v, the caller's %+v", *out.Envelope.Subagent, *sub)
	}
}

// TestAdmitRedactsTheEnvelope: an envelope posted or spooled with secrets
// in its own fields is stored without them, whichever admission takes it;
// its id and the sidecar's ids stay as they are.
func TestAdmitRedactsTheEnvelope(t *testing.T) {
	pl := ingest.Pipeline{Privacy: privacy.DefaultOptions()}
	for _, split := range []bool{false, true} {
		env := event.Envelope{
			ID: "dup-1", Runtime: event.RuntimeClaudeCode, Kind: event.KindHook,
			Host: "ci-" + ghp, User: "u-" + akia, HookwatchVersion: slack, ForkOf: ghp,
			Subagent:    &event.SubagentMeta{AgentType: "Explore", Description: "use " + ghp, ToolUseID: "toolu_spawn", SpawnDepth: 1},
			Traceparent: "00-" + ghp,
			Files:       []event.FileState{{Path: "/w/" + akia}, {Path: "/w/a.go", Hash: "fnv1a64:0123456789abcdef"}},
			Decision:    json.RawMessage(`{"action":"deny","hookSpecificOutput":{"permissionDecisionReason":"token ` + ghp + `"}}`),
			Payload:     json.RawMessage(`{"session_id":"s","hook_event_name":"Stop"}`),
		}
		if split {
			pl.AdmitSplit(&env, nil)
		} else {
			pl.Admit(&env)
		}
		stored := env.AppendJSON(nil)
		for _, secret := range []string{ghp, akia, slack} {
			if bytes.Contains(stored, []byte(secret)) {
				t.Errorf("split %v: %.8s… stored in clear: %s", split, secret, stored)
			}
		}
		if env.ID != "dup-1" || env.Subagent.ToolUseID != "toolu_spawn" || env.Subagent.AgentType != "Explore" || env.Traceparent != "" ||
			len(env.Files) != 1 || env.Files[0].Path != "/w/a.go" {
			t.Errorf("split %v: %s", split, stored)
		}
	}
}

package privacy

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/secrettest"
)

// TestEnvelope: the text an envelope carries beside its payload is
// redacted as the payload's is, the ids attribution matches stay byte for
// byte, a traceparent or file state that held a secret is dropped, and
// nothing the envelope shares is written to.
func TestEnvelope(t *testing.T) {
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	clean := func() event.Envelope {
		return event.Envelope{
			ID: "01a229ea-aad7-7c29-a969-63119640b4cc", Runtime: event.RuntimeClaudeCode, Kind: event.KindHook,
			Host: "devbox", User: "dev", HookwatchVersion: "1.2.3", ForkOf: "74975720-1a50-4d17-9463-df6fabfdeb7c",
			Subagent:    &event.SubagentMeta{AgentType: "Explore", Description: "scan the repo", ToolUseID: "toolu_spawn", SpawnDepth: 1},
			Files:       []event.FileState{{Path: "/w/a.go", MtimeNS: 1, Size: 2, Hash: "fnv1a64:0123456789abcdef"}},
			Traceparent: tp,
			Decision:    json.RawMessage(`{"action":"deny","rule_ids":["no-rm"],"reason":"no rm -rf","enforced":true}`),
			Payload:     json.RawMessage(`{"hook_event_name":"Stop"}`),
		}
	}
	// Nothing to redact: nothing changes, and nothing is allocated.
	env := clean()
	if Envelope(&env, DefaultOptions()) || !reflect.DeepEqual(env, clean()) {
		t.Errorf("Envelope changed a clean envelope: %+v", env)
	}
	if n := testing.AllocsPerRun(100, func() { Envelope(&env, DefaultOptions()) }); n != 0 {
		t.Errorf("Envelope of a clean envelope: %v allocations", n)
	}

	gh, aws, jwt := secrettest.GitHub, secrettest.AWSAccessKey, secrettest.JWT
	sub := &event.SubagentMeta{AgentType: "Explore", Description: "push with " + gh, ToolUseID: "toolu_spawn", SpawnDepth: 2}
	files := []event.FileState{
		{Path: "/w/a.go", Size: 1},
		{Path: "/w/" + aws + ".env", Size: 2},
		{Path: "/w/b.go", Size: 3, Hash: jwt},
		{Path: "/w/c.go", Size: 4},
	}
	env = event.Envelope{
		ID: "id-" + gh, Runtime: "rt " + aws, Kind: "kind " + gh,
		Host: "ci-" + gh, User: "API_TOKEN=Tz5Nq8Xw3Rv6", HookwatchVersion: jwt, ForkOf: aws,
		Subagent: sub, Files: files, Traceparent: "00-" + gh,
		Decision: json.RawMessage(`{"action":"deny","reason":"saw ` + jwt + `","permissionDecisionReason":"token ` + gh + `","rule_ids":["r"]}`),
	}
	if !Envelope(&env, DefaultOptions()) {
		t.Fatal("Envelope reported no change")
	}
	want := event.Envelope{
		ID: "id-" + gh, Runtime: "rt [REDACTED:aws_access_key_id]", Kind: "kind [REDACTED:github_token]",
		Host: "ci-[REDACTED:github_token]", User: "API_TOKEN=[REDACTED:secret]", HookwatchVersion: "[REDACTED:jwt]",
		ForkOf:   "[REDACTED:aws_access_key_id]",
		Subagent: &event.SubagentMeta{AgentType: "Explore", Description: "push with [REDACTED:github_token]", ToolUseID: "toolu_spawn", SpawnDepth: 2},
		Files:    []event.FileState{{Path: "/w/a.go", Size: 1}, {Path: "/w/c.go", Size: 4}},
		Decision: json.RawMessage(`{"action":"deny","reason":"saw [REDACTED:jwt]","permissionDecisionReason":"token [REDACTED:github_token]","rule_ids":["r"]}`),
	}
	if !reflect.DeepEqual(env, want) {
		t.Errorf("Envelope:\n got %+v %+v %s\nwant %+v %+v %s", env, *env.Subagent, env.Decision, want, *want.Subagent, want.Decision)
	}
	// The sidecar and the file states it was given are not written to.
	if sub.Description != "push with "+gh || files[1].Path != "/w/"+aws+".env" || files[2].Hash != jwt {
		t.Errorf("Envelope wrote to what the envelope shared: %+v %+v", *sub, files)
	}
	// Idempotent.
	again := env
	if Envelope(&again, DefaultOptions()) || !reflect.DeepEqual(again, env) {
		t.Errorf("a second Envelope changed %+v", again)
	}
	// Redaction off: nothing changes.
	off := event.Envelope{Host: "ci-" + gh, Subagent: sub}
	if Envelope(&off, Options{Capture: CaptureFull}) || off.Host != "ci-"+gh || off.Subagent != sub {
		t.Errorf("Envelope without redaction changed %+v", off)
	}
}

// TestNoSecretInEnvelope places a secret of every kind in every free-text
// field of an envelope and finds none of them in its encoding.
func TestNoSecretInEnvelope(t *testing.T) {
	for _, s := range secrettest.Samples() {
		for _, l := range secrettest.Literals {
			env := event.Envelope{
				ID: "x", Runtime: s.Text, Kind: s.Text, Host: s.Text, User: s.Text, HookwatchVersion: s.Text, ForkOf: s.Text,
				Subagent:    &event.SubagentMeta{Description: "do:\n" + s.Text, AgentType: "Explore", ToolUseID: "toolu_1"},
				Files:       []event.FileState{{Path: "/w/" + s.Text}, {Path: "/w/a", Hash: s.Text}},
				Traceparent: s.Text,
				Decision:    json.RawMessage(`{"reason":` + l.Lit("no:\n"+s.Text) + `,"hookSpecificOutput":{"permissionDecisionReason":` + l.Lit(s.Text) + `}}`),
				Payload:     json.RawMessage(`{}`),
			}
			Envelope(&env, DefaultOptions())
			if out := env.AppendJSON(nil); secrettest.Leaks(out, s.Secret) {
				t.Errorf("%s (%s) in an envelope: stored in clear: %s", s.Kind, l.Name, out)
			}
		}
	}
}

// BenchmarkEnvelope is the cost of Envelope on an envelope as a hook makes
// it for a subagent's call a policy answered: nothing to redact, which is
// what the collector's admission pays per envelope.
func BenchmarkEnvelope(b *testing.B) {
	env := event.Envelope{
		ID: "01a229ea-aad7-7c29-a969-63119640b4cc", Runtime: event.RuntimeClaudeCode, Kind: event.KindHook,
		Host: "devbox.example.internal", User: "dev", HookwatchVersion: "v0.9.1",
		Subagent:    &event.SubagentMeta{AgentType: "Explore", Description: "Find where the retry budget is configured", ToolUseID: "toolu_01ABCDEF", SpawnDepth: 1},
		Files:       []event.FileState{{Path: "/home/dev/src/demo/internal/retry/budget.go", Hash: "fnv1a64:0123456789abcdef"}},
		Traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		Decision:    json.RawMessage(`{"action":"deny","rule_ids":["no-force-push"],"reason":"force pushes to main are not allowed; open a pull request","enforced":true}`),
	}
	o := DefaultOptions()
	b.ReportAllocs()
	for b.Loop() {
		Envelope(&env, o)
	}
}

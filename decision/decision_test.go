package decision

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestRenderGolden renders one decision per case and compares stdout with
// testdata/<event>/<case>.json byte for byte (an empty file is "no output").
func TestRenderGolden(t *testing.T) {
	f := func(name string, d Decision) {
		t.Helper()
		got, code := Render(d)
		if code != 0 {
			t.Fatalf("%s: exit code %d, want 0", name, code)
		}
		dir := d.Event
		if dir == "" {
			dir = "none"
		}
		path := filepath.Join("testdata", dir, name+".json")
		if *update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%s: %v (run with -update to create)", name, err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: stdout\n%s\nwant\n%s", path, got, want)
		}
		checkShape(t, name, d.Event, got)
	}
	input := map[string]any{"command": "make test --dry-run", "description": "dry run"}

	// PreToolUse: permissionDecision allow/deny/ask/defer, reason, updatedInput, additionalContext.
	f("allow", Decision{Event: "PreToolUse", Verdict: Allow, Reasons: []string{"read-only command"}})
	f("allow_rewrite", Decision{Event: "PreToolUse", Verdict: Allow, Reasons: []string{"added --dry-run"}, UpdatedInput: input})
	f("ask_rewrite", Decision{Event: "PreToolUse", Verdict: Ask, Reasons: []string{"confirm the sandboxed path"},
		UpdatedInput: map[string]any{"file_path": "/tmp/sandbox/notes.md", "content": "x"}})
	f("deny", Decision{Event: "PreToolUse", Verdict: Deny,
		Reasons:      []string{"no-rm-rf: recursive delete outside the project. Use instead: rm -r ./build"},
		UpdatedInput: input, AdditionalContext: []string{"the build dir is ./build"}})
	f("deny_many", Merge(
		Decision{Event: "PreToolUse", Verdict: Deny, Reasons: []string{"first <reason> & more"}},
		Decision{Event: "PreToolUse", Verdict: Allow, Reasons: []string{"allow reason is dropped"}},
		Decision{Event: "PreToolUse", Verdict: Deny, Reasons: []string{"second reason"}},
	))
	f("defer", Decision{Event: "PreToolUse", Verdict: Defer, Reasons: []string{"needs a human"},
		UpdatedInput: input, AdditionalContext: []string{"ignored with defer"}})
	f("context", Decision{Event: "PreToolUse", AdditionalContext: []string{"production database", "be careful"}})
	f("rewrite_without_verdict", Decision{Event: "PreToolUse", UpdatedInput: input})
	f("warn", Decision{Event: "PreToolUse", SystemMessages: []string{"hookwatch: policy.yaml is invalid"}})
	f("stop", Decision{Event: "PreToolUse", Stop: true, StopReasons: []string{"quota exhausted"}, Verdict: Deny, Reasons: []string{"quota"}})
	// A stop alone also denies the call (Claude Code runs it otherwise) and
	// drops the rewrite of an allow.
	f("stop_alone", Decision{Event: "PreToolUse", Stop: true, StopReasons: []string{"kill switch"}, Verdict: Allow, UpdatedInput: input})
	f("stop_no_reason", Decision{Event: "PreToolUse", Stop: true})

	// PermissionRequest: decision.behavior.
	f("allow", Decision{Event: "PermissionRequest", Verdict: Allow, Reasons: []string{"not rendered"},
		UpdatedInput:       input,
		UpdatedPermissions: []any{map[string]any{"type": "addRules", "rules": []any{map[string]any{"toolName": "Bash", "ruleContent": "make test:*"}}, "behavior": "allow", "destination": "session"}}})
	f("deny", Decision{Event: "PermissionRequest", Verdict: Deny, Reasons: []string{"not in business hours"}, Interrupt: true})
	f("ask", Decision{Event: "PermissionRequest", Verdict: Ask, Reasons: []string{"ask has no form here"}})
	f("context", Decision{Event: "PermissionRequest", AdditionalContext: []string{"not honoured"}})
	f("stop", Decision{Event: "PermissionRequest", Stop: true, StopReasons: []string{"kill switch"}, Verdict: Allow})

	// PostToolUse: block, additionalContext, updatedToolOutput / updatedMCPToolOutput.
	f("block", Decision{Event: "PostToolUse", Verdict: Deny, Reasons: []string{"output contains a secret"}})
	f("context", Decision{Event: "PostToolUse", AdditionalContext: []string{"timestamps are UTC"}})
	f("updated_output", Decision{Event: "PostToolUse",
		UpdatedToolOutput: map[string]any{"stdout": "2024-01-01T08:00:00Z started", "stderr": "", "interrupted": false, "isImage": false}})
	f("updated_mcp_output", Decision{Event: "PostToolUse",
		UpdatedToolOutput:    []any{map[string]any{"type": "text", "text": "[REDACTED:email]"}},
		UpdatedMCPToolOutput: []any{map[string]any{"type": "text", "text": "[REDACTED:email]"}}})
	f("allow", Decision{Event: "PostToolUse", Verdict: Allow, Reasons: []string{"allow means nothing here"}})

	// PostToolUseFailure: additionalContext, block.
	f("context", Decision{Event: "PostToolUseFailure", AdditionalContext: []string{"run make deps first"}})
	f("block", Decision{Event: "PostToolUseFailure", Verdict: Deny, Reasons: []string{"stop retrying"}})

	// UserPromptSubmit: block with reason, add context.
	f("block", Decision{Event: "UserPromptSubmit", Verdict: Deny, Reasons: []string{"the prompt contains a card number"}})
	f("context", Decision{Event: "UserPromptSubmit", AdditionalContext: []string{"today is a release freeze"}})

	// Stop / SubagentStop: block with a (required) reason, or context.
	f("block", Decision{Event: "Stop", Verdict: Deny, Reasons: []string{"run the tests before finishing"}})
	f("block_default_reason", Decision{Event: "Stop", Verdict: Deny})
	f("context", Decision{Event: "Stop", AdditionalContext: []string{"remember the changelog"}})
	f("block", Decision{Event: "SubagentStop", Verdict: Deny, Reasons: []string{"report the file list too"}})

	// SessionStart: add context.
	f("context", Decision{Event: "SessionStart", AdditionalContext: []string{"policy in force: no-rm-rf"},
		SystemMessages: []string{"hookwatch policy active"}})
	f("deny", Decision{Event: "SessionStart", Verdict: Deny, Reasons: []string{"cannot block"}})

	// Events that discard everything, unknown events, no event, no opinion.
	f("anything", Decision{Event: "Notification", Verdict: Deny, AdditionalContext: []string{"x"}, SystemMessages: []string{"x"}, Stop: true})
	f("anything", Decision{Event: "NoSuchEvent", Verdict: Deny, SystemMessages: []string{"x"}})
	f("no_event", Decision{Verdict: Deny, Reasons: []string{"no event name"}})
	f("no_opinion", Decision{Event: "PreToolUse"})
	f("notes_only", Decision{Event: "PreToolUse", Notes: []Note{{RuleID: "r", Action: "deny", Enforced: false}}})
}

// checkShape asserts the universal contract: stdout is one JSON object whose
// hookSpecificOutput, when present, names the firing event.
func checkShape(t *testing.T, name, event string, out []byte) {
	t.Helper()
	if len(out) == 0 {
		return
	}
	var o map[string]any
	if err := json.Unmarshal(out, &o); err != nil {
		t.Fatalf("%s: stdout is not a JSON object: %v", name, err)
	}
	if h, ok := o["hookSpecificOutput"]; ok {
		hm, _ := h.(map[string]any)
		if hm["hookEventName"] != event {
			t.Fatalf("%s: hookEventName %v, want %s", name, hm["hookEventName"], event)
		}
	}
}

func TestMergePrecedence(t *testing.T) {
	f := func(want Verdict, in ...Verdict) {
		t.Helper()
		var ds []Decision
		for _, v := range in {
			ds = append(ds, Decision{Event: "PreToolUse", Verdict: v, Reasons: []string{v.String()}})
		}
		got := Merge(ds...)
		if got.Verdict != want {
			t.Fatalf("Merge(%v) = %v, want %v", in, got.Verdict, want)
		}
		for _, r := range got.Reasons {
			if r != want.String() {
				t.Fatalf("Merge(%v) kept reason %q of a losing verdict", in, r)
			}
		}
	}
	f(None)
	f(None, None, None)
	f(Allow, Allow, None)
	f(Ask, Allow, Ask, Allow)
	f(Defer, Ask, Defer, Allow)
	f(Deny, Allow, Deny, Defer, Ask)
	f(Deny, Deny, Deny)
	f(Defer, Defer, Ask)

	// Every denying reason is kept, in order.
	m := Merge(
		Decision{Event: "PreToolUse", Verdict: Deny, Reasons: []string{"a"}},
		Decision{Event: "PreToolUse", Verdict: Ask, Reasons: []string{"b"}},
		Decision{Event: "PreToolUse", Verdict: Deny, Reasons: []string{"c", "d"}},
	)
	if !reflect.DeepEqual(m.Reasons, []string{"a", "c", "d"}) {
		t.Fatalf("deny reasons = %q", m.Reasons)
	}
}

func TestMergeFields(t *testing.T) {
	in1 := map[string]any{"command": "a"}
	in2 := map[string]any{"command": "b"}
	m := Merge(
		Decision{Event: "PostToolUse", AdditionalContext: []string{"c1"}, UpdatedInput: in1, UpdatedToolOutput: "o1",
			SystemMessages: []string{"s1"}, Notes: []Note{{RuleID: "r1"}}},
		Decision{AdditionalContext: []string{"c2"}, UpdatedInput: in2, Stop: true, StopReasons: []string{"x"}, Notes: []Note{{RuleID: "r2"}}},
		Decision{Event: "Stop", UpdatedToolOutput: "o3", Interrupt: true},
	)
	if m.Event != "PostToolUse" {
		t.Fatalf("Event = %q", m.Event)
	}
	if !reflect.DeepEqual(m.AdditionalContext, []string{"c1", "c2"}) {
		t.Fatalf("context = %q", m.AdditionalContext)
	}
	if m.UpdatedInput["command"] != "b" || m.UpdatedToolOutput != "o3" {
		t.Fatalf("last rewrite must win: %v %v", m.UpdatedInput, m.UpdatedToolOutput)
	}
	if !m.Stop || !m.Interrupt || len(m.Notes) != 2 || len(m.SystemMessages) != 1 {
		t.Fatalf("merged = %+v", m)
	}
	if !Merge().IsZero() || Merge().Event != "" {
		t.Fatal("Merge() must be the zero decision")
	}
}

func TestAudit(t *testing.T) {
	f := func(d Decision, want string) {
		t.Helper()
		a := d.Audit()
		got := "null"
		if a != nil {
			b, err := json.Marshal(a)
			if err != nil {
				t.Fatal(err)
			}
			got = string(b)
		}
		if got != want {
			t.Fatalf("Audit =\n%s\nwant\n%s", got, want)
		}
	}
	f(Decision{Event: "PreToolUse"}, "null")
	f(Decision{Event: "PreToolUse", Verdict: Deny, Reasons: []string{"a", "b"}, Notes: []Note{
		{RuleID: "r1", Action: "deny", Reason: "a", Enforced: true},
		{RuleID: "r2", Action: "allow", Enforced: true},
		{RuleID: "r3", Action: "deny", Reason: "b", Enforced: true},
	}}, `{"action":"deny","rule_ids":["r1","r3"],"reason":"a\nb","enforced":true,"rules":[{"rule_id":"r1","action":"deny","reason":"a","enforced":true},{"rule_id":"r2","action":"allow","enforced":true},{"rule_id":"r3","action":"deny","reason":"b","enforced":true}]}`)
	// A block on a non-permission event is named "block".
	f(Decision{Event: "Stop", Verdict: Deny, Reasons: []string{"tests"}, Notes: []Note{{RuleID: "t", Action: "block", Reason: "tests", Enforced: true}}},
		`{"action":"block","rule_ids":["t"],"reason":"tests","enforced":true,"rules":[{"rule_id":"t","action":"block","reason":"tests","enforced":true}]}`)
	// Recorded but not enforced (audit mode, stop_hook_active).
	f(Decision{Event: "Stop", Notes: []Note{{RuleID: "t", Action: "block", Reason: "stop_hook_active", Enforced: false}, {RuleID: "c", Action: "context", Enforced: false}}},
		`{"action":"block","rule_ids":["t"],"reason":"stop_hook_active","enforced":false,"rules":[{"rule_id":"t","action":"block","reason":"stop_hook_active","enforced":false},{"rule_id":"c","action":"context","enforced":false}]}`)
	// A verdict the event cannot carry is not enforced.
	f(Decision{Event: "SessionEnd", Verdict: Deny, Notes: []Note{{RuleID: "x", Action: "block", Enforced: true}}},
		`{"action":"block","rule_ids":["x"],"enforced":false,"rules":[{"rule_id":"x","action":"block","enforced":true}]}`)
	// Rewrites and context.
	f(Decision{Event: "PostToolUse", UpdatedToolOutput: "x", AdditionalContext: []string{"c"}, Notes: []Note{{RuleID: "ts", Action: "rewrite_output", Enforced: true}, {RuleID: "c", Action: "context", Enforced: true}}},
		`{"action":"rewrite_output","rule_ids":["ts"],"enforced":true,"rules":[{"rule_id":"ts","action":"rewrite_output","enforced":true},{"rule_id":"c","action":"context","enforced":true}]}`)
	// A stop on PreToolUse denies the call: the call is denied, by the stop rule.
	f(Decision{Event: "PreToolUse", Stop: true, StopReasons: []string{"kill"}, Notes: []Note{{RuleID: "k", Action: "stop", Reason: "kill", Enforced: true}, {RuleID: "c", Action: "context", Enforced: true}}},
		`{"action":"deny","rule_ids":["k"],"reason":"kill","enforced":true,"rules":[{"rule_id":"k","action":"stop","reason":"kill","enforced":true},{"rule_id":"c","action":"context","enforced":true}]}`)
	// Engine warning without any rule: rule_ids is [] not null.
	f(Decision{Event: "UserPromptSubmit", SystemMessages: []string{"policy invalid"}},
		`{"action":"warn","rule_ids":[],"reason":"policy invalid","enforced":true}`)
}

func TestRenderUnencodable(t *testing.T) {
	// An allow whose rewrite cannot be encoded must not turn into a plain
	// allow of the original input.
	out, code := Render(Decision{Event: "PreToolUse", Verdict: Allow, UpdatedInput: map[string]any{"x": math.NaN()}})
	if len(out) != 0 || code != 0 {
		t.Fatalf("got %q, %d", out, code)
	}
	// A deny survives.
	out, _ = Render(Decision{Event: "PreToolUse", Verdict: Deny, Reasons: []string{"r"}, AdditionalContext: []string{"c"}, UpdatedInput: map[string]any{"x": math.NaN()}})
	if !bytes.Contains(out, []byte(`"permissionDecision":"deny"`)) {
		t.Fatalf("deny lost: %q", out)
	}
	out, _ = Render(Decision{Event: "PostToolUse", Verdict: Deny, Reasons: []string{"r"}, UpdatedToolOutput: func() {}})
	if !bytes.Contains(out, []byte(`"decision":"block"`)) || bytes.Contains(out, []byte("updatedToolOutput")) {
		t.Fatalf("block lost: %q", out)
	}
}

// TestRenderEveryEvent renders a decision with every field set for every
// event of the spec and checks the universal shape.
func TestRenderEveryEvent(t *testing.T) {
	events := []string{"SessionStart", "Setup", "InstructionsLoaded", "UserPromptSubmit", "UserPromptExpansion",
		"MessageDisplay", "PreToolUse", "PermissionRequest", "PermissionDenied", "PostToolUse",
		"PostToolUseFailure", "PostToolBatch", "Notification", "SubagentStart", "SubagentStop",
		"TaskCreated", "TaskCompleted", "Stop", "StopFailure", "TeammateIdle", "ConfigChange",
		"CwdChanged", "DirectoryAdded", "FileChanged", "WorktreeCreate", "WorktreeRemove",
		"PreCompact", "PostCompact", "SessionEnd", "Elicitation", "ElicitationResult"}
	for _, ev := range events {
		for v := None; v <= Deny; v++ {
			d := Decision{Event: ev, Verdict: v, Reasons: []string{"r"}, UpdatedInput: map[string]any{"a": 1},
				UpdatedPermissions: []any{"p"}, Interrupt: true, AdditionalContext: []string{"c"},
				UpdatedToolOutput: "o", UpdatedMCPToolOutput: "m", SystemMessages: []string{"s"}, Stop: true}
			out, code := Render(d)
			if code != 0 {
				t.Fatalf("%s/%v: exit %d", ev, v, code)
			}
			checkShape(t, ev+"/"+v.String(), ev, out)
			nonVerdict := Effects(ev) &^ (EffectAllow | EffectAsk | EffectDefer | EffectDeny)
			if Effects(ev) == 0 && len(out) != 0 || nonVerdict != 0 && len(out) == 0 {
				t.Fatalf("%s/%v: output %q but effects %v", ev, v, out, Effects(ev))
			}
		}
	}
}

func TestParseVerdict(t *testing.T) {
	f := func(s string, want Verdict, wantErr bool) {
		t.Helper()
		got, err := ParseVerdict(s)
		if (err != nil) != wantErr || got != want {
			t.Fatalf("ParseVerdict(%q) = %v, %v", s, got, err)
		}
		if !wantErr && s != "block" && got.String() != s {
			t.Fatalf("String() = %q, want %q", got.String(), s)
		}
	}
	f("", None, false)
	f("allow", Allow, false)
	f("ask", Ask, false)
	f("defer", Defer, false)
	f("deny", Deny, false)
	f("block", Deny, false)
	f("approve", None, true)
}

func TestEffectString(t *testing.T) {
	if got := (EffectDeny | EffectContext).String(); got != "deny|context" {
		t.Fatalf("got %q", got)
	}
	if !Supports("PreToolUse", EffectDefer|EffectUpdateInput) || Supports("PermissionRequest", EffectAsk) {
		t.Fatal("Supports disagrees with spec §1.7.4")
	}
}

// TestRenderCodex: Codex gets the same shapes, only those it applies, and
// never a field that would make it fail the hook (and drop a deny).
func TestRenderCodex(t *testing.T) {
	f := func(d Decision, want string) {
		t.Helper()
		d.Runtime = "codex"
		got, code := Render(d)
		if string(got) != want || code != 0 {
			t.Errorf("Render(%+v) = %q, %d; want %q", d, got, code, want)
		}
	}
	// Verified on Codex 0.169: the deny's reason reaches the model.
	f(Decision{Event: "PreToolUse", Verdict: Deny, Reasons: []string{"no rm"}, SystemMessages: []string{"warn"}, AdditionalContext: []string{"c"}},
		`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no rm"}}`+"\n")
	// Codex writes "Command blocked by PreToolUse hook: <reason>. Command:
	// <cmd>": a reason's own final period would show twice.
	f(Decision{Event: "PreToolUse", Verdict: Deny, Reasons: []string{"No rm -rf here."}},
		`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"No rm -rf here"}}`+"\n")
	// No allow in Codex: an allow is no output; ask and defer fail the hook.
	f(Decision{Event: "PreToolUse", Verdict: Allow, UpdatedInput: map[string]any{"command": "ls"}}, "")
	f(Decision{Event: "PreToolUse", Verdict: Ask}, "")
	f(Decision{Event: "PreToolUse", Verdict: Defer}, "")
	// A stop cannot end the run from PreToolUse: the call is denied.
	f(Decision{Event: "PreToolUse", Stop: true, StopReasons: []string{"halt"}},
		`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"halt"}}`+"\n")
	f(Decision{Event: "Stop", Verdict: Deny, Reasons: []string{"run the tests"}}, `{"decision":"block","reason":"run the tests"}`+"\n")
	f(Decision{Event: "UserPromptSubmit", AdditionalContext: []string{"ctx"}}, `{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"ctx"}}`+"\n")
	f(Decision{Event: "PermissionRequest", Verdict: Deny, Reasons: []string{"no"}, Interrupt: true},
		`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"no"}}}`+"\n")
	f(Decision{Event: "Interrupt", SystemMessages: []string{"bye"}}, `{"systemMessage":"bye"}`+"\n")
	f(Decision{Event: "PreCompact", Verdict: Deny}, "")
	// The audit says a Codex allow was not enforced.
	if a := (Decision{Event: "PreToolUse", Runtime: "codex", Verdict: Allow, Notes: []Note{{RuleID: "r", Action: "allow", Enforced: true}}}).Audit(); a != nil && a.Enforced {
		t.Errorf("a Codex allow audited as enforced: %+v", a)
	}
}

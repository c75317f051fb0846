package decision_test

import (
	"bytes"
	"testing"

	"github.com/hookwatch/hookwatch/decision"
)

// TestParse: what Render wrote parses back into a decision that renders
// the same bytes, and merges as the original would.
func TestParse(t *testing.T) {
	f := func(d decision.Decision) {
		t.Helper()
		out, _ := decision.Render(d)
		p, err := decision.Parse(d.Event, d.Runtime, out)
		if err != nil {
			t.Fatalf("Parse(%s): %v", out, err)
		}
		if again, _ := decision.Render(p); !bytes.Equal(again, out) {
			t.Errorf("round trip\n got %s\nwant %s", again, out)
		}
	}
	f(decision.Decision{Event: "SessionStart", AdditionalContext: []string{"a", "b"}, SystemMessages: []string{"hi"}})
	f(decision.Decision{Event: "SessionStart", Stop: true, StopReasons: []string{"no"}})
	f(decision.Decision{Event: "SessionStart"})
	f(decision.Decision{Event: "PreToolUse", Verdict: decision.Deny, Reasons: []string{"r1", "r2"}})
	f(decision.Decision{Event: "PreToolUse", Verdict: decision.Allow, UpdatedInput: map[string]any{"command": "ls"}})
	f(decision.Decision{Event: "PermissionRequest", Verdict: decision.Deny, Reasons: []string{"m"}, Interrupt: true})
	f(decision.Decision{Event: "PermissionRequest", Verdict: decision.Allow, UpdatedPermissions: []any{map[string]any{"type": "setMode"}}})
	f(decision.Decision{Event: "Stop", Verdict: decision.Deny})
	f(decision.Decision{Event: "PostToolUse", UpdatedToolOutput: map[string]any{"x": 1.0}, AdditionalContext: []string{"c"}})

	// A policy's SessionStart answer and a second context merge into one
	// object.
	pol, _ := decision.Render(decision.Decision{Event: "SessionStart", AdditionalContext: []string{"policy"}, SystemMessages: []string{"shown"}})
	p, err := decision.Parse("SessionStart", "", pol)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := decision.Render(decision.Merge(p, decision.Decision{Event: "SessionStart", AdditionalContext: []string{"guard"}}))
	want := `{"systemMessage":"shown","hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"policy\n\nguard"}}` + "\n"
	if string(got) != want {
		t.Errorf("merged\n got %s\nwant %s", got, want)
	}
	if _, err := decision.Parse("SessionStart", "", []byte("not json")); err == nil {
		t.Error("Parse of text succeeded")
	}
	if d, err := decision.Parse("SessionStart", "", nil); err != nil || !d.IsZero() {
		t.Errorf("Parse of nothing: %+v %v", d, err)
	}
}

// FuzzParse: Parse never panics on any answer, and what it reads renders
// to an answer it reads back the same.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"systemMessage":"shown","hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"a"}}`,
		`{"continue":false,"stopReason":"x"}`, `{"decision":"block","reason":"r"}`,
		`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no"}}`,
		`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedInput":{"a":1}}}}`,
		`{"hookSpecificOutput":{"permissionDecision":"maybe"}}`, `[]`, `null`, ``, `{"continue":"no"}`,
	} {
		f.Add("SessionStart", []byte(s))
		f.Add("PreToolUse", []byte(s))
	}
	f.Fuzz(func(t *testing.T, event string, stdout []byte) {
		d, err := decision.Parse(event, "", stdout)
		if err != nil {
			return
		}
		out, _ := decision.Render(d)
		again, err := decision.Parse(event, "", out)
		if err != nil {
			t.Fatalf("Parse of Render's %s: %v", out, err)
		}
		if b, _ := decision.Render(again); !bytes.Equal(b, out) {
			t.Fatalf("%q: rendered %s, then %s", stdout, out, b)
		}
	})
}

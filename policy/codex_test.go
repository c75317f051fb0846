package policy

import (
	"bufio"
	"os"
	"strings"
	"testing"

	"github.com/hookwatch/hookwatch/decision"
)

// codexPayload returns a copy of the first real Codex 0.169 payload of
// event (testdata/codex-0.169.jsonl).
func codexPayload(t *testing.T, event string) map[string]any {
	t.Helper()
	f, err := os.Open("testdata/codex-0.169.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		if p, _, err := payloadOf(sc.Bytes()); err == nil && p["hook_event_name"] == event {
			return p
		}
	}
	t.Fatalf("no Codex %s in the corpus", event)
	return nil
}

// TestRuntimeCheck: a rule for Codex is held to Codex's contract, so that
// `policy check` rejects an action Codex would ignore (or fail the hook
// over); a rule for both runtimes to Claude Code's.
func TestRuntimeCheck(t *testing.T) {
	f := func(rule string, want ...string) {
		t.Helper()
		set := loadYAML(t, "rules:\n  - id: r\n"+rule)
		var got []string
		for _, p := range set.Problems {
			got = append(got, p.Msg)
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s\n got %q\nwant %q", rule, got, want)
		}
	}
	f("    runtime: codex\n    action: deny\n    reason: no\n")
	f("    runtime: codex\n    action: allow\n", `action allow is not honoured on PreToolUse by Codex`)
	f("    runtime: codex\n    action: ask\n", `action ask is not honoured on PreToolUse by Codex`)
	f("    runtime: codex\n    action: deny\n    context: x\n", `context is not honoured on PreToolUse by Codex`)
	f("    runtime: codex\n    events: PreCompact\n    action: block\n", `event "PreCompact" ignores every hook answer by Codex: a rule there can do nothing`,
		`action block is not honoured on PreCompact by Codex`)
	f("    runtime: codex\n    events: [Stop]\n    action: block\n    reason: go on\n")
	f("    runtime: codex\n    events: [UserPromptSubmit]\n    context: be brief\n")
	f("    runtime: both\n    action: allow\n")
	f("    action: ask\n")
	f("    runtime: claude-code\n    events: PreCompact\n    action: block\n")
	f("    runtime: gemini\n    action: deny\n", `runtime must be claude-code, codex or both, not "gemini"`)
	f("    events: Interrupt\n    system_message: interrupted\n")
	f("    events: Interrupt\n    action: block\n", `action block is not honoured on Interrupt by Codex`)
}

// TestRuntimeSelects: runtime: selects the events of one runtime, and the
// answer is rendered in that runtime's contract.
func TestRuntimeSelects(t *testing.T) {
	set := loadYAML(t, `rules:
  - {id: cc, runtime: claude-code, tool: Bash, action: deny, reason: not on Claude Code}
  - {id: cx, runtime: codex, tool: Bash, action: deny, reason: not on Codex}
  - {id: ok, tool: Bash, action: allow}
`)
	cx := codexPayload(t, "PreToolUse")
	if out := render(eval(set, cx)); out != `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"not on Codex"}}` {
		t.Errorf("codex: %s", out)
	}
	cc := pick(t, "PreToolUse", "Bash", "main")
	if d := eval(set, cc); d.Verdict != decision.Deny || strings.Join(d.Reasons, ",") != "not on Claude Code" {
		t.Errorf("claude code: %+v", d)
	}
	// On Codex an allow is no answer at all, and not audited as enforced.
	allow := loadYAML(t, "rules:\n  - {id: ok, tool: Bash, action: allow}\n")
	d := eval(allow, cx)
	if out := render(d); out != "" {
		t.Errorf("codex allow rendered %s", out)
	}
	if a := d.Audit(); a == nil || a.Enforced {
		t.Errorf("codex allow audit %+v", a)
	}
}

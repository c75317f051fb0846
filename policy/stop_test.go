package policy

import (
	"context"
	"testing"
	"time"
)

// TestStopCarriedToPostToolBatch: a stop on PreToolUse denies the call and
// ends the run at the agent's next PostToolBatch of the same turn, once, in
// a memory and a file State alike.
func TestStopCarriedToPostToolBatch(t *testing.T) {
	set := loadYAML(t, `rules:
  - id: kill-switch
    tool: Bash
    when: 'tool_input.command contains "deploy"'
    action: stop
    reason: Deploys are frozen.
`)
	pre := func(session, agent, command string) map[string]any {
		p := map[string]any{"hook_event_name": "PreToolUse", "session_id": session, "tool_name": "Bash",
			"tool_use_id": "toolu_1", "tool_input": map[string]any{"command": command}}
		if agent != "" {
			p["agent_id"], p["agent_type"] = agent, "worker"
		}
		return p
	}
	batch := func(session, agent string) map[string]any {
		p := map[string]any{"hook_event_name": "PostToolBatch", "session_id": session, "tool_calls": []any{}}
		if agent != "" {
			p["agent_id"], p["agent_type"] = agent, "worker"
		}
		return p
	}
	turn := func(p map[string]any, promptID string) map[string]any {
		p["prompt_id"] = promptID
		return p
	}
	for name, st := range map[string]*State{"memory": MemoryState(), "files": OpenState(t.TempDir())} {
		f := func(p map[string]any, want string) {
			t.Helper()
			if got := render(set.Evaluate(context.Background(), p, st)); got != want {
				t.Fatalf("%s: %s %s answered\n%s\nwant\n%s", name, p["hook_event_name"], p["session_id"], got, want)
			}
		}
		const deny = `{"continue":false,"stopReason":"Deploys are frozen.","hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"Deploys are frozen."}}`
		const stop = `{"continue":false,"stopReason":"Deploys are frozen."}`
		f(batch("s1", ""), "")           // nothing carried yet
		f(pre("s1", "", "ls"), "")       // the rule does not fire
		f(batch("s1", ""), "")           // so nothing is carried
		f(pre("s1", "", "deploy"), deny) // fires: deny now …
		f(batch("s2", ""), "")           // … not another session's batch
		f(batch("s1", "a1"), "")         // … nor a subagent's
		f(batch("s1", ""), stop)         // … but this one, once
		f(batch("s1", ""), "")
		f(pre("s1", "a1", "deploy"), deny) // inside a subagent
		f(batch("s1", ""), "")
		f(batch("s1", "a1"), stop)

		// The audit record of the delivering batch names the rule.
		set.Evaluate(context.Background(), pre("s3", "", "deploy"), st)
		a := set.Evaluate(context.Background(), batch("s3", ""), st).Audit()
		if a == nil || a.Action != "stop" || len(a.RuleIDs) != 1 || a.RuleIDs[0] != "kill-switch" || !a.Enforced {
			t.Fatalf("%s: audit of the batch %+v", name, a)
		}

		// A stop whose run ended at the deny (2.1.332 sends no batch)
		// does not end the next run of the session, a resume: its batch
		// belongs to another turn.
		f(turn(pre("s5", "", "deploy"), "p1"), deny)
		f(turn(batch("s5", ""), "p2"), "")
		f(turn(batch("s5", ""), "p1"), stop)

		// A stop whose batch never came does not end a later run.
		st.Clock = func() time.Time { return time.Now().Add(-time.Hour) }
		f(pre("s4", "", "deploy"), deny)
		st.Clock = nil
		f(batch("s4", ""), "")
	}
}

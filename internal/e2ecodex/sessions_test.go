package e2ecodex

import (
	"strings"
	"testing"

	fo "github.com/hookwatch/hookwatch/internal/fakeopenai"
)

// TestSessions: `hookwatch sessions --codex` lists the session a real
// codex exec run recorded — its subagent's rollout counted into it, not
// listed — and the id its continue command names is the one Codex
// resumes: after `codex exec resume ID`, the same session has both
// prompts and the new answer.
func TestSessions(t *testing.T) {
	e := New(t, ModelSubagent, fo.Script{
		"Delegate the count": {
			{fo.Call("spawn_agent", map[string]any{"message": "SUBTASK-ALPHA: count the files in the project"})},
			{fo.Call("wait_agent", map[string]any{"targets": []any{fo.Agent}, "timeout_ms": 20000})},
			{fo.Text("The subagent counted the files.")},
		},
		"SUBTASK-ALPHA": {{fo.Text("There are 0 files.")}},
		"Carry on":      {{fo.Text("Carried on.")}},
	}, "HOOKWATCH_URL=http://127.0.0.1:1") // no collector: the rollouts alone
	if run := e.Exec("Delegate the count to a subagent"); run.Err != nil {
		t.Fatalf("codex exec: %v\n%s", run.Err, run.Stderr)
	}
	if rs := e.Rollouts(); len(rs) != 2 {
		t.Fatalf("rollouts %v: want the session's and its subagent's", rs)
	}
	out := hookwatch(t, e, "sessions", "--codex")
	for _, want := range []string{e.Project + " (Codex)\n", "  Delegate the count to a subagent\n", "model " + ModelSubagent + ", codex exec, 1 prompt, 1 subagent\n",
		"last answer: The subagent counted the files.\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("sessions --codex lacks %q", want)
		}
	}
	const cont = "continue: codex resume "
	if strings.Count(out, cont) != 1 {
		t.Fatalf("want one session listed")
	}
	id, _, _ := strings.Cut(out[strings.Index(out, cont)+len(cont):], " ")
	if !strings.Contains(out, "fork: codex fork "+id+"\n") {
		t.Errorf("no fork command for %s", id)
	}

	if run := e.Codex("exec", "resume", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", id, "Carry on"); run.Err != nil {
		t.Fatalf("codex exec resume %s: %v\n%s", id, run.Err, run.Stderr)
	}
	out = hookwatch(t, e, "sessions", "--codex")
	if strings.Count(out, cont) != 1 || !strings.Contains(out, cont+id+" ") || !strings.Contains(out, ", 2 prompts, 1 subagent\n") ||
		!strings.Contains(out, "last answer: Carried on.\n") {
		t.Errorf("after codex exec resume %s, the listing is not of the same session, continued", id)
	}
	// Claude Code's listing of the directory says they are there.
	if out := hookwatch(t, e, "sessions"); !strings.Contains(out, "Codex: 1 session in "+e.Project+" (hookwatch sessions --codex lists them).") {
		t.Errorf("sessions does not name the Codex session")
	}
}

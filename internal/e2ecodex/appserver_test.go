package e2ecodex

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	fo "github.com/hookwatch/hookwatch/internal/fakeopenai"
)

// TestAppServer: through `codex app-server` as an IDE drives it, a command
// that asks for approval (PermissionRequest, which has no tool_use_id,
// matched to its call), a command interrupted while it runs, a manual
// compaction, and SessionEnd when the client goes away.
func TestAppServer(t *testing.T) {
	c := startCollector(t)
	e := c.newEnv(t, ModelClassic, fo.Script{
		"Write outside": {
			{fo.Call(fo.Shell, map[string]any{"cmd": "touch ../outside.txt && echo wrote",
				"sandbox_permissions": "require_escalated", "justification": "Need to write a file outside the workspace"})},
			{fo.Text("Wrote it.")},
		},
		"Sleep a while": {
			{fo.Exec("sleep 30; echo slept")},
			{fo.Text("Slept.")},
		},
		"After the compaction": {{fo.Text("Still here.")}},
	})
	a := e.AppServer()
	thread := a.StartThread()
	a.Turn(thread, "Write outside the project")
	if a.Approvals == 0 {
		t.Fatal("codex asked for no approval")
	}
	turn := a.StartTurn(thread, "Sleep a while")
	e.WaitRecorded("PreToolUse of sleep", func(p map[string]any) bool {
		in, _ := p["tool_input"].(map[string]any)
		cmd, _ := in["command"].(string)
		return p["hook_event_name"] == "PreToolUse" && strings.Contains(cmd, "sleep 30")
	})
	// The recorder may be done before hookwatch's hook beside it, and an
	// interrupt that comes while a hook runs can end it before it delivers
	// (seen once on a loaded machine: the sleep's PreToolUse never
	// stored). Interrupt the command, not the hooks: once every event the
	// recorder saw is stored.
	_, sofar := fired(e, thread)
	c.waitEvents(t, thread, sofar)
	a.Call("turn/interrupt", map[string]any{"threadId": thread, "turnId": turn})
	a.Wait("turn/completed")
	a.Call("thread/compact/start", map[string]any{"threadId": thread})
	e.WaitRecorded("PostCompact", func(p map[string]any) bool { return p["hook_event_name"] == "PostCompact" })
	// The compaction runs as a turn: let it end before the client goes
	// away, or closing interrupts it (a second Interrupt).
	a.Wait("turn/completed")
	// The next turn starts from the compacted history: SessionStart(compact).
	a.Turn(thread, "After the compaction")
	e.WaitRecorded("SessionStart(compact)", func(p map[string]any) bool {
		return p["hook_event_name"] == "SessionStart" && p["source"] == "compact"
	})
	a.Close()

	id := thread
	want, total := fired(e, id)
	for _, name := range []string{"PermissionRequest", "Interrupt", "PreCompact", "PostCompact", "SessionEnd"} {
		if want[name] != 1 {
			t.Fatalf("codex ran hooks %v", want)
		}
	}
	if want["SessionStart"] != 2 { // startup, compact
		t.Fatalf("codex ran hooks %v", want)
	}
	evs := c.waitEvents(t, id, total)
	sameCounts(t, "stored events", countEvents(evs), want)

	calls := c.toolCalls(t, id)
	if len(calls) != 2 {
		t.Fatalf("tool calls %v", calls)
	}
	w, s := calls[0], calls[1]
	if w.Status != "ok" || w.PermissionRequest == nil || w.PermissionRequest.MatchedBy != "input" {
		pr, _ := json.Marshal(w.PermissionRequest)
		t.Errorf("approved call %v permission request %s", w, pr)
	}
	if s.Status != "interrupted" || s.EndedAt == nil || s.DurationMS == nil {
		t.Errorf("interrupted call %v", s)
	}
	ses := c.session(t, id)
	if ses.Runtime != "codex" || ses.Status != "ended" || len(ses.Compactions) != 1 || ses.Compactions[0].Trigger != "manual" || len(ses.Runs) != 1 ||
		ses.Counts["permission_requests"] != 1 || ses.Counts["failures"] != 1 {
		t.Errorf("session %+v", ses)
	}

	// The rollout, imported, says the same: its record of the interrupted
	// command (its output "aborted by user", then the turn aborted) is an
	// interruption, not the command's result.
	hookwatch(t, e, "import", "--codex")
	evs = c.waitEvents(t, id, total+1)
	if tools, _, _ := rolloutEvents(evs); tools == 0 {
		t.Fatalf("nothing imported: %d events", len(evs))
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		calls = c.toolCalls(t, id)
		if len(calls) == 2 && calls[1].Status == "interrupted" && c.session(t, id).Counts["failures"] == 1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(calls) != 2 || calls[1].Status != "interrupted" || calls[1].ExitCode != nil {
		t.Errorf("after the import: calls %v", calls)
	}
	if ses := c.session(t, id); ses.Status != "ended" || ses.Counts["failures"] != 1 {
		t.Errorf("after the import: session %+v", ses)
	}
}

// TestAppServerPermissionPolicy: hookwatch's answers to PermissionRequest
// on the real Codex: an allow skips the approval prompt and the command
// runs; a deny refuses it without asking, the command does not run, and
// the session model shows the call denied by the policy.
func TestAppServerPermissionPolicy(t *testing.T) {
	c := startCollector(t)
	policy := `rules:
  - id: allow-notes
    runtime: codex
    events: PermissionRequest
    tool: Bash
    when: tool_input.command contains "allowed.txt"
    action: allow
  - id: no-secrets
    runtime: codex
    events: PermissionRequest
    tool: Bash
    when: tool_input.command contains "denied.txt"
    action: deny
    reason: Nothing outside the project.
`
	c.writePolicy(t, policy)
	escalated := func(cmd string) fo.Item {
		return fo.Call(fo.Shell, map[string]any{"cmd": cmd, "sandbox_permissions": "require_escalated", "justification": "Need to write outside the workspace"})
	}
	e := c.newEnv(t, ModelClassic, fo.Script{
		"Write the allowed file": {{escalated("touch ../allowed.txt && echo wrote")}, {fo.Text("Wrote it.")}},
		"Write the denied file":  {{escalated("touch ../denied.txt && echo wrote")}, {fo.Text("Could not.")}},
	})
	a := e.AppServer()
	thread := a.StartThread()
	a.Turn(thread, "Write the allowed file")
	a.Turn(thread, "Write the denied file")
	a.Close()
	if a.Approvals != 0 {
		t.Errorf("the client was asked %d times: the hook's answers were not honoured", a.Approvals)
	}
	if _, err := os.Stat(filepath.Join(e.Dir, "allowed.txt")); err != nil {
		t.Errorf("the allowed command did not run: %v", err)
	}
	if _, err := os.Stat(filepath.Join(e.Dir, "denied.txt")); err == nil {
		t.Error("the denied command ran")
	}
	sawReason := false
	for _, r := range e.Model.Requests() {
		sawReason = sawReason || strings.Contains(r.Text(), "Nothing outside the project.")
	}
	if !sawReason {
		t.Error("the model never saw the deny's reason")
	}

	want, total := fired(e, thread)
	if want["PermissionRequest"] != 2 {
		t.Fatalf("codex ran hooks %v", want)
	}
	c.waitEvents(t, thread, total)
	calls := c.toolCalls(t, thread)
	if len(calls) != 2 {
		t.Fatalf("tool calls %v", calls)
	}
	ok, denied := calls[0], calls[1]
	if ok.Status != "ok" || ok.PermissionRequest == nil {
		t.Errorf("allowed call %v", ok)
	}
	if denied.Status != "denied" || denied.PermissionRequest == nil || !strings.Contains(denied.Error, "Nothing outside the project.") {
		t.Errorf("denied call %v", denied)
	}
}

// forkScript is the model of runFork: a command and an answer in each
// turn.
var forkScript = fo.Script{
	"First":  {{fo.Exec("echo one")}, {fo.Text("One.")}},
	"Second": {{fo.Exec("echo two")}, {fo.Text("Two.")}},
}

// runFork plays a turn on a new thread of e's app-server, forks the thread
// and plays a turn on the fork, then closes the app-server; it returns the
// two threads.
func runFork(e *Env) (parent, fork string) {
	a := e.AppServer()
	parent = a.StartThread()
	a.Turn(parent, "First thing")
	fork = a.Fork(parent)
	a.Turn(fork, "Second thing")
	a.Close()
	return parent, fork
}

// TestAppServerFork: a thread forked through the app-server (as an IDE
// forks one, and as codex fork does) is linked to the session it was
// forked from, though no payload names it: the hook reads it from the
// fork's rollout.
func TestAppServerFork(t *testing.T) {
	c := startCollector(t)
	e := c.newEnv(t, ModelClassic, forkScript)
	parent, fork := runFork(e)

	if p := e.WaitRecorded("SessionStart(fork)", func(p map[string]any) bool {
		return p["hook_event_name"] == "SessionStart" && p["session_id"] == fork
	}); p["source"] != "fork" {
		t.Fatalf("the fork's SessionStart %v", p)
	}
	for _, id := range []string{parent, fork} {
		_, total := fired(e, id)
		c.waitEvents(t, id, total)
	}
	s := c.session(t, fork)
	if s.ParentSessionID != parent || s.Lineage != "fork" || s.Title != "Second thing" {
		t.Errorf("fork %+v, want parent %s", s, parent)
	}
	if p := c.session(t, parent); !slices.Equal(p.ChildSessionIDs, []string{fork}) || p.ParentSessionID != "" {
		t.Errorf("parent %+v, want child %s", p, fork)
	}
	// Each session has its own call: the fork's rollout does not copy the
	// parent's.
	for id, want := range map[string]string{parent: "echo one", fork: "echo two"} {
		calls := c.toolCalls(t, id)
		if len(calls) != 1 || !strings.Contains(string(calls[0].Input), want) {
			t.Errorf("calls of %s: %v, want one of %q", id, calls, want)
		}
	}
}

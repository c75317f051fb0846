package e2ecodex

import (
	"encoding/json"
	"strings"
	"testing"

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
	a.Call("turn/interrupt", map[string]any{"threadId": thread, "turnId": turn})
	a.Wait("turn/completed")
	a.Call("thread/compact/start", map[string]any{"threadId": thread})
	e.WaitRecorded("PostCompact", func(p map[string]any) bool { return p["hook_event_name"] == "PostCompact" })
	// The compaction runs as a turn: let it end before the client goes
	// away, or closing interrupts it (a second Interrupt).
	a.Wait("turn/completed")
	a.Close()

	id := thread
	want, total := fired(e, id)
	for _, name := range []string{"PermissionRequest", "Interrupt", "PreCompact", "PostCompact", "SessionEnd"} {
		if want[name] != 1 {
			t.Fatalf("codex ran hooks %v", want)
		}
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
	if ses.Runtime != "codex" || ses.Status != "ended" || len(ses.Compactions) != 1 || ses.Compactions[0].Trigger != "manual" ||
		ses.Counts["permission_requests"] != 1 || ses.Counts["failures"] != 1 {
		t.Errorf("session %+v", ses)
	}
}

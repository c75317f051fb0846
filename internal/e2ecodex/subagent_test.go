package e2ecodex

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	fo "github.com/hookwatch/hookwatch/internal/fakeopenai"
)

// TestSubagent: spawn_agent and wait_agent (offered to a model slug Codex
// does not know); the subagent sits under the call that spawned it, and
// its own calls under it.
func TestSubagent(t *testing.T) {
	c := startCollector(t)
	e := c.newEnv(t, ModelSubagent, fo.Script{
		"Delegate the count": {
			{fo.Call("spawn_agent", map[string]any{"message": "SUBTASK-ALPHA: count the files in the project"})},
			{fo.Call("wait_agent", map[string]any{"targets": []any{fo.Agent}, "timeout_ms": 20000})},
			{fo.Text("The subagent counted the files.")},
		},
		"SUBTASK-ALPHA": {
			{fo.Exec("ls | wc -l")},
			{fo.Text("There are 0 files.")},
		},
	})
	run := e.Exec("Delegate the count to a subagent")
	if run.Err != nil {
		t.Fatalf("codex exec: %v\n%s", run.Err, run.Stderr)
	}
	id := sessionOf(e.Rollouts()[0])
	want, total := fired(e, id)
	evs := c.waitEvents(t, id, total)
	sameCounts(t, "stored events", countEvents(evs), want)
	if want["SubagentStart"] != 1 || want["SubagentStop"] != 1 {
		t.Fatalf("codex ran hooks %v\n%s", want, run.Stderr)
	}

	agents := c.agents(t, id)
	calls := c.toolCalls(t, id)
	byTool := map[string]apiCall{}
	for _, call := range calls {
		byTool[call.ToolName] = call
	}
	spawn, wait, sub := byTool["spawn_agent"], byTool["multi_agent_v1wait_agent"], byTool["Bash"]
	if len(calls) != 3 || spawn.Status != "ok" || wait.Status != "ok" || sub.Status != "ok" {
		t.Fatalf("tool calls %v", calls)
	}
	if len(agents) != 2 {
		t.Fatalf("agents %+v", agents)
	}
	a := agents[1]
	if a.AgentID == "" || a.SpawnToolUseID != spawn.ToolUseID || a.Depth != 1 || a.ParentAgentID == nil || *a.ParentAgentID != "" ||
		a.AgentType == nil || *a.AgentType != "default" || a.Role != "subagent" || a.ResolvedBy != "tool_response" {
		t.Errorf("subagent %+v (spawned by %s)", a, spawn.ToolUseID)
	}
	// Named as Codex names it: the nickname its subagent's rollout records.
	var nickname string
	for _, r := range e.Rollouts() {
		if sessionOf(r) == a.AgentID {
			nickname = agentNickname(t, r)
		}
	}
	if nickname == "" || a.Nickname != nickname || agents[0].Nickname != "" {
		t.Errorf("subagent's nickname %q, its rollout's %q; main agent's %q", a.Nickname, nickname, agents[0].Nickname)
	}
	if spawn.SpawnedAgentID != a.AgentID || spawn.AgentID != "" || wait.AgentID != "" {
		t.Errorf("spawn %v spawned %q; wait %v", spawn, spawn.SpawnedAgentID, wait)
	}
	if sub.AgentID != a.AgentID || sub.ParentToolUseID != spawn.ToolUseID || sub.Depth != 1 || sub.ExitCode == nil || *sub.ExitCode != 0 {
		t.Errorf("subagent's call %v parent %q depth %d", sub, sub.ParentToolUseID, sub.Depth)
	}
}

// agentNickname returns the agent_nickname of the rollout at path: the
// name Codex shows for a subagent, in its session_meta record.
func agentNickname(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := bytes.Cut(b, []byte("\n"))
	var rec struct {
		Payload struct {
			Nickname string `json:"agent_nickname"`
		} `json:"payload"`
	}
	if err := json.Unmarshal(first, &rec); err != nil {
		t.Fatal(err)
	}
	return rec.Payload.Nickname
}

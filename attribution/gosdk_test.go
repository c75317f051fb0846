package attribution

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/hookwatch/hookwatch/event"
)

// TestGoSDKExplicitParents builds the tree of an agent written in Go
// (toolhook.Forwarder's envelopes): no transcript, no sidecar file, no
// delegation inputs to read; each sub-agent's calls name the call that
// spawned it in the envelope's Subagent meta, and arrive before that call,
// which is recorded only once its sub-agent finished.
func TestGoSDKExplicitParents(t *testing.T) {
	var envs []event.Envelope
	call := func(agent, typ, parent, id, tool string) {
		for _, name := range []string{event.PreToolUse, event.PostToolUse} {
			p := map[string]any{"session_id": "go-1", "hook_event_name": name, "tool_name": tool, "tool_use_id": id,
				"tool_input": map[string]any{"x": 1}}
			e := event.Envelope{ID: envID(len(envs)), Runtime: event.RuntimeGoSDK, Kind: event.KindHook, ReceivedAt: at(len(envs))}
			if agent != "" {
				p["agent_id"], p["agent_type"] = agent, typ
				e.Subagent = &event.SubagentMeta{AgentType: typ, ToolUseID: parent}
			}
			e.Payload, _ = json.Marshal(p)
			envs = append(envs, e)
		}
	}
	call("w-a-1", "sub-worker", "spawn-w-a-1", "r3", "Read")
	call("w-a", "worker", "spawn-w-a", "spawn-w-a-1", "Task")
	call("w-a", "worker", "spawn-w-a", "r2", "Read")
	call("w-b", "worker", "spawn-w-b", "r4", "Read")
	call("", "", "", "spawn-w-b", "Task")
	call("", "", "", "spawn-w-a", "Task")

	r := Build(envs)
	if len(r.Sessions) != 1 {
		t.Fatalf("%d sessions", len(r.Sessions))
	}
	s := r.Sessions[0]
	if s.Runtime != event.RuntimeGoSDK || s.Counts.Agents != 4 || s.Counts.Subagents != 3 || s.Counts.ToolCalls != 6 {
		t.Fatalf("runtime %q, counts %+v", s.Runtime, s.Counts)
	}
	var got []string
	for _, a := range s.Agents {
		parent := "-"
		if a.ParentAgentID != nil {
			parent = *a.ParentAgentID
		}
		got = append(got, fmt.Sprintf("%s<-%s via %s depth %d tools %d by %s", a.AgentID, parent, a.SpawnToolUseID, a.Depth, a.ToolCount, a.ResolvedBy))
	}
	slices.Sort(got)
	want := []string{
		"<-- via  depth 0 tools 2 by ",
		"w-a-1<-w-a via spawn-w-a-1 depth 2 tools 1 by sidecar",
		"w-a<- via spawn-w-a depth 1 tools 2 by sidecar",
		"w-b<- via spawn-w-b depth 1 tools 1 by sidecar",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("agents\n got %q\nwant %q", got, want)
	}
}

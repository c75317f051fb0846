package attribution

import (
	"slices"
	"strings"
	"testing"

	"github.com/hookwatch/hookwatch/event"
)

// want is the expected attribution of one subagent.
type want struct {
	parent, spawn, by string
	depth             int
}

func checkAgent(t *testing.T, s *Session, id string, w want) {
	t.Helper()
	a := agentOf(t, s, id)
	if got := deref(a.ParentAgentID); got != w.parent || a.SpawnToolUseID != w.spawn || a.ResolvedBy != w.by || a.Depth != w.depth {
		t.Fatalf("agent %s: parent %q spawn %q by %q depth %d; want parent %q spawn %q by %q depth %d",
			id, got, a.SpawnToolUseID, a.ResolvedBy, a.Depth, w.parent, w.spawn, w.by, w.depth)
	}
}

func TestParentResolution(t *testing.T) {
	f := func(name string, evs []ev, agents map[string]want) {
		t.Helper()
		s := only(t, Build(stream(t, evs...)))
		for id, w := range agents {
			checkAgent(t, s, id, w)
		}
		// The spawning call names its agent back, and calls of the agent
		// carry the spawning call as parent.
		for id, w := range agents {
			if w.spawn == "" || name == "sidecar without its call" {
				continue
			}
			if c := callOf(t, s, w.spawn); c.SpawnedAgentID != id {
				t.Fatalf("%s: call %s spawned %q, want %q", name, w.spawn, c.SpawnedAgentID, id)
			}
			for _, c := range s.ToolCalls {
				if c.AgentID == id && (c.ParentToolUseID != w.spawn || c.Depth != w.depth) {
					t.Fatalf("%s: call %s of %s has parent %q depth %d", name, c.ToolUseID, id, c.ParentToolUseID, c.Depth)
				}
			}
		}
	}
	sidecar := func(toolUseID string, depth int) *event.SubagentMeta {
		return &event.SubagentMeta{AgentType: "worker", ToolUseID: toolUseID, SpawnDepth: depth}
	}

	// (a) Two calls ask for the same type; only the sidecar, which appears
	// after SubagentStart (the client writes it late), tells them apart. The
	// other agent then takes the remaining call by type.
	f("sidecar", []ev{
		sessionStart("startup"),
		spawn("t1", "worker"),
		spawn("t2", "worker"),
		subStart("aB", "worker"),
		subStart("aA", "worker"),
		pre("Bash", "t3", bash("ls")).in("aB", "worker").with("_sidecar", sidecar("t2", 1)),
		subStop("aB", "worker").with("_sidecar", sidecar("t2", 1)),
		subStop("aA", "worker"),
	}, map[string]want{
		"aB": {"", "t2", ResolvedBySidecar, 1},
		"aA": {"", "t1", ResolvedBySubagentType, 1},
	})

	// (b) The PostToolUse response names the agent: structured (Claude
	// Code), replaced by hookwatch's privacy preview, and as JSON text
	// (Codex).
	f("tool_response", []ev{
		spawn("t1", "worker"),
		spawn("t2", "worker"),
		spawn("t3", "worker"),
		subStart("a3", "worker"),
		subStart("a2", "worker"),
		subStart("a1", "worker"),
		spawned("t2", "worker", map[string]any{"status": "completed", "agentId": "a2", "content": []any{}}),
		spawned("t1", "worker", map[string]any{"hookwatch_capture": "preview", "bytes": 9000,
			"head": `{"status":"completed","prompt":"count the files in th`, "tail": `e project","agentId":"a1","totalTokens":12}`}),
		spawned("t3", "worker", `{"agent_id":"a3","nickname":"Godel"}`),
	}, map[string]want{
		"a1": {"", "t1", ResolvedByToolResponse, 1},
		"a2": {"", "t2", ResolvedByToolResponse, 1},
		"a3": {"", "t3", ResolvedByToolResponse, 1},
	})

	// (c) Only the types: the oldest unclaimed call of the right type made
	// before the agent appeared. Older clients call the tool Task; a call
	// without subagent_type asks for general-purpose.
	f("subagent_type", []ev{
		pre("Task", "t1", map[string]any{"prompt": "p", "subagent_type": "Explore"}),
		pre("Task", "t2", map[string]any{"prompt": "p"}),
		subStart("aG", "general-purpose"),
		subStart("aE", "Explore"),
		pre("Task", "t3", map[string]any{"prompt": "p", "subagent_type": "Explore"}),
		subStart("aE2", "Explore"),
		subStart("aX", "Plan"),
		pre("Task", "t4", map[string]any{"prompt": "p", "subagent_type": "Plan"}), // after aX appeared
		subStart("aY", "Plan"),
	}, map[string]want{
		"aE":  {"", "t1", ResolvedBySubagentType, 1},
		"aG":  {"", "t2", ResolvedBySubagentType, 1},
		"aE2": {"", "t3", ResolvedBySubagentType, 1},
		"aX":  {"", "", ResolvedByNone, 1},
		"aY":  {"", "t4", ResolvedBySubagentType, 1},
	})

	// Nested three deep, each level resolved differently; a subagent's
	// Agent call carries that subagent's agent_id.
	f("nested", []ev{
		spawn("t1", "lead"),
		subStart("aL", "lead"),
		spawn("t2", "dev").in("aL", "lead"),
		subStart("aD", "dev"),
		spawn("t3", "qa").in("aD", "dev").with("_sidecar", &event.SubagentMeta{AgentType: "dev", ToolUseID: "t2", SpawnDepth: 2}),
		subStart("aQ", "qa"),
		pre("Bash", "t4", bash("go test")).in("aQ", "qa"),
		subStop("aQ", "qa"),
		spawned("t3", "qa", map[string]any{"agentId": "aQ"}).in("aD", "dev"),
		subStop("aD", "dev"),
		subStop("aL", "lead"),
	}, map[string]want{
		"aL": {"", "t1", ResolvedBySubagentType, 1},
		"aD": {"aL", "t2", ResolvedBySidecar, 2},
		"aQ": {"aD", "t3", ResolvedByToolResponse, 3},
	})

	// The sidecar names a call whose own events are missing: the id is
	// kept, the parent defaults to the main agent.
	f("sidecar without its call", []ev{
		pre("Read", "t9", map[string]any{"file_path": "/a"}).in("aZ", "worker").with("_sidecar", sidecar("t1", 1)),
	}, map[string]want{
		"aZ": {"", "t1", ResolvedBySidecar, 1},
	})

	// Hostile: two agents each claim (by sidecar) a call made by the other.
	// The cycle is broken, not followed forever.
	f("cycle", []ev{
		spawn("t1", "worker").in("aA", "worker").with("_sidecar", sidecar("t2", 1)),
		spawn("t2", "worker").in("aB", "worker").with("_sidecar", sidecar("t1", 1)),
	}, map[string]want{
		"aA": {"aB", "t2", ResolvedBySidecar, 2},
		"aB": {"", "t1", ResolvedBySidecar, 1},
	})
}

func TestCompactionAgent(t *testing.T) {
	s := only(t, Build(stream(t,
		sessionStart("resume"),
		spawn("t1", "general-purpose"), // pending: must not be claimed by the compaction agent
		ev{"hook_event_name": "PreCompact", "trigger": "manual", "custom_instructions": "keep names"},
		subStop("aC", ""),
		sessionStart("compact"),
		ev{"hook_event_name": "PostCompact", "trigger": "manual", "compact_summary": "…"},
		ev{"hook_event_name": "SubagentStop"}.with("agent_id", "aN"), // no agent_type at all
	)))
	a := agentOf(t, s, "aC")
	if a.AgentType == nil || *a.AgentType != "" || a.Role != RoleCompaction || a.SpawnToolUseID != "" || a.ResolvedBy != ResolvedByNone {
		t.Fatalf("compaction agent: type %q role %s spawn %q by %s", deref(a.AgentType), a.Role, a.SpawnToolUseID, a.ResolvedBy)
	}
	if !a.StartedAt.Equal(at(2)) || a.StoppedAt == nil || !a.StoppedAt.Equal(at(3)) {
		t.Fatalf("compaction agent ran %v … %v, want from the PreCompact to its stop", a.StartedAt, a.StoppedAt)
	}
	if len(s.Compactions) != 1 || s.Compactions[0].AgentID != "aC" || s.Compactions[0].EndedAt == nil || s.Counts.Compactions != 1 {
		t.Fatalf("compactions %+v", s.Compactions)
	}
	if len(s.Runs) != 1 {
		t.Fatalf("a compaction starts no run: %+v", s.Runs)
	}
	if n := agentOf(t, s, "aN"); n.AgentType != nil || n.Role != RoleSubagent {
		t.Fatalf("agent without type: type %q role %s", deref(n.AgentType), n.Role)
	}
	if m := agentOf(t, s, ""); m.AgentType != nil || m.ParentAgentID != nil || m.Role != RoleMain || s.Agents[0] != m {
		t.Fatalf("main agent %+v", m)
	}
}

func TestAgentDetails(t *testing.T) {
	s := only(t, Build(stream(t,
		spawn("t1", "Explore"),
		subStart("a1", "Explore"),
		pre("Bash", "t2", bash("ls")).in("a1", "Explore"),
		ev{"hook_event_name": "PostToolUseFailure", "tool_name": "Bash", "tool_use_id": "t2", "tool_input": bash("ls"), "error": "Exit code 1"}.in("a1", "Explore"),
		subStop("a1", "Explore").with("agent_transcript_path", "/elsewhere/agent-a1.jsonl"),
		subStart("a2", "Plan"),
	)))
	a1, a2 := agentOf(t, s, "a1"), agentOf(t, s, "a2")
	if a1.TranscriptPath != "/elsewhere/agent-a1.jsonl" || a1.LastMessage != "done a1" || a1.Description != "d-t1" ||
		a1.VirtualSessionID != "sub--s1--a1" || a1.ToolCount != 1 || a1.Failures != 1 || a1.Events != 4 {
		t.Fatalf("a1 %+v", a1)
	}
	if a2.TranscriptPath != "/h/.claude/projects/-w-p/s1/subagents/agent-a2.jsonl" || a2.StoppedAt != nil {
		t.Fatalf("a2 transcript %q stopped %v", a2.TranscriptPath, a2.StoppedAt)
	}
	if s.Counts.Agents != 3 || s.Counts.Subagents != 2 || s.Counts.Failures != 1 {
		t.Fatalf("counts %+v", s.Counts)
	}
}

// TestVirtualRefs: a virtual session id is read every way its "--" allow,
// the session first, then as an agent's id alone (the form without the
// session); the readings are bounded.
func TestVirtualRefs(t *testing.T) {
	for _, c := range []struct {
		id   string
		want []VirtualRef
	}{
		{"sub--s1--a1", []VirtualRef{{"s1", "a1"}, {"", "s1--a1"}}},
		{"sub--a43b7af849cd70f20", []VirtualRef{{"", "a43b7af849cd70f20"}}},
		{"sub--run--7--worker-1", []VirtualRef{{"run", "7--worker-1"}, {"run--7", "worker-1"}, {"", "run--7--worker-1"}}},
		// A "--" at either end or one dash of three is no split of an id
		// that is not empty.
		{"sub----a", []VirtualRef{{"", "--a"}}},
		{"sub--a--", []VirtualRef{{"", "a--"}}},
	} {
		got, ok := VirtualRefs(c.id)
		if !ok || !slices.Equal(got, c.want) {
			t.Errorf("VirtualRefs(%q) = %v, %v; want %v", c.id, got, ok, c.want)
		}
	}
	for _, id := range []string{"sub--", "s1", "", "sub-a1"} {
		if got, ok := VirtualRefs(id); ok {
			t.Errorf("VirtualRefs(%q) = %v, want none", id, got)
		}
	}
	if got, _ := VirtualRefs("sub--" + strings.Repeat("a--", 100) + "b"); len(got) != maxVirtualRefs {
		t.Errorf("%d readings of a long id, want %d", len(got), maxVirtualRefs)
	}
	// The id the model gives an agent of a real capture reads back to it
	// first.
	n := 0
	for _, s := range Build(loadCorpus(t, "claude-code-2.1.332.jsonl", event.RuntimeClaudeCode)).Sessions {
		for _, a := range s.Agents {
			if a.AgentID == "" {
				continue
			}
			n++
			if refs, _ := VirtualRefs(a.VirtualSessionID); refs[0] != (VirtualRef{s.SessionID, a.AgentID}) {
				t.Errorf("agent %s: %s reads first as %v", a.AgentID, a.VirtualSessionID, refs[0])
			}
		}
	}
	if n == 0 {
		t.Fatal("no subagent in the capture")
	}
}

// TestSubagentStopFailure: a subagent's StopFailure stops it, failed with
// the event's error kind ("unknown" when it names none) and the error text
// as its last message, and leaves the session's status to the main agent;
// a later SubagentStop of the agent (it went on: another turn) is its stop
// then, not failed. The main agent's StopFailure fails the session, not
// the agent.
func TestSubagentStopFailure(t *testing.T) {
	fail := func(agentID, kind string) ev {
		e := ev{"hook_event_name": "StopFailure", "last_assistant_message": "API Error: 429 slow down"}
		if kind != "" {
			e["error"] = kind
		}
		if agentID == "" {
			return e
		}
		return e.in(agentID, "worker")
	}
	f := func(name string, evs []ev, wantErr string, stopped bool, wantStatus string) {
		t.Helper()
		envs := stream(t, evs...)
		s := only(t, Build(envs))
		a := agentOf(t, s, "a1")
		if a.StopError != wantErr || (a.StoppedAt != nil) != stopped || s.Status != wantStatus {
			t.Errorf("%s: agent stopped %v error %q, session %q; want stopped %v error %q, session %q",
				name, a.StoppedAt, a.StopError, s.Status, stopped, wantErr, wantStatus)
		}
		if wantErr != "" && a.LastMessage != "API Error: 429 slow down" {
			t.Errorf("%s: last message %q", name, a.LastMessage)
		}
		if m := agentOf(t, s, ""); m.StopError != "" {
			t.Errorf("%s: the main agent's stop error %q", name, m.StopError)
		}
		checkOrders(t, envs)
	}
	f("failed", []ev{sessionStart("startup"), prompt("go"), subStart("a1", "worker"), fail("a1", "rate_limit")},
		"rate_limit", true, SessionRunning)
	f("no error kind", []ev{sessionStart("startup"), prompt("go"), subStart("a1", "worker"), fail("a1", "")},
		"unknown", true, SessionRunning)
	f("stopped later", []ev{sessionStart("startup"), prompt("go"), subStart("a1", "worker"), fail("a1", "rate_limit"),
		subStop("a1", "worker")}, "", true, SessionRunning)
	f("main failed too", []ev{sessionStart("startup"), prompt("go"), subStart("a1", "worker"), fail("a1", "overloaded"),
		fail("", "overloaded")}, "overloaded", true, SessionFailed)
	f("running", []ev{sessionStart("startup"), prompt("go"), subStart("a1", "worker"), fail("", "overloaded")},
		"", false, SessionFailed)
}

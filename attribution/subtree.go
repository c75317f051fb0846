package attribution

import "time"

// Subtree returns the agents of agents that are root or descend from it, in
// the order of agents. The main agent ("") is never a descendant.
func Subtree(agents []*Agent, root string) []*Agent {
	in := map[string]bool{root: true}
	// Parents start before their children, so one pass in start order
	// would do; passes until nothing changes also cover any other order.
	for changed := true; changed; {
		changed = false
		for _, a := range agents {
			if a.AgentID != "" && !in[a.AgentID] && a.ParentAgentID != nil && in[*a.ParentAgentID] {
				in[a.AgentID], changed = true, true
			}
		}
	}
	var out []*Agent
	for _, a := range agents {
		if in[a.AgentID] {
			out = append(out, a)
		}
	}
	return out
}

// VirtualSession returns subagent a of session parent as a session of its
// own (its VirtualSessionID), for viewers that show each subagent as a child
// session: its lineage is "subagent" under parent, its title the spawning
// call's description (else its type), its span, status and model
// (Agent.Model, not the parent's) its own, its counts those of its own calls, with Agents counting the subtree of agents
// (its own subagents, at any depth) among agents.
func VirtualSession(parent *Session, agents []*Agent, a *Agent) *Session {
	tree := Subtree(agents, a.AgentID)
	v := &Session{
		SessionID: a.VirtualSessionID, Runtime: parent.Runtime, CWD: parent.CWD, Project: parent.Project,
		Title: a.Description, Model: a.Model, TranscriptPath: a.TranscriptPath,
		StartedAt: a.StartedAt, LastEventAt: a.LastEventAt, EndedAt: a.StoppedAt,
		ParentSessionID: parent.SessionID, Lineage: LineageSubagent, Runs: []Run{},
		Status: SessionRunning,
		Counts: Counts{
			Events: a.Events, Agents: len(tree), Subagents: len(tree) - 1,
			ToolCalls: a.ToolCount, Failures: a.Failures, Denials: a.Denials, Rejected: a.Rejected,
		},
	}
	if v.Title == "" && a.AgentType != nil {
		v.Title = *a.AgentType
	}
	if a.StoppedAt != nil {
		v.Status = SessionEnded
	}
	if v.LastEventAt.IsZero() {
		v.LastEventAt = a.StartedAt
	}
	return v
}

// lastOf returns the later of two times.
func lastOf(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

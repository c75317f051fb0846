package attribution

import (
	"fmt"
	"strconv"
)

// Decomposition shapes (Shape.Kind): how a session split its work among
// agents. Compaction agents (RoleCompaction) are the client's own and never
// count. A subagent whose spawning call is not known is the main agent's
// (as its ParentAgentID says), spawned in an unknown turn, the same one for
// all such subagents; calls of clients that send no prompt_id are all of
// one turn too.
const (
	// ShapeSingle: no subagent; the main agent did all of it.
	ShapeSingle = "single"
	// ShapeChain: the subagents form one line, each spawned by the one
	// before it: the main agent spawned one subagent, which spawned at
	// most one, and so on, over the whole session. Depth is the length
	// of the chain (its number of subagents); a single delegation is a
	// chain of 1.
	ShapeChain = "chain"
	// ShapeFanOut: two or more subagents, all spawned by the main agent
	// in one turn (calls of one prompt_id: parallel subagents from one
	// parent), none of which spawned another. Width is N.
	ShapeFanOut = "fan_out"
	// ShapeOrchestratorWorkers: every other tree of subagents: the main
	// agent delegating over several turns (Depth 1), or subagents that
	// delegate too, with somewhere more than one subagent under one
	// agent (Depth 2 and more).
	ShapeOrchestratorWorkers = "orchestrator_workers"
)

// Shape is the decomposition shape of a session: its Kind and the figures
// that size it, derived from the agent tree (parents and depths) and the
// turn each subagent was spawned in (its spawning call's prompt_id).
type Shape struct {
	// Kind is ShapeSingle, ShapeChain, ShapeFanOut or
	// ShapeOrchestratorWorkers.
	Kind string `json:"kind"`
	// Subagents counts the subagents (RoleSubagent, not the compaction
	// agents), as Counts.Subagents does.
	Subagents int `json:"subagents"`
	// Depth is the depth of the deepest subagent; 0 for a single agent.
	Depth int `json:"depth"`
	// Width is the most subagents one agent spawned in one turn; 0 for
	// a single agent.
	Width int `json:"width"`
	// Turns counts the turns in which the main agent spawned a subagent.
	Turns int `json:"turns"`
}

// String says the shape in words: "single agent", "chain of 3",
// "fan-out of 3", "orchestrator-workers of depth 2".
func (s Shape) String() string {
	switch s.Kind {
	case ShapeSingle:
		return "single agent"
	case ShapeChain:
		return "chain of " + strconv.Itoa(s.Depth)
	case ShapeFanOut:
		return "fan-out of " + strconv.Itoa(s.Width)
	case ShapeOrchestratorWorkers:
		return "orchestrator-workers of depth " + strconv.Itoa(s.Depth)
	}
	return fmt.Sprintf("unknown shape %q", s.Kind)
}

// shapeOf derives the shape of a session from its agents; turnOf returns
// the prompt_id of the call that spawned a subagent ("" when unknown).
func shapeOf(agents []*Agent, turnOf func(*Agent) string) Shape {
	type spawn struct{ parent, turn string }
	perTurn := map[spawn]int{}
	children := map[string]int{}
	mainTurns := map[string]bool{}
	var s Shape
	for _, a := range agents {
		if a.Role != RoleSubagent {
			continue
		}
		parent := ""
		if a.ParentAgentID != nil {
			parent = *a.ParentAgentID
		}
		turn := turnOf(a)
		s.Subagents++
		s.Depth = max(s.Depth, a.Depth)
		children[parent]++
		perTurn[spawn{parent, turn}]++
		s.Width = max(s.Width, perTurn[spawn{parent, turn}])
		if parent == "" {
			mainTurns[turn] = true
		}
	}
	s.Turns = len(mainTurns)
	line := true
	for _, n := range children {
		line = line && n == 1
	}
	switch {
	case s.Subagents == 0:
		s.Kind = ShapeSingle
	case line:
		s.Kind = ShapeChain
	case s.Depth == 1 && s.Turns == 1:
		s.Kind = ShapeFanOut
	default:
		s.Kind = ShapeOrchestratorWorkers
	}
	return s
}

// shape sets the session's shape from its agents as they stand, once the
// calls that spawned them are settled.
func (b *sessionBuilder) shape() {
	agents := make([]*Agent, len(b.agentSeq))
	turns := make(map[*Agent]string, len(b.agentSeq))
	for i, a := range b.agentSeq {
		agents[i] = a.a
		if a.spawn != nil {
			turns[a.a] = a.spawn.c.PromptID
		}
	}
	s := shapeOf(agents, func(a *Agent) string { return turns[a] })
	b.s.Shape = &s
}

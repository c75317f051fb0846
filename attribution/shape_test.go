package attribution

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestShapeOf holds the definitions of the shapes on agent trees written
// out: "parent>child@turn" per subagent, "~id" for a compaction agent.
func TestShapeOf(t *testing.T) {
	f := func(tree, want string) {
		t.Helper()
		agents := []*Agent{{AgentID: "", Role: RoleMain}}
		turns := map[*Agent]string{}
		depth := map[string]int{"": 0}
		for _, edge := range strings.Fields(tree) {
			if id, ok := strings.CutPrefix(edge, "~"); ok {
				root := ""
				agents = append(agents, &Agent{AgentID: id, ParentAgentID: &root, Depth: 1, Role: RoleCompaction})
				continue
			}
			parent, rest, _ := strings.Cut(edge, ">")
			id, turn, _ := strings.Cut(rest, "@")
			if parent == "main" {
				parent = ""
			}
			depth[id] = depth[parent] + 1
			a := &Agent{AgentID: id, ParentAgentID: &parent, Depth: depth[id], Role: RoleSubagent}
			turns[a] = turn
			agents = append(agents, a)
		}
		s := shapeOf(agents, func(a *Agent) string { return turns[a] })
		if got := fmt.Sprintf("%s (%d subagents, width %d, %d turns)", s, s.Subagents, s.Width, s.Turns); got != want {
			t.Errorf("%q: %s, want %s", tree, got, want)
		}
	}
	f("", "single agent (0 subagents, width 0, 0 turns)")
	f("~c1 ~c2", "single agent (0 subagents, width 0, 0 turns)")
	f("main>a@p1", "chain of 1 (1 subagents, width 1, 1 turns)")
	f("main>a@p1 a>b@p1 b>c@p1", "chain of 3 (3 subagents, width 1, 1 turns)")
	f("main>a@p1 a>b@p1 b>c@p1 ~c1", "chain of 3 (3 subagents, width 1, 1 turns)")
	f("main>a@p1 main>b@p1 main>c@p1", "fan-out of 3 (3 subagents, width 3, 1 turns)")
	f("main>a main>b", "fan-out of 2 (2 subagents, width 2, 1 turns)")
	// Sequential delegations over turns: an orchestrator at depth 1.
	f("main>a@p1 main>b@p2", "orchestrator-workers of depth 1 (2 subagents, width 1, 2 turns)")
	f("main>a@p1 main>b@p1 main>c@p2", "orchestrator-workers of depth 1 (3 subagents, width 2, 2 turns)")
	// Parallel workers that delegate, or a chain that fans out: mixed.
	f("main>a@p1 main>b@p1 a>c@p1", "orchestrator-workers of depth 2 (3 subagents, width 2, 1 turns)")
	f("main>a@p1 a>b@p1 a>c@p1 c>d@p1", "orchestrator-workers of depth 3 (4 subagents, width 2, 1 turns)")
}

// TestShapeOfCaptures: the shapes of the real captures' sessions, in a
// golden file: the parallel subagents of 2.1.197 are a fan-out, the two
// turns of 2.1.332 whose subagents delegate again an orchestrator, the
// forks single agents. A session's shape is in its model for every order
// of its envelopes (TestGroupEqualsBuild holds the whole model).
func TestShapeOfCaptures(t *testing.T) {
	sets := corpora(t)
	var names []string
	for name := range sets {
		names = append(names, name)
	}
	slices.Sort(names)
	var b strings.Builder
	shapes := map[string]string{}
	for _, name := range names {
		for _, s := range Build(sets[name]).Sessions {
			if s.Shape == nil {
				t.Fatalf("%s: session %s has no shape", name, s.SessionID)
			}
			shapes[s.SessionID] = s.Shape.String()
			fmt.Fprintf(&b, "%s %s %s: %s (%d subagents, width %d, %d turns)\n", name, s.SessionID, s.Lineage, s.Shape, s.Shape.Subagents, s.Shape.Width, s.Shape.Turns)
		}
	}
	golden(t, "shapes.golden.txt", []byte(b.String()))
	f := func(id, want string) {
		t.Helper()
		if shapes[id] != want {
			t.Errorf("session %s: %q, want %q", id, shapes[id], want)
		}
	}
	f("0e2e0b5d-7136-4322-8086-c38ed16b10ad", "fan-out of 2")
	f("2af3b205-0ad6-4144-83bd-a05f3815b70a", "single agent")
	f(capture2332X, "orchestrator-workers of depth 2")
	f(capture2332Y, "single agent")
	f("67de0528-46aa-4c7c-81ce-92a028dc4ccb", "fan-out of 2")
}

// TestSubagentCounts: a session counts its subagents once — the agents a
// call spawned, not the compaction agents — in its counts and its shape
// alike. The captures' compactions (two compaction agents in one /compact
// of 2.1.332) make the two differ if either counts them.
func TestSubagentCounts(t *testing.T) {
	compactions := 0
	for name, envs := range corpora(t) {
		for _, s := range Build(envs).Sessions {
			subagents, compaction := 0, 0
			for _, a := range s.Agents {
				switch a.Role {
				case RoleSubagent:
					subagents++
				case RoleCompaction:
					compaction++
				}
			}
			compactions += compaction
			if s.Counts.Subagents != subagents || s.Shape.Subagents != subagents || s.Counts.Agents != 1+subagents+compaction {
				t.Errorf("%s: session %s counts %d agents, %d subagents, its shape %d subagents; it has %d subagents and %d compaction agents",
					name, s.SessionID, s.Counts.Agents, s.Counts.Subagents, s.Shape.Subagents, subagents, compaction)
			}
		}
	}
	if compactions == 0 {
		t.Fatal("no capture has a compaction agent: the test proves nothing")
	}
}

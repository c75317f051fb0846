package label

import (
	"fmt"
	"strings"
	"testing"
)

func TestValue(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		if got := Value(in); got != want {
			t.Errorf("Value(%q) = %q, want %q", in, got, want)
		}
	}
	f("Bash", "Bash")
	f("mcp__github__create_issue", "mcp__github__create_issue")
	f("my-plugin:code-reviewer", "my-plugin:code-reviewer")
	f("", "unknown")
	f(`a"b\c`+"\n", "a_b_c_")
	f("é", "__")
	f(strings.Repeat("x", 100), strings.Repeat("x", MaxBytes))
	f(strings.Repeat("\"", 100), strings.Repeat("_", MaxBytes))
}

// TestToolAndAgent: the clients' own names are kept, others are named by
// what they are, whatever they say.
func TestToolAndAgent(t *testing.T) {
	f := func(got, want string) {
		t.Helper()
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
	f(Tool("Bash"), "Bash")
	f(Tool("apply_patch"), "apply_patch")
	f(Tool("ExitPlanMode"), "ExitPlanMode")
	f(Tool("ListMcpResourcesTool"), "ListMcpResourcesTool")
	f(Tool("mcp__context7__resolve-library-id"), "mcp_call")
	f(Tool("multi_agent_v1wait_agent"), "multi_agent_v1wait_agent") // as Codex 0.169 names it
	f(Tool("multi_agent_v9wait_agent"), "delegation")
	f(Tool("bash"), Other) // names are case-sensitive
	f(Tool("made-up"), Other)
	f(Tool(""), Other)
	f(Tool("other"), Other)

	f(Agent("main"), "main")
	f(Agent("compaction"), "compaction")
	f(Agent("subagent"), "subagent")
	f(Agent("unknown"), "unknown")
	f(Agent("general-purpose"), "general-purpose")
	f(Agent("Explore"), "Explore")
	f(Agent("default"), "default")
	f(Agent("code-reviewer"), Other)
	f(Agent("Godel"), Other)
}

// TestVocabularyFits: whatever a payload says, Tool gives at most
// MaxTools names and Agent MaxAgentTypes: a client's new tools added to
// classify must not take the bound past them.
func TestVocabularyFits(t *testing.T) {
	tools, agents := Vocabulary()
	if len(tools) > MaxTools || len(agents) > MaxAgentTypes {
		t.Fatalf("%d tool names (bound %d), %d agent names (bound %d)", len(tools), MaxTools, len(agents), MaxAgentTypes)
	}
	for _, v := range append(tools, agents...) {
		if Value(v) != v {
			t.Errorf("%q is not a clean value", v)
		}
	}
}

func TestSet(t *testing.T) {
	f := func(got, want string) {
		t.Helper()
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
	agents := NewSet(MaxAgentTypes, Agent)
	for i := range MaxAgentTypes {
		f(agents.Bound(fmt.Sprint("type-", i)), fmt.Sprint("type-", i))
	}
	f(agents.Bound("one-too-many"), Other)
	f(agents.Bound("type-3"), "type-3") // kept ones stay
	f(agents.Bound("main"), "main")
	f(agents.Bound("compaction"), "compaction")
	f(agents.Bound("Explore"), "Explore") // the vocabulary takes no place
	f(agents.Bound(""), Unknown)

	tools := NewTools()
	for i := range MaxMCPTools {
		f(tools.Bound(fmt.Sprint("mcp__s__t", i)), fmt.Sprint("mcp__s__t", i))
	}
	f(tools.Bound("mcp__s__more"), "mcp_call")
	f(tools.Bound("mcp__s__t0"), "mcp__s__t0")
	f(tools.Bound("ListMcpResourcesTool"), "ListMcpResourcesTool")
	for i := range MaxTools - MaxMCPTools {
		f(tools.Bound(fmt.Sprint("Tool", i)), fmt.Sprint("Tool", i))
	}
	f(tools.Bound("one-too-many"), Other)
	f(tools.Bound("xx_wait_agent"), "delegation")
	f(tools.Bound("Read"), "Read") // the clients' own tools are never folded
	f(tools.Bound("Tool0"), "Tool0")
}

package attribution

import (
	"strings"

	"github.com/hookwatch/hookwatch/classify"
)

// Tool families (ToolCall.Family): classify owns them.
const (
	FamilyReadFile   = classify.FamilyReadFile
	FamilyModifyFile = classify.FamilyModifyFile
	FamilyRunCommand = classify.FamilyRunCommand
	FamilySearch     = classify.FamilySearch
	FamilyWebFetch   = classify.FamilyWebFetch
	FamilyDelegation = classify.FamilyDelegation
	FamilyMCPCall    = classify.FamilyMCPCall
	FamilyTask       = classify.FamilyTask
	FamilyOther      = classify.FamilyOther
)

// Family is classify.Family.
func Family(toolName string) string { return classify.Family(toolName) }

// spawnsAgent reports whether a call of the tool starts a subagent: Claude
// Code's Agent (Task before it) and Codex's spawn_agent.
func spawnsAgent(toolName string) bool {
	switch toolName {
	case "Agent", "Task":
		return true
	}
	return strings.HasSuffix(toolName, "spawn_agent")
}

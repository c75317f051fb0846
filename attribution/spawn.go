package attribution

import "strings"

// spawnsAgent reports whether a call of the tool starts a subagent: Claude
// Code's Agent (Task before it) and Codex's spawn_agent.
func spawnsAgent(toolName string) bool {
	switch toolName {
	case "Agent", "Task":
		return true
	}
	return strings.HasSuffix(toolName, "spawn_agent")
}

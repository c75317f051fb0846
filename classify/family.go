package classify

import (
	"slices"
	"strings"
)

// Tool families (Meta.Family, attribution.ToolCall.Family): what kind of
// tool a call used, from its name alone.
const (
	FamilyReadFile   = "read_file"
	FamilyModifyFile = "modify_file"
	FamilyRunCommand = "run_command"
	FamilySearch     = "search"
	FamilyWebFetch   = "web_fetch" // any network lookup, WebSearch included
	FamilyDelegation = "delegation"
	FamilyMCPCall    = "mcp_call"
	FamilyTask       = "task"
	FamilyOther      = "other"
)

// families maps the built-in tools of Claude Code (current and older names)
// and Codex to their family.
var families = map[string]string{
	"Read": FamilyReadFile, "NotebookRead": FamilyReadFile, "LS": FamilyReadFile, "View": FamilyReadFile,
	"read_file": FamilyReadFile, "view_image": FamilyReadFile,

	"Write": FamilyModifyFile, "Edit": FamilyModifyFile, "MultiEdit": FamilyModifyFile,
	"NotebookEdit": FamilyModifyFile, "apply_patch": FamilyModifyFile,

	"Bash": FamilyRunCommand, "PowerShell": FamilyRunCommand, "BashOutput": FamilyRunCommand,
	"KillShell": FamilyRunCommand, "KillBash": FamilyRunCommand, "Monitor": FamilyRunCommand,
	"shell": FamilyRunCommand, "local_shell": FamilyRunCommand, "exec_command": FamilyRunCommand,
	"write_stdin": FamilyRunCommand, "unified_exec": FamilyRunCommand,

	"Glob": FamilySearch, "Grep": FamilySearch, "ToolSearch": FamilySearch, "LSP": FamilySearch,

	"WebFetch": FamilyWebFetch, "WebSearch": FamilyWebFetch, "web_search": FamilyWebFetch,

	"Agent": FamilyDelegation, "Task": FamilyDelegation, "spawn_agent": FamilyDelegation,
	// Codex 0.169's wait_agent, prefixed (see Family).
	"SendMessage": FamilyDelegation, "multi_agent_v1wait_agent": FamilyDelegation,

	"TaskCreate": FamilyTask, "TaskUpdate": FamilyTask, "TaskGet": FamilyTask, "TaskList": FamilyTask,
	"TaskOutput": FamilyTask, "TaskStop": FamilyTask, "TodoWrite": FamilyTask, "TodoRead": FamilyTask,
	"update_plan": FamilyTask,

	"ListMcpResourcesTool": FamilyMCPCall, "ReadMcpResourceTool": FamilyMCPCall,

	// Claude Code's own tools of no family above: known by name all the
	// same (KnownTool).
	"AskUserQuestion": FamilyOther, "ExitPlanMode": FamilyOther, "EnterPlanMode": FamilyOther,
}

// ToolNames returns the tools whose family Family knows by name, sorted:
// Claude Code's and Codex's own (MCP tools, named mcp__…, are not).
func ToolNames() []string {
	names := make([]string, 0, len(families))
	for n := range families {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// KnownTool reports whether toolName is one of the tools ToolNames lists:
// a name Claude Code or Codex gives one of its own tools.
func KnownTool(toolName string) bool {
	_, ok := families[toolName]
	return ok
}

// agentTypes are the types of the subagents Claude Code and Codex ship
// (their agent_type), read from the clients: Claude Code's built-in agent
// definitions (2.1.197, 2.1.332) and Codex's agent roles. A user's own
// agents (.claude/agents/*.md, a plugin's) are not among them.
var agentTypes = []string{
	// Claude Code
	"general-purpose", "Explore", "Plan", "statusline-setup", "claude-code-guide", "claude", "fork",
	"worker", "workflow-subagent", "comment-thread-analyst",
	// Codex (and its "worker")
	"default", "explorer",
}

// AgentTypes returns the subagent types Claude Code and Codex ship, sorted.
func AgentTypes() []string {
	out := slices.Clone(agentTypes)
	slices.Sort(out)
	return out
}

// KnownAgentType reports whether agentType is one AgentTypes lists.
func KnownAgentType(agentType string) bool { return slices.Contains(agentTypes, agentType) }

// Family classifies a tool by name: mcp__<server>__<tool> is mcp_call, the
// names in a fixed table map to their family (Read → read_file, Edit →
// modify_file, Bash → run_command, Grep → search, WebFetch → web_fetch,
// Agent/Task → delegation, TaskCreate/TodoWrite → task; Codex's
// apply_patch, exec_command, spawn_agent and *_agent tools too), and
// anything else is other.
func Family(toolName string) string {
	if f, ok := families[toolName]; ok {
		return f
	}
	switch {
	case strings.HasPrefix(toolName, "mcp__"):
		return FamilyMCPCall
	case strings.HasSuffix(toolName, "spawn_agent"), strings.HasSuffix(toolName, "wait_agent"),
		strings.HasSuffix(toolName, "close_agent"), strings.HasSuffix(toolName, "resume_agent"):
		// Codex's multi-agent tools, which some versions prefix
		// (multi_agent_v1wait_agent).
		return FamilyDelegation
	}
	return FamilyOther
}

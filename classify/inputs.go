package classify

// InputFields returns the fields of the tool_input a built-in tool of
// Claude Code or Codex sends, and true; nil and false for a tool it does
// not know — an MCP tool, whose arguments are its own, or one newer than
// this list. The fields are those documented (spec §1.6.3) and those seen
// in real payloads (TestInputFieldsAgreeWithPayloads reads them, so that a
// field a client sends cannot be missing here unnoticed); Read's pages and
// Grep's flags are those of Claude Code 2.1.332's tool schema. Tools gain
// fields: a caller may warn about a field not listed, never refuse it.
// A switch, not a map: package-level maps cost every hook process init time.
func InputFields(tool string) ([]string, bool) {
	switch tool {
	case "Bash", "PowerShell":
		return []string{"command", "description", "timeout", "run_in_background", "dangerouslyDisableSandbox"}, true
	case "Write":
		return []string{"file_path", "content"}, true
	case "Edit":
		return []string{"file_path", "old_string", "new_string", "replace_all"}, true
	case "Read":
		return []string{"file_path", "offset", "limit", "pages"}, true
	case "Glob":
		return []string{"pattern", "path"}, true
	case "Grep":
		return []string{"pattern", "path", "glob", "output_mode", "-B", "-A", "-C", "context", "-n", "-i", "-o",
			"type", "head_limit", "offset", "multiline"}, true
	case "WebFetch":
		return []string{"url", "prompt"}, true
	case "WebSearch":
		return []string{"query", "allowed_domains", "blocked_domains"}, true
	case "Agent", "Task":
		return []string{"prompt", "description", "subagent_type", "model", "run_in_background", "resume"}, true
	case "AskUserQuestion":
		return []string{"questions", "answers"}, true
	case "ExitPlanMode":
		return []string{"plan", "planFilePath", "allowedPrompts"}, true
	case "TaskCreate":
		return []string{"subject", "description", "activeForm"}, true
	case "TodoWrite":
		return []string{"todos"}, true
	case "apply_patch": // Codex
		return []string{"command"}, true
	}
	return nil, false
}

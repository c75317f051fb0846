package event

// memberKey returns the member name b as a string. The names every hook
// payload carries are returned as constants, so that splitting a payload
// allocates no string for them: a collector keeps the members of every
// envelope of a session it models (event.Payload.Raw), and a string per
// member of each is memory the garbage collector scans for nothing. A
// switch rather than a map, so that the hook's process pays nothing at
// start; a conversion in a switch's expression does not allocate.
func memberKey(b []byte) string {
	switch string(b) {
	case "session_id":
		return "session_id"
	case "transcript_path":
		return "transcript_path"
	case "cwd":
		return "cwd"
	case "hook_event_name":
		return "hook_event_name"
	case "permission_mode":
		return "permission_mode"
	case "prompt_id":
		return "prompt_id"
	case "agent_id":
		return "agent_id"
	case "agent_type":
		return "agent_type"
	case "agent_transcript_path":
		return "agent_transcript_path"
	case "effort":
		return "effort"
	case "model":
		return "model"
	case "turn_id":
		return "turn_id"
	case "tool_name":
		return "tool_name"
	case "tool_input":
		return "tool_input"
	case "tool_use_id":
		return "tool_use_id"
	case "tool_response":
		return "tool_response"
	case "tool_calls":
		return "tool_calls"
	case "prompt":
		return "prompt"
	case "source":
		return "source"
	case "reason":
		return "reason"
	case "error":
		return "error"
	case "is_interrupt":
		return "is_interrupt"
	case "duration_ms":
		return "duration_ms"
	case "stop_hook_active":
		return "stop_hook_active"
	case "last_assistant_message":
		return "last_assistant_message"
	case "background_tasks":
		return "background_tasks"
	case "session_crons":
		return "session_crons"
	case "trigger":
		return "trigger"
	case "custom_instructions":
		return "custom_instructions"
	case "compact_summary":
		return "compact_summary"
	case "message":
		return "message"
	case "notification_type":
		return "notification_type"
	case "file_path":
		return "file_path"
	case "memory_type":
		return "memory_type"
	case "load_reason":
		return "load_reason"
	case "scratchpad_dir":
		return "scratchpad_dir"
	}
	return string(b)
}

// constantValue returns, for the content of a string literal (the bytes
// between its quotes) that spells an event name, a permission mode or a
// built-in tool's name, that name as a constant, as memberKey does for the
// names of members: every event carries one or more of them, and a
// collector keeps them with the envelopes of the sessions it models. ok is
// false for any other content, escaped or not; none of these names holds a
// quote, a backslash or a byte above 0x7f, so the content is the value.
func constantValue(b []byte) (string, bool) {
	switch string(b) {
	case SessionStart:
		return SessionStart, true
	case Setup:
		return Setup, true
	case InstructionsLoaded:
		return InstructionsLoaded, true
	case UserPromptSubmit:
		return UserPromptSubmit, true
	case UserPromptExpansion:
		return UserPromptExpansion, true
	case MessageDisplay:
		return MessageDisplay, true
	case PreToolUse:
		return PreToolUse, true
	case PermissionRequest:
		return PermissionRequest, true
	case PermissionDenied:
		return PermissionDenied, true
	case PostToolUse:
		return PostToolUse, true
	case PostToolUseFailure:
		return PostToolUseFailure, true
	case PostToolBatch:
		return PostToolBatch, true
	case Notification:
		return Notification, true
	case SubagentStart:
		return SubagentStart, true
	case SubagentStop:
		return SubagentStop, true
	case TaskCreated:
		return TaskCreated, true
	case TaskCompleted:
		return TaskCompleted, true
	case Stop:
		return Stop, true
	case StopFailure:
		return StopFailure, true
	case TeammateIdle:
		return TeammateIdle, true
	case ConfigChange:
		return ConfigChange, true
	case CwdChanged:
		return CwdChanged, true
	case DirectoryAdded:
		return DirectoryAdded, true
	case FileChanged:
		return FileChanged, true
	case WorktreeCreate:
		return WorktreeCreate, true
	case WorktreeRemove:
		return WorktreeRemove, true
	case PreCompact:
		return PreCompact, true
	case PostCompact:
		return PostCompact, true
	case SessionEnd:
		return SessionEnd, true
	case Elicitation:
		return Elicitation, true
	case ElicitationResult:
		return ElicitationResult, true
	case Interrupt:
		return Interrupt, true
	case "default":
		return "default", true
	case "acceptEdits":
		return "acceptEdits", true
	case "plan":
		return "plan", true
	case "bypassPermissions":
		return "bypassPermissions", true
	case "dontAsk":
		return "dontAsk", true
	case "Bash":
		return "Bash", true
	case "Read":
		return "Read", true
	case "Write":
		return "Write", true
	case "Edit":
		return "Edit", true
	case "MultiEdit":
		return "MultiEdit", true
	case "NotebookEdit":
		return "NotebookEdit", true
	case "Glob":
		return "Glob", true
	case "Grep":
		return "Grep", true
	case "LS":
		return "LS", true
	case "Agent":
		return "Agent", true
	case "Task":
		return "Task", true
	case "TodoWrite":
		return "TodoWrite", true
	case "WebFetch":
		return "WebFetch", true
	case "WebSearch":
		return "WebSearch", true
	case "BashOutput":
		return "BashOutput", true
	case "KillShell":
		return "KillShell", true
	case "ExitPlanMode":
		return "ExitPlanMode", true
	case ApplyPatch:
		return ApplyPatch, true
	}
	return "", false
}

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

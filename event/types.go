package event

import "encoding/json"

// Common holds the fields any hook event may carry (spec §1.6.1, and Codex's
// model and turn_id from §4). Every one of them may be absent.
type Common struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	CWD            string `json:"cwd"`
	HookEventName  string `json:"hook_event_name"`
	PermissionMode string `json:"permission_mode"`
	// PromptID names the user prompt the event belongs to; a Codex main
	// agent's payload's is its turn_id (such a turn is one prompt's).
	PromptID string `json:"prompt_id"`
	// AgentID is set only when the event fired inside a subagent; the main
	// agent is "".
	AgentID string `json:"agent_id"`
	// AgentType distinguishes "" (the compaction agent) from absent.
	AgentType     OptString `json:"agent_type"`
	Effort        *Effort   `json:"effort"`
	ScratchpadDir string    `json:"scratchpad_dir"`
	// Model is a string on SessionStart and on every Codex event; the
	// statusLine's model object is read by StatusLineInput instead.
	Model string `json:"model"`
	// TurnID is Codex's turn identifier.
	TurnID string `json:"turn_id"`
	// AgentNickname is the name Codex shows for a subagent ("Maxwell"):
	// no hook sends it; the envelopes read from a subagent's rollout
	// carry it (its session_meta's).
	AgentNickname string `json:"agent_nickname"`
}

// Effort is the model's effort level.
type Effort struct {
	Level string `json:"level"`
}

// ToolCall holds the fields shared by the tool events.
type ToolCall struct {
	ToolName  string          `json:"tool_name"`
	ToolInput json.RawMessage `json:"tool_input"`
	ToolUseID string          `json:"tool_use_id"`
}

// SessionStartInput is SessionStart (source: startup, resume, clear, compact, fork).
type SessionStartInput struct {
	Source       string `json:"source"`
	SessionTitle string `json:"session_title"`
	// On resume and fork (clients from 2.1.332): how long ago the client
	// last had a response, the context it resumes with, whether the
	// prompt cache has probably expired, and the client's estimate of
	// what writing that context to the cache again costs.
	SecondsSinceLastResponse *float64 `json:"seconds_since_last_response"`
	ContextTokens            *float64 `json:"context_tokens"`
	PromptCacheLikelyExpired *bool    `json:"prompt_cache_likely_expired"`
	EstimatedCacheWriteUSD   *float64 `json:"estimated_cache_write_usd"`
}

// SetupInput is Setup (trigger: init, maintenance).
type SetupInput struct {
	Trigger string `json:"trigger"`
}

// InstructionsLoadedInput is InstructionsLoaded.
type InstructionsLoadedInput struct {
	FilePath        string   `json:"file_path"`
	MemoryType      string   `json:"memory_type"`
	LoadReason      string   `json:"load_reason"`
	Globs           []string `json:"globs"`
	TriggerFilePath string   `json:"trigger_file_path"`
	ParentFilePath  string   `json:"parent_file_path"`
}

// UserPromptSubmitInput is UserPromptSubmit.
type UserPromptSubmitInput struct {
	Prompt       string `json:"prompt"`
	SessionTitle string `json:"session_title"`
}

// UserPromptExpansionInput is UserPromptExpansion.
type UserPromptExpansionInput struct {
	ExpansionType string `json:"expansion_type"`
	CommandName   string `json:"command_name"`
	CommandArgs   string `json:"command_args"`
	CommandSource string `json:"command_source"`
	Prompt        string `json:"prompt"`
}

// MessageDisplayInput is MessageDisplay.
type MessageDisplayInput struct {
	TurnID    string `json:"turn_id"`
	MessageID string `json:"message_id"`
	Index     *int   `json:"index"`
	Final     *bool  `json:"final"`
	Delta     string `json:"delta"`
}

// PreToolUseInput is PreToolUse.
type PreToolUseInput struct {
	ToolCall
}

// PermissionRequestInput is PermissionRequest. It has no tool_use_id.
type PermissionRequestInput struct {
	ToolCall
	PermissionSuggestions json.RawMessage `json:"permission_suggestions"`
}

// PermissionDeniedInput is PermissionDenied.
type PermissionDeniedInput struct {
	ToolCall
	Reason string `json:"reason"`
}

// PostToolUseInput is PostToolUse. ToolResponse may be any JSON value.
type PostToolUseInput struct {
	ToolCall
	ToolResponse json.RawMessage `json:"tool_response"`
	DurationMS   *float64        `json:"duration_ms"`
}

// PostToolUseFailureInput is PostToolUseFailure.
type PostToolUseFailureInput struct {
	ToolCall
	Error       string   `json:"error"`
	IsInterrupt *bool    `json:"is_interrupt"`
	DurationMS  *float64 `json:"duration_ms"`
}

// BatchedToolCall is one entry of PostToolBatch.tool_calls; ToolResponse is
// the serialized tool_result content the model sees (string or blocks).
type BatchedToolCall struct {
	ToolName     string          `json:"tool_name"`
	ToolInput    json.RawMessage `json:"tool_input"`
	ToolUseID    string          `json:"tool_use_id"`
	ToolResponse json.RawMessage `json:"tool_response"`
}

// PostToolBatchInput is PostToolBatch.
type PostToolBatchInput struct {
	ToolCalls []BatchedToolCall `json:"tool_calls"`
}

// NotificationInput is Notification.
type NotificationInput struct {
	Message          string `json:"message"`
	Title            string `json:"title"`
	NotificationType string `json:"notification_type"`
}

// SubagentStartInput is SubagentStart (agent_id and agent_type are in Common).
type SubagentStartInput struct{}

// SubagentStopInput is SubagentStop.
type SubagentStopInput struct {
	StopHookActive       *bool           `json:"stop_hook_active"`
	AgentTranscriptPath  string          `json:"agent_transcript_path"`
	LastAssistantMessage string          `json:"last_assistant_message"`
	BackgroundTasks      json.RawMessage `json:"background_tasks"`
	SessionCrons         json.RawMessage `json:"session_crons"`
}

// TaskInput is TaskCreated and TaskCompleted.
type TaskInput struct {
	TaskID          string `json:"task_id"`
	TaskSubject     string `json:"task_subject"`
	TaskDescription string `json:"task_description"`
	TeammateName    string `json:"teammate_name"`
	TeamName        string `json:"team_name"`
}

// StopInput is Stop.
type StopInput struct {
	StopHookActive       *bool           `json:"stop_hook_active"`
	LastAssistantMessage string          `json:"last_assistant_message"`
	BackgroundTasks      json.RawMessage `json:"background_tasks"`
	SessionCrons         json.RawMessage `json:"session_crons"`
}

// StopFailureInput is StopFailure.
type StopFailureInput struct {
	Error                string          `json:"error"`
	ErrorDetails         json.RawMessage `json:"error_details"`
	LastAssistantMessage string          `json:"last_assistant_message"`
}

// UnknownFailure is the error kind of a failure the client could not
// classify (a StopFailure's error: Claude Code names a 400 so), and the
// kind of one that names none.
const UnknownFailure = "unknown"

// TeammateIdleInput is TeammateIdle.
type TeammateIdleInput struct {
	TeammateName string `json:"teammate_name"`
	TeamName     string `json:"team_name"`
}

// ConfigChangeInput is ConfigChange.
type ConfigChangeInput struct {
	Source   string `json:"source"`
	FilePath string `json:"file_path"`
}

// CwdChangedInput is CwdChanged.
type CwdChangedInput struct {
	OldCWD string `json:"old_cwd"`
	NewCWD string `json:"new_cwd"`
}

// DirectoryAddedInput is DirectoryAdded.
type DirectoryAddedInput struct {
	Directory string `json:"directory"`
	Source    string `json:"source"`
}

// FileChangedInput is FileChanged.
type FileChangedInput struct {
	FilePath string `json:"file_path"`
	Event    string `json:"event"`
}

// WorktreeCreateInput is WorktreeCreate.
type WorktreeCreateInput struct {
	Name string `json:"name"`
}

// WorktreeRemoveInput is WorktreeRemove.
type WorktreeRemoveInput struct {
	WorktreePath string `json:"worktree_path"`
}

// CompactInput is PreCompact and PostCompact. custom_instructions is null
// on automatic compactions.
type CompactInput struct {
	Trigger            string `json:"trigger"`
	CustomInstructions string `json:"custom_instructions"`
	CompactSummary     string `json:"compact_summary"`
}

// SessionEndInput is SessionEnd (reason is an open enum).
type SessionEndInput struct {
	Reason string `json:"reason"`
}

// ElicitationInput is Elicitation and ElicitationResult.
type ElicitationInput struct {
	MCPServerName   string          `json:"mcp_server_name"`
	Message         string          `json:"message"`
	Mode            string          `json:"mode"`
	URL             string          `json:"url"`
	ElicitationID   string          `json:"elicitation_id"`
	RequestedSchema json.RawMessage `json:"requested_schema"`
	Action          string          `json:"action"`
	Content         json.RawMessage `json:"content"`
}

// InterruptInput is Codex's Interrupt (common fields only).
type InterruptInput struct{}

// StatusLineInput is the statusLine command's payload (spec §2).
type StatusLineInput struct {
	SessionName string `json:"session_name"`
	Version     string `json:"version"`
	Model       struct {
		ID          string `json:"id"`
		DisplayName string `json:"display_name"`
	} `json:"model"`
	Workspace struct {
		CurrentDir string   `json:"current_dir"`
		ProjectDir string   `json:"project_dir"`
		AddedDirs  []string `json:"added_dirs"`
	} `json:"workspace"`
	Cost struct {
		TotalCostUSD       float64 `json:"total_cost_usd"`
		TotalDurationMS    float64 `json:"total_duration_ms"`
		TotalAPIDurationMS float64 `json:"total_api_duration_ms"`
		TotalLinesAdded    float64 `json:"total_lines_added"`
		TotalLinesRemoved  float64 `json:"total_lines_removed"`
	} `json:"cost"`
	ContextWindow struct {
		TotalInputTokens    float64  `json:"total_input_tokens"`
		TotalOutputTokens   float64  `json:"total_output_tokens"`
		ContextWindowSize   float64  `json:"context_window_size"`
		UsedPercentage      *float64 `json:"used_percentage"`
		RemainingPercentage *float64 `json:"remaining_percentage"`
	} `json:"context_window"`
	Exceeds200kTokens bool `json:"exceeds_200k_tokens"`
}

// TranscriptUsageInput is one API response's token usage, read from an
// assistant record of a Claude Code transcript (spec §3.3); session_id,
// agent_id, prompt_id, transcript_path and the response's model are in
// Common. The client writes
// one response as several records sharing MessageID, each repeating the
// usage, and only the last carries the final output_tokens: readers keep,
// per MessageID, the largest count of each kind.
type TranscriptUsageInput struct {
	// UUID is the transcript record's uuid.
	UUID      string `json:"uuid"`
	MessageID string `json:"message_id"`
	RequestID string `json:"request_id"`
	Usage     Usage  `json:"usage"`
}

// Usage is the usage object of an Anthropic Messages API response.
type Usage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheCreation            struct {
		Ephemeral5m int64 `json:"ephemeral_5m_input_tokens"`
		Ephemeral1h int64 `json:"ephemeral_1h_input_tokens"`
	} `json:"cache_creation"`
}

// newEvent returns a new typed view for an event name, or nil for a name
// it does not know. A switch, not a map: a map would be built in every hook
// process's init, which measured ~10 µs.
func newEvent(name string) any {
	switch name {
	case SessionStart:
		return new(SessionStartInput)
	case Setup:
		return new(SetupInput)
	case InstructionsLoaded:
		return new(InstructionsLoadedInput)
	case UserPromptSubmit:
		return new(UserPromptSubmitInput)
	case UserPromptExpansion:
		return new(UserPromptExpansionInput)
	case MessageDisplay:
		return new(MessageDisplayInput)
	case PreToolUse:
		return new(PreToolUseInput)
	case PermissionRequest:
		return new(PermissionRequestInput)
	case PermissionDenied:
		return new(PermissionDeniedInput)
	case PostToolUse:
		return new(PostToolUseInput)
	case PostToolUseFailure:
		return new(PostToolUseFailureInput)
	case PostToolBatch:
		return new(PostToolBatchInput)
	case Notification:
		return new(NotificationInput)
	case SubagentStart:
		return new(SubagentStartInput)
	case SubagentStop:
		return new(SubagentStopInput)
	case TaskCreated, TaskCompleted:
		return new(TaskInput)
	case Stop:
		return new(StopInput)
	case StopFailure:
		return new(StopFailureInput)
	case TeammateIdle:
		return new(TeammateIdleInput)
	case ConfigChange:
		return new(ConfigChangeInput)
	case CwdChanged:
		return new(CwdChangedInput)
	case DirectoryAdded:
		return new(DirectoryAddedInput)
	case FileChanged:
		return new(FileChangedInput)
	case WorktreeCreate:
		return new(WorktreeCreateInput)
	case WorktreeRemove:
		return new(WorktreeRemoveInput)
	case PreCompact, PostCompact:
		return new(CompactInput)
	case SessionEnd:
		return new(SessionEndInput)
	case Elicitation, ElicitationResult:
		return new(ElicitationInput)
	case Interrupt:
		return new(InterruptInput)
	case StatusLine:
		return new(StatusLineInput)
	case TranscriptUsage:
		return new(TranscriptUsageInput)
	}
	return nil
}

// Tool returns the tool-call fields of a tool event (PreToolUse,
// PermissionRequest, PermissionDenied, PostToolUse, PostToolUseFailure), or
// nil for any other event.
func (p *Payload) Tool() *ToolCall { return ToolOf(p.Event) }

// ToolOf is Payload.Tool of a payload whose Event is e, for a reader that
// keeps the typed event apart from its payload.
func ToolOf(e any) *ToolCall {
	switch e := e.(type) {
	case *PreToolUseInput:
		return &e.ToolCall
	case *PermissionRequestInput:
		return &e.ToolCall
	case *PermissionDeniedInput:
		return &e.ToolCall
	case *PostToolUseInput:
		return &e.ToolCall
	case *PostToolUseFailureInput:
		return &e.ToolCall
	}
	return nil
}

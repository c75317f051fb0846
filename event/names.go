package event

import "strings"

// Runtimes that send hook events.
const (
	RuntimeClaudeCode = "claude-code"
	RuntimeCodex      = "codex"
	// RuntimeGoSDK: an agent written in Go whose tools run through package
	// toolhook, forwarded by toolhook.Forwarder.
	RuntimeGoSDK = "go-sdk"
)

// DetectRuntime names the runtime that sent a payload whose
// transcript_path is transcriptPath: Codex when it is a Codex rollout (a
// rollout-*.jsonl file, or a file under a .codex directory), else Claude
// Code. The hook stamps it on the envelope and the policies answer in its
// contract.
func DetectRuntime(transcriptPath string) string {
	base := transcriptPath
	if i := strings.LastIndexByte(base, '/'); i >= 0 {
		base = base[i+1:]
	}
	if strings.Contains(transcriptPath, "/.codex/") || strings.Contains(base, "rollout-") {
		return RuntimeCodex
	}
	return RuntimeClaudeCode
}

// Claude Code hook event names (spec §1.1, 31 events as of Claude Code 2.1.240).
const (
	SessionStart        = "SessionStart"
	Setup               = "Setup"
	InstructionsLoaded  = "InstructionsLoaded"
	UserPromptSubmit    = "UserPromptSubmit"
	UserPromptExpansion = "UserPromptExpansion"
	MessageDisplay      = "MessageDisplay"
	PreToolUse          = "PreToolUse"
	PermissionRequest   = "PermissionRequest"
	PermissionDenied    = "PermissionDenied"
	PostToolUse         = "PostToolUse"
	PostToolUseFailure  = "PostToolUseFailure"
	PostToolBatch       = "PostToolBatch"
	Notification        = "Notification"
	SubagentStart       = "SubagentStart"
	SubagentStop        = "SubagentStop"
	TaskCreated         = "TaskCreated"
	TaskCompleted       = "TaskCompleted"
	Stop                = "Stop"
	StopFailure         = "StopFailure"
	TeammateIdle        = "TeammateIdle"
	ConfigChange        = "ConfigChange"
	CwdChanged          = "CwdChanged"
	DirectoryAdded      = "DirectoryAdded"
	FileChanged         = "FileChanged"
	WorktreeCreate      = "WorktreeCreate"
	WorktreeRemove      = "WorktreeRemove"
	PreCompact          = "PreCompact"
	PostCompact         = "PostCompact"
	SessionEnd          = "SessionEnd"
	Elicitation         = "Elicitation"
	ElicitationResult   = "ElicitationResult"

	// Interrupt is Codex's event for a user interrupting a turn.
	Interrupt = "Interrupt"

	// StatusLine is the name hookwatch gives the statusLine payload, which
	// carries no hook_event_name of its own.
	StatusLine = "StatusLine"

	// TranscriptUsage is the name hookwatch gives one API response's token
	// usage read from a Claude Code transcript (hookwatch import): no hook
	// reports usage.
	TranscriptUsage = "TranscriptUsage"
)

// ClaudeCodeEvents lists every Claude Code hook event in the order of spec §1.1.
var ClaudeCodeEvents = []string{
	SessionStart, Setup, InstructionsLoaded, UserPromptSubmit, UserPromptExpansion,
	MessageDisplay, PreToolUse, PermissionRequest, PermissionDenied, PostToolUse,
	PostToolUseFailure, PostToolBatch, Notification, SubagentStart, SubagentStop,
	TaskCreated, TaskCompleted, Stop, StopFailure, TeammateIdle, ConfigChange,
	CwdChanged, DirectoryAdded, FileChanged, WorktreeCreate, WorktreeRemove,
	PreCompact, PostCompact, SessionEnd, Elicitation, ElicitationResult,
}

// CodexEvents lists the hook events the Codex CLI fires (spec §4, as
// Codex 0.169 has them: StopFailure, which its documentation names, it
// does not), in the order of its documentation: the events hookwatch
// registers for in Codex's hooks file.
var CodexEvents = []string{
	SessionStart, UserPromptSubmit, PreToolUse, PermissionRequest, PostToolUse,
	PreCompact, PostCompact, SubagentStart, SubagentStop, Stop, Interrupt, SessionEnd,
}

package attribution

import (
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/hookwatch/hookwatch/classify"
	"github.com/hookwatch/hookwatch/event"
)

// Lineage kinds: how a session continues another one (Session.Lineage).
const (
	// LineageFork: started with --resume X --fork-session (or /branch). The
	// 2.1.197 client reports SessionStart(resume) under X, then every event
	// under the new id.
	LineageFork = "fork"
	// LineageClear: /clear ended the parent (SessionEnd reason "clear") and
	// started this session (SessionStart source "clear").
	LineageClear = "clear"
	// LineageCompact: a SessionStart(compact) under a new id right after the
	// parent's PreCompact. Clients seen so far keep the id on compaction;
	// this only covers one that would not.
	LineageCompact = "compact"
	// LineageSubagent: a virtual session (VirtualSession), one subagent
	// shown as a child session of its own.
	LineageSubagent = "subagent"
)

// Agent roles (Agent.Role).
const (
	RoleMain       = "main"
	RoleSubagent   = "subagent"
	RoleCompaction = "compaction" // agent_type "" (the internal compact agent)
)

// TypeName names an agent by its kind, as the views and the exports label
// it: RoleMain for the main agent (agentID ""), RoleCompaction for the
// client's compaction agent (agent_type ""), else its agent_type, or
// unknown, the caller's word, when no event named the type. A call is named
// by its agent's AgentID and AgentType.
func TypeName(agentID string, agentType *string, unknown string) string {
	switch {
	case agentID == "":
		return RoleMain
	case agentType == nil:
		return unknown
	case *agentType == "":
		return RoleCompaction
	}
	return *agentType
}

// How a subagent's parent was found (Agent.ResolvedBy), most precise first.
const (
	// ResolvedBySidecar: the envelope's Subagent meta (the client's
	// agent-<id>.meta.json; for event.RuntimeGoSDK, the SDK's own
	// linkage) names the spawning tool_use_id.
	ResolvedBySidecar = "sidecar"
	// ResolvedByToolResponse: the spawning call's PostToolUse tool_response
	// names the agent (agentId; Codex: agent_id).
	ResolvedByToolResponse = "tool_response"
	// ResolvedBySubagentType: the oldest unclaimed delegation call of the
	// session, made before the agent appeared, whose subagent_type equals
	// the agent's type.
	ResolvedBySubagentType = "subagent_type"
	// ResolvedByNone: nothing named the spawning call; the parent is taken
	// to be the main agent.
	ResolvedByNone = "none"
)

// Session statuses (Session.Status).
const (
	SessionRunning = "running"
	SessionEnded   = "ended"
	// SessionFailed: the main agent's latest turn ended with StopFailure
	// (an API error, a rate limit) and no prompt came after it.
	SessionFailed = "failed"
	// SessionBackground: the main agent's latest turn ended with a Stop
	// whose background_tasks list running subagents, and one of them has
	// not stopped yet: the session waits on background work, it is
	// neither idle nor ended. A prompt, StopFailure or a new run of the
	// main agent ends the wait; a <task-notification> prompt does too,
	// until the main agent's next Stop says what still runs.
	SessionBackground = "background"
)

// ModelVersion names what this package derives from a set of events. A
// store keeps it beside each session's model (store.SessionModel.Version),
// and a collector derives again, when it starts, every model of an older
// version, as it does a model older than its session's events: a model
// stored before a change to what is derived (a new field, another id for
// a virtual session) is not served as it was. Raise it with any change to
// what Build returns for the same events; TestModelVersion holds it to the
// golden models of the real captures.
const ModelVersion = 11

// VirtualPrefix starts the id of a virtual session, which addresses one
// subagent like a session: VirtualPrefix + session_id + "--" + agent_id
// (Agent.VirtualSessionID).
const VirtualPrefix = "sub--"

// virtualID is the virtual session id of agent agentID of session; "" for
// the main agent. The session is in it because an agent's id is its
// session's alone: Claude Code's are random, but the Go SDK's are the
// program's own names (worker-1 in every session).
func virtualID(session, agentID string) string {
	if agentID == "" {
		return ""
	}
	return VirtualPrefix + session + "--" + agentID
}

// VirtualRef is what a virtual session id may address: the subagent
// AgentID of session SessionID, or, with SessionID "", the subagent
// AgentID of whichever session has one (the form of the ids made before
// the session was in them, sub--<agent_id>).
type VirtualRef struct{ SessionID, AgentID string }

// maxVirtualRefs bounds the readings of one virtual session id.
const maxVirtualRefs = 8

// VirtualRefs returns what a virtual session id may address, in the order
// to try them: each split of what follows VirtualPrefix at a "--" (a
// session's or an agent's id may hold one itself), then the whole as an
// agent's id alone. ok is false when id is not a virtual session id.
func VirtualRefs(id string) (refs []VirtualRef, ok bool) {
	rest, ok := strings.CutPrefix(id, VirtualPrefix)
	if !ok || rest == "" {
		return nil, false
	}
	for i := 0; len(refs) < maxVirtualRefs-1; {
		j := strings.Index(rest[i:], "--")
		if j < 0 {
			break
		}
		at := i + j
		if at > 0 && at+2 < len(rest) {
			refs = append(refs, VirtualRef{SessionID: rest[:at], AgentID: rest[at+2:]})
		}
		i = at + 1
	}
	return append(refs, VirtualRef{AgentID: rest}), true
}

// Tool call statuses (ToolCall.Status).
const (
	StatusPending     = "pending"     // PreToolUse seen, no outcome yet
	StatusOK          = "ok"          // PostToolUse (or a non-error PostToolBatch result)
	StatusError       = "error"       // PostToolUseFailure, or a <tool_use_error> result
	StatusInterrupted = "interrupted" // PostToolUseFailure is_interrupt, or Codex Interrupt
	StatusDenied      = "denied"      // PermissionDenied, an enforced policy deny, or the client's denial (deniedText)
	StatusRejected    = "rejected"    // only in PostToolBatch as <tool_use_error>, no PreToolUse
)

// callStatuses are every ToolCall.Status, pending first.
var callStatuses = [...]string{StatusPending, StatusOK, StatusError, StatusInterrupted, StatusDenied, StatusRejected}

// Statuses returns every ToolCall.Status, pending first: what a filter by
// status may name. The slice is the caller's.
func Statuses() []string { return slices.Clone(callStatuses[:]) }

// Failed reports whether a call of this status failed: it ran, or began
// to, and ended in an error or an interruption. Denied and rejected calls
// never ran; they are counted apart (Counts.Denials, Counts.Rejected).
// Every count of failures in the model, and ToolCall.Failed, is this.
func Failed(status string) bool { return status == StatusError || status == StatusInterrupted }

// Result is everything derived from a set of envelopes.
type Result struct {
	// Sessions are ordered by started_at, then session_id.
	Sessions []*Session `json:"sessions"`
	// Aliases maps a throwaway session id (seen only on InstructionsLoaded
	// and the like before a continue's SessionStart switched ids) to the
	// session its events were folded into.
	Aliases map[string]string `json:"aliases,omitempty"`
	// Skipped counts envelopes that could not be attributed: payload not a
	// JSON object, or no session_id; and the usage envelopes of model
	// claudecode.SyntheticModel earlier imports made, which are no API
	// response.
	Skipped int `json:"skipped"`
}

// Session is one agent session (one session_id), with its agents and tool
// calls.
type Session struct {
	SessionID string `json:"session_id"`
	Runtime   string `json:"runtime,omitempty"`
	// CWD is the first working directory the main agent reported.
	CWD string `json:"cwd,omitempty"`
	// Project is the directory name Claude Code keeps the transcript under
	// (~/.claude/projects/<project>/): taken from transcript_path when it
	// has that layout, else claudecode.Slug(cwd).
	Project string `json:"project,omitempty"`
	// Title is the first prompt of the main agent, whitespace collapsed and
	// cut to about 100 characters (else the client's session_title).
	Title string `json:"title,omitempty"`
	// Model is the last model the session reported (SessionStart, Codex
	// events, statusLine).
	Model string `json:"model,omitempty"`
	// PermissionMode is the last permission_mode of the main agent.
	PermissionMode string `json:"permission_mode,omitempty"`
	// TranscriptPath is the main transcript (first one reported by the main
	// agent).
	TranscriptPath string `json:"transcript_path,omitempty"`
	// ClientVersion is the client version from a statusLine payload.
	ClientVersion string `json:"client_version,omitempty"`

	StartedAt   time.Time `json:"started_at"`
	LastEventAt time.Time `json:"last_event_at"`
	// EndedAt is set when the session's latest run ended with SessionEnd.
	EndedAt   *time.Time `json:"ended_at"`
	EndReason string     `json:"end_reason,omitempty"`
	// EndSources are what reported the session's ends (its SessionEnd
	// events): its hooks, a Codex rollout that recorded `codex exec`
	// ending with its turn, or both — the rollout's end then copies the
	// hook's (Sources.Copy), and a view shows one.
	EndSources Sources `json:"end_sources,omitempty"`
	// ForkSources are what reported the session's start as a fork (its
	// SessionStart with source fork): its hook, a Codex rollout whose
	// first record names the session it was forked from, a Claude Code
	// transcript that starts with copies of its parent's records, or the
	// hook and the file — the file's start then copies the hook's
	// (Sources.Copy), and a view shows one. A 2.1.197 client reports a
	// fork's start under the parent's id, as a resume: no hook reports it
	// as the fork's.
	ForkSources Sources `json:"fork_sources,omitempty"`
	// Status is SessionRunning, SessionEnded, SessionFailed or
	// SessionBackground.
	Status string `json:"status"`
	// Effort is the latest effort level the main agent reported.
	Effort string `json:"effort,omitempty"`
	// Resume is what the latest run that reported them (a resume or a fork
	// on clients from 2.1.332) began with: its Run.Resume.
	Resume *ResumeStats `json:"resume,omitempty"`

	// ParentSessionID is the session this one continues ("" for none or
	// unknown); Lineage says how (LineageFork, LineageClear,
	// LineageCompact; "" for a root session).
	ParentSessionID string `json:"parent_session_id"`
	Lineage         string `json:"lineage"`
	// ChildSessionIDs are the sessions whose parent is this one, in order.
	ChildSessionIDs []string `json:"child_session_ids,omitempty"`
	// AliasSessionIDs are throwaway ids whose events were folded in here.
	AliasSessionIDs []string `json:"alias_session_ids,omitempty"`
	// Phantom marks a session id seen only on pre-start events
	// (InstructionsLoaded, Setup, ConfigChange) that no SessionStart
	// followed: most likely a continue's throwaway id whose continued
	// session is not in the input.
	Phantom bool `json:"phantom,omitempty"`

	// Runs are the client processes that ran this session: one per
	// SessionStart other than compact (startup, resume, clear, fork), plus
	// one for events that came without a SessionStart of their own.
	Runs []Run `json:"runs"`
	// Compactions are PreCompact … PostCompact spans.
	Compactions []Compaction `json:"compactions,omitempty"`
	Counts      Counts       `json:"counts"`
	// Tools are the session's calls per tool name, most used first, then
	// by name: at most 200 names, the calls of any others summed in one
	// row named OtherNames. Nil in a virtual session (VirtualSession).
	Tools []ToolCounts `json:"tools,omitempty"`
	// Usage is the tokens and cost of all the session's agents, and
	// Turns the same per prompt, in order; nil and empty until a
	// transcript's usage is imported.
	Usage *Usage      `json:"usage,omitempty"`
	Turns []TurnUsage `json:"turns,omitempty"`
	// SharedPrompts are the prompts that more than one source reported —
	// a hook and a transcript or rollout —: the main agent's (by prompt
	// id) and the subagents' (by agent and turn: a Codex subagent's, its
	// parent's message), with what reported each, in the order they were
	// first reported twice: a prompt counts once (Counts.Prompts counts
	// the main agent's), and Sources.Copy tells the events that copy the
	// hook's. Prompts one source alone reported are left out.
	SharedPrompts []PromptSources `json:"shared_prompts,omitempty"`
	// MatchedCalls are the calls whose hook events carried no tool_use_id
	// and which a client's file (a Codex rollout) reported with its id,
	// matched by content, in the order they were matched: what ties those
	// events to their call (CallOf), as a shared id ties the others.
	MatchedCalls []MatchedCall `json:"matched_calls,omitempty"`
	// Shape is how the session split its work among agents (single,
	// chain, fan-out, orchestrator-workers); nil only in a model stored
	// before shapes were derived.
	Shape *Shape `json:"shape,omitempty"`

	// Agents lists the main agent first, then subagents by started_at and
	// agent_id. ToolCalls are ordered by started_at, then tool_use_id. Both
	// are left out of Summary.
	Agents    []*Agent    `json:"agents,omitempty"`
	ToolCalls []*ToolCall `json:"tool_calls,omitempty"`
}

// Live reports whether the session still works: running, or waiting on
// background work. The stall sweep and the live-session counts read it.
func (s *Session) Live() bool {
	return s.Status == SessionRunning || s.Status == SessionBackground
}

// Summary returns a copy of s without its agents and tool calls, for
// session listings.
func (s *Session) Summary() *Session {
	c := *s
	c.Agents, c.ToolCalls = nil, nil
	return &c
}

// Run is one client process's stretch of a session.
type Run struct {
	// Source is SessionStart's source (startup, resume, clear, fork); for a
	// run without a SessionStart of its own it is the session's lineage
	// kind, or "".
	Source    string     `json:"source"`
	StartedAt time.Time  `json:"started_at"`
	EndedAt   *time.Time `json:"ended_at"`
	EndReason string     `json:"end_reason,omitempty"`
	// ForkedTo is the session that took over this run's events (a fork:
	// the SessionStart came under this id, everything after under the new).
	ForkedTo string `json:"forked_to,omitempty"`
	// AliasSessionID is the throwaway id whose pre-start events (a continue,
	// -c) were folded into this run.
	AliasSessionID string `json:"alias_session_id,omitempty"`
	// Resume holds the figures the run's SessionStart reported, if any.
	Resume *ResumeStats `json:"resume,omitempty"`
}

// ResumeStats are the figures a SessionStart of a resume or a fork reports
// (clients from 2.1.332): a point of the context curve without a status
// line, and what resuming costs when the prompt cache has expired. A figure
// the event lacks is null.
type ResumeStats struct {
	At time.Time `json:"at"`
	// ContextTokens is the size of the context the run resumed with.
	ContextTokens *int64 `json:"context_tokens"`
	// SecondsSinceLastResponse is how long the session had been idle.
	SecondsSinceLastResponse *float64 `json:"seconds_since_last_response"`
	// PromptCacheLikelyExpired: the client expects the context to be
	// written to the prompt cache again, at EstimatedCacheWriteUSD.
	PromptCacheLikelyExpired *bool    `json:"prompt_cache_likely_expired"`
	EstimatedCacheWriteUSD   *float64 `json:"estimated_cache_write_usd"`
}

// Compaction is one compaction of the context.
type Compaction struct {
	Trigger   string     `json:"trigger,omitempty"`
	StartedAt time.Time  `json:"started_at"`
	EndedAt   *time.Time `json:"ended_at"`
	// AgentIDs are the compaction agents' ids (a SubagentStop with
	// agent_type "" while the compaction ran), in order: clients from
	// 2.1.332 run two in one compaction. AgentID is the first of them,
	// kept for readers of the single id.
	AgentID  string   `json:"agent_id,omitempty"`
	AgentIDs []string `json:"agent_ids,omitempty"`
}

// Counts are a session's totals.
type Counts struct {
	Events int `json:"events"`
	// Prompts counts the user's prompts to the main agent, not the
	// <task-notification> prompts the client submits itself, counted in
	// TaskNotifications.
	Prompts           int `json:"prompts"`
	TaskNotifications int `json:"task_notifications"`
	// Agents counts every agent: the main agent, its subagents and the
	// client's compaction agents. Subagents counts those of RoleSubagent,
	// the agents a call spawned (Shape.Subagents, the same).
	Agents    int `json:"agents"`
	Subagents int `json:"subagents"`
	ToolCalls int `json:"tool_calls"`
	// Failures are calls with status error or interrupted (Failed).
	Failures int `json:"failures"`
	// Denials are calls with status denied.
	Denials            int `json:"denials"`
	Rejected           int `json:"rejected"`
	PermissionRequests int `json:"permission_requests"`
	Compactions        int `json:"compactions"`
}

// ToolCounts are a session's calls of one tool: all of them (Calls), and
// of those the failed (Failed), denied and rejected, as Counts counts them.
type ToolCounts struct {
	ToolName string `json:"tool_name"`
	Calls    int    `json:"calls"`
	Failures int    `json:"failures"`
	Denials  int    `json:"denials"`
	Rejected int    `json:"rejected"`
}

// Agent is the main agent or one subagent of a session.
type Agent struct {
	// AgentID is "" for the main agent.
	AgentID string `json:"agent_id"`
	// AgentType is kept exactly: "" is the compaction agent, null means no
	// event gave a type.
	AgentType *string `json:"agent_type"`
	// ParentAgentID is null for the main agent, "" when the main agent
	// spawned this one.
	ParentAgentID *string `json:"parent_agent_id"`
	// SpawnToolUseID is the Agent/Task call that spawned this agent ("" for
	// the main agent, the compaction agent, or when unknown).
	SpawnToolUseID string `json:"spawn_tool_use_id"`
	// Depth is 0 for the main agent, parent's depth + 1 otherwise.
	Depth     int        `json:"depth"`
	StartedAt time.Time  `json:"started_at"`
	StoppedAt *time.Time `json:"stopped_at"`
	// LastEventAt is the time of the agent's latest event.
	LastEventAt time.Time `json:"last_event_at"`

	Role       string `json:"role"`
	ResolvedBy string `json:"resolved_by,omitempty"`
	// Description is the spawning call's description (or the sidecar's).
	Description string `json:"description,omitempty"`
	// Nickname is the name the client shows for a subagent (Codex's
	// agent_nickname, "Maxwell"), as its spawning call's response gives
	// it, else as its own rollout's events do (a response that names
	// none, a subagent known from its rollout alone); "" when the client
	// names none (Claude Code).
	Nickname string `json:"nickname,omitempty"`
	// TranscriptPath is the agent's own transcript: SubagentStop's
	// agent_transcript_path, else the path the client uses for it.
	TranscriptPath string `json:"transcript_path,omitempty"`
	// LastMessage is the last assistant message (SubagentStop, or the
	// error text of a subagent's StopFailure; Stop for the main agent).
	LastMessage string `json:"last_message,omitempty"`
	// VirtualSessionID is "sub--<session_id>--<agent_id>" for subagents
	// (VirtualPrefix), for viewers that show each subagent as a child
	// session.
	VirtualSessionID string `json:"virtual_session_id,omitempty"`
	// Background marks a subagent that ran on after its spawning call
	// returned (the call's response said async_launched, a
	// background_tasks list or a task notification named it): the
	// call's end is not the agent's.
	Background bool `json:"background,omitempty"`
	// NotifiedAt and NotificationStatus are the latest
	// <task-notification> the client sent about the agent (its status:
	// completed, failed, …); nil and "" before any.
	NotifiedAt         *time.Time `json:"notified_at,omitempty"`
	NotificationStatus string     `json:"notification_status,omitempty"`
	// Traceparent is the agent's trace context (W3C) on the first of its
	// events that carried one: the client's own trace, when its telemetry
	// is on.
	Traceparent string `json:"traceparent,omitempty"`
	// StartSources and StopSources say what reported the subagent's start
	// (SubagentStart) and its stop (SubagentStop, or StopFailure): hooks, its
	// transcript, or both (Sources.Copy tells an event that copies a
	// hook's).
	StartSources Sources `json:"start_sources,omitempty"`
	StopSources  Sources `json:"stop_sources,omitempty"`
	// StopError is, for a subagent whose turn ended with StopFailure (its
	// model request failed: an API error the client's retries did not
	// get past), the StopFailure's error kind (invalid_request,
	// rate_limit, …; event.UnknownFailure when the event named none), "" for any
	// other agent. Such a subagent is stopped at its StopFailure, with
	// LastMessage the error text the client wrote ("API Error: 400 …"):
	// no SubagentStop follows. The main agent's failure is its session's
	// Status (SessionFailed). A SubagentStop that becomes the agent's stop
	// (a later one) clears it.
	StopError string `json:"stop_error,omitempty"`

	Events int `json:"events"`
	// ToolCount counts the agent's own calls (not its subagents'); of
	// them, Failures have status error or interrupted, Denials denied and
	// Rejected rejected. SubtreeCounts adds them up over a subtree.
	ToolCount int `json:"tool_count"`
	Failures  int `json:"failures"`
	Denials   int `json:"denials"`
	Rejected  int `json:"rejected"`
	// Usage is the agent's own tokens and cost (not its subagents'); nil
	// until a transcript's usage is imported.
	Usage *Usage `json:"usage,omitempty"`
	// Model is the one model the agent ran: for the main agent the
	// session's Model; for a subagent the last model its own hook events
	// named (Codex names the thread's on each); else the one model its
	// responses came from (Usage.Models: Claude Code's hooks name no
	// subagent's model, and a subagent often runs another than the main
	// agent, Explore a smaller one). "" when none of these names one: a
	// subagent whose responses were not read yet, or came from several
	// models. The session's model is never a subagent's: it is what the
	// main agent asked for, not what a subagent was started with.
	Model string `json:"model,omitempty"`
}

// ToolCall is one tool call, keyed by tool_use_id within its session.
//
// The fields most calls leave empty are in its CallDetail, which is never
// nil on a call a Group or Build hands out, nor on one json.Unmarshal
// decodes from a call's document (see CallDetail.Decision): read them as
// the call's own (c.Error, c.Decisions). A call with none of them points
// to one empty CallDetail all such calls share, one more reason a call
// handed out must not be changed. The model keeps a ToolCall for every
// call of every session it holds: without room for those fields it is
// ~200 bytes smaller, and at 512 bytes or less the garbage collector
// marks it with its span's other objects rather than pointer by pointer.
type ToolCall struct {
	// ToolUseID is the client's id; for clients that send none it is
	// "nouse:<envelope id of the first event>" and SyntheticID is set.
	ToolUseID   string `json:"tool_use_id"`
	SyntheticID bool   `json:"synthetic_id,omitempty"`
	// Failed is Failed(Status): what a viewer counts as a failure. It
	// sits beside SyntheticID, in the padding before SessionID.
	Failed bool `json:"failed,omitempty"`
	// StartSources and EndSources say what reported the call's start
	// (PreToolUse) and its end (PostToolUse, PostToolUseFailure,
	// PermissionDenied): hooks, the client's files, or both (Sources.Copy
	// tells an event that copies a hook's). One byte each, in the same
	// padding as the flags.
	StartSources Sources         `json:"start_sources,omitempty"`
	EndSources   Sources         `json:"end_sources,omitempty"`
	SessionID    string          `json:"session_id"`
	AgentID      string          `json:"agent_id"`
	AgentType    *string         `json:"agent_type"`
	ToolName     string          `json:"tool_name"`
	Family       string          `json:"family"`
	Status       string          `json:"status"`
	StartedAt    time.Time       `json:"started_at"`
	EndedAt      *time.Time      `json:"ended_at"`
	DurationMS   *int64          `json:"duration_ms"`
	Input        json.RawMessage `json:"input,omitempty"`
	PromptID     string          `json:"prompt_id,omitempty"`
	// Meta is the call's meaning (subtype, effect, files read and
	// written, the analysis of a shell command), computed once per input
	// by package classify.
	classify.Meta

	// ParentToolUseID is the call that spawned this call's agent ("" for
	// the main agent).
	ParentToolUseID string `json:"parent_tool_use_id"`
	// Depth is the depth of the calling agent.
	Depth int `json:"depth"`

	*CallDetail
}

// CallDetail is the part of a ToolCall that most calls leave empty: an
// error, an exit code, the files a patch or a file tool touched, a
// spawned agent, a notification, policy decisions, a permission request
// or denial, a trace context.
type CallDetail struct {
	Error string `json:"error,omitempty"`
	// ExitCode is the exit code of a command, where the hook could read
	// it (Codex: from the rollout, event.Envelope.ExitCode); a command
	// that exits non-zero has status error.
	ExitCode *int `json:"exit_code,omitempty"`
	// Files are the files a patch touches (Codex's apply_patch), read
	// from the patch's headers, which is all of it that is stored unless
	// the capture is full.
	Files []event.PatchFile `json:"files,omitempty"`
	// FileStates are the states the hook recorded, on the call's
	// PostToolUse, of the files it read or wrote (event.Envelope.Files):
	// what the stale-context guard compares the files on disk with.
	FileStates []event.FileState `json:"file_states,omitempty"`
	// SpawnedAgentID is, on a delegation call, the subagent it spawned.
	SpawnedAgentID string `json:"spawned_agent_id,omitempty"`
	// NotifiedAt and NotificationStatus are, on a call that launched a
	// background subagent, the latest <task-notification> naming the call.
	NotifiedAt         *time.Time `json:"notified_at,omitempty"`
	NotificationStatus string     `json:"notification_status,omitempty"`
	// Decision is the policy decision (decision.Audit JSON) that counted
	// most: an enforced deny, else the PreToolUse one, else the first.
	// A call's document always has it (null when none), which gives a
	// call json.Unmarshal decodes from one its CallDetail.
	Decision json.RawMessage `json:"decision"`
	// Decisions are every decision recorded on the call's events.
	Decisions         []DecisionRecord   `json:"decisions,omitempty"`
	PermissionRequest *PermissionRequest `json:"permission_request,omitempty"`
	PermissionDenied  *PermissionDenied  `json:"permission_denied,omitempty"`
	// Traceparent is the client's trace context (W3C) on the first event of
	// the call that carried one.
	Traceparent string `json:"traceparent,omitempty"`

	movedFrom []time.Time // see ToolCall.MovedFrom
}

// noDetail is the CallDetail of every call that has none; nothing changes
// it.
var noDetail CallDetail

// empty reports whether d sets none of its fields (TestCallDetailEmpty
// holds it to every field).
func (d *CallDetail) empty() bool {
	return d.Error == "" && d.ExitCode == nil && d.Files == nil && d.FileStates == nil && d.SpawnedAgentID == "" &&
		d.NotifiedAt == nil && d.NotificationStatus == "" && d.Decision == nil && d.Decisions == nil &&
		d.PermissionRequest == nil && d.PermissionDenied == nil && d.Traceparent == "" && d.movedFrom == nil
}

// detailOf returns what a call's CallDetail points to for the fields d
// sets: the shared empty one when d sets none, else a copy of its own.
func detailOf(d *CallDetail) *CallDetail {
	if d.empty() {
		return &noDetail
	}
	own := *d
	return &own
}

// MovedFrom returns the starts the call had before its start now, which a
// PreToolUse moved to its own time: the time of the call's first event,
// when that was another event of the call (a rollout's record of it, or a
// PostToolUse read first), and that of an earlier PreToolUse the hook's
// replaced. Nearly always nil. A store that keys calls by their start
// deletes the call's rows at those (store.ToolCallRow.MovedFrom). They
// follow from the session's events alone, as the rest of the model does:
// a model built again from them names the same ones. The slice must not be
// changed.
func (c *ToolCall) MovedFrom() []time.Time {
	if c.CallDetail == nil {
		return nil
	}
	return c.movedFrom
}

// Finished reports whether the call has an outcome: any status but
// StatusPending. A finished call's status can still change as later
// evidence arrives (a denial outranks a result).
func (c *ToolCall) Finished() bool { return c.Status != StatusPending }

// DecisionRecord is a policy decision the hook answered one event of a call
// with.
type DecisionRecord struct {
	Event    string          `json:"event"`
	At       time.Time       `json:"at"`
	Decision json.RawMessage `json:"decision"`
}

// PermissionRequest is the permission dialog a call raised. The event has no
// tool_use_id: it is matched to the latest open call of the same agent with
// the same tool and the same input, or an input the request's extends with
// more fields (MatchedBy "input"), else the same tool ("tool").
type PermissionRequest struct {
	At        time.Time       `json:"at"`
	MatchedBy string          `json:"matched_by"`
	Decision  json.RawMessage `json:"decision,omitempty"`
}

// PermissionDenied is the client's refusal of a call (auto mode classifier).
type PermissionDenied struct {
	At     time.Time `json:"at"`
	Reason string    `json:"reason,omitempty"`
}

// Session returns the session with the given id, following Aliases, or nil.
func (r *Result) Session(id string) *Session {
	if to, ok := r.Aliases[id]; ok {
		id = to
	}
	for _, s := range r.Sessions {
		if s.SessionID == id {
			return s
		}
	}
	return nil
}

// Link is one edge of the lineage between sessions.
type Link struct {
	SessionID       string `json:"session_id"`
	ParentSessionID string `json:"parent_session_id"`
	Lineage         string `json:"lineage"`
}

// Lineage returns the edges of the lineage tree that holds session id: from
// its root down, breadth first, children in order. A session without
// lineage yields no edges.
func (r *Result) Lineage(id string) []Link {
	s := r.Session(id)
	if s == nil {
		return nil
	}
	byID := make(map[string]*Session, len(r.Sessions))
	for _, x := range r.Sessions {
		byID[x.SessionID] = x
	}
	// Walk up; parents always start before their children, so this ends,
	// but bound it anyway against a corrupt Result.
	root := s
	for range len(r.Sessions) {
		p := byID[root.ParentSessionID]
		if p == nil {
			break
		}
		root = p
	}
	var links []Link
	if root.Lineage != "" { // a fork whose parent is unknown
		links = append(links, Link{root.SessionID, root.ParentSessionID, root.Lineage})
	}
	queue := []*Session{root}
	seen := map[string]bool{root.SessionID: true}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, c := range cur.ChildSessionIDs {
			cs := byID[c]
			if cs == nil || seen[c] {
				continue
			}
			seen[c] = true
			links = append(links, Link{cs.SessionID, cs.ParentSessionID, cs.Lineage})
			queue = append(queue, cs)
		}
	}
	return links
}

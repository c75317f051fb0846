package toolhook

import "context"

// scope is the attribution a context carries: which session, task, phase and
// agent the calls made under it belong to. Scopes are immutable; every With*
// function copies the innermost one.
type scope struct {
	sessionID       string
	taskID          string
	phase           string
	agentID         string
	agentType       string
	parentToolUseID string
	depth           int
	// spawnCall is the call the agent was spawned in (the call of
	// parentToolUseID), nil for the main agent or when it is not known.
	spawnCall *Call
}

type scopeKey struct{}

// callKey marks the context a tool runs in with its own call, so that an agent
// spawned from inside the tool knows which call spawned it.
type callKey struct{}

func scopeOf(ctx context.Context) *scope {
	if s, ok := ctx.Value(scopeKey{}).(*scope); ok {
		return s
	}
	return &rootScope
}

var rootScope scope

func withScope(ctx context.Context, edit func(s *scope)) context.Context {
	s := *scopeOf(ctx)
	edit(&s)
	return context.WithValue(ctx, scopeKey{}, &s)
}

// WithSession returns a context whose calls belong to the session id (the
// audit trail's session_id). Without one, calls carry the Executor's
// SessionID.
func WithSession(ctx context.Context, id string) context.Context {
	return withScope(ctx, func(s *scope) { s.sessionID = id })
}

// WithTask returns a context whose calls belong to the task id (recorded as
// the call's prompt id: the turn or unit of work it served). Nested tasks
// replace the outer one.
func WithTask(ctx context.Context, id string) context.Context {
	return withScope(ctx, func(s *scope) { s.taskID = id })
}

// WithPhase returns a context whose calls are made in the named phase
// ("plan", "execute", …). Hooks registered with InPhase see only calls of
// their phase.
func WithPhase(ctx context.Context, phase string) context.Context {
	return withScope(ctx, func(s *scope) { s.phase = phase })
}

// SpawnAgent returns the context of a sub-agent (agentID, of type agentType)
// started from ctx. Its depth is one more than the spawning agent's, and its
// parent tool_use_id is the call ctx runs in: call SpawnAgent with the
// context a tool received, so that the agent tree shows which call spawned
// the agent. Called outside any tool, the parent is the spawning agent's own
// parent. Session, task and phase are inherited.
//
// The sub-agent starts now: the Recorder of the Executor that runs its
// parent call records its start (an AgentEvent, Claude Code's
// SubagentStart), and the end of that call records its stop (SubagentStop):
// the agent is taken to run inside the call it was spawned in. With no
// parent call (SpawnAgent from the main agent's context, outside any tool)
// it has neither, and the collector shows it from its calls alone.
//
// agentType is recorded as Claude Code sends a sub-agent's agent_type, ""
// included — and an agent_type "" is how Claude Code names its compaction
// agent, which hookwatch keeps apart from the others: give every other
// sub-agent a type. An agentID of "" is the main agent's, not a sub-agent.
func SpawnAgent(ctx context.Context, agentID, agentType string) context.Context {
	outer := scopeOf(ctx)
	parent, spawn := outer.parentToolUseID, outer.spawnCall
	if c, ok := ctx.Value(callKey{}).(*Call); ok {
		parent, spawn = c.ToolUseID, c
	}
	ctx = withScope(ctx, func(s *scope) {
		s.agentID = agentID
		s.agentType = agentType
		s.parentToolUseID = parent
		s.depth++
		s.spawnCall = spawn
	})
	if spawn != nil && spawn.x != nil && agentID != "" {
		spawn.x.startAgent(spawn, scopeOf(ctx))
	}
	return ctx
}

// CurrentCall returns the call whose tool ctx runs in, or nil outside any
// tool. The Call is the executor's: read it, do not keep or change it.
func CurrentCall(ctx context.Context) *Call {
	c, _ := ctx.Value(callKey{}).(*Call)
	return c
}

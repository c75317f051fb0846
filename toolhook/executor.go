package toolhook

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/decision"
	"github.com/hookwatch/hookwatch/event"
)

// Tool is a tool an agent can call: it gets the (possibly rewritten) input
// and returns its output. ctx carries the call (CurrentCall) and its
// attribution, so a tool that starts a sub-agent passes it to SpawnAgent.
type Tool func(ctx context.Context, input map[string]any) (any, error)

// Call is one tool call as the hooks see it and as it is recorded. The
// Executor fills it; hooks and Recorders read it.
type Call struct {
	// Attribution, from the context's scopes (see WithTask, WithPhase,
	// SpawnAgent) and the Executor.
	SessionID       string
	ToolName        string
	ToolUseID       string
	TaskID          string
	Phase           string
	AgentID         string // "" for the main agent
	AgentType       string
	ParentToolUseID string // the call that spawned the agent ("" for the main agent)
	Depth           int    // the agent's depth (0 main)
	// Cwd, PermissionMode and TranscriptPath are the session's, from the
	// Executor (Dir, PermissionMode, TranscriptPath): its payloads' cwd,
	// permission_mode and transcript_path, which policy rules read and
	// which are recorded and forwarded with the call.
	Cwd            string
	PermissionMode string
	TranscriptPath string

	// Input is the tool input, as rewritten by the pre hooks so far.
	Input map[string]any
	// Decision is the merge of the pre hooks' decisions (decision.Merge),
	// nil when no hook had an opinion.
	Decision *decision.Decision
	// Metadata is what the hooks attached, merged in hook order. It is
	// recorded with the call (the payloads' "metadata" member, through the
	// privacy rules), as Phase is (their "phase" member).
	Metadata map[string]any

	// Outcome, set once the call ends.
	Output   any
	Err      error
	Status   string // attribution's statuses: ok, error, denied, interrupted
	Start    time.Time
	Duration time.Duration

	idbuf [len(idPrefix) + 16]byte
	// spawning is 1 once an agent was spawned in the call (atomic: a
	// plain word, so that a Call stays a value programs may copy): a call
	// without one ends without taking x.agentsMu, which the calls of
	// parallel agents would contend for.
	spawning uint32
	// x is the Executor that runs the call, whose Recorder records the
	// sub-agents spawned in it; spawned are their starts (SpawnAgent), the
	// agents whose stops the call's end records, guarded by x.agentsMu.
	x       *Executor
	spawned []*AgentEvent
}

// AbortError is returned by a call a hook aborted.
type AbortError struct {
	// Tool is the called tool's name, Reason the aborting hook's.
	Tool   string
	Reason string
	// Post is true when a post hook aborted (the tool had run).
	Post bool
}

// Error names the tool and the hook's reason.
func (e *AbortError) Error() string {
	return fmt.Sprintf("tool %s aborted by a hook: %s", e.Tool, e.Reason)
}

// DeniedError is returned by a call the pre hooks' merged decision did not
// let through: a deny, a defer (the caller decides later, outside this call)
// or an ask that Executor.Approve did not approve.
type DeniedError struct {
	// Tool is the called tool's name; Verdict the merged verdict (Deny,
	// Defer or Ask); Reason its reasons, joined as decision.Reason joins
	// them (what Claude Code would show the model).
	Tool    string
	Verdict decision.Verdict
	Reason  string
}

// Error names the tool, the verdict and its reasons.
func (e *DeniedError) Error() string {
	if e.Reason == "" {
		return fmt.Sprintf("tool %s: %s", e.Tool, e.Verdict)
	}
	return fmt.Sprintf("tool %s: %s: %s", e.Tool, e.Verdict, e.Reason)
}

// ErrUnknownTool is returned (wrapped) by Executor.Call for a tool name not
// in Executor.Tools.
var ErrUnknownTool = errors.New("unknown tool")

// Recorder receives every finished call, once, in the goroutine that made
// it. It may keep c (the Executor no longer changes it) and must not block
// for long: it is on the call's path.
type Recorder interface {
	Record(c *Call)
}

// SessionEnd is the end of a session, as Executor.EndSession reports it:
// Claude Code's SessionEnd event.
type SessionEnd struct {
	// SessionID is the session that ended; Reason is why, in Claude
	// Code's words (EndSession).
	SessionID string
	Reason    string
	// Cwd and TranscriptPath are the session's, as on its calls
	// (Call.Cwd, Call.TranscriptPath).
	Cwd            string
	TranscriptPath string
	// At is when the session ended.
	At time.Time
}

// SessionRecorder is a Recorder that also records the end of a session
// (Executor.EndSession). The Forwarder, the AuditRecorder and Recorders
// are SessionRecorders. RecordEnd is called as Record is: once, in the
// goroutine that ended the session, without blocking for long.
type SessionRecorder interface {
	Recorder
	RecordEnd(e *SessionEnd)
}

// AgentEvent is the start or the stop of a sub-agent, as the Executor
// reports them: Claude Code's SubagentStart and SubagentStop. A sub-agent
// starts when SpawnAgent makes its context, and stops when the call it was
// spawned in ends (the agent ran inside it): Claude Code's order, the start
// before the agent's first call and the stop before the spawning call's
// PostToolUse.
type AgentEvent struct {
	// Event is event.SubagentStart or event.SubagentStop.
	Event string
	// SessionID and TaskID are the spawning call's session and task.
	SessionID string
	TaskID    string
	// AgentID, AgentType, ParentToolUseID and Depth are the agent's, as
	// its calls carry them (Call): ParentToolUseID names the call it was
	// spawned in.
	AgentID         string
	AgentType       string
	ParentToolUseID string
	Depth           int
	// Cwd, PermissionMode and TranscriptPath are the session's, as on its
	// calls.
	Cwd            string
	PermissionMode string
	TranscriptPath string
	// At is when the agent started or stopped.
	At time.Time
}

// AgentRecorder is a Recorder that also records the starts and stops of
// sub-agents (AgentEvent). The Forwarder, the AuditRecorder and Recorders
// are AgentRecorders; a Recorder that is not records calls only, as
// before. RecordAgent is called as Record is: once per event, in the
// goroutine that spawned the agent or ended its spawning call, without
// blocking for long.
type AgentRecorder interface {
	Recorder
	RecordAgent(e *AgentEvent)
}

// Recorders is a Recorder that hands each call to all of its Recorders, in
// order: an audit trail and a collector, say.
type Recorders []Recorder

// Record passes c to each Recorder.
func (rs Recorders) Record(c *Call) {
	for _, r := range rs {
		r.Record(c)
	}
}

// RecordEnd passes e to each of its Recorders that is a SessionRecorder.
func (rs Recorders) RecordEnd(e *SessionEnd) {
	for _, r := range rs {
		if sr, ok := r.(SessionRecorder); ok {
			sr.RecordEnd(e)
		}
	}
}

// RecordAgent passes e to each of its Recorders that is an AgentRecorder.
func (rs Recorders) RecordAgent(e *AgentEvent) {
	for _, r := range rs {
		if ar, ok := r.(AgentRecorder); ok {
			ar.RecordAgent(e)
		}
	}
}

// Executor runs tools through the hooks of its Registry and records each
// call. Set its fields before the first call; an Executor is then safe for
// concurrent use.
type Executor struct {
	// Registry holds the hooks; nil runs no hooks.
	Registry *Registry
	// Tools are the tools Call finds by name.
	Tools map[string]Tool
	// SessionID is the session of calls whose context names none. When
	// it is "", the Executor makes one at its first such call (a UUIDv7,
	// as event.NewID makes them) and keeps it: every call is recorded and
	// forwarded in a session that listings show.
	SessionID string
	// Dir is the agent's working directory, the cwd of every payload of
	// its calls: the policy engine takes relative paths and globs of the
	// rules, and cwd in their conditions, from it (UsePolicy), and the
	// collector attributes a forwarded session to the project of its
	// first cwd, as it does Claude Code's. "" means the process's working
	// directory when the Executor first needs one (its first call, or
	// EndSession), kept from then on as the session's: a program that
	// changes directory while its agent works sets Dir.
	Dir string
	// PermissionMode and TranscriptPath are the payloads' permission_mode
	// and transcript_path, as Claude Code sends them: the mode the agent
	// runs its tools in ("default", "acceptEdits", "plan",
	// "bypassPermissions", …) and the file it keeps its conversation in.
	// Policy rules may read them (a rule on permission_mode answers as it
	// answers Claude Code's call in that mode), and the collector shows
	// the session's permission mode. "" leaves them out of the payloads,
	// where rules read them as "", as they read a payload without them.
	PermissionMode string
	TranscriptPath string
	// Recorder, if not nil, records every call (see AuditRecorder).
	Recorder Recorder
	// Approve answers a merged "ask": true runs the call. nil denies it.
	Approve func(ctx context.Context, c *Call) bool

	idBase sync.Once
	ids    atomic.Uint64

	session     sync.Once
	madeSession string

	cwd     sync.Once
	madeCwd string

	// agentsMu guards the sub-agents of calls (Call.spawned).
	agentsMu sync.Mutex
}

// dir is Dir, or the process's working directory when the Executor first
// asked for it ("" if it cannot be known).
func (x *Executor) dir() string {
	if x.Dir != "" {
		return x.Dir
	}
	// Once: a call pays no system call for it, and the session keeps one
	// cwd, as the model keeps the first.
	x.cwd.Do(func() { x.madeCwd, _ = os.Getwd() })
	return x.madeCwd
}

// sessionID is SessionID, or the session the Executor made for itself.
func (x *Executor) sessionID() string {
	if x.SessionID != "" {
		return x.SessionID
	}
	x.session.Do(func() { x.madeSession = event.NewID(time.Now()) })
	return x.madeSession
}

// DefaultEndReason is the reason EndSession gives an end of none: Claude
// Code's for a session that ended other than by /clear, a logout or the
// user leaving the prompt.
const DefaultEndReason = "other"

// EndSession ends the session of the calls made under ctx (WithSession's,
// else the Executor's SessionID or the one it made), as Claude Code ends
// one: its Recorder, if it is a SessionRecorder, records the SessionEnd
// event Claude Code sends at a session's end, with reason ("clear",
// "logout", "prompt_input_exit", "other"…; "" means DefaultEndReason) and
// the session's cwd and transcript_path. A collector then shows the
// session ended exactly as a Claude Code session that ended — status
// ended, its ended_at and end_reason — for the session model has one
// notion of an ended run (package attribution), which this event feeds.
// A call made in the session afterwards starts a new run of it, as a
// resumed Claude Code session does.
//
// Nothing else ends a session: neither Forwarder.Close nor the process's
// end. A session never ended stays running, idle since its last call, as
// a Claude Code session killed before its SessionEnd hook ran.
func (x *Executor) EndSession(ctx context.Context, reason string) {
	sr, ok := x.Recorder.(SessionRecorder)
	if !ok {
		return
	}
	id := scopeOf(ctx).sessionID
	if id == "" {
		id = x.sessionID()
	}
	if reason == "" {
		reason = DefaultEndReason
	}
	sr.RecordEnd(&SessionEnd{SessionID: id, Reason: reason, Cwd: x.dir(), TranscriptPath: x.TranscriptPath, At: time.Now()})
}

// Call runs the tool named name with input through the hooks, with a fresh
// tool_use_id, and returns the output as the post hooks left it. Its error
// is the tool's own, a *DeniedError (the merged decision refused the call),
// an *AbortError (a hook aborted it), ErrUnknownTool (wrapped) or ctx.Err()
// when ctx was done before the tool could start (the call is then recorded
// as interrupted, and neither the remaining hooks nor the tool run). Every
// call, refused or not, is recorded. Panics in hooks and tools are not
// recovered.
func (x *Executor) Call(ctx context.Context, name string, input map[string]any) (any, error) {
	return x.CallID(ctx, name, "", input)
}

// CallID is Call with the caller's tool_use_id (the model's tool_use block
// id); "" makes a fresh one.
func (x *Executor) CallID(ctx context.Context, name, toolUseID string, input map[string]any) (any, error) {
	t, ok := x.Tools[name]
	if !ok {
		t = func(context.Context, map[string]any) (any, error) {
			return nil, fmt.Errorf("cannot call %q: %w", name, ErrUnknownTool)
		}
	}
	return x.run(ctx, name, toolUseID, input, t)
}

// Wrap returns t as a Tool whose calls go through x under the name name.
func (x *Executor) Wrap(name string, t Tool) Tool {
	return func(ctx context.Context, input map[string]any) (any, error) {
		return x.run(ctx, name, "", input, t)
	}
}

const idPrefix = "toolu_hw_"

// newID makes a tool_use_id in the call's own buffer: unique per Executor
// (a random base, then a counter), without an allocation of its own.
func (x *Executor) newID(c *Call) string {
	// The random base is set before any id is taken: calls that start
	// together, in the goroutines of parallel agents, would otherwise
	// take the small ids of the counter before it is added.
	x.idBase.Do(func() {
		var b [8]byte
		rand.Read(b[:])
		x.ids.Store(binary.LittleEndian.Uint64(b[:]) &^ (1 << 63))
	})
	n := x.ids.Add(1)
	buf := append(c.idbuf[:0], idPrefix...)
	for i := 15; i >= 0; i-- {
		buf = append(buf, "0123456789abcdef"[(n>>(4*i))&0xf])
	}
	// c is on the heap and idbuf is never written again: the string may
	// share it, which saves an allocation per call.
	return unsafe.String(&c.idbuf[0], len(buf))
}

func (x *Executor) run(ctx context.Context, name, id string, input map[string]any, tool Tool) (any, error) {
	sc := scopeOf(ctx)
	c := &Call{
		SessionID:       sc.sessionID,
		ToolName:        name,
		ToolUseID:       id,
		TaskID:          sc.taskID,
		Phase:           sc.phase,
		AgentID:         sc.agentID,
		AgentType:       sc.agentType,
		ParentToolUseID: sc.parentToolUseID,
		Depth:           sc.depth,
		Cwd:             x.dir(),
		PermissionMode:  x.PermissionMode,
		TranscriptPath:  x.TranscriptPath,
		Input:           input,
		x:               x,
	}
	if c.SessionID == "" {
		c.SessionID = x.sessionID()
	}
	if c.ToolUseID == "" {
		c.ToolUseID = x.newID(c)
	}
	c.Start = time.Now()
	out, err := x.hooksAndTool(ctx, c, tool)
	c.Duration = time.Since(c.Start)
	c.Output, c.Err = out, err
	// The agents spawned in the call stop when it ends, as its records
	// say it ends.
	x.stopAgents(c, c.Start.Add(c.Duration))
	if x.Recorder != nil {
		x.Recorder.Record(c)
	}
	return out, err
}

// startAgent reports the start of the sub-agent of scope sc, spawned in
// the call c, and keeps it for the stop c's end reports (stopAgents). An
// agent spawned again in the same call started once; one spawned after
// the call ended (by a goroutine the tool left running) has no stop.
func (x *Executor) startAgent(c *Call, sc *scope) {
	ar, ok := x.Recorder.(AgentRecorder)
	if !ok {
		return
	}
	e := &AgentEvent{
		Event: event.SubagentStart, SessionID: c.SessionID, TaskID: sc.taskID,
		AgentID: sc.agentID, AgentType: sc.agentType, ParentToolUseID: sc.parentToolUseID, Depth: sc.depth,
		Cwd: c.Cwd, PermissionMode: c.PermissionMode, TranscriptPath: c.TranscriptPath, At: time.Now(),
	}
	x.agentsMu.Lock()
	again := slices.ContainsFunc(c.spawned, func(s *AgentEvent) bool { return s.AgentID == e.AgentID })
	if !again {
		c.spawned = append(c.spawned, e)
		atomic.StoreUint32(&c.spawning, 1)
	}
	x.agentsMu.Unlock()
	if !again {
		ar.RecordAgent(e)
	}
}

// stopAgents reports the stops, at end, of the sub-agents spawned in the
// call c, which ended.
func (x *Executor) stopAgents(c *Call, end time.Time) {
	if atomic.LoadUint32(&c.spawning) == 0 {
		return
	}
	x.agentsMu.Lock()
	spawned := c.spawned
	x.agentsMu.Unlock()
	ar := x.Recorder.(AgentRecorder) // none was spawned otherwise
	for _, s := range spawned {
		stop := *s
		stop.Event, stop.At = event.SubagentStop, end
		ar.RecordAgent(&stop)
	}
}

func (x *Executor) hooksAndTool(ctx context.Context, c *Call, tool Tool) (any, error) {
	// A call whose context is done is over before it starts: no hook
	// decides about it and the tool does not run.
	if err := ctx.Err(); err != nil {
		c.Status = attribution.StatusInterrupted
		return nil, err
	}
	p := x.Registry.plan(c.ToolName, c.Phase)
	// The hooks' decisions on the stack: a call has few.
	var stack [2]decision.Decision
	decisions := stack[:0]
	// skip is the Skip that ended the pre hooks, if one did: it answers in
	// place of the tool only if the merged decision lets the call through.
	var skip *PreResult
	for _, pre := range p.pre {
		r := pre(ctx, c)
		if r.Input != nil {
			c.Input = r.Input
		}
		if !r.Decision.IsZero() || len(r.Decision.Notes) > 0 {
			decisions = append(decisions, r.Decision)
		}
		c.addMetadata(r.Metadata)
		switch r.Action {
		case Abort:
			c.setDecision(decisions)
			c.Status = attribution.StatusInterrupted
			return nil, &AbortError{Tool: c.ToolName, Reason: r.Reason}
		case Skip:
			skip = &r
		}
		if skip != nil {
			break
		}
	}
	if len(decisions) > 0 {
		c.setDecision(decisions)
		if err := x.permit(ctx, c); err != nil {
			c.Status = attribution.StatusDenied
			if _, stopped := err.(*AbortError); stopped {
				c.Status = attribution.StatusInterrupted
			}
			return nil, err
		}
	}
	if skip != nil {
		c.Status = attribution.StatusOK
		return skip.Output, nil
	}
	// The hooks let the call through, but its context may have ended
	// while they ran: the tool must not start then either.
	if err := ctx.Err(); err != nil {
		c.Status = attribution.StatusInterrupted
		return nil, err
	}

	out, err := tool(context.WithValue(ctx, callKey{}, c), c.Input)
	c.Status = attribution.StatusOK
	if err != nil {
		c.Status = attribution.StatusError
	}
	for _, post := range p.post {
		c.Output, c.Err = out, err
		r := post(ctx, c)
		if r.Output != nil {
			out = r.Output
		}
		c.addMetadata(r.Metadata)
		if r.Action == Abort {
			c.Status = attribution.StatusInterrupted
			return out, &AbortError{Tool: c.ToolName, Reason: r.Reason, Post: true}
		}
	}
	return out, err
}

// permit applies the merged verdict: allow (or none) runs the call, deny and
// defer do not, ask runs it only when Approve says so.
func (x *Executor) permit(ctx context.Context, c *Call) error {
	if c.Decision.Stop {
		reasons := c.Decision.StopReasons
		reason := decision.DefaultStopReason
		if len(reasons) > 0 {
			reason = reasons[0]
		}
		return &AbortError{Tool: c.ToolName, Reason: reason}
	}
	switch v := c.Decision.Verdict; v {
	case decision.Deny, decision.Defer:
		return &DeniedError{Tool: c.ToolName, Verdict: v, Reason: c.Decision.Reason()}
	case decision.Ask:
		if x.Approve == nil || !x.Approve(ctx, c) {
			return &DeniedError{Tool: c.ToolName, Verdict: v, Reason: c.Decision.Reason()}
		}
	}
	return nil
}

// setDecision merges the hooks' decisions into c.Decision.
func (c *Call) setDecision(ds []decision.Decision) {
	if len(ds) == 0 {
		return
	}
	// One Merge over every answer, as the policy engine merges its rules':
	// the precedence lives in package decision only.
	d := decision.Merge(ds...)
	if d.Event == "" {
		d.Event = "PreToolUse"
	}
	c.Decision = &d
}

func (c *Call) addMetadata(m map[string]any) {
	if len(m) == 0 {
		return
	}
	if c.Metadata == nil {
		c.Metadata = make(map[string]any, len(m))
	}
	maps.Copy(c.Metadata, m)
}

var (
	_ SessionRecorder = Recorders(nil)
	_ AgentRecorder   = Recorders(nil)
)

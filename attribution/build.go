package attribution

import (
	"bytes"
	"cmp"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hookwatch/hookwatch/classify"
	"github.com/hookwatch/hookwatch/claudecode"
	"github.com/hookwatch/hookwatch/decision"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/jsonscan"
)

// Build derives sessions, agents, tool calls and lineage from envs. The
// result depends only on the set of envelopes: not on their order, and not
// on duplicates (same id). Build never fails; envelopes it cannot attribute
// are counted in Result.Skipped. envs is not modified, and the result shares
// no memory with it.
//
// Build is the reference a Group kept incrementally must equal.
func Build(envs []event.Envelope) *Result {
	g := NewGroup()
	g.Apply(envs...)
	return g.Result()
}

// agentState is an agent while its session is being derived.
type agentState struct {
	a                    *Agent
	first                *record
	typ                  event.OptString // from the first event that carries agent_type
	sidecar              *event.SubagentMeta
	typFrom, sidecarFrom *record // the records typ and sidecar came from
	start, stop          *record
	ownPath              string // a transcript_path the agent's own events carry (Codex)
	stopPath             string // SubagentStop's agent_transcript_path
	// guessed is agentTranscript's guess, made from the session's
	// transcript path guessedFrom.
	guessed, guessedFrom string
	parentSet            bool
	spawn                *callState
	// calls are the agent's calls, to settle again when its place in the
	// tree changes.
	calls []*callState
	// model is the last model the subagent's own hook events named
	// (Codex's, on each event of its thread).
	model string
	// nickname is the first agent_nickname its events carry (a Codex
	// subagent's rollout's); the spawning call's response's wins.
	nickname string
	// shown is the agent as last reported by changes; nil before.
	shown *Agent
	// Counts of the agent's calls by outcome, kept as calls settle.
	toolCount, failures, denials, rejected int
	// usage sums the agent's API responses.
	usage tally
}

// callState is a tool call while its session is being derived. The state
// only some calls need (callRare) is apart, made on first need: a group
// keeps a callState for every call, and that of an ordinary call, which
// succeeded, fits the 160-byte size class rather than the 320-byte one
// (TestCallStateSize). A batch's summary and a rollout's exit code, which
// whole sessions give every call (a client that fires PostToolBatch, a
// Codex rollout read), stay here. Its flags are kept together, after the
// pointers and strings, so that they share one word rather than pad four.
type callState struct {
	c     *ToolCall
	agent *agentState
	// opened is the call's first event: its start until a PreToolUse.
	opened *record
	first  *record
	pre    *record
	// post is the call's result: what a delegation call's readers read
	// of its response (responseOf) is read from it, not kept again.
	post     *record
	durMS    *float64
	batch    *record
	batchRes json.RawMessage
	turnID   string
	// rolloutExit is the exit code a Codex rollout recorded for the
	// call's command, for when the hook's PostToolUse has none.
	rolloutExit *int
	// cwd is the directory the call ran in.
	cwd  string
	rare *callRare // nil until needed: read rareState, change ownRare

	// counted is the status the call is counted under (statusCode), 0
	// before: a byte beside the flags rather than a string's 16.
	counted  uint8
	spawner  bool // in sessionBuilder.spawners
	named    bool // in sessionBuilder.named
	dirty    bool // in sessionBuilder.dirty
	reported bool // in sessionBuilder.changed
	// shared: c was handed out as it is (sessionBuilder.changes), and is
	// copied before it changes (own).
	shared bool
	// classified: ToolCall.Meta is of the current input.
	classified bool
}

// callRare is the state of a call that few calls need: the events that
// ended it otherwise than with a result or a batch's summary, a
// permission request, and what was read once of its input and response.
type callRare struct {
	failure *record
	failErr string
	denied  *record // PermissionDenied
	deny    *record // event carrying an enforced policy deny
	denyWhy string
	denyRaw json.RawMessage
	intr    *record // Codex Interrupt of the call's turn
	permReq *record
	// Read once, and forgotten when the input changes (forgetInput): the
	// canonical input a permission request is matched against, and what a
	// delegation call's input asks for.
	canon *string
	asked *delegation
	// Read once of a delegation call's response: the agent it names, and
	// whether it says async_launched.
	spawned *spawnResponse
	async   *bool
	isIntr  bool // the failure is an interrupt
}

// noCallRare is the rare state of a call that has none; nothing changes it.
var noCallRare callRare

// rareState returns the call's rare state to read, all empty when it has
// none.
func (c *callState) rareState() *callRare {
	if c.rare == nil {
		return &noCallRare
	}
	return c.rare
}

// ownRare returns the call's rare state to change, made on first need.
func (c *callState) ownRare() *callRare {
	if c.rare == nil {
		c.rare = &callRare{}
	}
	return c.rare
}

// forgetInput forgets what was read of the call's input, which changed.
func (c *callState) forgetInput() {
	if c.rare != nil {
		c.rare.canon, c.rare.asked = nil, nil
	}
}

// own returns the call's ToolCall to change: a copy of it when the
// version the builder holds was handed out, which stays as it was given.
// Every change to a call goes through own, so that a Group hands out its
// calls without copying them all, and keeps one version of a call that
// no longer changes rather than two.
func (c *callState) own() *ToolCall {
	if c.shared {
		cp := *c.c
		c.c, c.shared = &cp, false
	}
	return c.c
}

// ownDetail returns the call's CallDetail to change: a copy, in the
// call's own ToolCall, of the one it has, which may be the calls' shared
// empty one (noDetail) or that of a version handed out. A copy at every
// change, which few of a call's events make (a decision, a permission
// request or denial, a trace context, its spawned agent).
func (c *callState) ownDetail() *CallDetail {
	tc := c.own()
	d := *tc.CallDetail
	tc.CallDetail = &d
	return &d
}

// from notes that r reported the call's start (start) or its end, by
// its source (Sources): a hook, or the client's file it was read from.
func (c *callState) from(r *record, start bool) {
	s, have := SourceOf(r.common.Kind), c.c.EndSources
	if start {
		have = c.c.StartSources
	}
	switch {
	case have&s != 0:
	case start:
		c.own().StartSources |= s
	default:
		c.own().EndSources |= s
	}
}

// done reports whether the call has an outcome.
func (c *callState) done() bool {
	x := c.rareState()
	return c.post != nil || x.failure != nil || x.denied != nil || x.deny != nil || x.intr != nil || c.batch != nil
}

func (c *callState) canonInput() string {
	x := c.ownRare()
	if x.canon == nil {
		s := canonicalJSON(c.c.Input)
		x.canon = &s
	}
	return *x.canon
}

// sessionBuilder derives one session from its records, applied in
// canonical order. It is kept between applications: add takes each new
// record, settle brings what the records changed up to date and reports it.
// Everything settle computes is a function of the records added so far, so
// adding records in one go or in any number of steps ends in the same
// session.
type sessionBuilder struct {
	s        *Session
	lin      *lineage
	agents   map[string]*agentState
	agentSeq []*agentState
	calls    map[string]*callState
	callSeq  []*callState
	idless   []*callState // calls without tool_use_id, awaiting an outcome
	// unclaimed are the hooks' calls without tool_use_id that no rollout
	// call was matched to yet (fallbackCall).
	unclaimed []*callState
	// replacedPres are the times of the PreToolUse records of a call that
	// a later one replaced (a rollout's, then the hook's): starts it had.
	replacedPres map[*callState][]time.Time
	spawners     []*callState // calls of tools that spawn agents, in creation order
	// named are the other calls a subagent's sidecar named as its
	// spawning call (a call whose tool name is missing or unknown), in
	// the order first named: like the spawners, a later resolveParents
	// sets or clears the agent they spawned.
	named   []*callState
	metas   metas        // the classifications of its calls' inputs
	dirty   []*callState // calls changed since the last settle
	changed []*callState // calls settled since the last changes
	// tools are the counts of Session.Tools by tool name, kept as the
	// calls are counted (tally); toolsChanged says Session.Tools lags them.
	tools        map[string]*ToolCounts
	toolsChanged bool

	// runtimeFrom, cwdFrom and pathFrom are the records the session's
	// runtime, directory and transcript path came from.
	runtimeFrom, cwdFrom, pathFrom *record

	promptTitle string // the first main-agent prompt's title
	altTitle    string // the client's session_title
	mainMsg     string
	model       string
	// fileModel is the model the client's file named for the main
	// agent's latest prompt (evidence), fileEnd the end it recorded after
	// it (a Codex rollout's SessionEnd) and fileEndWhy its reason.
	fileModel   string
	fileEnd     *record
	fileEndWhy  string
	effort      string
	turnFailure bool // the main agent's latest turn ended with StopFailure
	// waitingOn are the subagents the main agent's latest Stop listed as
	// running in background_tasks; nil once a prompt, StopFailure or a
	// new run followed it.
	waitingOn []string
	// background are the agents a background_tasks list or a task
	// notification named.
	background map[string]bool
	// agentNotes and callNotes are the latest task notification about an
	// agent (task-id) and about a call (tool-use-id).
	agentNotes, callNotes map[string]notice
	// responses are the API responses by message id, and turns their
	// sums by prompt id; nil before the first.
	responses map[string]*response
	turns     map[string]*turnTally
	// prompts are the main agent's prompt ids seen so far (newPrompt).
	prompts map[string]bool
	// promptSrc are what reported each prompt so far, the main agent's
	// and the subagents' (promptFrom).
	promptSrc map[promptKey]Sources
	// matchedAt is the index in Session.MatchedCalls of each call
	// matched by content (matched); nil before the first.
	matchedAt map[*callState]int
	// preRun is set while the latest run was started by a pre-start
	// event and had only pre-start events since: its SessionStart,
	// stamped after them, takes it over (run).
	preRun bool
	// runs are the runs the hooks reported (run). fileFirst, fileEnds
	// and filePrompts are the session's first Codex rollout record, the
	// ends and the main agent's prompts they recorded: the runs they
	// tell of (fileRunsOf) are the session's when no hook reported one.
	runs        []Run
	fileFirst   time.Time
	fileEnds    []fileEnd
	filePrompts []time.Time
}

func newSessionBuilder(id string, first *record, lin *lineage) *sessionBuilder {
	b := &sessionBuilder{
		s: &Session{
			SessionID: id, StartedAt: first.at(), ParentSessionID: lin.parent[id], Lineage: lin.kind[id],
			Phantom: lin.phantom[id], Runs: []Run{},
		},
		lin: lin, agents: map[string]*agentState{}, calls: map[string]*callState{},
		background: map[string]bool{}, agentNotes: map[string]notice{}, callNotes: map[string]notice{},
	}
	for alias, to := range lin.alias {
		if to == id {
			b.s.AliasSessionIDs = append(b.s.AliasSessionIDs, alias)
		}
	}
	slices.Sort(b.s.AliasSessionIDs)
	b.agent("", first)
	return b
}

// touch marks a call as changed since the last settle.
func (b *sessionBuilder) touch(c *callState) {
	if !c.dirty {
		c.dirty = true
		b.dirty = append(b.dirty, c)
	}
	if !c.spawner && spawnsAgent(c.c.ToolName) {
		c.spawner = true
		b.spawners = append(b.spawners, c)
	}
}

func (b *sessionBuilder) agent(id string, r *record) *agentState {
	if a, ok := b.agents[id]; ok {
		return a
	}
	a := &agentState{a: &Agent{AgentID: id, StartedAt: r.at(), VirtualSessionID: virtualID(b.s.SessionID, id)}, first: r}
	b.agents[id] = a
	b.agentSeq = append(b.agentSeq, a)
	return a
}

// agentOf returns the agent r belongs to, created on its first record,
// with what r says of its type and its spawning call.
func (b *sessionBuilder) agentOf(r *record) *agentState {
	p := r.p
	ag := b.agent(p.AgentID, r)
	if m := r.rareFields().Subagent; p.AgentID != "" && ag.sidecar == nil && m != nil && m.ToolUseID != "" {
		m := *m
		ag.sidecar, ag.sidecarFrom = &m, r
	}
	if p.AgentType.Set && !ag.typ.Set {
		ag.typ, ag.typFrom = p.AgentType, r
	}
	if p.AgentID != "" && ag.nickname == "" {
		ag.nickname = p.AgentNickname
	}
	return ag
}

func (b *sessionBuilder) add(r *record) {
	switch r.common.Kind {
	case event.KindRollout:
		b.addRollout(r)
		return
	case event.KindTranscript:
		b.addTranscript(r)
		return
	}
	s, p := b.s, r.p
	ag, main := b.place(r)
	if u, ok := p.Event.(*event.TranscriptUsageInput); ok {
		// A transcript's record of an API response, not a hook event: it
		// counts tokens, not events, and starts no run.
		b.usage(r, ag, u)
		return
	}
	s.Counts.Events++
	ag.a.Events++
	if ag.a.Traceparent == "" {
		ag.a.Traceparent = r.common.Traceparent
	}
	if main {
		if p.PermissionMode != "" {
			s.PermissionMode = p.PermissionMode
		}
		if p.Model != "" {
			b.model = p.Model
		}
		if p.Effort != nil && p.Effort.Level != "" {
			b.effort = p.Effort.Level
		}
	} else {
		if ag.ownPath == "" && r.name() != event.SubagentStop {
			ag.ownPath = p.TranscriptPath
		}
		if p.Model != "" {
			ag.model = p.Model
		}
	}
	b.run(r)
	if r.name() == event.SessionEnd {
		s.EndSources |= SourceHook
	}
	if main && (r.name() == event.UserPromptSubmit || r.name() == event.Stop || r.name() == event.StopFailure) {
		b.turnFailure = r.name() == event.StopFailure
		b.waitingOn = nil
	}

	switch e := p.Event.(type) {
	case *event.SessionStartInput:
		if b.altTitle == "" {
			b.altTitle = e.SessionTitle
		}
		if StartsFork(e) {
			s.ForkSources |= SourceHook
		}
		if e.Source != "compact" {
			b.waitingOn = nil
		}
	case *event.UserPromptSubmitInput:
		b.prompt(r, e, main)
	case *event.StatusLineInput:
		if e.Model.ID != "" {
			b.model = e.Model.ID
		}
		if e.Version != "" {
			s.ClientVersion = e.Version
		}
	case *event.StopInput:
		if main && e.LastAssistantMessage != "" {
			b.mainMsg = e.LastAssistantMessage
		}
		running := runningSubagents(e.BackgroundTasks)
		for _, id := range running {
			b.background[id] = true
		}
		if main {
			b.waitingOn = running
		}

	case *event.SubagentStartInput:
		ag.a.StartSources |= SourceOf(r.common.Kind)
		if ag.start == nil || evidence(ag.start) {
			ag.start = r
		}
	case *event.StopFailureInput:
		if !main {
			b.subagentFailed(r, ag, e)
		}
	case *event.SubagentStopInput:
		ag.a.StopSources |= SourceOf(r.common.Kind)
		if ag.stop != nil && evidence(ag.stop) {
			// The transcript's reading of the stop gives way to the hook's.
			ag.stopPath, ag.a.LastMessage = "", ""
		}
		ag.stop, ag.a.StopError = r, ""
		if e.AgentTranscriptPath != "" {
			ag.stopPath = e.AgentTranscriptPath
		}
		if e.LastAssistantMessage != "" {
			ag.a.LastMessage = e.LastAssistantMessage
		}
		for _, id := range runningSubagents(e.BackgroundTasks) {
			b.background[id] = true
		}
		if p.AgentType.Set && p.AgentType.Value == "" {
			// Every compaction agent that stops while the compaction runs is
			// its own: 2.1.332 runs two.
			if n := len(s.Compactions); n > 0 && s.Compactions[n-1].EndedAt == nil {
				c := &s.Compactions[n-1]
				if !slices.Contains(c.AgentIDs, p.AgentID) {
					// A new array: Changes holds copies of the old one.
					c.AgentIDs = append(slices.Clip(c.AgentIDs), p.AgentID)
				}
				c.AgentID = c.AgentIDs[0]
			}
		}
	case *event.CompactInput:
		switch r.name() {
		case event.PreCompact:
			s.Compactions = append(s.Compactions, Compaction{Trigger: e.Trigger, StartedAt: r.at()})
		case event.PostCompact:
			n := len(s.Compactions)
			if n == 0 || s.Compactions[n-1].EndedAt != nil {
				s.Compactions = append(s.Compactions, Compaction{Trigger: e.Trigger, StartedAt: r.at()})
				n++
			}
			at := r.at()
			s.Compactions[n-1].EndedAt = &at
			if s.Compactions[n-1].Trigger == "" {
				s.Compactions[n-1].Trigger = e.Trigger
			}
		}
	case *event.PreToolUseInput:
		c := b.call(r, &e.ToolCall, true)
		c.from(r, true)
		if c.pre == nil || evidence(c.pre) {
			if c.pre != nil {
				if b.replacedPres == nil {
					b.replacedPres = map[*callState][]time.Time{}
				}
				b.replacedPres[c] = append(b.replacedPres[c], c.pre.at())
			}
			c.pre = r
			c.agent, c.first = ag, r
			tc := c.own()
			tc.ToolName, tc.Input, c.turnID = e.ToolName, callInput(e.ToolInput), p.TurnID
			c.classified, c.cwd = false, p.CWD
			c.forgetInput()
		}
		b.decide(c, r)
		b.touch(c)
	case *event.PostToolUseInput:
		c := b.call(r, &e.ToolCall, false)
		c.from(r, false)
		if c.post == nil || evidence(c.post) {
			c.post, c.durMS = r, e.DurationMS
		}
		if x := c.rare; x != nil && x.failure != nil && evidence(x.failure) && !outcomeBlind(r) {
			// The hook says the call succeeded: the transcript's error
			// result gives way.
			x.failure, x.failErr, x.isIntr = nil, "", false
		}
		b.decide(c, r)
		b.touch(c)
	case *event.PostToolUseFailureInput:
		c := b.call(r, &e.ToolCall, false)
		c.from(r, false)
		if f := c.rareState().failure; f == nil || evidence(f) {
			x := c.ownRare()
			x.failure, c.durMS, x.failErr = r, e.DurationMS, e.Error
			x.isIntr = e.IsInterrupt != nil && *e.IsInterrupt
		}
		b.decide(c, r)
		b.touch(c)
	case *event.PermissionDeniedInput:
		c := b.call(r, &e.ToolCall, false)
		c.from(r, false)
		if c.rareState().denied == nil {
			c.ownRare().denied = r
			c.ownDetail().PermissionDenied = &PermissionDenied{At: r.at(), Reason: e.Reason}
		}
		b.decide(c, r)
		b.touch(c)
	case *event.PermissionRequestInput:
		s.Counts.PermissionRequests++
		if c, by := b.matchPermission(p.AgentID, &e.ToolCall); c != nil {
			c.ownRare().permReq = r
			c.ownDetail().PermissionRequest = &PermissionRequest{At: r.at(), MatchedBy: by, Decision: validRaw(r.rareFields().Decision)}
			b.decide(c, r)
			b.touch(c)
		}
	case *event.PostToolBatchInput:
		for i := range e.ToolCalls {
			bc := &e.ToolCalls[i]
			if bc.ToolUseID == "" {
				continue // nothing to pair it with
			}
			c := b.call(r, &event.ToolCall{ToolName: bc.ToolName, ToolInput: bc.ToolInput, ToolUseID: bc.ToolUseID}, false)
			if c.batch == nil {
				c.batch, c.batchRes = r, bc.ToolResponse
			}
			b.touch(c)
		}
	case *event.InterruptInput:
		// Codex: the turn stopped; its running tools never report back.
		for _, c := range b.callSeq {
			if c.pre != nil && !c.done() && c.agent == ag && (p.TurnID == "" || c.turnID == p.TurnID) {
				c.ownRare().intr = r
				b.touch(c)
			}
		}
	}
}

// addRollout takes an event read from a Codex rollout (event.KindRollout):
// evidence, as a transcript's record is (addTranscript), merged with the
// hook events — a call by tool_use_id (the rollout's call_id), which it
// gives way to, or, when the hooks sent none, with the id-less hook call it
// matches.
func (b *sessionBuilder) addRollout(r *record) {
	if tc := r.p.Tool(); tc != nil && tc.ToolUseID != "" && b.calls[tc.ToolUseID] == nil {
		b.claimIdless(r, tc)
	}
	b.addTranscript(r)
}

// callEvidence takes a tool event read from a client's file (a rollout, a
// transcript): the call's start, result, failure or denial, unless a hook
// or an earlier record gave it already. Events without a tool_use_id have
// nothing to join.
func (b *sessionBuilder) callEvidence(r *record) {
	tc := r.p.Tool()
	if tc == nil || tc.ToolUseID == "" {
		return
	}
	switch e := r.p.Event.(type) {
	case *event.PreToolUseInput:
		c := b.call(r, tc, true)
		c.from(r, true)
		if c.pre == nil {
			c.pre = r
			tc := c.own()
			tc.ToolName, tc.Input, c.turnID = e.ToolName, callInput(e.ToolInput), r.p.TurnID
			c.classified, c.cwd = false, cmp.Or(r.p.CWD, c.cwd)
			c.forgetInput()
		}
		b.touch(c)
	case *event.PostToolUseInput:
		c := b.call(r, tc, false)
		c.from(r, false)
		if x := r.rareFields().ExitCode; c.rolloutExit == nil && x != nil {
			x := *x
			c.rolloutExit = &x
		}
		if c.post == nil {
			c.post = r
		}
		b.touch(c)
	case *event.PostToolUseFailureInput:
		c := b.call(r, tc, false)
		c.from(r, false)
		if c.rareState().failure == nil && (c.post == nil || evidence(c.post) || outcomeBlind(c.post)) {
			x := c.ownRare()
			x.failure, x.failErr = r, e.Error
			x.isIntr = e.IsInterrupt != nil && *e.IsInterrupt
		}
		b.touch(c)
	case *event.PermissionDeniedInput: // a hook denied the call
		c := b.call(r, tc, false)
		c.from(r, false)
		if c.rareState().denied == nil {
			c.ownRare().denied = r
			c.ownDetail().PermissionDenied = &PermissionDenied{At: r.at(), Reason: e.Reason}
		}
		b.touch(c)
	}
}

// place takes what every record of a hook or a transcript says of the
// session: its time, runtime, agent, and for the main agent's the
// directory and transcript (the first given). main reports whether r is
// the main agent's.
func (b *sessionBuilder) place(r *record) (ag *agentState, main bool) {
	s, p := b.s, r.p
	s.LastEventAt = lastOf(s.LastEventAt, r.at())
	if s.Runtime == "" && r.common.Runtime != "" {
		s.Runtime, b.runtimeFrom = r.common.Runtime, r
	}
	ag = b.agentOf(r)
	ag.a.LastEventAt = lastOf(ag.a.LastEventAt, r.at())
	if main = p.AgentID == ""; main {
		if s.CWD == "" && p.CWD != "" {
			s.CWD, b.cwdFrom = p.CWD, r
		}
		if s.TranscriptPath == "" && p.TranscriptPath != "" {
			s.TranscriptPath, b.pathFrom = p.TranscriptPath, r
		}
	}
	return ag, main
}

// prompt takes a prompt: the user's to the main agent counts once per
// prompt id and may title the session; a <task-notification> the client
// submits is no prompt of the user's; a subagent's (its parent's, to a
// Codex subagent) counts in no total. Each is paired, by what names it,
// with its other reports (promptFrom).
func (b *sessionBuilder) prompt(r *record, e *event.UserPromptSubmitInput, main bool) {
	s := b.s
	b.promptFrom(r)
	if n, ok := parseTaskNotification(e.Prompt); ok {
		b.notify(r, n)
		if main && b.newPrompt(r.p.PromptID) {
			s.Counts.TaskNotifications++
		}
		return
	}
	if main && b.newPrompt(r.p.PromptID) {
		s.Counts.Prompts++
		if b.promptTitle == "" {
			b.promptTitle = Title(e.Prompt)
		}
		if b.altTitle == "" {
			b.altTitle = e.SessionTitle
		}
	}
}

// subagentFailed takes r, a StopFailure of subagent ag (its model request
// failed and the client's retries did not get past the error): the client
// sends no SubagentStop then, and the StopFailure is the agent's stop, of
// its time, with the error text as its last message and the error kind as
// its StopError (Agent.StopError). A hook's StopFailure wins over a
// transcript's reading of the stop, as a hook's SubagentStop does; a
// transcript's takes the place of another transcript's only.
func (b *sessionBuilder) subagentFailed(r *record, ag *agentState, e *event.StopFailureInput) {
	ag.a.StopSources |= SourceOf(r.common.Kind)
	switch {
	case evidence(r) && ag.stop != nil && !evidence(ag.stop):
		return
	case !evidence(r) && ag.stop != nil && evidence(ag.stop):
		ag.stopPath, ag.a.LastMessage = "", ""
	}
	ag.stop, ag.a.StopError = r, cmp.Or(e.Error, event.UnknownFailure)
	if e.LastAssistantMessage != "" {
		ag.a.LastMessage = e.LastAssistantMessage
	}
}

// outcomeBlind reports whether r, a hook's PostToolUse, says nothing of
// the call's outcome: Codex fires PostToolUse whether the call succeeded
// or not (a command's exit 3 reads as a success there), so that a failure
// its rollout records stands beside it.
func outcomeBlind(r *record) bool { return r.common.Runtime == event.RuntimeCodex }

// evidence reports whether r was read from a client's own file
// (event.IsEvidence).
func evidence(r *record) bool { return event.IsEvidence(r.common.Kind) }

// newPrompt reports whether the main agent's prompt of this prompt id is
// seen for the first time, remembering it: a prompt the hook and the
// transcript both report counts once. A prompt without an id (clients that
// send none) is always new.
func (b *sessionBuilder) newPrompt(id string) bool {
	if id == "" {
		return true
	}
	if b.prompts == nil {
		b.prompts = map[string]bool{}
	}
	if b.prompts[id] {
		return false
	}
	b.prompts[id] = true
	return true
}

// addTranscript takes an envelope made from a Claude Code transcript
// record (event.KindTranscript, hookwatch import and serve
// --watch-transcripts): the hook event the client fired for the record,
// or the usage of an API response. Like a rollout's, it is evidence that
// merges with the hooks' events — a call by tool_use_id, a prompt by
// prompt id, a subagent by agent id —, gives way to them, and is no event
// of the session: it counts in no event total and starts no run, so that a
// session counts the same whether its transcripts were read before, after
// or while its hooks reported, or not at all. What only the transcript
// knows (calls and prompts no hook saw, the agents of a session without
// hooks, tokens) is the session's. It moves the session's and its agent's
// last event time: the record's time is when it happened.
func (b *sessionBuilder) addTranscript(r *record) {
	p := r.p
	ag, main := b.place(r)
	if r.common.Kind == event.KindRollout {
		b.fileRun(r)
	}
	switch e := p.Event.(type) {
	case *event.TranscriptUsageInput:
		b.usage(r, ag, e)
	case *event.UserPromptSubmitInput:
		b.prompt(r, e, main)
		if main {
			// The model a hook names wins (settle); a session no hook
			// saw has its file's, which a Codex rollout's prompt names.
			b.fileModel = cmp.Or(p.Model, b.fileModel)
			b.fileEnd = nil
			if r.common.Kind == event.KindRollout {
				b.filePrompts = append(b.filePrompts, r.at())
			}
		}
	case *event.SessionStartInput:
		// A Codex fork's rollout's, a Claude Code fork's transcript's:
		// it names the fork's parent (lineage reads it); the hook's
		// SessionStart(fork) wins.
		if main && StartsFork(e) {
			b.s.ForkSources |= SourceOf(r.common.Kind)
		}
	case *event.SessionEndInput:
		// A Codex rollout's: `codex exec` ended with its turn. It ends a
		// session no hook saw (settle); the hooks' runs say the rest.
		if main {
			b.fileEnd, b.fileEndWhy = r, e.Reason
			b.s.EndSources |= SourceOf(r.common.Kind)
			if r.common.Kind == event.KindRollout {
				b.fileEnds = append(b.fileEnds, fileEnd{r.at(), e.Reason})
			}
		}
	case *event.SubagentStartInput:
		ag.a.StartSources |= SourceOf(r.common.Kind)
		if ag.start == nil {
			ag.start = r
		}
	case *event.StopFailureInput:
		if !main {
			b.subagentFailed(r, ag, e)
		}
	case *event.SubagentStopInput:
		ag.a.StopSources |= SourceOf(r.common.Kind)
		if ag.stop == nil || evidence(ag.stop) {
			ag.stop, ag.a.StopError = r, ""
			ag.stopPath = cmp.Or(e.AgentTranscriptPath, ag.stopPath)
			ag.a.LastMessage = cmp.Or(e.LastAssistantMessage, ag.a.LastMessage)
		}
	default:
		b.callEvidence(r)
	}
}

// run keeps the runs the hooks report (b.runs): a SessionStart other than compact starts
// one, SessionEnd ends it, and an event after an ended run (or before any)
// starts one without a SessionStart. Folded throwaway events and statusLine
// refreshes do not start runs. The client runs a run's first hooks side by
// side, so its InstructionsLoaded may be stamped before its SessionStart: a
// run begun by pre-start events alone is the SessionStart's that follows
// them, from the first of them.
func (b *sessionBuilder) run(r *record) {
	s := b.s
	n := len(b.runs)
	switch {
	case r.name() == event.SessionStart:
		src := startSource(r)
		if src == "compact" {
			return
		}
		run := Run{Source: src, StartedAt: r.at(), ForkedTo: b.lin.forkedTo[r], AliasSessionID: b.lin.aliasAt[r],
			Resume: resumeStats(r)}
		if b.preRun {
			run.StartedAt = b.runs[n-1].StartedAt
			b.runs[n-1] = run
		} else {
			b.runs = append(b.runs, run)
		}
		b.preRun = false
		return
	case r.alias || r.name() == event.StatusLine:
		return
	case n == 0 || b.runs[n-1].EndedAt != nil:
		src := ""
		if n == 0 {
			src = s.Lineage
		}
		b.runs = append(b.runs, Run{Source: src, StartedAt: r.at()})
		b.preRun = true
		n++
	}
	if !preStart(r.name()) {
		b.preRun = false
	}
	if e, ok := r.p.Event.(*event.SessionEndInput); ok && b.runs[n-1].EndedAt == nil {
		at := r.at()
		b.runs[n-1].EndedAt, b.runs[n-1].EndReason = &at, e.Reason
	}
}

// fileRun notes what a record of a session's Codex rollouts tells of its
// runs (fileRunsOf): the time of the first, and of each of the main
// agent's prompts. Kept whatever order the records come in.
func (b *sessionBuilder) fileRun(r *record) {
	if at := r.at(); b.fileFirst.IsZero() || at.Before(b.fileFirst) {
		b.fileFirst = at
	}
}

// fileRunsOf returns the runs a session's Codex rollouts record, which
// are its runs when no hook reported one (settle), as its hooks would
// have: the first record starts the first (startup, or a fork's start),
// and, as a `codex exec` run ends with its one turn (the rollout's
// SessionEnd), a prompt after such an end is another process's, which
// resumed the session (`codex exec resume`). Codex writes no record of a
// resume itself, so the resumed process of another client (the TUI, an
// IDE), which runs many turns, continues the run its rollout began.
func (b *sessionBuilder) fileRunsOf() []Run {
	if b.fileFirst.IsZero() {
		return nil
	}
	src := "startup"
	if b.s.ForkSources&SourceRollout != 0 {
		src = LineageFork
	}
	runs := []Run{{Source: src, StartedAt: b.fileFirst}}
	ends, prompts := slices.Clone(b.fileEnds), slices.Clone(b.filePrompts)
	slices.SortFunc(ends, func(x, y fileEnd) int { return x.at.Compare(y.at) })
	slices.SortFunc(prompts, time.Time.Compare)
	for len(ends) > 0 || len(prompts) > 0 {
		cur := &runs[len(runs)-1]
		if len(ends) > 0 && (len(prompts) == 0 || !prompts[0].Before(ends[0].at)) {
			if cur.EndedAt == nil {
				at := ends[0].at
				cur.EndedAt, cur.EndReason = &at, ends[0].why
			}
			ends = ends[1:]
			continue
		}
		if cur.EndedAt != nil {
			runs = append(runs, Run{Source: "resume", StartedAt: prompts[0]})
		}
		prompts = prompts[1:]
	}
	return runs
}

// fileEnd is a session's end a rollout recorded.
type fileEnd struct {
	at  time.Time
	why string
}

// call returns the call an event is about, creating it. Events without a
// tool_use_id (clients before 2.0.43) pair with the oldest open id-less call
// of the same agent, tool and input; a PreToolUse always starts a new one.
func (b *sessionBuilder) call(r *record, tc *event.ToolCall, pre bool) *callState {
	id, synthetic := tc.ToolUseID, false
	if id == "" {
		if pre && r.common.Kind != event.KindRollout {
			if c := b.rolloutCall(r, tc); c != nil {
				b.idless = append(b.idless, c) // for the hook's outcome
				b.matched(c, c.c.ToolUseID)
				b.idlessFrom(c, r)
				return c
			}
		}
		if !pre {
			canon := canonicalJSON(tc.ToolInput)
			for i, c := range b.idless {
				if c.agent.a.AgentID == r.p.AgentID && c.c.ToolName == tc.ToolName && c.canonInput() == canon {
					b.idless = slices.Delete(b.idless, i, i+1)
					b.idlessFrom(c, r)
					return c
				}
			}
		}
		synthetic = true
		id = "nouse:" + r.id
		if r.id == "" {
			id = "nouse:#" + strconv.Itoa(r.seq)
		}
	}
	if c, ok := b.calls[id]; ok {
		if c.c.Traceparent == "" && r.common.Traceparent != "" {
			c.ownDetail().Traceparent = r.common.Traceparent
		}
		return c
	}
	ag := b.agent(r.p.AgentID, r)
	c := &callState{
		c: &ToolCall{
			ToolUseID: id, SyntheticID: synthetic, SessionID: b.s.SessionID, ToolName: tc.ToolName,
			StartedAt: r.at(), Input: callInput(tc.ToolInput), PromptID: r.p.PromptID,
			CallDetail: detailOf(&CallDetail{Traceparent: r.common.Traceparent}),
		},
		agent: ag, opened: r, first: r, turnID: r.p.TurnID, cwd: r.p.CWD,
	}
	b.calls[id] = c
	b.callSeq = append(b.callSeq, c)
	ag.calls = append(ag.calls, c)
	if synthetic && pre {
		b.idless = append(b.idless, c)
		b.unclaimed = append(b.unclaimed, c)
	}
	return c
}

// The fallback keys of a call reported without a tool_use_id by the hooks
// (clients that send none) and with its id by the rollout: the same agent,
// turn (Codex's turn_id), tool name and input, the input compared in
// canonical form. Matched calls pair in order: the oldest unmatched first.
func sameCallKeys(c *callState, r *record, tc *event.ToolCall) bool {
	return c.agent.a.AgentID == r.p.AgentID && c.turnID == r.p.TurnID && c.c.ToolName == tc.ToolName &&
		c.canonInput() == canonicalJSON(tc.ToolInput)
}

// claimIdless makes the rollout's call id (unknown so far) name the oldest
// id-less hook call with the same keys, so that the rollout's events join
// it instead of counting it twice. The call keeps its synthetic id: the
// model may have shown it already.
func (b *sessionBuilder) claimIdless(r *record, tc *event.ToolCall) {
	for i, c := range b.unclaimed {
		if sameCallKeys(c, r, tc) {
			b.unclaimed = slices.Delete(b.unclaimed, i, i+1)
			b.calls[tc.ToolUseID] = c
			b.matched(c, tc.ToolUseID)
			return
		}
	}
}

// rolloutCall returns the oldest call a rollout reported and no hook has
// yet whose keys are an id-less hook PreToolUse's, for the hook's events
// to join.
func (b *sessionBuilder) rolloutCall(r *record, tc *event.ToolCall) *callState {
	for _, c := range b.callSeq {
		if c.pre != nil && c.pre.common.Kind == event.KindRollout && !c.c.SyntheticID && sameCallKeys(c, r, tc) {
			return c
		}
	}
	return nil
}

// decide records the policy decision an event of the call carried.
func (b *sessionBuilder) decide(c *callState, r *record) {
	d := validRaw(r.rareFields().Decision)
	if d == nil {
		return
	}
	cd := c.ownDetail()
	cd.Decisions = append(cd.Decisions, DecisionRecord{Event: r.name(), At: r.at(), Decision: d})
	if c.rareState().deny != nil || (r.name() != event.PreToolUse && r.name() != event.PermissionRequest) {
		return
	}
	var a decision.Audit
	if json.Unmarshal(d, &a) == nil && a.Enforced && a.Action == decision.ActionDeny {
		x := c.ownRare()
		x.deny, x.denyWhy, x.denyRaw = r, a.Reason, d
	}
}

// matchPermission finds the call a PermissionRequest (which has no
// tool_use_id) is about: the latest open call of the same agent with the
// same tool and input, else one whose input the request's extends (Codex
// adds a description), else the latest with the same tool.
func (b *sessionBuilder) matchPermission(agentID string, tc *event.ToolCall) (*callState, string) {
	canon := canonicalJSON(tc.ToolInput)
	var reqFields map[string]json.RawMessage
	_ = json.Unmarshal(tc.ToolInput, &reqFields)
	var extended, byTool *callState
	for i := len(b.callSeq) - 1; i >= 0; i-- {
		c := b.callSeq[i]
		if c.pre == nil || c.done() || c.rareState().permReq != nil || c.agent.a.AgentID != agentID || c.c.ToolName != tc.ToolName {
			continue
		}
		if c.canonInput() == canon {
			return c, "input"
		}
		if extended == nil && reqFields != nil && extends(reqFields, c.c.Input) {
			extended = c
		}
		if byTool == nil {
			byTool = c
		}
	}
	switch {
	case extended != nil:
		return extended, "input"
	case byTool != nil:
		return byTool, "tool"
	}
	return nil, ""
}

// extends reports whether the object fields holds every field of the JSON
// object input, with equal values.
func extends(fields map[string]json.RawMessage, input json.RawMessage) bool {
	var in map[string]json.RawMessage
	if json.Unmarshal(input, &in) != nil || len(in) == 0 {
		return false
	}
	for k, v := range in {
		w, ok := fields[k]
		if !ok || canonicalJSON(v) != canonicalJSON(w) {
			return false
		}
	}
	return true
}

// settle brings the session up to date with the records added since the
// last settle: the session's own fields, every agent (parents are resolved
// again: a later record can name a spawning call), and the calls those
// records touched or whose agent moved in the tree. Its work is in the
// number of agents and touched calls, not in the size of the session.
func (b *sessionBuilder) settle() {
	s := b.s
	s.Title = cmp.Or(b.promptTitle, Title(b.altTitle))
	s.Project = Project(s.TranscriptPath, s.CWD)
	s.Model = cmp.Or(b.model, b.fileModel)
	if o := b.lin.forkFrom[s.SessionID]; o != nil && s.Model == "" {
		s.Model = o.p.Model // the fork's run began with that SessionStart
	}
	// The hooks' runs, else those the client's files recorded: the
	// runs its hooks would have reported.
	s.Runs = b.runs
	if len(b.runs) == 0 {
		s.Runs = b.fileRunsOf()
	}
	if s.Runs == nil {
		s.Runs = []Run{}
	}
	s.EndedAt, s.EndReason = nil, ""
	for i := len(s.Runs) - 1; i >= 0; i-- {
		if s.Runs[i].ForkedTo != "" {
			continue // the run went on under the forked session
		}
		if s.Runs[i].EndedAt != nil {
			s.EndedAt, s.EndReason = s.Runs[i].EndedAt, s.Runs[i].EndReason
		}
		break
	}
	if len(s.Runs) == 0 && b.fileEnd != nil {
		// No hook reported the session: the end its file records is its.
		at := b.fileEnd.at()
		s.EndedAt, s.EndReason = &at, b.fileEndWhy
	}
	s.Counts.Compactions = len(s.Compactions)
	s.Effort = b.effort
	s.Resume = nil
	for i := len(s.Runs) - 1; i >= 0 && s.Resume == nil; i-- {
		s.Resume = s.Runs[i].Resume
	}
	s.Status = SessionRunning
	switch {
	case b.turnFailure:
		s.Status = SessionFailed
	case s.EndedAt != nil:
		s.Status = SessionEnded
	case b.waiting():
		s.Status = SessionBackground
	}

	b.resolveParents()
	b.finishAgents()
	b.finishUsage()
	for _, a := range b.agentSeq {
		if a.shown != nil && !samePlace(a.shown, a.a) {
			for _, c := range a.calls {
				b.touch(c)
			}
		}
	}
	for _, c := range b.dirty {
		c.dirty = false
		if !c.reported {
			c.reported = true
			b.changed = append(b.changed, c)
		}
		b.uncount(c)
		b.finishCall(c)
		tc := c.own()
		tc.AgentID = c.agent.a.AgentID
		tc.AgentType = c.agent.a.AgentType
		tc.ParentToolUseID = c.agent.a.SpawnToolUseID
		tc.Depth = c.agent.a.Depth
		b.count(c)
	}
	b.dirty = b.dirty[:0]
	for _, a := range b.agentSeq {
		a.a.ToolCount, a.a.Failures, a.a.Denials, a.a.Rejected = a.toolCount, a.failures, a.denials, a.rejected
	}
	if b.toolsChanged {
		s.Tools, b.toolsChanged = b.listTools(), false
	}
	s.Counts.Agents, s.Counts.Subagents = len(b.agentSeq), 0
	for _, a := range b.agentSeq {
		if a.a.Role == RoleSubagent {
			s.Counts.Subagents++
		}
	}
	b.shape()
}

// count adds a settled call, whose status is one of callStatuses, to its
// agent's and its session's counts; uncount takes back what count added
// before the call changed.
func (b *sessionBuilder) count(c *callState) {
	if code := statusCode(c.c.Status); code != 0 {
		b.tally(c, c.c.Status, 1)
		c.counted = code
	}
}

func (b *sessionBuilder) uncount(c *callState) {
	if c.counted != 0 {
		b.tally(c, callStatuses[c.counted-1], -1)
		c.counted = 0
	}
}

// statusCode is 1 + the index of status in callStatuses, 0 for none of
// them.
func statusCode(status string) uint8 {
	return uint8(slices.Index(callStatuses[:], status) + 1)
}

func (b *sessionBuilder) tally(c *callState, status string, n int) {
	a, k := c.agent, &b.s.Counts
	a.toolCount += n
	k.ToolCalls += n
	t := b.tools[c.c.ToolName]
	if t == nil {
		if b.tools == nil {
			b.tools = map[string]*ToolCounts{}
		}
		t = &ToolCounts{ToolName: c.c.ToolName}
		b.tools[t.ToolName] = t
	}
	t.Calls += n
	b.toolsChanged = true
	switch {
	case Failed(status):
		a.failures += n
		k.Failures += n
		t.Failures += n
	case status == StatusDenied:
		a.denials += n
		k.Denials += n
		t.Denials += n
	case status == StatusRejected:
		a.rejected += n
		k.Rejected += n
		t.Rejected += n
	}
}

// listTools returns the session's per-tool counts as Session.Tools lists
// them: a new slice, so that copies handed out earlier stay as they were.
// The order and the row of others follow from the counts alone, whatever
// order the calls came in.
func (b *sessionBuilder) listTools() []ToolCounts {
	out := make([]ToolCounts, 0, len(b.tools))
	for _, t := range b.tools {
		if t.Calls > 0 {
			out = append(out, *t)
		}
	}
	if len(out) == 0 {
		return nil
	}
	slices.SortFunc(out, func(x, y ToolCounts) int {
		return cmp.Or(cmp.Compare(y.Calls, x.Calls), cmp.Compare(x.ToolName, y.ToolName))
	})
	if len(out) > maxNames {
		rest := ToolCounts{ToolName: OtherNames}
		for _, t := range out[maxNames:] {
			rest.Calls += t.Calls
			rest.Failures += t.Failures
			rest.Denials += t.Denials
			rest.Rejected += t.Rejected
		}
		out = append(out[:maxNames], rest)
	}
	return out
}

// snapshot fills in the session's ordered agents and tool calls, for a
// Result.
func (b *sessionBuilder) snapshot() {
	s := b.s
	s.Agents = make([]*Agent, 0, len(b.agentSeq))
	for _, a := range b.agentSeq {
		s.Agents = append(s.Agents, a.a)
	}
	slices.SortFunc(s.Agents[1:], compareAgents)
	s.ToolCalls = make([]*ToolCall, 0, len(b.callSeq))
	for _, c := range b.callSeq {
		s.ToolCalls = append(s.ToolCalls, c.c)
	}
	slices.SortFunc(s.ToolCalls, compareCalls)
}

// samePlace reports whether two versions of an agent sit at the same place
// in the tree, as its calls show it: type, spawning call and depth.
func samePlace(x, y *Agent) bool {
	return x.SpawnToolUseID == y.SpawnToolUseID && x.Depth == y.Depth &&
		(x.AgentType == nil) == (y.AgentType == nil) && (x.AgentType == nil || *x.AgentType == *y.AgentType)
}

// compareAgents orders agents as Session.Agents lists them: the main agent
// first, then by start, then id.
func compareAgents(x, y *Agent) int {
	switch {
	case x.AgentID == y.AgentID:
		return 0
	case x.AgentID == "":
		return -1
	case y.AgentID == "":
		return 1
	}
	if c := x.StartedAt.Compare(y.StartedAt); c != 0 {
		return c
	}
	return strings.Compare(x.AgentID, y.AgentID)
}

// formerStarts returns the starts call c had before start, its start now,
// for ToolCall.MovedFrom: nil unless a PreToolUse moved it.
func (b *sessionBuilder) formerStarts(c *callState, start time.Time) []time.Time {
	var out []time.Time
	add := func(at time.Time) {
		if !at.Equal(start) && !slices.ContainsFunc(out, at.Equal) {
			out = append(out, at)
		}
	}
	add(c.opened.at())
	for _, at := range b.replacedPres[c] {
		add(at)
	}
	return out
}

// compareCalls orders calls by start, then tool_use_id.
func compareCalls(x, y *ToolCall) int {
	if c := x.StartedAt.Compare(y.StartedAt); c != 0 {
		return c
	}
	return strings.Compare(x.ToolUseID, y.ToolUseID)
}

// finishCall sets a call's status, end, duration, error and decision from
// the evidence gathered. Evidence outranks arrival: a denial beats a
// failure, which beats a result, which beats the PostToolBatch summary.
func (b *sessionBuilder) finishCall(c *callState) {
	tc := c.own()
	tc.Family = classify.Family(tc.ToolName)
	if !c.classified {
		tc.Meta, c.classified = b.metas.classify(tc.ToolName, tc.Input, c.cwd), true
	}
	// The detail's fields are set on a copy, which replaces the call's
	// at the end: the calls that have none keep the shared empty one.
	d := *tc.CallDetail
	tc.Status, tc.EndedAt, tc.DurationMS, d.Error, d.Decision, d.ExitCode = "", nil, nil, "", nil, nil
	d.Files = patchFiles(tc)
	d.FileStates = nil
	if c.post != nil && len(c.post.rareFields().Files) > 0 {
		d.FileStates = slices.Clone(c.post.rareFields().Files)
	}
	d.movedFrom = nil
	if c.pre != nil {
		tc.StartedAt, tc.PromptID = c.pre.at(), cmp.Or(c.pre.p.PromptID, tc.PromptID)
		d.movedFrom = b.formerStarts(c, tc.StartedAt)
	}
	var end *record
	x := c.rareState()
	switch {
	case x.denied != nil:
		tc.Status, end, d.Error = StatusDenied, x.denied, d.PermissionDenied.Reason
	case x.deny != nil:
		tc.Status, end, d.Error = StatusDenied, x.deny, x.denyWhy
	case x.failure != nil:
		tc.Status, end, d.Error = StatusError, x.failure, x.failErr
		if x.isIntr {
			tc.Status = StatusInterrupted
		} else if msg, ok := deniedText(x.failErr); ok {
			tc.Status, d.Error = StatusDenied, msg
		}
	case c.post != nil:
		tc.Status, end = StatusOK, c.post
		if x := cmp.Or(c.post.rareFields().ExitCode, c.rolloutExit); x != nil {
			code := *x
			d.ExitCode = &code
			if code != 0 {
				tc.Status, d.Error = StatusError, "exit code "+strconv.Itoa(code)
			}
		}
	case x.intr != nil:
		tc.Status, end = StatusInterrupted, x.intr
	case c.batch != nil:
		end = c.batch
		// The response's text, read once: a denial, a <tool_use_error>,
		// or what the call answered.
		msg, isErr, denial, denied := "", false, "", false
		if text, ok := responseText(c.batchRes); ok {
			msg, isErr = toolUseErrorText(text)
			denial, denied = deniedText(text)
		}
		switch {
		case denied:
			tc.Status, d.Error = StatusDenied, denial
		case isErr && c.pre == nil:
			tc.Status, d.Error = StatusRejected, msg
		case isErr:
			tc.Status, d.Error = StatusError, msg
		default:
			tc.Status = StatusOK
		}
	default:
		tc.Status = StatusPending
	}
	tc.Failed = Failed(tc.Status)
	if end != nil {
		at := end.at()
		tc.EndedAt = &at
	}
	d.NotifiedAt, d.NotificationStatus = nil, ""
	if n, ok := b.callNotes[tc.ToolUseID]; ok && !tc.SyntheticID {
		at := n.at
		d.NotifiedAt, d.NotificationStatus = &at, n.status
	}
	switch {
	case c.durMS != nil && !math.IsNaN(*c.durMS) && *c.durMS >= 0 && *c.durMS < math.MaxInt64/2:
		ms := int64(math.Round(*c.durMS))
		tc.DurationMS = &ms
	case c.pre != nil && tc.EndedAt != nil:
		ms := tc.EndedAt.Sub(c.pre.at()).Milliseconds()
		tc.DurationMS = &ms
	}
	switch {
	case x.denyRaw != nil:
		d.Decision = x.denyRaw
	case len(d.Decisions) > 0:
		d.Decision = d.Decisions[0].Decision
		for _, rec := range d.Decisions {
			if rec.Event == event.PreToolUse {
				d.Decision = rec.Decision
				break
			}
		}
	}
	tc.CallDetail = detailOf(&d)
}

// resolveParents finds the spawning call and parent agent of every
// subagent: (a) the sidecar's toolUseId, then (b) a delegation call whose
// PostToolUse response names the agent, then (c) the oldest unclaimed
// delegation call made before the agent appeared whose subagent_type is the
// agent's type. A call spawns at most one agent. Without any, the parent is
// the main agent.
func (b *sessionBuilder) resolveParents() {
	subs := make([]*agentState, 0, len(b.agentSeq))
	for _, a := range b.agentSeq {
		if a.a.AgentID != "" {
			a.spawn, a.parentSet, a.a.ResolvedBy, a.a.SpawnToolUseID = nil, false, "", ""
			subs = append(subs, a)
		}
	}
	if len(subs) == 0 {
		return
	}
	// The agent each call spawns, set on the calls at the end: only those
	// whose agent changed are changed (and copied, when handed out), and
	// reported as changed.
	spawned := map[*callState]string{}
	defer func() {
		for _, a := range subs { // in their order, not the map's
			if c := a.spawn; c != nil && !c.spawner && !c.named {
				c.named = true
				b.named = append(b.named, c)
			}
		}
		for _, calls := range [][]*callState{b.spawners, b.named} {
			for _, c := range calls {
				if id := spawned[c]; c.c.SpawnedAgentID != id {
					c.ownDetail().SpawnedAgentID = id
					b.touch(c)
				}
			}
		}
	}()
	claimed := map[*callState]bool{}
	claim := func(a *agentState, c *callState, by string) {
		a.spawn, a.parentSet, a.a.ResolvedBy = c, true, by
		claimed[c] = true
		spawned[c] = a.a.AgentID
	}

	// (a) the sidecar.
	for _, a := range subs {
		if a.sidecar == nil {
			continue
		}
		if c := b.calls[a.sidecar.ToolUseID]; c != nil && !claimed[c] && c.agent != a {
			claim(a, c, ResolvedBySidecar)
			continue
		}
		// The spawning call's own events are missing: its id is still known.
		a.parentSet, a.a.ResolvedBy = true, ResolvedBySidecar
		a.a.SpawnToolUseID = a.sidecar.ToolUseID
	}

	// (b) the response of the spawning call, earliest response first.
	named := map[string]*callState{}
	for _, c := range b.spawners {
		if c.post == nil {
			continue
		}
		id := c.spawned().id
		if id == "" {
			continue
		}
		if cur := named[id]; cur == nil || c.post.seq < cur.post.seq {
			named[id] = c
		}
	}
	for _, a := range subs {
		if a.parentSet {
			continue
		}
		if c := named[a.a.AgentID]; c != nil && !claimed[c] && c.agent != a {
			claim(a, c, ResolvedByToolResponse)
		}
	}

	// (c) the subagent type, oldest call first.
	var spawners []*callState
	for _, c := range b.spawners {
		if c.pre != nil {
			spawners = append(spawners, c)
		}
	}
	slices.SortFunc(spawners, func(x, y *callState) int { return cmp.Compare(x.pre.seq, y.pre.seq) })
	for _, a := range subs {
		if a.parentSet || !a.typ.Set || a.typ.Value == "" {
			continue
		}
		for _, c := range spawners {
			if c.pre.seq >= a.first.seq {
				break
			}
			if !claimed[c] && c.agent != a && c.requested().Type == a.typ.Value {
				claim(a, c, ResolvedBySubagentType)
				break
			}
		}
	}
	for _, a := range subs {
		if !a.parentSet {
			a.a.ResolvedBy = ResolvedByNone
		}
	}
}

// delegation is what a delegation call's input asks for.
type delegation struct {
	// Type is the agent type asked for: subagent_type (Codex:
	// agent_type); the client's default when absent.
	Type        string
	Description string
}

// spawnResponse is what a delegation call's response names (spawnedAgentID):
// the agent it spawned and the agent's nickname.
type spawnResponse struct{ id, nickname string }

// spawned reads what the call's response names, once it has one.
func (c *callState) spawned() spawnResponse {
	if c.post == nil {
		return spawnResponse{}
	}
	x := c.ownRare()
	if x.spawned == nil {
		id, nickname := spawnedAgentID(responseOf(c.post.p))
		x.spawned = &spawnResponse{id, nickname}
	}
	return *x.spawned
}

// requested reads what a delegation call asks for, once per input: a
// settle resolves every agent's parent again, and inputs do not change.
func (c *callState) requested() *delegation {
	if d := c.rareState().asked; d != nil {
		return d
	}
	// The members classify reads the agent type from, by their exact names;
	// a member that is not a string is absent.
	var subagentType, agentType *string
	d := &delegation{Type: "general-purpose"}
	jsonscan.Members(c.c.Input, func(key, val []byte) {
		s, ok := jsonscan.Unquote(val)
		if !ok {
			return
		}
		switch string(jsonscan.Name(key)) {
		case "subagent_type":
			subagentType = &s
		case "agent_type":
			agentType = &s
		case "description":
			d.Description = s
		}
	})
	switch {
	case subagentType != nil:
		d.Type = *subagentType
	case agentType != nil:
		d.Type = *agentType
	case strings.HasSuffix(c.c.ToolName, "spawn_agent"):
		d.Type = "default"
	}
	c.ownRare().asked = d
	return d
}

// finishAgents fills in parents, depths, roles, times and paths.
func (b *sessionBuilder) finishAgents() {
	s := b.s
	for _, a := range b.agentSeq {
		ag := a.a
		ag.AgentType = a.typ.Ptr()
		if ag.AgentType == nil && a.sidecar != nil {
			t := a.sidecar.AgentType
			ag.AgentType = &t
		}
		if ag.AgentID == "" {
			ag.Role = RoleMain
			ag.StartedAt, ag.StoppedAt = s.StartedAt, s.EndedAt
			ag.LastMessage = b.mainMsg
			ag.TranscriptPath = s.TranscriptPath
			ag.ResolvedBy = ""
			continue
		}
		ag.Role = RoleSubagent
		ag.Background = b.background[ag.AgentID] || a.spawn != nil && a.spawn.launchedAsync()
		ag.NotifiedAt, ag.NotificationStatus = nil, ""
		if n, ok := b.agentNotes[ag.AgentID]; ok {
			at := n.at
			ag.NotifiedAt, ag.NotificationStatus = &at, n.status
		}
		if ag.AgentType != nil && *ag.AgentType == "" {
			ag.Role = RoleCompaction
		}
		ag.Description, ag.Nickname = "", ""
		parent := ""
		if a.spawn != nil {
			parent = a.spawn.agent.a.AgentID
			ag.SpawnToolUseID = a.spawn.c.ToolUseID
			ag.Description = a.spawn.requested().Description
			if sp := a.spawn.spawned(); sp.id == ag.AgentID {
				ag.Nickname = sp.nickname
			}
		}
		if ag.Nickname == "" {
			ag.Nickname = a.nickname
		}
		if a.sidecar != nil && a.sidecar.Description != "" {
			ag.Description = a.sidecar.Description
		}
		ag.ParentAgentID = &parent
		ag.StartedAt = a.first.at()
		if a.start != nil {
			ag.StartedAt = a.start.at()
		} else if ag.Role == RoleCompaction {
			for _, c := range s.Compactions {
				if slices.Contains(c.AgentIDs, ag.AgentID) {
					ag.StartedAt = c.StartedAt
				}
			}
		}
		ag.StoppedAt = nil
		if a.stop != nil {
			at := a.stop.at()
			ag.StoppedAt = &at
		}
		ag.TranscriptPath = cmp.Or(a.stopPath, b.agentTranscript(a))
	}
	// Depths, breaking any cycle (hostile input) by re-parenting the agent
	// that closes it to the main agent.
	const (
		unvisited = iota
		visiting
		visited
	)
	state := map[*agentState]int{}
	var depth func(a *agentState) int
	depth = func(a *agentState) int {
		if a.a.AgentID == "" {
			return 0
		}
		switch state[a] {
		case visited:
			return a.a.Depth
		case visiting:
			return -1
		}
		state[a] = visiting
		p := b.agents[*a.a.ParentAgentID]
		d := 1
		if p == a {
			root := ""
			a.a.ParentAgentID = &root
		} else if p != nil {
			if pd := depth(p); pd >= 0 {
				d = pd + 1
			} else {
				root := ""
				a.a.ParentAgentID = &root
			}
		}
		a.a.Depth = d
		state[a] = visited
		return d
	}
	for _, a := range b.agentSeq {
		depth(a)
	}
}

// agentTranscript is where a subagent's transcript lives when no
// SubagentStop named it: the path its own events carry when it differs
// from the session's (Codex), else the client's layout next to a Claude
// Code transcript, <dir>/<session>/subagents/agent-<id>.jsonl.
// The guess is kept with the session path it was made from: every settle
// asks again for every agent.
func (b *sessionBuilder) agentTranscript(a *agentState) string {
	s := b.s
	if a.ownPath != "" && a.ownPath != s.TranscriptPath {
		return a.ownPath
	}
	if a.guessedFrom != s.TranscriptPath || a.guessed == "" {
		a.guessedFrom = s.TranscriptPath
		a.guessed = claudecode.SubagentTranscriptPath(s.TranscriptPath, s.SessionID, a.a.AgentID)
	}
	return a.guessed
}

// callInput returns a call's input as its payload holds it (blanks around
// it trimmed), nil for an empty one. It is the payload's bytes, not a copy:
// the decoded payload's tool_input is bytes of its own or of its members
// (event.FromObjectShared) that nothing changes, the group keeps the
// payload as long as the call, and a copy per call was an allocation per
// event, held twice.
func callInput(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil
	}
	return raw[:len(raw):len(raw)]
}

// validRaw returns a copy of raw if it is a JSON value, else nil: an
// envelope's decision is not validated on the way in, and invalid JSON
// would make the result unmarshalable.
func validRaw(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" || !json.Valid(raw) {
		return nil
	}
	return append(json.RawMessage(nil), raw...)
}

// notify records a <task-notification> prompt: the latest one about an
// agent and about a call is kept, and the agent counts as a background
// one.
func (b *sessionBuilder) notify(r *record, n taskNotification) {
	note := notice{at: r.at(), status: n.Status}
	b.agentNotes[n.TaskID] = note
	b.background[n.TaskID] = true
	if n.ToolUseID != "" {
		b.callNotes[n.ToolUseID] = note
		if c := b.calls[n.ToolUseID]; c != nil {
			b.touch(c)
		}
	}
}

// waiting reports whether the main agent's latest Stop left subagents
// running that have not stopped since.
func (b *sessionBuilder) waiting() bool {
	for _, id := range b.waitingOn {
		if a := b.agents[id]; a == nil || a.stop == nil {
			return true
		}
	}
	return false
}

// launchedAsync reports whether the call returned while the agent it
// spawned runs on, reading its response once.
func (c *callState) launchedAsync() bool {
	if c.post == nil {
		return false
	}
	x := c.ownRare()
	if x.async == nil {
		v := launchedAsync(responseOf(c.post.p))
		x.async = &v
	}
	return *x.async
}

// responseOf returns a PostToolUse's tool_response, as its item keeps it
// (keepsResponse); nil for any other event.
func responseOf(v view) json.RawMessage {
	if e, ok := v.Event.(*event.PostToolUseInput); ok {
		return e.ToolResponse
	}
	return nil
}

// resumeStats reads the figures a SessionStart reports about the context
// it resumes, nil when it has none.
func resumeStats(r *record) *ResumeStats {
	e, ok := r.p.Event.(*event.SessionStartInput)
	if !ok || e.ContextTokens == nil && e.SecondsSinceLastResponse == nil && e.PromptCacheLikelyExpired == nil && e.EstimatedCacheWriteUSD == nil {
		return nil
	}
	st := &ResumeStats{At: r.at(), PromptCacheLikelyExpired: e.PromptCacheLikelyExpired}
	finite := func(f *float64) *float64 {
		if f == nil || math.IsNaN(*f) || math.IsInf(*f, 0) || *f < 0 {
			return nil
		}
		v := *f
		return &v
	}
	st.SecondsSinceLastResponse = finite(e.SecondsSinceLastResponse)
	st.EstimatedCacheWriteUSD = finite(e.EstimatedCacheWriteUSD)
	if t := finite(e.ContextTokens); t != nil && *t < math.MaxInt64/2 {
		n := int64(math.Round(*t))
		st.ContextTokens = &n
	}
	return st
}

// patchFiles returns the files an apply_patch call touches; nil for other
// calls.
func patchFiles(tc *ToolCall) []event.PatchFile {
	if tc.ToolName != event.ApplyPatch {
		return nil
	}
	return classify.PatchFiles(tc.Input)
}

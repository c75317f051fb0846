package attribution

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/hookwatch/hookwatch/event"
)

// Sources says what reported one happening of the model — a call's start
// or end, an agent's start or stop: a hook, a client's own file read as
// evidence (a Claude Code transcript, a Codex rollout), or several of
// them. The model counts the happening once whatever reported it, the
// hook's event winning (see the package doc); a view that lists events
// reads Sources to show each happening once (Copy, Also). It encodes as
// a JSON array of names: "hook", "transcript", "rollout".
type Sources uint8

// The reporters of a happening (Sources).
const (
	SourceHook Sources = 1 << iota
	SourceTranscript
	SourceRollout
)

// sourceNames are the names of the bits of Sources, in bit order.
var sourceNames = [...]string{"hook", event.KindTranscript, event.KindRollout}

// SourceOf returns the reporter an envelope of kind stands for: the file
// it was read from for evidence (event.IsEvidence), else a hook.
func SourceOf(kind string) Sources {
	switch kind {
	case event.KindTranscript:
		return SourceTranscript
	case event.KindRollout:
		return SourceRollout
	}
	return SourceHook
}

// Copy reports whether an envelope of kind that told of a happening
// reported by s is a copy: read from a client's file (evidence) while a
// hook delivered the same happening, which the model counts as the hook's.
func (s Sources) Copy(kind string) bool {
	return event.IsEvidence(kind) && s&SourceHook != 0
}

// Also returns, for a hook's envelope (kind not evidence) that told of a
// happening reported by s, the files that recorded it too, whose copies
// Copy names; 0 for evidence.
func (s Sources) Also(kind string) Sources {
	if event.IsEvidence(kind) {
		return 0
	}
	return s &^ SourceHook
}

// Names returns the names of the reporters in s, in bit order.
func (s Sources) Names() []string {
	var out []string
	for i, n := range sourceNames {
		if s&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// MarshalJSON encodes s as an array of names.
func (s Sources) MarshalJSON() ([]byte, error) { return s.appendJSON(nil), nil }

// appendJSON appends s as MarshalJSON encodes it.
func (s Sources) appendJSON(b []byte) []byte {
	b = append(b, '[')
	for i, n := range s.Names() {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(append(append(b, '"'), n...), '"')
	}
	return append(b, ']')
}

// UnmarshalJSON reads an array of names; a name it does not know is
// ignored, as a reader of a newer model's rows would.
func (s *Sources) UnmarshalJSON(b []byte) error {
	var names []string
	if err := json.Unmarshal(b, &names); err != nil {
		return fmt.Errorf("attribution.Sources: %w", err)
	}
	*s = 0
	for _, n := range names {
		for i, known := range sourceNames {
			if n == known {
				*s |= 1 << i
			}
		}
	}
	return nil
}

// Told is what an event tells of that the model keeps the Sources of.
type Told uint8

const (
	// ToldNothing: no call's, agent's or prompt's happening.
	ToldNothing Told = iota
	// ToldCallStart and ToldCallEnd: a call's start, its end.
	ToldCallStart
	ToldCallEnd
	// ToldAgentStart and ToldAgentStop: a subagent's start, its stop.
	ToldAgentStart
	ToldAgentStop
	// ToldPrompt: a prompt (Session.PromptSourcesOf).
	ToldPrompt
	// ToldSessionEnd: the session's end (Session.EndSources).
	ToldSessionEnd
)

// TellsOf returns what an event of this name tells of: a call's start
// (PreToolUse) or end (PostToolUse, PostToolUseFailure, PermissionDenied),
// a subagent's start or stop (SubagentStop, or the StopFailure of a
// subagent whose request failed: Agent.StopError), a prompt, the session's
// end. It is how the Sources the model keeps are read for an event
// (ToolCall.SourcesOf, Agent.SourcesOf). A StopFailure without an agent_id
// is the main agent's turn's end, which tells of no agent's stop: the
// caller, which holds the event, tells them apart.
func TellsOf(name string) Told {
	switch name {
	case event.PreToolUse:
		return ToldCallStart
	case event.PostToolUse, event.PostToolUseFailure, event.PermissionDenied:
		return ToldCallEnd
	case event.SubagentStart:
		return ToldAgentStart
	case event.SubagentStop, event.StopFailure:
		return ToldAgentStop
	case event.UserPromptSubmit:
		return ToldPrompt
	case event.SessionEnd:
		return ToldSessionEnd
	}
	return ToldNothing
}

// StartsFork reports whether a SessionStart tells of a fork's start, whose
// Sources the model keeps (Session.ForkSources): its source is fork.
func StartsFork(e *event.SessionStartInput) bool { return e.Source == "fork" }

// Call reports whether t is a call's start or end.
func (t Told) Call() bool { return t == ToldCallStart || t == ToldCallEnd }

// SourcesOf returns what reported the happening an event of this name
// tells of the call (TellsOf): its start or its end; 0 for any other
// event.
func (c *ToolCall) SourcesOf(name string) Sources {
	switch TellsOf(name) {
	case ToldCallStart:
		return c.StartSources
	case ToldCallEnd:
		return c.EndSources
	}
	return 0
}

// SourcesOf returns what reported the happening an event of this name
// tells of the agent (TellsOf): its start or its stop; 0 for any other
// event.
func (a *Agent) SourcesOf(name string) Sources {
	switch TellsOf(name) {
	case ToldAgentStart:
		return a.StartSources
	case ToldAgentStop:
		return a.StopSources
	}
	return 0
}

// PromptSources is what reported one prompt (Session.SharedPrompts):
// the main agent's, named by its prompt id, or a subagent's, named by
// its agent and turn. A Codex subagent's turn is prompted by its parent
// (the spawn message, a later send_input) and has no prompt id
// (event.PromptOf); its hook's UserPromptSubmit and its rollout's record
// of the prompt both name the turn.
type PromptSources struct {
	// PromptID names a prompt of the main agent; "" for a subagent's.
	PromptID string `json:"prompt_id"`
	// AgentID and TurnID name a subagent's prompt; "" for the main
	// agent's.
	AgentID string  `json:"agent_id,omitempty"`
	TurnID  string  `json:"turn_id,omitempty"`
	Sources Sources `json:"sources"`
}

// PromptSourcesOf returns what reported the prompt a UserPromptSubmit of
// agent agentID with these prompt and turn ids tells of (the main agent's
// by its prompt id, a subagent's by its turn), as far as SharedPrompts
// tell: 0 for a prompt one source alone reported, whose event is no copy
// and has none.
func (s *Session) PromptSourcesOf(agentID, promptID, turnID string) Sources {
	k, ok := promptKeyOf(agentID, promptID, turnID)
	if !ok {
		return 0
	}
	for _, p := range s.SharedPrompts {
		if p.key() == k {
			return p.Sources
		}
	}
	return 0
}

// promptKey names one prompt: the main agent's by its prompt id (agent
// ""), a subagent's by its agent and turn (PromptSources).
type promptKey struct{ agent, id string }

// PromptNamed returns what names the prompt a UserPromptSubmit of agent
// agentID with these prompt and turn ids tells of: the main agent's
// (agent "") by its prompt id, a subagent's by its agent and turn (id the
// turn's). ok is false for one without the id that names it, which pairs
// with none.
func PromptNamed(agentID, promptID, turnID string) (agent, id string, ok bool) {
	if agentID == "" {
		return "", promptID, promptID != ""
	}
	return agentID, turnID, turnID != ""
}

// promptKeyOf returns the key of the prompt PromptNamed names.
func promptKeyOf(agentID, promptID, turnID string) (promptKey, bool) {
	agent, id, ok := PromptNamed(agentID, promptID, turnID)
	return promptKey{agent, id}, ok
}

// key returns the key of the prompt p names.
func (p *PromptSources) key() promptKey {
	k, _ := promptKeyOf(p.AgentID, p.PromptID, p.TurnID)
	return k
}

// promptFrom notes that r, a UserPromptSubmit, reported its prompt (a
// prompt without the id that names it pairs with none): once a second
// source reported it, it is among the session's SharedPrompts.
func (b *sessionBuilder) promptFrom(r *record) {
	k, ok := promptKeyOf(r.p.AgentID, r.p.PromptID, r.p.TurnID)
	if !ok {
		return
	}
	if b.promptSrc == nil {
		b.promptSrc = map[promptKey]Sources{}
	}
	was := b.promptSrc[k]
	is := was | SourceOf(r.common.Kind)
	if is == was {
		return
	}
	b.promptSrc[k] = is
	if was == 0 {
		return
	}
	s := b.s
	for i := range s.SharedPrompts {
		if s.SharedPrompts[i].key() == k {
			s.SharedPrompts[i].Sources = is
			return
		}
	}
	ps := PromptSources{PromptID: k.id, Sources: is}
	if k.agent != "" {
		ps = PromptSources{AgentID: k.agent, TurnID: k.id, Sources: is}
	}
	s.SharedPrompts = append(s.SharedPrompts, ps)
}

// MatchedCall is a call whose hook events carried no tool_use_id, matched
// by content with a client's file's record of it (Session.MatchedCalls).
type MatchedCall struct {
	// ToolUseID is the call's id in the model: the file's, when its
	// record came first, else the synthetic id of the hook's PreToolUse
	// (ToolCall.SyntheticID).
	ToolUseID string `json:"tool_use_id"`
	// CallID is the id the file reported the call under.
	CallID string `json:"call_id"`
	// EventIDs are the envelope ids of the hook's events of the call, in
	// the order the model took them.
	EventIDs []string `json:"event_ids"`
}

// CallOf returns the id in the model (ToolCall.ToolUseID) of the call a
// tool event tells of that only content tied to it, as far as
// MatchedCalls tell: the event of envelope id eventID when it carries no
// tool_use_id, else the file's record of the call id toolUseID. It
// returns "" for any other event, whose call is its tool_use_id's.
func (s *Session) CallOf(eventID, toolUseID string) string {
	for i := range s.MatchedCalls {
		m := &s.MatchedCalls[i]
		if toolUseID != "" && m.CallID == toolUseID || toolUseID == "" && eventID != "" && slices.Contains(m.EventIDs, eventID) {
			return m.ToolUseID
		}
	}
	return ""
}

// idlessFrom notes that r, a hook's event without a tool_use_id, is one
// of c's: once c is matched, its envelope id is among its MatchedCall's.
// Before, matched finds it on c.
func (b *sessionBuilder) idlessFrom(c *callState, r *record) {
	if i, ok := b.matchedAt[c]; ok && r.id != "" {
		m := &b.s.MatchedCalls[i]
		m.EventIDs = append(m.EventIDs, r.id)
	}
}

// matched notes that c, a call of hook events without a tool_use_id, is
// the one a client's file reported under callID: it is among the
// session's MatchedCalls from now on, with the hook events it has (an
// id-less call's outcome pairs with it once, so these are all of them).
func (b *sessionBuilder) matched(c *callState, callID string) {
	if _, ok := b.matchedAt[c]; ok {
		return
	}
	if b.matchedAt == nil {
		b.matchedAt = map[*callState]int{}
	}
	var ids []string
	x := c.rareState()
	for _, r := range [...]*record{c.pre, c.post, x.failure, x.denied} {
		if r != nil && !evidence(r) && r.id != "" && r.p.Tool().ToolUseID == "" {
			ids = append(ids, r.id)
		}
	}
	b.matchedAt[c] = len(b.s.MatchedCalls)
	b.s.MatchedCalls = append(b.s.MatchedCalls, MatchedCall{ToolUseID: c.c.ToolUseID, CallID: callID, EventIDs: ids})
}

package attribution

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Waiting returns the calls a session waits on, in start order: calls
// still pending that nothing has left behind since they started. A call is
// left behind when the session ended or its latest turn failed (status
// ended or failed), when a later run of the client began (a resumed
// session does not wait on a call its previous process left), when its
// agent, a subagent, stopped, or when its agent started a call of a later
// prompt. It is read from the events alone; Stalled adds the clock.
func Waiting(s *Session, agents []*Agent, calls []*ToolCall) []*ToolCall {
	if !s.Live() {
		return nil
	}
	var since time.Time
	if n := len(s.Runs); n > 0 {
		since = s.Runs[n-1].StartedAt
	}
	stopped := map[string]time.Time{}
	for _, a := range agents {
		if a.AgentID != "" && a.StoppedAt != nil {
			stopped[a.AgentID] = *a.StoppedAt
		}
	}
	latestPrompt := map[string]*ToolCall{} // by agent: its latest call with a prompt id
	for _, c := range calls {
		if c.PromptID == "" {
			continue
		}
		if l := latestPrompt[c.AgentID]; l == nil || compareCalls(c, l) > 0 {
			latestPrompt[c.AgentID] = c
		}
	}
	var out []*ToolCall
	for _, c := range calls {
		if c.Status != StatusPending || c.StartedAt.Before(since) {
			continue
		}
		if at, ok := stopped[c.AgentID]; ok && !at.Before(c.StartedAt) {
			continue
		}
		if l := latestPrompt[c.AgentID]; l != nil && c.PromptID != "" && l.PromptID != c.PromptID && compareCalls(l, c) > 0 {
			continue
		}
		out = append(out, c)
	}
	slices.SortFunc(out, compareCalls)
	return out
}

// Stalled returns the SignalStalled of a session at now: one per agent
// with calls the session waits on (Waiting) when the session's latest
// event is th.StalledAfter old or older, else none. It clears as soon as
// an event of the session arrives. Zero thresholds take
// DefaultThresholds'.
func Stalled(s *Session, agents []*Agent, calls []*ToolCall, now time.Time, th Thresholds) []Signal {
	if now.Sub(s.LastEventAt) < th.OrDefault().StalledAfter {
		return nil // before reading what it waits on
	}
	return StalledWaiting(s, Waiting(s, agents, calls), now, th)
}

// StalledWaiting is Stalled for a session whose waiting calls were read
// already (Waiting): for one that keeps them between two looks at the clock.
func StalledWaiting(s *Session, waiting []*ToolCall, now time.Time, th Thresholds) []Signal {
	th = th.OrDefault()
	quiet := now.Sub(s.LastEventAt)
	if quiet < th.StalledAfter {
		return nil
	}
	var out []Signal
	byAgent := map[string]int{}
	for _, c := range waiting {
		i, ok := byAgent[c.AgentID]
		if !ok {
			i = len(out)
			byAgent[c.AgentID] = i
			out = append(out, Signal{Kind: SignalStalled, AgentID: c.AgentID, Key: "stalled:" + c.ToolUseID,
				Detail: fmt.Sprintf("no event for %s; %s started %s ago and has no outcome", quiet.Round(time.Second),
					strings.TrimSpace(c.ToolName+" "+cutDetail(c.EntityName)), now.Sub(c.StartedAt).Round(time.Second))})
		}
		if len(out[i].Calls) < maxEvidence {
			out[i].Calls = append(out[i].Calls, c.ToolUseID)
		}
	}
	return out
}

// SignalsAt is Signals with, at now, the session's SignalStalled on the
// agents that wait: every signal of a session as read at one moment. An
// agent that raised only a stall comes last.
func SignalsAt(s *Session, agents []*Agent, calls []*ToolCall, now time.Time, th Thresholds) []AgentSignals {
	out := Signals(agents, calls, th)
	for _, sg := range Stalled(s, agents, calls, now, th) {
		i := slices.IndexFunc(out, func(a AgentSignals) bool { return a.AgentID == sg.AgentID })
		if i < 0 {
			out = append(out, AgentSignals{AgentID: sg.AgentID})
			i = len(out) - 1
		}
		out[i].Signals = append(out[i].Signals, sg)
	}
	return out
}

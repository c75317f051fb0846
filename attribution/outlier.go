package attribution

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Outliers returns the subagents far beyond their siblings, by agent id,
// each with its SignalOutlier; calls are the session's calls by agent, in
// start order (for the evidence).
//
// Siblings are the subagents of one parent agent with one agent_type (a
// missing type is a type of its own; compaction agents have none). A
// subagent — running or stopped — is compared with its siblings that have
// stopped, whose figures are final, when there are at least
// th.OutlierSiblings of them:
//
//   - by calls: its own calls (Agent.ToolCount, so far) reach
//     th.OutlierFactor × the median of theirs, and th.OutlierCalls;
//   - by duration: its run (start to stop; while it runs, start to its
//     latest event) reaches th.OutlierFactor × the median of theirs, and
//     th.OutlierDuration.
//
// Everything is read from the agents' events, never from a clock, so the
// result is the same whatever the order the events came in. The evidence
// is the agent's spawning call, then its own first calls.
func Outliers(agents []*Agent, calls map[string][]*ToolCall, th Thresholds) map[string]Signal {
	type family struct {
		members []*Agent
	}
	families := map[string]*family{}
	for _, a := range agents {
		if a.Role != RoleSubagent || a.ParentAgentID == nil {
			continue
		}
		k := *a.ParentAgentID + "\x00"
		if a.AgentType != nil {
			k += "=" + *a.AgentType
		}
		f := families[k]
		if f == nil {
			f = &family{}
			families[k] = f
		}
		f.members = append(f.members, a)
	}
	out := map[string]Signal{}
	for _, f := range families {
		if len(f.members) <= th.OutlierSiblings {
			continue // too few to have enough siblings
		}
		slices.SortFunc(f.members, compareAgents)
		for _, a := range f.members {
			var sib []*Agent
			for _, s := range f.members {
				if s.AgentID != a.AgentID && s.StoppedAt != nil {
					sib = append(sib, s)
				}
			}
			if len(sib) < th.OutlierSiblings {
				continue
			}
			var why []string
			counts := make([]float64, len(sib))
			durs := make([]float64, len(sib))
			ids := make([]string, len(sib))
			for i, s := range sib {
				counts[i] = float64(s.ToolCount)
				durs[i] = float64(ranFor(s))
				ids[i] = s.AgentID
			}
			if n, med := a.ToolCount, median(counts); n >= th.OutlierCalls && float64(n) >= th.OutlierFactor*med {
				why = append(why, fmt.Sprintf("made %d calls, %s the median of its %d stopped siblings (%s)", n, ratio(float64(n), med), len(sib), trimFloat(med)))
			}
			if d, med := ranFor(a), median(durs); d >= th.OutlierDuration && float64(d) >= th.OutlierFactor*med {
				verb := "ran"
				if a.StoppedAt == nil {
					verb = "has run"
				}
				why = append(why, fmt.Sprintf("%s %s, %s the median of its %d stopped siblings (%s)", verb, d.Round(time.Second), ratio(float64(d), med), len(sib), time.Duration(med).Round(time.Second)))
			}
			if len(why) == 0 {
				continue
			}
			var ev []string
			if a.SpawnToolUseID != "" {
				ev = append(ev, a.SpawnToolUseID)
			}
			for _, c := range calls[a.AgentID] {
				if len(ev) == maxEvidence {
					break
				}
				ev = append(ev, c.ToolUseID)
			}
			out[a.AgentID] = Signal{Kind: SignalOutlier, AgentID: a.AgentID, Calls: ev, Key: "outlier", Siblings: ids,
				Detail: typeLabel(a) + " " + strings.Join(why, "; ")}
		}
	}
	return out
}

// ranFor is how long an agent ran: to its stop, or while it runs to its
// latest event; never negative (hook clocks can disagree).
func ranFor(a *Agent) time.Duration {
	end := a.LastEventAt
	if a.StoppedAt != nil {
		end = *a.StoppedAt
	}
	return max(0, end.Sub(a.StartedAt))
}

// median of xs (not empty); xs is sorted in place.
func median(xs []float64) float64 {
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

func ratio(x, med float64) string {
	if med <= 0 {
		return "against"
	}
	return trimFloat(x/med) + "×"
}

func trimFloat(f float64) string { return strings.TrimSuffix(fmt.Sprintf("%.1f", f), ".0") }

func typeLabel(a *Agent) string {
	if a.AgentType == nil {
		return "subagent"
	}
	return *a.AgentType
}

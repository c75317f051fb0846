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
		// The stopped members' figures, sorted once: a member's siblings
		// are all of them but itself, whose medians are read without it.
		var counts, durs []float64
		stopped := 0
		for _, s := range f.members {
			if s.StoppedAt != nil {
				counts = append(counts, float64(s.ToolCount))
				durs = append(durs, float64(ranFor(s)))
				stopped++
			}
		}
		slices.Sort(counts)
		slices.Sort(durs)
		rows := make(map[string]int, len(f.members))
		for _, s := range f.members {
			rows[s.AgentID]++
		}
		for _, a := range f.members {
			nsib := stopped
			medCount, medDur := func() float64 { return medianWithout(counts, -1) }, func() float64 { return medianWithout(durs, -1) }
			switch {
			case rows[a.AgentID] > 1:
				// Duplicate rows of one agent (as stored rows can hold):
				// none of them is its sibling.
				var cs, ds []float64
				for _, s := range f.members {
					if s.AgentID != a.AgentID && s.StoppedAt != nil {
						cs, ds = append(cs, float64(s.ToolCount)), append(ds, float64(ranFor(s)))
					}
				}
				slices.Sort(cs)
				slices.Sort(ds)
				nsib = len(cs)
				medCount, medDur = func() float64 { return medianWithout(cs, -1) }, func() float64 { return medianWithout(ds, -1) }
			case a.StoppedAt != nil:
				nsib--
				i, _ := slices.BinarySearch(counts, float64(a.ToolCount))
				j, _ := slices.BinarySearch(durs, float64(ranFor(a)))
				medCount, medDur = func() float64 { return medianWithout(counts, i) }, func() float64 { return medianWithout(durs, j) }
			}
			if nsib < th.OutlierSiblings {
				continue
			}
			var why []string
			if n, med := a.ToolCount, medCount(); n >= th.OutlierCalls && float64(n) >= th.OutlierFactor*med {
				why = append(why, fmt.Sprintf("made %d calls, %s the median of its %d stopped siblings (%s)", n, ratio(float64(n), med), nsib, trimFloat(med)))
			}
			if d, med := ranFor(a), medDur(); d >= th.OutlierDuration && float64(d) >= th.OutlierFactor*med {
				verb := "ran"
				if a.StoppedAt == nil {
					verb = "has run"
				}
				why = append(why, fmt.Sprintf("%s %s, %s the median of its %d stopped siblings (%s)", verb, d.Round(time.Second), ratio(float64(d), med), nsib, time.Duration(med).Round(time.Second)))
			}
			if len(why) == 0 {
				continue
			}
			ids := make([]string, 0, nsib)
			for _, s := range f.members {
				if s.AgentID != a.AgentID && s.StoppedAt != nil {
					ids = append(ids, s.AgentID)
				}
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
				Detail: TypeName(a.AgentID, a.AgentType, RoleSubagent) + " " + strings.Join(why, "; ")}
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

// medianWithout is the median of sorted xs without its element at skip
// (none when skip < 0); at least one element remains.
func medianWithout(xs []float64, skip int) float64 {
	n := len(xs)
	if skip >= 0 {
		n--
	}
	at := func(i int) float64 {
		if skip >= 0 && i >= skip {
			return xs[i+1]
		}
		return xs[i]
	}
	if n%2 == 1 {
		return at(n / 2)
	}
	return (at(n/2-1) + at(n/2)) / 2
}

func ratio(x, med float64) string {
	if med <= 0 {
		return "against"
	}
	return trimFloat(x/med) + "×"
}

func trimFloat(f float64) string { return strings.TrimSuffix(fmt.Sprintf("%.1f", f), ".0") }

package attribution

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hookwatch/hookwatch/classify"
)

// Signal kinds (Signal.Kind): signs that an agent is going wrong, read from
// the meaning of its calls.
const (
	// SignalLoop: the same call (tool and input) failed again and again,
	// or the same file was read over and over.
	SignalLoop = "loop"
	// SignalRetriedDeny: after a call was denied, the agent made another
	// with the same effect on the same target — the denied command in
	// another form (rm -rf x denied, then find x -delete).
	SignalRetriedDeny = "retried_deny"
	// SignalThrash: agents took turns writing the same file, each undoing
	// or redoing the other's work; raised on each of them.
	SignalThrash = "thrash"
	// SignalOutlier: a subagent made far more calls, or ran far longer,
	// than its siblings (Outliers).
	SignalOutlier = "outlier"
	// SignalStalled: the session has waited on a pending call with no
	// event since for a while (Stalled). It depends on the clock, not only
	// on the events: Signals never raises it.
	SignalStalled = "stalled"
)

// SignalKinds are every kind of signal, in a fixed order.
var SignalKinds = []string{SignalLoop, SignalRetriedDeny, SignalThrash, SignalOutlier, SignalStalled}

// Thresholds say when a signal is raised.
type Thresholds struct {
	// FailedRepeats: this many failures of the same call is a loop.
	FailedRepeats int
	// ReadRepeats: this many reads of the same file is a loop.
	ReadRepeats int
	// ThrashSwitches: this many changes of the agent writing a file (A,
	// B, A, B: three) is thrashing.
	ThrashSwitches int
	// OutlierFactor: a subagent whose calls (or duration) reach this many
	// times the median of its stopped siblings' is an outlier, provided
	// it has at least OutlierSiblings of them and reaches the floor,
	// OutlierCalls calls (or OutlierDuration), so that tiny agents never
	// are.
	OutlierFactor   float64
	OutlierSiblings int
	OutlierCalls    int
	OutlierDuration time.Duration
	// StalledAfter: a session waiting on a pending call with no event for
	// this long is stalled.
	StalledAfter time.Duration
}

// DefaultThresholds are the thresholds of Signals when none are given.
var DefaultThresholds = Thresholds{
	FailedRepeats: 3, ReadRepeats: 5, ThrashSwitches: 3,
	OutlierFactor: 3, OutlierSiblings: 2, OutlierCalls: 20, OutlierDuration: 5 * time.Minute,
	StalledAfter: 5 * time.Minute,
}

// OrDefault returns th with its zero fields taken from DefaultThresholds.
func (th Thresholds) OrDefault() Thresholds {
	d := DefaultThresholds
	orDefault(&th.FailedRepeats, d.FailedRepeats)
	orDefault(&th.ReadRepeats, d.ReadRepeats)
	orDefault(&th.ThrashSwitches, d.ThrashSwitches)
	orDefault(&th.OutlierFactor, d.OutlierFactor)
	orDefault(&th.OutlierSiblings, d.OutlierSiblings)
	orDefault(&th.OutlierCalls, d.OutlierCalls)
	orDefault(&th.OutlierDuration, d.OutlierDuration)
	orDefault(&th.StalledAfter, d.StalledAfter)
	return th
}

func orDefault[T int | float64 | time.Duration](v *T, d T) {
	if *v <= 0 {
		*v = d
	}
}

// maxEvidence bounds the calls a signal names.
const maxEvidence = 20

// Signal is one sign that an agent is going wrong, with its evidence.
type Signal struct {
	Kind    string `json:"kind"`
	AgentID string `json:"agent_id"`
	// Calls are the calls that raised it (at most 20), in start order: for
	// a retried deny, the denied call first.
	Calls []string `json:"calls"`
	// Detail says what repeated, for people.
	Detail string `json:"detail"`
	// Key tells an agent's signals apart and stays the same as a signal
	// grows: "failed:<first call>" for a failing call, "read:<file>",
	// "denied:<denied call>", "thrash:<file>", "outlier",
	// "stalled:<first call waited on>".
	Key string `json:"key"`
	// Siblings are, on an outlier, the stopped siblings it was compared
	// with.
	Siblings []string `json:"siblings,omitempty"`
}

// AgentSignals are an agent's signals and its current run of failures.
type AgentSignals struct {
	AgentID string   `json:"agent_id"`
	Signals []Signal `json:"signals"`
	// FailuresInARow counts the agent's latest calls that failed, back to
	// its last call that did not.
	FailuresInARow int `json:"failures_in_a_row"`
}

// Signals reads the signals of each agent from a session's agents and tool
// calls (as the model built them, classified): per agent that made calls,
// in the agents' order of first call, then the agents that made none but
// raised a signal, in the session's order of agents. The result depends on
// the agents and calls, not on their order in the slices. Zero thresholds
// take DefaultThresholds'. SignalStalled depends on the clock: Stalled
// reads it.
func Signals(agents []*Agent, calls []*ToolCall, th Thresholds) []AgentSignals {
	th = th.OrDefault()
	calls = slices.Clone(calls)
	slices.SortFunc(calls, compareCalls)
	byAgent := map[string][]*ToolCall{}
	var order []string
	for _, c := range calls {
		if _, ok := byAgent[c.AgentID]; !ok {
			order = append(order, c.AgentID)
		}
		byAgent[c.AgentID] = append(byAgent[c.AgentID], c)
	}
	thrash := thrashing(calls, th)
	outliers := Outliers(agents, byAgent, th)
	out := make([]AgentSignals, 0, len(order))
	for _, id := range order {
		cs := byAgent[id]
		sigs := append(agentSignals(id, cs, th), thrash[id]...)
		if o, ok := outliers[id]; ok {
			sigs = append(sigs, o)
			delete(outliers, id)
		}
		out = append(out, AgentSignals{AgentID: id, Signals: sigs, FailuresInARow: failuresInARow(cs)})
	}
	if len(outliers) > 0 {
		agents = slices.Clone(agents)
		slices.SortFunc(agents, compareAgents)
		for _, a := range agents {
			if o, ok := outliers[a.AgentID]; ok {
				out = append(out, AgentSignals{AgentID: a.AgentID, Signals: []Signal{o}})
				delete(outliers, a.AgentID) // a duplicate agent row counts once
			}
		}
	}
	return out
}

// thrashing reads, across a session's agents, the files that agents took
// turns writing, and returns the signals by agent. calls are in the
// model's order (compareCalls), as Signals sorts them.
func thrashing(calls []*ToolCall, th Thresholds) map[string][]Signal {
	type file struct {
		name   string
		writes []*ToolCall
	}
	var files []*file
	byFile := map[string]*file{}
	for _, c := range calls {
		if c.Status != StatusOK {
			continue // a write that did not happen takes no turn
		}
		for _, f := range c.FilesWritten {
			t := byFile[f]
			if t == nil {
				t = &file{name: f}
				byFile[f] = t
				files = append(files, t)
			}
			t.writes = append(t.writes, c)
		}
	}
	out := map[string][]Signal{}
	for _, t := range files {
		switches, agents := fileTurns(t.writes, nil)
		if switches < th.ThrashSwitches {
			continue
		}
		addThrash(out, t.name, callIDs(t.writes), agents, switches)
	}
	return out
}

// fileTurns reads the turns of a file's writes, in order: how many times
// the writer changed from one write to the next, and the writers in order
// of first write, appended to agents.
func fileTurns(writes []*ToolCall, agents []string) (switches int, _ []string) {
	for i, c := range writes {
		if i > 0 && writes[i-1].AgentID != c.AgentID {
			switches++
		}
		if !slices.Contains(agents, c.AgentID) {
			agents = append(agents, c.AgentID)
		}
	}
	return switches, agents
}

// addThrash adds to out the SignalThrash of a file on each of the agents
// that wrote it (in order of first write), with the writing calls ids.
func addThrash(out map[string][]Signal, file string, ids, agents []string, switches int) {
	for _, a := range agents {
		out[a] = append(out[a], thrashSignal(file, a, ids, len(agents), switches))
	}
}

// thrashSignal is the SignalThrash of a file on agent, one of the agents
// writers that took turns writing it, with the writing calls ids.
func thrashSignal(file, agent string, ids []string, writers, switches int) Signal {
	if len(ids) > maxEvidence {
		ids = ids[:maxEvidence]
	}
	return Signal{Kind: SignalThrash, AgentID: agent, Calls: ids, Key: "thrash:" + file,
		Detail: fmt.Sprintf("%s written by %d agents in turn, the writer changing %s", file, writers, times(switches))}
}

func failuresInARow(cs []*ToolCall) int {
	n := 0
	for i := len(cs) - 1; i >= 0; i-- {
		switch {
		case Failed(cs[i].Status):
			n++
		case cs[i].Status == StatusPending:
			continue // still running: says nothing yet
		default:
			return n
		}
	}
	return n
}

// agentSignals reads one agent's calls, in start order.
func agentSignals(agentID string, cs []*ToolCall, th Thresholds) []Signal {
	var out []Signal
	// Loops: the same failing call, the same file read.
	type group struct {
		file  string
		calls []*ToolCall
	}
	var failing, reads []*group
	byCall, byFile := map[string]*group{}, map[string]*group{}
	for _, c := range cs {
		if Failed(c.Status) {
			key := failingKey(c)
			g := byCall[key]
			if g == nil {
				g = &group{}
				byCall[key] = g
				failing = append(failing, g)
			}
			g.calls = append(g.calls, c)
		}
		if c.Subtype == classify.SubtypeReadFile {
			for _, f := range c.FilesRead {
				g := byFile[f]
				if g == nil {
					g = &group{file: f}
					byFile[f] = g
					reads = append(reads, g)
				}
				g.calls = append(g.calls, c)
			}
		}
	}
	for _, g := range failing {
		if len(g.calls) >= th.FailedRepeats {
			out = append(out, failingLoop(agentID, g.calls))
		}
	}
	for _, g := range reads {
		if len(g.calls) >= th.ReadRepeats {
			out = append(out, readLoop(agentID, g.file, g.calls))
		}
	}
	// Denied, then the same effect on the same target in another form.
	for i, d := range cs {
		if sg, ok := retriedDeny(agentID, d, cs[i+1:]); ok {
			out = append(out, sg)
		}
	}
	return out
}

// failingKey tells failed calls apart: the same tool with the same input
// is the same call failing again.
func failingKey(c *ToolCall) string { return c.ToolName + "\x00" + string(c.Input) }

// failingLoop is the SignalLoop of the same call failing, cs (in the
// model's order, of one failingKey).
func failingLoop(agentID string, cs []*ToolCall) Signal {
	return Signal{Kind: SignalLoop, AgentID: agentID, Calls: callIDs(cs), Key: "failed:" + cs[0].ToolUseID,
		Detail: fmt.Sprintf("%s %s failed %s", cs[0].ToolName, cutDetail(cs[0].EntityName), times(len(cs)))}
}

// readLoop is the SignalLoop of the reads cs of file (in the model's
// order, a call once per mention of the file).
func readLoop(agentID, file string, cs []*ToolCall) Signal {
	return Signal{Kind: SignalLoop, AgentID: agentID, Calls: callIDs(cs), Key: "read:" + file,
		Detail: fmt.Sprintf("read %s %s", file, times(len(cs)))}
}

// callIDs returns the ids of the first maxEvidence calls of cs: a
// signal's evidence.
func callIDs(cs []*ToolCall) []string {
	ids := make([]string, 0, min(len(cs), maxEvidence))
	for _, c := range cs[:min(len(cs), maxEvidence)] {
		ids = append(ids, c.ToolUseID)
	}
	return ids
}

// retriedDeny returns the SignalRetriedDeny of d, when d is a denied call
// with an effect and a call of later (those after it, in the model's
// order) not denied has the same effect on the same target: the first
// such call.
func retriedDeny(agentID string, d *ToolCall, later []*ToolCall) (Signal, bool) {
	if d.Status != StatusDenied || d.Effect == "" {
		return Signal{}, false
	}
	for _, c := range later {
		if c.Status == StatusDenied || c.Effect != d.Effect || !sameTarget(d, c) {
			continue
		}
		return Signal{Kind: SignalRetriedDeny, AgentID: agentID, Calls: []string{d.ToolUseID, c.ToolUseID}, Key: "denied:" + d.ToolUseID,
			Detail: fmt.Sprintf("denied %s, then %s (%s)", cutDetail(d.EntityName), cutDetail(c.EntityName), c.Effect)}, true
	}
	return Signal{}, false
}

// sameTarget reports whether two calls act on the same thing: a path one
// writes is, or is inside, a path the other writes; without written paths,
// the same subtype on the same entity.
func sameTarget(a, b *ToolCall) bool {
	for _, x := range a.FilesWritten {
		for _, y := range b.FilesWritten {
			if x == y || strings.HasPrefix(y, strings.TrimSuffix(x, "/")+"/") || strings.HasPrefix(x, strings.TrimSuffix(y, "/")+"/") {
				return true
			}
		}
	}
	return len(a.FilesWritten) == 0 && len(b.FilesWritten) == 0 && a.Subtype == b.Subtype && a.EntityName == b.EntityName
}

func times(n int) string {
	if n == 1 {
		return "once"
	}
	return fmt.Sprintf("%d times", n)
}

func cutDetail(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 80 {
		i := 80
		for i > 0 && s[i]&0xC0 == 0x80 {
			i--
		}
		s = s[:i] + "…"
	}
	return s
}

package attribution

import (
	"fmt"
	"slices"
	"strings"

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
)

// Thresholds say when a signal is raised.
type Thresholds struct {
	// FailedRepeats: this many failures of the same call is a loop.
	FailedRepeats int
	// ReadRepeats: this many reads of the same file is a loop.
	ReadRepeats int
	// ThrashSwitches: this many changes of the agent writing a file (A,
	// B, A, B: three) is thrashing.
	ThrashSwitches int
}

// DefaultThresholds are the thresholds of Signals when none are given.
var DefaultThresholds = Thresholds{FailedRepeats: 3, ReadRepeats: 5, ThrashSwitches: 3}

// OrDefault returns th with its zero fields taken from DefaultThresholds.
func (th Thresholds) OrDefault() Thresholds {
	if th.FailedRepeats <= 0 {
		th.FailedRepeats = DefaultThresholds.FailedRepeats
	}
	if th.ReadRepeats <= 0 {
		th.ReadRepeats = DefaultThresholds.ReadRepeats
	}
	if th.ThrashSwitches <= 0 {
		th.ThrashSwitches = DefaultThresholds.ThrashSwitches
	}
	return th
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
	// "denied:<denied call>".
	Key string `json:"key"`
}

// AgentSignals are an agent's signals and its current run of failures.
type AgentSignals struct {
	AgentID string   `json:"agent_id"`
	Signals []Signal `json:"signals"`
	// FailuresInARow counts the agent's latest calls that failed, back to
	// its last call that did not.
	FailuresInARow int `json:"failures_in_a_row"`
}

// Signals reads the signals of each agent from a session's tool calls (as
// the model built them, classified), in the agents' order of first call.
// Zero thresholds take DefaultThresholds'.
func Signals(calls []*ToolCall, th Thresholds) []AgentSignals {
	th = th.OrDefault()
	byAgent := map[string][]*ToolCall{}
	var order []string
	for _, c := range calls {
		if _, ok := byAgent[c.AgentID]; !ok {
			order = append(order, c.AgentID)
		}
		byAgent[c.AgentID] = append(byAgent[c.AgentID], c)
	}
	thrash := thrashing(calls, th)
	out := make([]AgentSignals, 0, len(order))
	for _, id := range order {
		cs := slices.Clone(byAgent[id])
		slices.SortFunc(cs, compareCalls)
		sigs := append(agentSignals(id, cs, th), thrash[id]...)
		out = append(out, AgentSignals{AgentID: id, Signals: sigs, FailuresInARow: failuresInARow(cs)})
	}
	return out
}

// thrashing reads, across a session's agents, the files that agents took
// turns writing, and returns the signals by agent.
func thrashing(calls []*ToolCall, th Thresholds) map[string][]Signal {
	type turns struct {
		file     string
		ids      []string
		agents   []string // in order of first write
		last     string
		switches int
	}
	var files []*turns
	byFile := map[string]*turns{}
	cs := slices.Clone(calls)
	slices.SortFunc(cs, compareCalls)
	for _, c := range cs {
		if c.Status != StatusOK {
			continue // a write that did not happen takes no turn
		}
		for _, f := range c.FilesWritten {
			t := byFile[f]
			if t == nil {
				t = &turns{file: f}
				byFile[f] = t
				files = append(files, t)
			} else if t.last != c.AgentID {
				t.switches++
			}
			t.last = c.AgentID
			t.ids = append(t.ids, c.ToolUseID)
			if !slices.Contains(t.agents, c.AgentID) {
				t.agents = append(t.agents, c.AgentID)
			}
		}
	}
	out := map[string][]Signal{}
	for _, t := range files {
		if t.switches < th.ThrashSwitches {
			continue
		}
		ids := t.ids
		if len(ids) > maxEvidence {
			ids = ids[:maxEvidence]
		}
		detail := fmt.Sprintf("%s written by %d agents in turn, the writer changing %s", t.file, len(t.agents), times(t.switches))
		for _, a := range t.agents {
			out[a] = append(out[a], Signal{Kind: SignalThrash, AgentID: a, Calls: ids, Detail: detail, Key: "thrash:" + t.file})
		}
	}
	return out
}

func failed(c *ToolCall) bool { return c.Status == StatusError || c.Status == StatusInterrupted }

func failuresInARow(cs []*ToolCall) int {
	n := 0
	for i := len(cs) - 1; i >= 0; i-- {
		switch {
		case failed(cs[i]):
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
	add := func(kind, key, detail string, ids []string) {
		if len(ids) > maxEvidence {
			ids = ids[:maxEvidence]
		}
		out = append(out, Signal{Kind: kind, AgentID: agentID, Calls: ids, Detail: detail, Key: key})
	}
	// Loops: the same failing call, the same file read.
	type group struct {
		what string
		ids  []string
	}
	var failing, reads []*group
	byCall, byFile := map[string]*group{}, map[string]*group{}
	for _, c := range cs {
		if failed(c) {
			key := c.ToolName + "\x00" + string(c.Input)
			g := byCall[key]
			if g == nil {
				g = &group{what: c.ToolName + " " + cutDetail(c.EntityName)}
				byCall[key] = g
				failing = append(failing, g)
			}
			g.ids = append(g.ids, c.ToolUseID)
		}
		if c.Subtype == classify.SubtypeReadFile {
			for _, f := range c.FilesRead {
				g := byFile[f]
				if g == nil {
					g = &group{what: f}
					byFile[f] = g
					reads = append(reads, g)
				}
				g.ids = append(g.ids, c.ToolUseID)
			}
		}
	}
	for _, g := range failing {
		if len(g.ids) >= th.FailedRepeats {
			add(SignalLoop, "failed:"+g.ids[0], fmt.Sprintf("%s failed %s", g.what, times(len(g.ids))), g.ids)
		}
	}
	for _, g := range reads {
		if len(g.ids) >= th.ReadRepeats {
			add(SignalLoop, "read:"+g.what, fmt.Sprintf("read %s %s", g.what, times(len(g.ids))), g.ids)
		}
	}
	// Denied, then the same effect on the same target in another form.
	for i, d := range cs {
		if d.Status != StatusDenied || d.Effect == "" {
			continue
		}
		for _, c := range cs[i+1:] {
			if c.Status == StatusDenied || c.Effect != d.Effect || !sameTarget(d, c) {
				continue
			}
			add(SignalRetriedDeny, "denied:"+d.ToolUseID, fmt.Sprintf("denied %s, then %s (%s)", cutDetail(d.EntityName), cutDetail(c.EntityName), c.Effect),
				[]string{d.ToolUseID, c.ToolUseID})
			break
		}
	}
	return out
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

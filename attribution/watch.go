package attribution

import (
	"slices"

	"github.com/hookwatch/hookwatch/classify"
	"github.com/hookwatch/hookwatch/shell"
)

// Watch follows one session's agents and calls as a Group reports their
// changes (SessionChanges), so that its signals and what it waits on are
// read after every change at the cost of what changed, not of the whole
// session: Signals and Waiting read every call each time, which grows a
// round's work with the session. A Watch answers exactly what they answer
// over the same agents and calls; it keeps the versions it was given,
// which the caller must not change. It is not safe for concurrent use.
type Watch struct {
	th      Thresholds
	agents  map[string]*Agent
	calls   map[string]*ToolCall // by ToolUseID, the latest version given
	byAgent map[string]*agentCalls
	files   map[string]*fileWrites
	pending map[string]*ToolCall
	// dirtyFiles are the files whose writes changed since they were
	// last read; hot are those whose writers took turns often enough.
	dirtyFiles map[string]*fileWrites
	hot        map[string]*fileWrites
	// freshAgents and freshFiles changed since the last Fresh.
	freshAgents map[string]bool
	freshFiles  map[string]*fileWrites
}

// watchCallCost estimates the memory a Watch holds per call: its places in
// the Watch's maps and lists. The calls themselves are the Group's, which
// hands them out without copying them (SessionChanges). Measured at ~52
// bytes per call: BenchmarkModelHeap in collector with and without its
// Watch (2,321 and 2,295 bytes per event, a call per two events).
const watchCallCost = 64

// Size returns an estimate of the memory the Watch holds, for a caller
// that bounds what it keeps (the calls are the Group's, shared).
func (w *Watch) Size() int { return len(w.calls) * watchCallCost }

// agentCalls are one agent's calls and what Signals reads of them alone.
type agentCalls struct {
	calls []*ToolCall // in the model's order (compareCalls)
	// prompt is the agent's latest call with a prompt id (Waiting).
	prompt *ToolCall
	// signals and failures are agentSignals and failuresInARow of calls,
	// read again when dirty (Signals).
	signals  []Signal
	failures int
	dirty    bool
	// What agentSignals reads, kept as calls come and go, so that Fresh
	// reads the signals of the groups and denials a change touched rather
	// than all of the agent's calls: failing are the failed calls by tool
	// and input, reads the reads of a file by file, denied the denied
	// calls with an effect by effect, each in the model's order.
	failing, reads map[string]*callGroup
	denied         map[shell.Effect][]*ToolCall
	// freshGroups and freshDenied changed since the last Fresh.
	freshGroups map[*callGroup]bool
	freshDenied map[*ToolCall]bool
}

// callGroup are the calls of one loop agentSignals looks for: the same
// failing call, or the reads of one file (a call once per mention).
type callGroup struct {
	read  bool   // reads of file, else failures of one call
	file  string // when read
	calls []*ToolCall
	// reported is what names the loop Fresh last returned of the group
	// (the first failure's id, or the file), "" when it was under its
	// threshold since: a loop that grows keeps its key.
	reported string
}

func newAgentCalls() *agentCalls {
	return &agentCalls{failing: map[string]*callGroup{}, reads: map[string]*callGroup{},
		denied: map[shell.Effect][]*ToolCall{}, freshGroups: map[*callGroup]bool{}, freshDenied: map[*ToolCall]bool{}}
}

// note adds c to (or, with remove, removes it from) what agentSignals
// reads of ac, and marks what it touched fresh.
func (ac *agentCalls) note(c *ToolCall, remove bool) {
	touch := func(m map[string]*callGroup, key string, read bool) {
		cg := m[key]
		switch {
		case cg == nil && remove:
			return
		case cg == nil:
			cg = &callGroup{read: read}
			if read {
				cg.file = key
			}
			m[key] = cg
		}
		if remove {
			cg.calls = removeCall(cg.calls, c)
			if len(cg.calls) == 0 {
				delete(m, key)
			}
		} else {
			cg.calls = insertCall(cg.calls, c)
		}
		ac.freshGroups[cg] = true
	}
	if Failed(c.Status) {
		touch(ac.failing, failingKey(c), false)
	}
	if c.Subtype == classify.SubtypeReadFile {
		for _, f := range c.FilesRead {
			touch(ac.reads, f, true)
		}
	}
	if c.Effect == "" {
		return
	}
	if c.Status == StatusDenied {
		if remove {
			ac.denied[c.Effect] = removeCall(ac.denied[c.Effect], c)
			if len(ac.denied[c.Effect]) == 0 {
				delete(ac.denied, c.Effect)
			}
			delete(ac.freshDenied, c)
		} else {
			ac.denied[c.Effect] = insertCall(ac.denied[c.Effect], c)
			ac.freshDenied[c] = true
		}
		return
	}
	// A call that can answer the denials before it of its effect.
	for _, d := range ac.denied[c.Effect] {
		if compareCalls(d, c) >= 0 {
			break
		}
		if sameTarget(d, c) {
			ac.freshDenied[d] = true
		}
	}
}

// fileWrites are the calls that wrote one file with status ok, one entry
// per mention, in the model's order: the turns thrashing reads.
type fileWrites struct {
	file     string
	writes   []*ToolCall
	switches int
	agents   []string // in order of first write
	// stale: a write came in before others or went, and switches and
	// agents are to be counted again (a write after all others adds to
	// them as it comes).
	stale bool
	// reported are the agents whose SignalThrash of the file Fresh
	// returned since the file last was hot.
	reported map[string]bool
}

// NewWatch returns an empty Watch reading signals with th (zero fields
// take DefaultThresholds').
func NewWatch(th Thresholds) *Watch {
	w := &Watch{th: th.OrDefault()}
	w.clear()
	return w
}

func (w *Watch) clear() {
	w.agents, w.calls, w.byAgent = map[string]*Agent{}, map[string]*ToolCall{}, map[string]*agentCalls{}
	w.files, w.pending = map[string]*fileWrites{}, map[string]*ToolCall{}
	w.dirtyFiles, w.hot = map[string]*fileWrites{}, map[string]*fileWrites{}
	w.freshAgents, w.freshFiles = map[string]bool{}, map[string]*fileWrites{}
}

// Apply takes what changed in the session: with reset (the session, or
// its group, was derived again: sc then holds all of it) it forgets what
// it had first.
func (w *Watch) Apply(sc SessionChanges, reset bool) {
	if reset {
		w.clear()
	}
	for _, a := range sc.Agents {
		w.agents[a.AgentID] = a
	}
	for _, c := range sc.ToolCalls {
		if old := w.calls[c.ToolUseID]; old != nil {
			w.remove(old)
		}
		w.add(c)
	}
}

func (w *Watch) add(c *ToolCall) {
	w.calls[c.ToolUseID] = c
	ac := w.byAgent[c.AgentID]
	if ac == nil {
		ac = newAgentCalls()
		w.byAgent[c.AgentID] = ac
	}
	ac.calls = insertCall(ac.calls, c)
	ac.note(c, false)
	ac.dirty, w.freshAgents[c.AgentID] = true, true
	if c.PromptID != "" && (ac.prompt == nil || compareCalls(c, ac.prompt) > 0) {
		ac.prompt = c
	}
	if c.Status == StatusPending {
		w.pending[c.ToolUseID] = c
	}
	if c.Status != StatusOK {
		return
	}
	for _, f := range c.FilesWritten {
		fw := w.files[f]
		if fw == nil {
			fw = &fileWrites{file: f}
			w.files[f] = fw
		}
		n := len(fw.writes)
		fw.writes = insertCall(fw.writes, c)
		if !fw.stale && fw.writes[n] == c { // after all others: its turn
			switches, agents := fileTurns(fw.writes[max(n-1, 0):], fw.agents)
			fw.switches, fw.agents = fw.switches+switches, agents
		} else {
			fw.stale = true
		}
		w.dirtyFiles[f], w.freshFiles[f] = fw, fw
	}
}

func (w *Watch) remove(old *ToolCall) {
	delete(w.calls, old.ToolUseID)
	delete(w.pending, old.ToolUseID)
	if ac := w.byAgent[old.AgentID]; ac != nil {
		ac.calls = removeCall(ac.calls, old)
		ac.note(old, true)
		ac.dirty, w.freshAgents[old.AgentID] = true, true
		if ac.prompt == old {
			ac.prompt = nil
			for i := len(ac.calls) - 1; i >= 0; i-- {
				if ac.calls[i].PromptID != "" {
					ac.prompt = ac.calls[i]
					break
				}
			}
		}
		if len(ac.calls) == 0 {
			delete(w.byAgent, old.AgentID)
		}
	}
	if old.Status != StatusOK {
		return
	}
	for _, f := range old.FilesWritten {
		if fw := w.files[f]; fw != nil {
			fw.writes, fw.stale = removeCall(fw.writes, old), true
			w.dirtyFiles[f], w.freshFiles[f] = fw, fw
		}
	}
}

// insertCall inserts c into cs, kept in the model's order; a call
// mentioned twice (a file written twice by one call) sits twice.
func insertCall(cs []*ToolCall, c *ToolCall) []*ToolCall {
	i, _ := slices.BinarySearchFunc(cs, c, compareCalls)
	for i < len(cs) && compareCalls(cs[i], c) == 0 {
		i++ // after the entries of the same call
	}
	return slices.Insert(cs, i, c)
}

// removeCall removes every entry of c, as given before, from cs.
func removeCall(cs []*ToolCall, c *ToolCall) []*ToolCall {
	i, _ := slices.BinarySearchFunc(cs, c, compareCalls)
	j := i
	for j < len(cs) && cs[j] == c {
		j++
	}
	return slices.Delete(cs, i, j)
}

// Signals returns Signals of the session's agents and calls as given so
// far, reading again only the agents and files whose calls changed.
func (w *Watch) Signals() []AgentSignals {
	order := make([]string, 0, len(w.byAgent))
	for id, ac := range w.byAgent {
		order = append(order, id)
		w.read(id, ac)
	}
	slices.SortFunc(order, func(x, y string) int { return compareCalls(w.byAgent[x].calls[0], w.byAgent[y].calls[0]) })
	thrash := w.thrashing()
	agents, outliers := w.outliers()
	out := make([]AgentSignals, 0, len(order))
	for _, id := range order {
		ac := w.byAgent[id]
		sigs := append(slices.Clip(ac.signals), thrash[id]...)
		if o, ok := outliers[id]; ok {
			sigs = append(sigs, o)
			delete(outliers, id)
		}
		out = append(out, AgentSignals{AgentID: id, Signals: sigs, FailuresInARow: ac.failures})
	}
	if len(outliers) > 0 {
		slices.SortFunc(agents, compareAgents)
		for _, a := range agents {
			if o, ok := outliers[a.AgentID]; ok {
				out = append(out, AgentSignals{AgentID: a.AgentID, Signals: []Signal{o}})
			}
		}
	}
	return out
}

// Fresh returns the signals that can have been raised since the last
// Fresh: those of the loops, denials and files whose calls changed since,
// and every outlier. Every signal Signals returns now and did not return
// at the last Fresh is among them, as Signals returns it; a caller that
// counts each signal once, by key, reads these rather than all of a
// session's signals after every change. Its work is that of what changed,
// not of the agents' calls.
func (w *Watch) Fresh() []Signal {
	var out []Signal
	for id := range w.freshAgents {
		if ac := w.byAgent[id]; ac != nil {
			out = ac.fresh(id, out, w.th)
		}
	}
	clear(w.freshAgents)
	w.readFiles()
	// A file's thrash is new on the agents that joined its writers since
	// it was last read hot (all of them when it turned hot); on the others
	// it was returned already.
	for f, fw := range w.freshFiles {
		if w.hot[f] == nil {
			fw.reported = nil
			continue
		}
		var ids []string
		for _, a := range fw.agents {
			if fw.reported[a] {
				continue
			}
			if ids == nil {
				ids = callIDs(fw.writes)
			}
			if fw.reported == nil {
				fw.reported = map[string]bool{}
			}
			fw.reported[a] = true
			out = append(out, thrashSignal(f, a, ids, len(fw.agents), fw.switches))
		}
	}
	clear(w.freshFiles)
	_, outliers := w.outliers()
	for _, o := range outliers {
		out = append(out, o)
	}
	return out
}

// fresh appends to out the signals agentSignals reads of the groups and
// denials of ac that changed since the last fresh, as it reads them: of
// the loops, those it did not return before under the same key.
func (ac *agentCalls) fresh(agentID string, out []Signal, th Thresholds) []Signal {
	for g := range ac.freshGroups {
		names := ""
		switch {
		case g.read && len(g.calls) >= th.ReadRepeats:
			names = g.file
		case !g.read && len(g.calls) >= th.FailedRepeats:
			names = g.calls[0].ToolUseID
		}
		if names == g.reported {
			continue // under the threshold, or returned already
		}
		g.reported = names
		switch {
		case names == "":
		case g.read:
			out = append(out, readLoop(agentID, g.file, g.calls))
		default:
			out = append(out, failingLoop(agentID, g.calls))
		}
	}
	clear(ac.freshGroups)
	for d := range ac.freshDenied {
		i, _ := slices.BinarySearchFunc(ac.calls, d, compareCalls)
		if sg, ok := retriedDeny(agentID, d, ac.calls[i+1:]); ok {
			out = append(out, sg)
		}
	}
	clear(ac.freshDenied)
	return out
}

// read reads again what agentSignals and failuresInARow say of an
// agent's calls, when they changed.
func (w *Watch) read(id string, ac *agentCalls) {
	if ac.dirty {
		ac.signals, ac.failures, ac.dirty = agentSignals(id, ac.calls, w.th), failuresInARow(ac.calls), false
	}
}

// outliers returns the agents and Outliers of them.
func (w *Watch) outliers() ([]*Agent, map[string]Signal) {
	agents := make([]*Agent, 0, len(w.agents))
	for _, a := range w.agents {
		agents = append(agents, a)
	}
	byAgent := make(map[string][]*ToolCall, len(w.byAgent))
	for id, ac := range w.byAgent {
		byAgent[id] = ac.calls
	}
	return agents, Outliers(agents, byAgent, w.th)
}

// readFiles reads again the turns of the files whose writes changed.
func (w *Watch) readFiles() {
	for f, fw := range w.dirtyFiles {
		if fw.stale {
			fw.switches, fw.agents = fileTurns(fw.writes, fw.agents[:0])
			fw.stale = false
		}
		if fw.switches >= w.th.ThrashSwitches {
			w.hot[f] = fw
		} else {
			delete(w.hot, f)
		}
		if len(fw.writes) == 0 {
			delete(w.files, f)
		}
	}
	clear(w.dirtyFiles)
}

// thrashing is thrashing over the calls given, reading again only the
// files whose writes changed.
func (w *Watch) thrashing() map[string][]Signal {
	w.readFiles()
	if len(w.hot) == 0 {
		return nil
	}
	// In the order thrashing meets them: by first write, then by place
	// among that call's files.
	hot := make([]*fileWrites, 0, len(w.hot))
	for _, fw := range w.hot {
		hot = append(hot, fw)
	}
	slices.SortFunc(hot, func(x, y *fileWrites) int {
		if c := compareCalls(x.writes[0], y.writes[0]); c != 0 {
			return c
		}
		return slices.Index(x.writes[0].FilesWritten, x.file) - slices.Index(y.writes[0].FilesWritten, y.file)
	})
	out := map[string][]Signal{}
	for _, fw := range hot {
		addThrash(out, fw.file, callIDs(fw.writes), fw.agents, fw.switches)
	}
	return out
}

// Waiting returns Waiting of s (the session's summary, as its latest
// changes gave it) over the agents and calls given so far: it reads the
// calls still pending and each agent's latest call with a prompt id, which
// are all that Waiting's answer depends on.
func (w *Watch) Waiting(s *Session) []*ToolCall {
	if !s.Live() {
		return nil
	}
	calls := make([]*ToolCall, 0, len(w.pending)+len(w.byAgent))
	for _, c := range w.pending {
		calls = append(calls, c)
	}
	agents := make([]*Agent, 0, len(w.agents))
	for _, a := range w.agents {
		agents = append(agents, a)
	}
	for _, ac := range w.byAgent {
		if p := ac.prompt; p != nil && p.Status != StatusPending {
			calls = append(calls, p)
		}
	}
	return Waiting(s, agents, calls)
}

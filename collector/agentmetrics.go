package collector

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/decision"
	"github.com/hookwatch/hookwatch/label"
)

// The metrics per agent (docs/metrics.md) are counted from what the
// session model reports as changed (attribution.Changes), never from
// events: a call is counted once, when the model first stores it with a
// final status; an agent once, when the model first stores it; a prompt
// once, when the session's prompt count first goes past it.
//
// "First stores" is exact across rebuilds and restarts because it is
// judged against what is stored. Each group in memory remembers what was
// counted of it (counted); a group loaded from the store starts from its
// stored rows, which a previous round or a previous process counted when
// it wrote them. What a round counts is added only once the round's rows
// are stored, so a failed round, whose groups are loaded again, counts
// nothing twice.
const (
	// maxRuleLabels bounds the policy rule ids, first come first kept;
	// later ones are "other". The agent types and tools are bounded by
	// package label, which also names the spans.
	maxRuleLabels = 64
	// activeWindow is how recent the latest event of a session or agent
	// still running must be for it to count as active.
	activeWindow = 10 * time.Minute
	// maxLive bounds the sessions and agents watched for the active gauges.
	maxLive = 100_000
)

// Label values of agent_type that are not a subagent's type, and of
// rule_id for a denial no hookwatch rule made.
const (
	labelMain   = attribution.RoleMain
	labelClient = "client"
)

// durationBuckets are the upper bounds (seconds) of the tool call
// duration histogram: from a quick Read to a long build.
var durationBuckets = [...]float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}

// rowKey names a call or an agent of a session.
type rowKey struct{ session, id string }

// counted is what the metrics counted of one group's model.
type counted struct {
	calls   map[rowKey]struct{}    // final calls
	agents  map[rowKey]struct{}    // subagents
	prompts map[string]int         // session → prompts
	signals map[signalKey]struct{} // signals raised
}

// signalKey names a signal raised in a session (attribution.Signal.Key
// stays the same as it grows).
type signalKey struct{ session, agent, kind, key string }

func newCounted() *counted {
	return &counted{calls: map[rowKey]struct{}{}, agents: map[rowKey]struct{}{}, prompts: map[string]int{}, signals: map[signalKey]struct{}{}}
}

// callCount is one call to count: the labels before they are bounded.
type callCount struct {
	agentType, tool, status string
	durationMS              *int64
	rules                   []string // on a denial
}

// liveSession and liveAgent are what the active gauges need of a session
// or an agent that has not ended.
type liveSession struct {
	running bool
	last    time.Time
}

type liveAgent struct {
	agentType string // bounded by flush
	stopped   bool
	last      time.Time
}

// agentMetrics are the metrics per agent. observe, flush and discard are
// called by the modeler's goroutine only; write by scrapes.
type agentMetrics struct {
	set *metrics.Set

	// Owned by the modeler's goroutine.
	agentTypes, rules label.Set
	tools             label.Tools
	calls             map[[3]string]*metrics.Counter
	started           map[string]*metrics.Counter
	denials           map[string]*metrics.Counter
	prompts           *metrics.Counter
	signals           map[string]*metrics.Counter
	// thresholds are the server's thresholds of the signals.
	thresholds attribution.Thresholds
	// The round's counts, added by flush once its rows are stored.
	roundCalls    []callCount
	roundStarted  []string
	roundPrompts  int
	roundSignals  []string // kinds
	roundSessions map[string]liveSession
	roundAgents   map[rowKey]liveAgent

	mu        sync.Mutex
	durations map[[2]string]*leHistogram // by agent type and tool
	sessions  map[string]liveSession
	agents    map[rowKey]liveAgent
}

// leHistogram is a histogram with fixed buckets (durationBuckets), written
// as Prometheus' le buckets so that histogram_quantile reads it (the
// metrics package's own histograms write vmrange buckets).
type leHistogram struct {
	counts [len(durationBuckets) + 1]uint64 // not cumulative; the last is +Inf
	sum    float64
}

func (h *leHistogram) update(v float64) {
	i, _ := slices.BinarySearch(durationBuckets[:], v)
	h.counts[i]++
	h.sum += v
}

// write writes h as the series of name with labels (`k="v",…`).
func (h *leHistogram) write(w io.Writer, name, labels string) {
	var n uint64
	for i, c := range h.counts {
		n += c
		le := "+Inf"
		if i < len(durationBuckets) {
			le = strconv.FormatFloat(durationBuckets[i], 'g', -1, 64)
		}
		metrics.WriteCounterUint64(w, fmt.Sprintf(`%s_bucket{%s,le=%q}`, name, labels, le), n)
	}
	metrics.WriteCounterFloat64(w, fmt.Sprintf(`%s_sum{%s}`, name, labels), h.sum)
	metrics.WriteCounterUint64(w, fmt.Sprintf(`%s_count{%s}`, name, labels), n)
}

func newAgentMetrics(set *metrics.Set) *agentMetrics {
	return &agentMetrics{
		set:           set,
		agentTypes:    label.NewSet(label.MaxAgentTypes, label.Agent),
		tools:         label.NewTools(),
		rules:         label.NewSet(maxRuleLabels, ruleLabel),
		calls:         map[[3]string]*metrics.Counter{},
		durations:     map[[2]string]*leHistogram{},
		started:       map[string]*metrics.Counter{},
		denials:       map[string]*metrics.Counter{},
		prompts:       set.NewCounter(`hookwatch_prompts_total`),
		signals:       map[string]*metrics.Counter{},
		roundSessions: map[string]liveSession{},
		roundAgents:   map[rowKey]liveAgent{},
		sessions:      map[string]liveSession{},
		agents:        map[rowKey]liveAgent{},
	}
}

// agentTypeOf is the agent_type label of an agent or a call's agent,
// unbounded.
func agentTypeOf(agentID string, agentType *string) string {
	return attribution.TypeName(agentID, agentType, label.Unknown)
}

// observe notes what one session's changes count, against what c says was
// counted already, and updates c; w follows the session, its changes
// applied, and is read for the signals they can have raised
// (attribution.Watch.Fresh) when calls or agents changed. The counts wait
// in the round until flush.
func (am *agentMetrics) observe(c *counted, sc *attribution.SessionChanges, w *attribution.Watch) {
	s := sc.Session
	id := s.SessionID
	if len(sc.ToolCalls) > 0 || len(sc.Agents) > 0 {
		for _, sg := range w.Fresh() {
			sk := signalKey{id, sg.AgentID, sg.Kind, sg.Key}
			if _, ok := c.signals[sk]; !ok {
				c.signals[sk] = struct{}{}
				am.roundSignals = append(am.roundSignals, sk.kind)
			}
		}
	}
	for _, tc := range sc.ToolCalls {
		if !tc.Finished() {
			continue
		}
		k := rowKey{id, tc.ToolUseID}
		if _, ok := c.calls[k]; ok {
			continue
		}
		c.calls[k] = struct{}{}
		cc := callCount{agentType: agentTypeOf(tc.AgentID, tc.AgentType), tool: tc.ToolName, status: tc.Status, durationMS: tc.DurationMS}
		if tc.Status == attribution.StatusDenied {
			cc.rules = denyingRules(tc.Decision)
		}
		am.roundCalls = append(am.roundCalls, cc)
	}
	for _, a := range sc.Agents {
		if a.AgentID == "" {
			continue
		}
		k := rowKey{id, a.AgentID}
		if _, ok := c.agents[k]; !ok {
			c.agents[k] = struct{}{}
			am.roundStarted = append(am.roundStarted, agentTypeOf(a.AgentID, a.AgentType))
		}
		am.roundAgents[k] = liveAgent{agentType: agentTypeOf(a.AgentID, a.AgentType), stopped: a.StoppedAt != nil, last: a.LastEventAt}
	}
	if n := s.Counts.Prompts; n > c.prompts[id] {
		am.roundPrompts += n - c.prompts[id]
		c.prompts[id] = n
	}
	am.roundSessions[id] = liveSession{running: s.Live(), last: s.LastEventAt}
}

// raised names the signals (attribution.Signals) of a session. A stall,
// which depends on the clock, is counted by the sweep (stall.go).
func raised(session string, signals []attribution.AgentSignals) []signalKey {
	var out []signalKey
	for _, a := range signals {
		for _, sg := range a.Signals {
			out = append(out, signalKey{session, a.AgentID, sg.Kind, sg.Key})
		}
	}
	return out
}

// denyingRules returns the rule ids of a denial's decision (decision.Audit),
// or labelClient when no hookwatch rule denied the call (the client did).
func denyingRules(raw json.RawMessage) []string {
	var a decision.Audit
	if len(raw) > 0 && json.Unmarshal(raw, &a) == nil && a.Action == decision.ActionDeny && len(a.RuleIDs) > 0 {
		return a.RuleIDs
	}
	return []string{labelClient}
}

// discard forgets the round's counts: its rows were not stored.
func (am *agentMetrics) discard() {
	am.roundCalls, am.roundStarted, am.roundPrompts = am.roundCalls[:0], am.roundStarted[:0], 0
	am.roundSignals = am.roundSignals[:0]
	clear(am.roundSessions)
	clear(am.roundAgents)
}

// flush adds the round's counts to the metrics: its rows are stored.
func (am *agentMetrics) flush() {
	am.mu.Lock() // for the durations
	defer am.mu.Unlock()
	for _, cc := range am.roundCalls {
		at, tool := am.agentTypes.Bound(cc.agentType), am.tools.Bound(cc.tool)
		counter(am.set, am.calls, [3]string{at, tool, cc.status}, `hookwatch_tool_calls_total{agent_type=%q,tool=%q,status=%q}`, at, tool, cc.status).Inc()
		if cc.durationMS != nil && *cc.durationMS >= 0 { // hook times from skewed clocks
			dk := [2]string{at, tool}
			h := am.durations[dk]
			if h == nil {
				h = &leHistogram{}
				am.durations[dk] = h
			}
			h.update(float64(*cc.durationMS) / 1000)
		}
		for _, r := range cc.rules {
			r = am.rules.Bound(r)
			counter(am.set, am.denials, r, `hookwatch_denials_total{rule_id=%q}`, r).Inc()
		}
	}
	for _, t := range am.roundStarted {
		t = am.agentTypes.Bound(t)
		counter(am.set, am.started, t, `hookwatch_subagents_started_total{agent_type=%q}`, t).Inc()
	}
	am.prompts.Add(am.roundPrompts)
	for _, k := range am.roundSignals { // a few fixed kinds: no bound needed
		counter(am.set, am.signals, k, `hookwatch_signals_total{kind=%q}`, k).Inc()
	}
	for id, ls := range am.roundSessions {
		if !ls.running {
			delete(am.sessions, id)
		} else if _, ok := am.sessions[id]; ok || len(am.sessions) < maxLive {
			am.sessions[id] = ls
		}
	}
	for k, la := range am.roundAgents {
		la.agentType = am.agentTypes.Bound(la.agentType)
		if la.stopped {
			delete(am.agents, k)
		} else if _, ok := am.agents[k]; ok || len(am.agents) < maxLive {
			am.agents[k] = la
		}
	}
	am.discard()
}

// counter returns m[k], the counter of label values labels, or creates it
// in set, named by format with them: the map spares formatting the name on
// every increment.
func counter[K comparable](set *metrics.Set, m map[K]*metrics.Counter, k K, format string, labels ...string) *metrics.Counter {
	c := m[k]
	if c == nil {
		args := make([]any, len(labels))
		for i, v := range labels {
			args[i] = v
		}
		c = set.GetOrCreateCounter(fmt.Sprintf(format, args...))
		m[k] = c
	}
	return c
}

// ruleLabel is the fixed vocabulary of the rule ids: labelClient alone,
// for a denial no hookwatch rule made.
func ruleLabel(v string) string {
	if v == labelClient {
		return v
	}
	return label.Other
}

// forgetActive drops the sessions and agents the active gauges count: a
// collector that stops computing the model (a standby of a shared store)
// is told nothing more of them, and the new holder counts them. Called
// by the modeler's goroutine.
func (am *agentMetrics) forgetActive() {
	clear(am.roundSessions)
	clear(am.roundAgents)
	am.mu.Lock()
	clear(am.sessions)
	clear(am.agents)
	am.mu.Unlock()
}

// write writes the duration histograms and the active gauges.
func (am *agentMetrics) write(w io.Writer, now time.Time) {
	am.mu.Lock()
	keys := slices.Collect(maps.Keys(am.durations))
	slices.SortFunc(keys, func(a, b [2]string) int { return cmp.Or(strings.Compare(a[0], b[0]), strings.Compare(a[1], b[1])) })
	for _, k := range keys {
		am.durations[k].write(w, "hookwatch_tool_call_duration_seconds", fmt.Sprintf(`agent_type=%q,tool=%q`, k[0], k[1]))
	}
	am.mu.Unlock()
	am.writeActive(w, now)
}

// writeActive writes the active gauges: sessions still running or waiting
// on background work, and agents not stopped, each with an event within
// activeWindow of now; the main agent of each active session counts as an
// agent of type main. It forgets what is no longer active.
func (am *agentMetrics) writeActive(w io.Writer, now time.Time) {
	cutoff := now.Add(-activeWindow)
	am.mu.Lock()
	sessions := 0
	for id, ls := range am.sessions {
		if ls.last.Before(cutoff) {
			delete(am.sessions, id)
			continue
		}
		sessions++
	}
	byType := map[string]uint64{}
	for k, la := range am.agents {
		if _, ok := am.sessions[k.session]; !ok || la.last.Before(cutoff) {
			delete(am.agents, k)
			continue
		}
		byType[la.agentType]++
	}
	am.mu.Unlock()
	metrics.WriteGaugeUint64(w, "hookwatch_active_sessions", uint64(sessions))
	// The main agents' series is always there, 0 while nothing runs, so
	// that a panel on it reads 0 rather than no data.
	byType[labelMain] += uint64(sessions)
	types := make([]string, 0, len(byType))
	for t := range byType {
		types = append(types, t)
	}
	slices.Sort(types)
	for _, t := range types {
		metrics.WriteGaugeUint64(w, fmt.Sprintf(`hookwatch_active_agents{agent_type=%q}`, t), byType[t])
	}
}

// countedOf is what a standby that takes the lease over counts as counted
// of a group it kept (shared.go): everything the group holds, which the
// previous holder counted as it stored it. What that holder had not stored
// when it ended is counted by neither: its counters ended with it.
func (m *modeler) countedOf(gs *groupState) *counted {
	c := newCounted()
	for id := range gs.seq {
		s := gs.g.Session(id)
		if s == nil {
			continue
		}
		c.prompts[id] = s.Counts.Prompts
		for _, tc := range gs.g.ToolCalls(id) {
			if tc.Finished() {
				c.calls[rowKey{id, tc.ToolUseID}] = struct{}{}
			}
		}
		for _, a := range gs.g.Agents(id) {
			if a.AgentID != "" {
				c.agents[rowKey{id, a.AgentID}] = struct{}{}
			}
		}
		if w := gs.watches[id]; w != nil {
			for _, sk := range raised(id, w.Signals()) {
				c.signals[sk] = struct{}{}
			}
		}
	}
	return c
}

// baseline fills c with what the store holds of sessions ids: a call
// stored final, an agent stored, a session's prompts, the signals its
// stored calls raise were counted when they were written.
func (m *modeler) baseline(ctx context.Context, c *counted, ids []string) error {
	models, err := m.st.SessionModels(ctx, ids)
	if err != nil {
		return err
	}
	for id, sm := range models {
		var s struct {
			Counts attribution.Counts `json:"counts"`
		}
		if len(sm.Summary) > 0 && json.Unmarshal(sm.Summary, &s) == nil {
			c.prompts[id] = s.Counts.Prompts
		}
	}
	for _, id := range ids {
		stored, _, err := m.stored.calls(ctx, id, 0)
		if err != nil {
			return err
		}
		for _, tc := range stored {
			if tc.Finished() {
				c.calls[rowKey{id, tc.ToolUseID}] = struct{}{}
			}
		}
		agents, err := m.stored.agents(ctx, id)
		if err != nil {
			return err
		}
		for _, a := range agents {
			if a.AgentID != "" {
				c.agents[rowKey{id, a.AgentID}] = struct{}{}
			}
		}
		for _, sk := range raised(id, attribution.Signals(agents, stored, m.perAgent.thresholds)) {
			c.signals[sk] = struct{}{}
		}
	}
	return nil
}

package attribution

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/pricing"
)

// Usage is the token usage of an agent, a turn or a session: the API
// responses its transcripts recorded (event.TranscriptUsage, imported from
// the transcripts; no hook reports usage), each counted once however many
// records repeat it, priced by the price table in force (pricing.Default).
type Usage struct {
	InputTokens         int64 `json:"input_tokens"`
	OutputTokens        int64 `json:"output_tokens"`
	CacheReadTokens     int64 `json:"cache_read_tokens"`
	CacheCreationTokens int64 `json:"cache_creation_tokens"`
	// Responses counts the API responses (distinct message ids).
	Responses int `json:"responses"`
	// CostUSD is what the priced responses cost; Unpriced counts the
	// responses of models the price table lacks, left out of CostUSD.
	CostUSD  float64 `json:"cost_usd"`
	Unpriced int     `json:"unpriced,omitempty"`
	// Models are the models that answered, in order of name.
	Models []string `json:"models,omitempty"`
}

// TurnUsage is the usage of one turn: the responses, of every agent,
// after one prompt of the user (prompt_id; "" gathers responses no prompt
// id reached).
type TurnUsage struct {
	PromptID string `json:"prompt_id"`
	// StartedAt is the turn's first response.
	StartedAt time.Time `json:"started_at"`
	Usage
}

// response is one API response as its records showed it so far.
type response struct {
	agent  *agentState
	prompt string
	model  string
	at     time.Time
	tokens pricing.Tokens
}

// tally is a sum of responses, kept exact: cost in nano-dollars, so that
// adding and taking away responses in any order ends on the same figure.
type tally struct {
	tokens    pricing.Tokens
	responses int
	nanoUSD   int64
	unpriced  int
	models    map[string]int
}

func (t *tally) add(r *response, n int) {
	t.tokens.Input += int64(n) * r.tokens.Input
	t.tokens.Output += int64(n) * r.tokens.Output
	t.tokens.CacheRead += int64(n) * r.tokens.CacheRead
	t.tokens.CacheWrite += int64(n) * r.tokens.CacheWrite
	t.responses += n
	if usd, ok := pricing.Default().Cost(r.model, r.tokens); ok {
		t.nanoUSD += int64(n) * int64(math.Round(usd*1e9))
	} else {
		t.unpriced += n
	}
	if r.model != "" {
		if t.models == nil {
			t.models = map[string]int{}
		}
		if t.models[r.model] += n; t.models[r.model] == 0 {
			delete(t.models, r.model)
		}
	}
}

// usage returns the tally as a Usage; nil for no response.
func (t *tally) usage() *Usage {
	if t == nil || t.responses == 0 {
		return nil
	}
	u := &Usage{
		InputTokens: t.tokens.Input, OutputTokens: t.tokens.Output,
		CacheReadTokens: t.tokens.CacheRead, CacheCreationTokens: t.tokens.CacheWrite,
		Responses: t.responses, CostUSD: float64(t.nanoUSD) / 1e9, Unpriced: t.unpriced,
	}
	for m := range t.models {
		u.Models = append(u.Models, m)
	}
	slices.Sort(u.Models)
	return u
}

func (t *tally) merge(o *tally) {
	t.tokens.Input += o.tokens.Input
	t.tokens.Output += o.tokens.Output
	t.tokens.CacheRead += o.tokens.CacheRead
	t.tokens.CacheWrite += o.tokens.CacheWrite
	t.responses += o.responses
	t.nanoUSD += o.nanoUSD
	t.unpriced += o.unpriced
	for m, n := range o.models {
		if t.models == nil {
			t.models = map[string]int{}
		}
		t.models[m] += n
	}
}

// turnTally is a turn's tally and its first response.
type turnTally struct {
	tally
	at time.Time
}

// responseKey names the API response r, a record of usage u, is of: its
// message id, else the record's own uuid (or envelope id).
func responseKey(r *record, u *event.TranscriptUsageInput) string {
	if u.MessageID != "" {
		return u.MessageID
	}
	return "uuid:" + cmp.Or(u.UUID, r.id)
}

// usage takes one record of an API response. Records of one response
// (same message id) repeat its usage as it grows: the response keeps the
// largest figure of each kind, which does not depend on the order the
// records come in.
func (b *sessionBuilder) usage(r *record, ag *agentState, u *event.TranscriptUsageInput) {
	key := responseKey(r, u)
	if b.responses == nil {
		b.responses, b.turns = map[string]*response{}, map[string]*turnTally{}
	}
	cur := &response{agent: ag, prompt: r.p.PromptID, model: r.p.Model, at: r.at(), tokens: pricing.Tokens{
		Input: u.Usage.InputTokens, Output: u.Usage.OutputTokens, CacheRead: u.Usage.CacheReadInputTokens,
		CacheWrite: u.Usage.CacheCreationInputTokens, CacheWrite1h: u.Usage.CacheCreation.Ephemeral1h,
	}}
	if old := b.responses[key]; old != nil {
		b.countResponse(old, -1)
		cur.agent = old.agent
		cur.at = minTime(old.at, cur.at)
		cur.prompt = cmp.Or(old.prompt, cur.prompt)
		cur.model = cmp.Or(old.model, cur.model)
		cur.tokens = pricing.Tokens{
			Input: max(old.tokens.Input, cur.tokens.Input), Output: max(old.tokens.Output, cur.tokens.Output),
			CacheRead: max(old.tokens.CacheRead, cur.tokens.CacheRead), CacheWrite: max(old.tokens.CacheWrite, cur.tokens.CacheWrite),
			CacheWrite1h: max(old.tokens.CacheWrite1h, cur.tokens.CacheWrite1h),
		}
	}
	b.responses[key] = cur
	b.countResponse(cur, 1)
}

// commutesLate reports whether adding r, which sorts before records the
// session has, as if it came last gives what deriving the session again in
// canonical order would. It does for the usage of an API response whose
// agent began before it, unless r would have given the session or the
// agent a first-come value (the session's runtime, directory and
// transcript, the agent's type and spawning call) other than the one a
// later record gave, or its response already has records of another agent
// or another prompt or model: the rest of what it adds are sums, maxima and
// minima. A Group applies such records, which serve --watch-transcripts
// reads after the hooks' later events, without deriving their session
// again.
func (b *sessionBuilder) commutesLate(r *record) bool {
	u, ok := r.p.Event.(*event.TranscriptUsageInput)
	if !ok {
		return false
	}
	p, s := r.p, b.s
	ag := b.agents[p.AgentID]
	if ag == nil || !before(ag.first, r) {
		return false
	}
	// same: r says nothing of a value, or what is held. kept: what r says
	// of a first-come value is the same, or comes after the record the
	// value came from.
	same := func(held, given string) bool { return held == "" || given == "" || held == given }
	kept := func(held, given string, from *record) bool { return same(held, given) || before(from, r) }
	if m := r.rareFields().Subagent; p.AgentID != "" && m != nil && m.ToolUseID != "" && ag.sidecar != nil && *ag.sidecar != *m && !before(ag.sidecarFrom, r) {
		return false
	}
	if p.AgentType.Set && ag.typ.Set && ag.typ != p.AgentType && !before(ag.typFrom, r) {
		return false
	}
	if !kept(s.Runtime, r.common.Runtime, b.runtimeFrom) {
		return false
	}
	if p.AgentID == "" && (!kept(s.CWD, p.CWD, b.cwdFrom) || !kept(s.TranscriptPath, p.TranscriptPath, b.pathFrom)) {
		return false
	}
	old := b.responses[responseKey(r, u)]
	return old == nil || old.agent == ag && same(old.prompt, p.PromptID) && same(old.model, p.Model)
}

// before reports whether record a sorts before record b.
func before(a, b *record) bool { return a != nil && compareItems(a.item, b.item) < 0 }

// countResponse adds a response to (n = 1) or takes it from (n = -1) the tallies
// of its agent and its turn.
func (b *sessionBuilder) countResponse(r *response, n int) {
	r.agent.usage.add(r, n)
	t := b.turns[r.prompt]
	if t == nil {
		t = &turnTally{at: r.at}
		b.turns[r.prompt] = t
	}
	t.add(r, n)
	if r.at.Before(t.at) {
		t.at = r.at
	}
}

// finishUsage sets the usage of the agents (and the model each ran), the
// session and its turns. It runs after the session's Model is settled.
func (b *sessionBuilder) finishUsage() {
	var total tally
	for _, a := range b.agentSeq {
		a.a.Usage = a.usage.usage()
		a.a.Model = agentModel(b.s, a)
		total.merge(&a.usage)
	}
	b.s.Usage = total.usage()
	b.s.Turns = nil
	for id, t := range b.turns {
		if u := t.usage(); u != nil {
			b.s.Turns = append(b.s.Turns, TurnUsage{PromptID: id, StartedAt: t.at, Usage: *u})
		}
	}
	slices.SortFunc(b.s.Turns, func(x, y TurnUsage) int {
		if c := x.StartedAt.Compare(y.StartedAt); c != 0 {
			return c
		}
		return cmp.Compare(x.PromptID, y.PromptID)
	})
}

// agentModel is the one model agent a of session s ran (Agent.Model): the
// model its events named, else the only model that answered it: a
// response names the model its request asked for (at most a dated version
// of an alias), so one answering model is the model asked for too.
func agentModel(s *Session, a *agentState) string {
	named := a.model
	if a.a.AgentID == "" {
		named = s.Model
	}
	if named == "" && a.a.Usage != nil && len(a.a.Usage.Models) == 1 {
		return a.a.Usage.Models[0]
	}
	return named
}

// sameUsage reports whether two usages are equal.
func sameUsage(x, y *Usage) bool {
	if x == nil || y == nil {
		return x == y
	}
	return x.InputTokens == y.InputTokens && x.OutputTokens == y.OutputTokens && x.CacheReadTokens == y.CacheReadTokens &&
		x.CacheCreationTokens == y.CacheCreationTokens && x.Responses == y.Responses && x.CostUSD == y.CostUSD &&
		x.Unpriced == y.Unpriced && slices.Equal(x.Models, y.Models)
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

package otlp

import (
	"bytes"
	"context"
	"encoding/hex"
	"strconv"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/demo"
	"github.com/hookwatch/hookwatch/internal/otelcol"
)

// transcriptRun is one real run of Claude Code 2.1.197 (three subagents in
// parallel) captured twice: the envelopes its hooks delivered, and those
// the importer read from the transcripts it wrote, which alone carry the
// token usage of each API response.
func transcriptRun(t *testing.T) (hooks, imported []event.Envelope) {
	t.Helper()
	hooks, imported, err := demo.Transcripts("../../attribution/testdata/claude-transcript")
	if err != nil {
		t.Fatal(err)
	}
	return hooks, imported
}

// usageSession is the session of the run with the transcripts' usage.
func usageSession(t *testing.T) (*attribution.Session, []event.Envelope) {
	t.Helper()
	hooks, imported := transcriptRun(t)
	envs := append(append([]event.Envelope(nil), hooks...), imported...)
	res := attribution.Build(envs)
	if len(res.Sessions) != 1 {
		t.Fatalf("%d sessions", len(res.Sessions))
	}
	s := res.Sessions[0]
	withUsage := 0
	for _, a := range s.Agents {
		if a.Usage != nil {
			withUsage++
		}
	}
	if withUsage < 4 {
		t.Fatalf("the fixture's usage reaches %d agents of %d", withUsage, len(s.Agents))
	}
	return s, envs
}

// wantUsage is what a span carrying usage u says of it, by attribute, as
// text; absent attributes are "".
func wantUsage(u *attribution.Usage) map[string]string {
	w := map[string]string{
		"gen_ai.usage.input_tokens": "", "gen_ai.usage.output_tokens": "",
		"gen_ai.usage.cache_read.input_tokens": "", "gen_ai.usage.cache_creation.input_tokens": "",
		"gen_ai.usage.cache_write.input_tokens": "",
		"gen_ai.response.model":                 "", "hookwatch.usage.responses": "", "hookwatch.usage.cost_usd": "",
		"hookwatch.usage.unpriced": "",
	}
	if u == nil {
		return w
	}
	// The conventions' input tokens include the cached ones, which
	// Anthropic (and the model, for Codex's too) count apart.
	w["gen_ai.usage.input_tokens"] = strconv.FormatInt(u.InputTokens+u.CacheReadTokens+u.CacheCreationTokens, 10)
	w["gen_ai.usage.output_tokens"] = strconv.FormatInt(u.OutputTokens, 10)
	w["gen_ai.usage.cache_read.input_tokens"] = strconv.FormatInt(u.CacheReadTokens, 10)
	w["gen_ai.usage.cache_creation.input_tokens"] = strconv.FormatInt(u.CacheCreationTokens, 10)
	w["gen_ai.usage.cache_write.input_tokens"] = strconv.FormatInt(u.CacheCreationTokens, 10)
	if len(u.Models) == 1 {
		w["gen_ai.response.model"] = u.Models[0]
	}
	w["hookwatch.usage.responses"] = strconv.Itoa(u.Responses)
	if u.Responses > u.Unpriced {
		w["hookwatch.usage.cost_usd"] = strconv.FormatFloat(u.CostUSD, 'g', -1, 64)
	}
	if u.Unpriced > 0 {
		w["hookwatch.usage.unpriced"] = strconv.Itoa(u.Unpriced)
	}
	return w
}

// usageSpanID is the span that carries agent a's usage: a subagent's
// span, the main agent's first run (AgentSpanID(session, "") too).
func usageSpanID(s *attribution.Session, a *attribution.Agent) []byte {
	return AgentSpanID(s.SessionID, a.AgentID)
}

// checkUsage checks that got (a span's attribute by key) says what want
// does.
func checkUsage(t *testing.T, what string, got func(key string) string, want map[string]string) {
	t.Helper()
	for k, w := range want {
		if g := got(k); g != w {
			t.Errorf("%s: %s = %q, want %q", what, k, g, w)
		}
	}
}

// TestAgentUsageSpans: each agent's invoke_agent span carries the usage
// the model read from the transcripts, as the real collector receives it;
// the main agent's on its first run's span, and no other span any. Each
// names the model the agent ran: the Explore subagent that Haiku answered
// is not given the main agent's Opus.
func TestAgentUsageSpans(t *testing.T) {
	r := receiver(t)
	s, _ := usageSession(t)
	spans := Spans(sessionOf(s))
	checkTrace(t, s, spans)
	c := &Client{Endpoint: r.Endpoint}
	rs := []*tracepb.ResourceSpans{{Resource: Resource(s.Summary()), ScopeSpans: []*tracepb.ScopeSpans{{Scope: scope, Spans: spans}}}}
	if err := c.Send(context.Background(), rs); err != nil {
		t.Fatal(err)
	}
	checkReceived(t, r, spans)
	got, err := r.Spans(hex.EncodeToString(TraceID(s.SessionID)))
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]otelcol.Span{}
	for _, sp := range got {
		byID[sp.SpanID] = sp
	}
	carriers := map[string]bool{}
	for _, a := range s.Agents {
		id := hex.EncodeToString(usageSpanID(s, a))
		carriers[id] = true
		checkUsage(t, "agent "+a.AgentID, byID[id].Attr, wantUsage(a.Usage))
		want := "claude-opus-4-8"
		if a.AgentID == "aefc1976db18e23bf" {
			want = "claude-haiku-4-5-20251001"
		}
		if got := byID[id].Attr(attrRequestModel); got != want {
			t.Errorf("agent %q: %s = %q, want %q", a.AgentID, attrRequestModel, got, want)
		}
	}
	for id, sp := range byID {
		if !carriers[id] {
			checkUsage(t, sp.Name, sp.Attr, wantUsage(nil))
		}
	}
}

// TestUsageAttributes: the conventions' input tokens add the cached ones
// the model counts apart; several models are listed, one is the response
// model. The fixtures' responses read and wrote no cache, so the main
// agent of the real run is given figures that did.
func TestUsageAttributes(t *testing.T) {
	s, _ := usageSession(t)
	main := *s.Agents[0]
	u := *main.Usage
	u.CacheReadTokens, u.CacheCreationTokens = 1000, 300
	u.Models = []string{"claude-haiku-4-5-20251001", "claude-opus-4-8"}
	main.Usage = &u
	sp := AgentSpans(s.Summary(), &main)[0]
	want := wantUsage(&u)
	if want["gen_ai.usage.input_tokens"] != strconv.FormatInt(u.InputTokens+1300, 10) {
		t.Fatalf("want %v", want)
	}
	checkUsage(t, "main agent", func(k string) string { return attr(sp, k) }, want)
	if got := attr(sp, attrUsageModels); got != "[claude-haiku-4-5-20251001 claude-opus-4-8]" {
		t.Fatalf("%s = %s", attrUsageModels, got)
	}
}

// TestMainUsageFirstRun: in a session of several runs, the main agent's
// usage is on its first run's span alone: a backend that sums the spans
// counts it once.
func TestMainUsageFirstRun(t *testing.T) {
	s, _ := usageSession(t)
	sum := s.Summary()
	start := sum.Runs[0].StartedAt
	sum.Runs = append(sum.Runs, attribution.Run{Source: "resume", StartedAt: start.Add(time.Second)})
	spans := MainSpans(sum, s.Agents[0])
	if len(spans) != 2 || !bytes.Equal(spans[0].SpanId, AgentSpanID(s.SessionID, "")) {
		t.Fatalf("%d run spans", len(spans))
	}
	checkUsage(t, "first run", func(k string) string { return attr(spans[0], k) }, wantUsage(s.Agents[0].Usage))
	checkUsage(t, "second run", func(k string) string { return attr(spans[1], k) }, wantUsage(nil))
}

// TestExportSessionUsage: the stored export reads each agent's usage from
// the model's rows, and gives the very spans the model in memory gives.
func TestExportSessionUsage(t *testing.T) {
	s, envs := usageSession(t)
	st := storeCapture(t, envs)
	sent := map[string]*tracepb.Span{}
	send := func(_ context.Context, rs []*tracepb.ResourceSpans) error {
		for _, r := range rs {
			for _, ss := range r.ScopeSpans {
				for _, sp := range ss.Spans {
					sent[string(sp.SpanId)] = sp
				}
			}
		}
		return nil
	}
	if _, err := ExportSession(context.Background(), st, s.SessionID, send, 0); err != nil {
		t.Fatal(err)
	}
	want := Spans(sessionOf(s))
	if len(sent) != len(want) {
		t.Fatalf("%d spans exported, want %d", len(sent), len(want))
	}
	for _, w := range want {
		if !proto.Equal(sent[string(w.SpanId)], w) {
			t.Fatalf("exported\n%v\nthe model gives\n%v", sent[string(w.SpanId)], w)
		}
	}
	for _, a := range s.Agents {
		sp := sent[string(usageSpanID(s, a))]
		checkUsage(t, "agent "+a.AgentID, func(k string) string { return attr(sp, k) }, wantUsage(a.Usage))
	}
}

// TestAgentRequestModel: an agent's span names the model the agent ran as
// its request model, and, when the agent's responses were read, the one
// that answered as its response model; a subagent without a model of its
// own (none read yet, or several) names none, not the session's.
func TestAgentRequestModel(t *testing.T) {
	s, _ := usageSession(t)
	sum := s.Summary()
	sum.Model = "claude-opus-4-8"
	var haiku *attribution.Agent
	for _, a := range s.Agents {
		if a.AgentID == "aefc1976db18e23bf" {
			haiku = a
		}
	}
	if haiku == nil {
		t.Fatal("no Haiku subagent in the run")
	}
	sp := AgentSpan(sum, haiku)
	if got, got2 := attr(sp, attrRequestModel), attr(sp, attrResponseModel); got != "claude-haiku-4-5-20251001" || got2 != got {
		t.Fatalf("the Haiku subagent: request model %q, response model %q", got, got2)
	}
	// The same subagent before its transcript was read, then answered by
	// two models.
	unread := *haiku
	unread.Usage, unread.Model = nil, ""
	mixed := unread
	mixed.Usage = &attribution.Usage{Responses: 2, Models: []string{"claude-haiku-4-5-20251001", "claude-opus-4-8"}}
	for name, a := range map[string]*attribution.Agent{"unread": &unread, "two models": &mixed} {
		sp := AgentSpan(sum, a)
		if got, got2 := attr(sp, attrRequestModel), attr(sp, attrResponseModel); got != "" || got2 != "" {
			t.Errorf("%s: request model %q, response model %q, want none (the session's is %q)", name, got, got2, sum.Model)
		}
	}
	if got := attr(AgentSpan(sum, &mixed), attrUsageModels); got != "[claude-haiku-4-5-20251001 claude-opus-4-8]" {
		t.Errorf("two models: %s = %q", attrUsageModels, got)
	}
}

package otlp

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
	"time"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/classify"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/label"
)

// Session is one session of the model, as much of it as a trace is made of:
// its summary (attribution.Session without agents and calls), its agents and
// its tool calls.
type Session struct {
	Summary   *attribution.Session
	Agents    []*attribution.Agent
	ToolCalls []*attribution.ToolCall
}

// maxStatusMessage caps the error text a failed call's span status carries;
// the model keeps more, the trace needs the gist.
const maxStatusMessage = 512

// TraceID returns the trace id of a session: the first 16 bytes of a
// SHA-256 of "trace" and its id (see derive), the same on every export.
func TraceID(sessionID string) []byte {
	return derive(16, "trace", sessionID)
}

// AgentSpanID returns the span id of a subagent's invoke_agent span, or for
// "" of the main agent's in a session that has no runs (see MainSpanID).
func AgentSpanID(sessionID, agentID string) []byte {
	return derive(8, "agent", sessionID, agentID)
}

// MainSpanID returns the span id of the main agent's invoke_agent span that
// holds time t: one per run of the session (a start, each resume), the run
// that started last at or before t, else the first.
func MainSpanID(s *attribution.Session, t time.Time) []byte {
	if len(s.Runs) == 0 {
		return AgentSpanID(s.SessionID, "")
	}
	return runSpanID(s, runAt(s, t))
}

// runSpanID is the span id of run i: the first run's is AgentSpanID(id,
// ""), which a session continuing this one links to without knowing its
// runs.
func runSpanID(s *attribution.Session, i int) []byte {
	if i == 0 {
		return AgentSpanID(s.SessionID, "")
	}
	return derive(8, "run", s.SessionID, strconv.FormatInt(s.Runs[i].StartedAt.UnixNano(), 10))
}

// runAt returns the index of the run that holds time t (see MainSpanID).
func runAt(s *attribution.Session, t time.Time) int {
	i := 0
	for j := range s.Runs {
		if !s.Runs[j].StartedAt.After(t) {
			i = j
		}
	}
	return i
}

// parentAgentSpanID returns the span an agent's own work at time t hangs
// under: its invoke_agent span, for the main agent the run's.
func parentAgentSpanID(s *attribution.Session, agentID string, t time.Time) []byte {
	if agentID == "" {
		return MainSpanID(s, t)
	}
	return AgentSpanID(s.SessionID, agentID)
}

// CallSpanID returns the span id of a tool call's execute_tool span.
func CallSpanID(sessionID, toolUseID string) []byte {
	return derive(8, "call", sessionID, toolUseID)
}

// compactionSpanID is the span id of a compaction, known by its start.
func compactionSpanID(sessionID string, c *attribution.Compaction) []byte {
	return derive(8, "compaction", sessionID, strconv.FormatInt(c.StartedAt.UnixNano(), 10))
}

// derive returns n bytes of a SHA-256 over the parts, each followed by a
// NUL byte (docs/otlp.md gives the recipe), never all zero (an invalid id
// in OTLP).
func derive(n int, parts ...string) []byte {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	id := h.Sum(nil)[:n]
	for _, b := range id {
		if b != 0 {
			return id
		}
	}
	id[n-1] = 1
	return id
}

// Spans returns every span of a session: its agents, tool calls and
// compactions, whatever their state. An agent still running ends at its
// latest event and a call without an outcome at its start; both are marked
// (hookwatch.agent.open, hookwatch.tool.status "pending").
func Spans(s Session) []*tracepb.Span {
	spans := make([]*tracepb.Span, 0, len(s.Agents)+len(s.ToolCalls)+len(s.Summary.Compactions))
	for _, a := range s.Agents {
		spans = append(spans, AgentSpans(s.Summary, a)...)
	}
	for _, c := range s.ToolCalls {
		spans = append(spans, CallSpan(s.Summary, c))
	}
	for i := range s.Summary.Compactions {
		spans = append(spans, CompactionSpan(s.Summary, &s.Summary.Compactions[i]))
	}
	return spans
}

// AgentName is the gen_ai.agent.name of an agent: "main", "compaction", the
// name its client shows for it (Codex's nickname: every Codex subagent has
// type "default", which hookwatch.agent.type keeps), else its agent_type, or
// "subagent" when no event gave its type.
func AgentName(a *attribution.Agent) string {
	if a.AgentID != "" && a.Nickname != "" {
		return a.Nickname
	}
	return attribution.TypeName(a.AgentID, a.AgentType, attribution.RoleSubagent)
}

// agentSpanName is the agent part of an agent's invoke_agent span name:
// its AgentName when label.Agent keeps it (main, compaction, a type Claude
// Code or Codex ships), else its agent type when label.Agent keeps that (a
// Codex subagent's "default" behind its nickname), else "subagent" (a
// user's own agent types: free-form). It depends on the agent alone, so
// that every export of a session names its spans alike, and the names
// stay a bounded set; gen_ai.agent.name has the full name.
func agentSpanName(a *attribution.Agent) string {
	if n := label.Agent(AgentName(a)); n != label.Other {
		return n
	}
	if a.AgentType != nil {
		if n := label.Agent(*a.AgentType); n != label.Other {
			return n
		}
	}
	return attribution.RoleSubagent
}

// AgentSpans returns the invoke_agent spans of agent a of session s: the
// main agent's MainSpans, a subagent's AgentSpan.
func AgentSpans(s *attribution.Session, a *attribution.Agent) []*tracepb.Span {
	if a.AgentID == "" {
		return MainSpans(s, a)
	}
	return []*tracepb.Span{AgentSpan(s, a)}
}

// MainSpans returns the invoke_agent spans of the main agent a of session
// s: one per run of the session (each a root of the trace), or one over
// the whole session when it has no runs. A run ends with its SessionEnd,
// else where the next begins; the last, without one, at the agent's latest
// event, marked open. The first links to the session this one continues.
func MainSpans(s *attribution.Session, a *attribution.Agent) []*tracepb.Span {
	if len(s.Runs) == 0 {
		return []*tracepb.Span{AgentSpan(s, a)}
	}
	out := make([]*tracepb.Span, len(s.Runs))
	for i := range s.Runs {
		out[i] = RunSpan(s, a, i)
	}
	return out
}

// RunSpan returns the main agent's invoke_agent span of run i of session s
// (see MainSpans).
func RunSpan(s *attribution.Session, a *attribution.Agent, i int) *tracepb.Span {
	r := &s.Runs[i]
	sp := AgentSpan(s, a)
	sp.SpanId = runSpanID(s, i)
	if i > 0 { // the link to the session this one continues is the first run's
		sp.Links = slices.DeleteFunc(sp.Links, isLineageLink)
	}
	end, done := runEnd(s, a, i)
	sp.StartTimeUnixNano, sp.EndTimeUnixNano = unixNano(r.StartedAt), unixNano(lastOf(r.StartedAt, end))
	sp.Attributes = slices.DeleteFunc(sp.Attributes, func(kv *commonpb.KeyValue) bool {
		// The model counts usage per agent, not per run: the first run
		// carries the main agent's, so that it is counted once.
		return kv.Key == attrAgentOpen || strings.HasPrefix(kv.Key, "hookwatch.agent.") && kv.Key != attrAgentRole && kv.Key != attrAgentDepth ||
			i > 0 && isUsageAttr(kv.Key)
	})
	if r.Source != "" {
		sp.Attributes = append(sp.Attributes, str(attrRunSource, r.Source))
	}
	if !done {
		sp.Attributes = append(sp.Attributes, boolean(attrAgentOpen, true))
	}
	return sp
}

// runEnd returns when run i of session s ended, and whether it did: its
// SessionEnd, else the next run's start; the last run without a SessionEnd
// is still going, at the main agent's latest event.
func runEnd(s *attribution.Session, a *attribution.Agent, i int) (time.Time, bool) {
	r := &s.Runs[i]
	switch {
	case r.EndedAt != nil:
		return *r.EndedAt, true
	case i+1 < len(s.Runs):
		return s.Runs[i+1].StartedAt, true
	}
	return a.LastEventAt, false
}

// agentDone reports whether an agent ended: a subagent's stop (its
// SubagentStop, or the StopFailure of a failed model request), the main
// agent's SessionEnd.
func agentDone(s *attribution.Session, a *attribution.Agent) bool {
	if a.AgentID == "" {
		return s.EndedAt != nil
	}
	return a.StoppedAt != nil
}

// AgentSpan returns the invoke_agent span of agent a of session s, named
// by agentSpanName (bounded: gen_ai.agent.name has the full name). Its
// parent is the execute_tool span of the call that spawned it, else the
// compaction it ran for, else its parent agent's span. For the main agent
// it is one span over the whole session: MainSpans splits it by run.
func AgentSpan(s *attribution.Session, a *attribution.Agent) *tracepb.Span {
	id := s.SessionID
	name := AgentName(a)
	sp := &tracepb.Span{
		TraceId: TraceID(id),
		SpanId:  AgentSpanID(id, a.AgentID),
		Name:    opInvokeAgent + " " + agentSpanName(a),
		Kind:    tracepb.Span_SPAN_KIND_INTERNAL,
	}
	start, end := a.StartedAt, lastOf(a.StartedAt, a.LastEventAt)
	switch {
	case a.AgentID == "":
		start = minNonZero(start, s.StartedAt)
		if s.EndedAt != nil {
			end = lastOf(end, *s.EndedAt)
		}
		if s.ParentSessionID != "" {
			// A fork, clear or compact continues another session: link
			// to its trace rather than join it, one trace per session.
			// The parent's first run (AgentSpanID(parent, "")).
			sp.Links = append(sp.Links, &tracepb.Span_Link{
				TraceId: TraceID(s.ParentSessionID), SpanId: AgentSpanID(s.ParentSessionID, ""),
				Attributes: []*commonpb.KeyValue{str(attrSessionLineage, s.Lineage)},
			})
		}
	case a.SpawnToolUseID != "":
		sp.ParentSpanId = CallSpanID(id, a.SpawnToolUseID)
	case compactionOf(s, a.AgentID) != nil:
		sp.ParentSpanId = compactionSpanID(id, compactionOf(s, a.AgentID))
	case a.ParentAgentID != nil:
		sp.ParentSpanId = parentAgentSpanID(s, *a.ParentAgentID, a.StartedAt)
	default:
		sp.ParentSpanId = MainSpanID(s, a.StartedAt)
	}
	if a.AgentID != "" && a.StoppedAt != nil {
		end = lastOf(end, *a.StoppedAt)
	}
	sp.StartTimeUnixNano, sp.EndTimeUnixNano = unixNano(start), unixNano(end)

	agentID := a.AgentID
	if agentID == "" {
		// The main agent has no id of its own: the session is its id.
		agentID = id
	}
	sp.Attributes = []*commonpb.KeyValue{
		str(attrOperationName, opInvokeAgent),
		str(attrProviderName, provider(s.Runtime)),
		str(attrAgentName, name),
		str(attrAgentID, agentID),
		str(attrConversationID, id),
		str(attrAgentRole, a.Role),
		num(attrAgentDepth, a.Depth),
		num(attrAgentToolCalls, a.ToolCount),
		num(attrAgentFailures, a.Failures),
		num(attrAgentDenials, a.Denials),
		num(attrAgentRejected, a.Rejected),
	}
	// gen_ai.request.model is the model the agent's requests asked for
	// (the conventions' invoke_agent spans have it, "if available"): the
	// one model the agent ran (Agent.Model), the session's for the main
	// agent alone. A subagent often runs another model than the main
	// agent (Claude Code's Explore a smaller one), so a subagent whose
	// model is not known yet, or that several models answered, has none
	// rather than the session's; hookwatch.usage.models then lists what
	// answered it (appendUsage).
	if a.Model != "" {
		sp.Attributes = append(sp.Attributes, str(attrRequestModel, a.Model))
	}
	sp.Attributes = appendUsage(sp.Attributes, a.Usage)
	if a.Description != "" {
		sp.Attributes = append(sp.Attributes, str(attrAgentDescription, a.Description))
	}
	if a.AgentType != nil {
		sp.Attributes = append(sp.Attributes, str(attrAgentType, *a.AgentType))
	}
	if a.ResolvedBy != "" {
		sp.Attributes = append(sp.Attributes, str(attrAgentResolvedBy, a.ResolvedBy))
	}
	if a.Background {
		sp.Attributes = append(sp.Attributes, boolean(attrAgentBackground, true))
	}
	if l := clientLink(a.Traceparent); l != nil {
		sp.Links = append(sp.Links, l)
	}
	if !agentDone(s, a) {
		sp.Attributes = append(sp.Attributes, boolean(attrAgentOpen, true))
	}
	if a.StopError != "" {
		// The subagent's model request failed (StopFailure): the agent
		// failed, of the error kind the client named, and its last
		// message is the error text.
		sp.Attributes = append(sp.Attributes, str(attrErrorType, a.StopError))
		sp.Status = &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: cut(a.LastMessage, maxStatusMessage)}
	}
	return sp
}

// appendUsage appends to attrs the token usage u of an agent, as the model
// read it from the transcripts (nil: none read, nothing appended).
// gen_ai.usage.input_tokens counts every input token: the model counts the
// cache's reads and writes apart from the other input tokens (as Anthropic
// does, and Codex's rollouts are read into), the conventions count them in
// it. gen_ai.response.model is the model that answered when one did (the
// conventions' name of the model that generated a response; their
// invoke_agent spans do not list it, since an agent's responses may come
// from several); when several did, no one name is true of the agent's
// responses and hookwatch.usage.models lists them. The cost is
// hookwatch.usage.cost_usd, what the priced responses cost (none is: no
// cost), hookwatch.usage.unpriced the responses of models the price table
// lacks.
func appendUsage(attrs []*commonpb.KeyValue, u *attribution.Usage) []*commonpb.KeyValue {
	if u == nil {
		return attrs
	}
	attrs = append(attrs,
		num64(attrInputTokens, u.InputTokens+u.CacheReadTokens+u.CacheCreationTokens),
		num64(attrOutputTokens, u.OutputTokens),
		num64(attrCacheReadTokens, u.CacheReadTokens),
		num64(attrCacheCreationTokens, u.CacheCreationTokens),
		num64(attrCacheWriteTokens, u.CacheCreationTokens),
		num(attrUsageResponses, u.Responses),
	)
	switch len(u.Models) {
	case 0:
	case 1:
		attrs = append(attrs, str(attrResponseModel, u.Models[0]))
	default:
		attrs = append(attrs, strs(attrUsageModels, u.Models))
	}
	if u.Responses > u.Unpriced {
		attrs = append(attrs, double(attrUsageCost, u.CostUSD))
	}
	if u.Unpriced > 0 {
		attrs = append(attrs, num(attrUsageUnpriced, u.Unpriced))
	}
	return attrs
}

// isUsageAttr reports whether key is one of the attributes appendUsage
// appends.
func isUsageAttr(key string) bool {
	return strings.HasPrefix(key, "gen_ai.usage.") || strings.HasPrefix(key, "hookwatch.usage.") || key == attrResponseModel
}

// compactionOf returns the compaction agentID ran for, or nil.
func compactionOf(s *attribution.Session, agentID string) *attribution.Compaction {
	for i := range s.Compactions {
		c := &s.Compactions[i]
		for _, id := range c.AgentIDs {
			if id == agentID {
				return c
			}
		}
		if c.AgentID == agentID {
			return c
		}
	}
	return nil
}

// CallSpan returns the execute_tool span of call c of session s, a child of
// its agent's invoke_agent span, named by label.Tool of its tool: the
// names of the tools Claude Code and Codex ship are kept, any other (an MCP
// tool's: free-form) folds into a few, the same in every process, and
// gen_ai.tool.name has the full name. A failed or interrupted call has status
// ERROR and error.type; a denied or rejected one says so in attributes
// (the tool never ran: it did not fail).
func CallSpan(s *attribution.Session, c *attribution.ToolCall) *tracepb.Span {
	id := s.SessionID
	sp := &tracepb.Span{
		TraceId:      TraceID(id),
		SpanId:       CallSpanID(id, c.ToolUseID),
		ParentSpanId: parentAgentSpanID(s, c.AgentID, c.StartedAt),
		Name:         opExecuteTool + " " + label.Tool(c.ToolName),
		Kind:         tracepb.Span_SPAN_KIND_INTERNAL,
	}
	end := c.StartedAt
	if c.EndedAt != nil {
		end = lastOf(end, *c.EndedAt)
	}
	sp.StartTimeUnixNano, sp.EndTimeUnixNano = unixNano(c.StartedAt), unixNano(end)
	toolType := toolTypeFunction
	if c.Family == classify.FamilyMCPCall {
		toolType = toolTypeExtension
	}
	sp.Attributes = []*commonpb.KeyValue{
		str(attrOperationName, opExecuteTool),
		str(attrProviderName, provider(s.Runtime)),
		str(attrToolName, c.ToolName),
		str(attrToolCallID, c.ToolUseID),
		str(attrToolType, toolType),
		str(attrConversationID, id),
		str(attrToolStatus, c.Status),
		str(attrToolFamily, c.Family),
		num(attrAgentDepth, c.Depth),
	}
	if c.AgentID != "" {
		sp.Attributes = append(sp.Attributes, str(attrAgentID, c.AgentID))
	}
	if c.PromptID != "" {
		sp.Attributes = append(sp.Attributes, str(attrToolPromptID, c.PromptID))
	}
	if c.SpawnedAgentID != "" {
		sp.Attributes = append(sp.Attributes, str(attrSpawnedAgentID, c.SpawnedAgentID))
	}
	if l := clientLink(c.Traceparent); l != nil {
		sp.Links = append(sp.Links, l)
	}
	switch {
	case c.Failed:
		errType := "tool_error"
		if c.Status == attribution.StatusInterrupted {
			errType = "interrupted"
		}
		sp.Attributes = append(sp.Attributes, str(attrErrorType, errType))
		sp.Status = &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: cut(c.Error, maxStatusMessage)}
	case c.Status == attribution.StatusDenied:
		sp.Attributes = append(sp.Attributes, boolean(attrToolDenied, true))
		// The model's error of a denied call is why: the client's reason,
		// or the policy's.
		if c.Error != "" {
			sp.Attributes = append(sp.Attributes, str(attrDeniedReason, cut(c.Error, maxStatusMessage)))
		}
	case c.Status == attribution.StatusRejected:
		sp.Attributes = append(sp.Attributes, boolean(attrToolRejected, true))
	}
	return sp
}

// CompactionSpan returns the span of a compaction of session s, a child of
// the main agent's span; the compaction agents' spans are its children.
func CompactionSpan(s *attribution.Session, c *attribution.Compaction) *tracepb.Span {
	end := c.StartedAt
	if c.EndedAt != nil {
		end = lastOf(end, *c.EndedAt)
	}
	sp := &tracepb.Span{
		TraceId:           TraceID(s.SessionID),
		SpanId:            compactionSpanID(s.SessionID, c),
		ParentSpanId:      MainSpanID(s, c.StartedAt),
		Name:              "compaction",
		Kind:              tracepb.Span_SPAN_KIND_INTERNAL,
		StartTimeUnixNano: unixNano(c.StartedAt),
		EndTimeUnixNano:   unixNano(end),
		Attributes:        []*commonpb.KeyValue{str(attrProviderName, provider(s.Runtime)), str(attrConversationID, s.SessionID)},
	}
	if c.Trigger != "" {
		sp.Attributes = append(sp.Attributes, str(attrCompactTrigger, c.Trigger))
	}
	return sp
}

// isLineageLink reports whether l is the link to the session this one
// continues.
func isLineageLink(l *tracepb.Span_Link) bool {
	return len(l.Attributes) > 0 && l.Attributes[0].Key == attrSessionLineage
}

// clientLink returns a link to the span a W3C traceparent names (the
// client's own trace, when its telemetry is on), nil for none.
func clientLink(traceparent string) *tracepb.Span_Link {
	if !event.ValidTraceparent(traceparent) {
		return nil
	}
	traceID, err1 := hex.DecodeString(traceparent[3:35])
	spanID, err2 := hex.DecodeString(traceparent[36:52])
	if err1 != nil || err2 != nil {
		return nil
	}
	return &tracepb.Span_Link{TraceId: traceID, SpanId: spanID, Attributes: []*commonpb.KeyValue{str(attrLinkKind, "client")}}
}

// Resource returns the resource a session's spans are sent under: the
// agent runtime is the service.
func Resource(s *attribution.Session) *resourcepb.Resource {
	r := &resourcepb.Resource{Attributes: []*commonpb.KeyValue{
		str(attrServiceName, cmp.Or(s.Runtime, "unknown")),
		str(attrRuntime, s.Runtime),
	}}
	if s.ClientVersion != "" {
		r.Attributes = append(r.Attributes, str(attrServiceVersion, s.ClientVersion))
	}
	if s.Project != "" {
		r.Attributes = append(r.Attributes, str(attrSessionProject, s.Project))
	}
	if s.ParentSessionID != "" {
		r.Attributes = append(r.Attributes, str(attrSessionParent, s.ParentSessionID), str(attrSessionLineage, s.Lineage))
	}
	return r
}

// provider is the gen_ai.provider.name of the models behind a runtime.
func provider(runtime string) string {
	switch runtime {
	case event.RuntimeClaudeCode:
		return "anthropic"
	case event.RuntimeCodex:
		return "openai"
	}
	return "_OTHER"
}

func str(k, v string) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}}
}

func num(k string, v int) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: int64(v)}}}
}

func num64(k string, v int64) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: v}}}
}

func double(k string, v float64) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: v}}}
}

func strs(k string, vs []string) *commonpb.KeyValue {
	values := make([]*commonpb.AnyValue, len(vs))
	for i, v := range vs {
		values[i] = &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}
	}
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: values}}}}
}

func boolean(k string, v bool) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: v}}}
}

func unixNano(t time.Time) uint64 {
	if t.IsZero() {
		return 0
	}
	return uint64(t.UnixNano())
}

func lastOf(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func minNonZero(a, b time.Time) time.Time {
	if a.IsZero() || !b.IsZero() && b.Before(a) {
		return b
	}
	return a
}

// cut returns s cut to at most n bytes, a rune cut in two dropped.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// scope names hookwatch as the instrumentation that made the spans.
var scope = &commonpb.InstrumentationScope{Name: "github.com/hookwatch/hookwatch"}

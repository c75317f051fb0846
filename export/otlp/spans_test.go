package otlp

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/classify"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/corpus"
	"github.com/hookwatch/hookwatch/internal/demo"
	"github.com/hookwatch/hookwatch/label"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// captures returns the real captures of the corpus as envelopes, by file:
// ids and times in file order, as the hook would have stamped them.
func captures(t testing.TB) map[string][]event.Envelope {
	t.Helper()
	t0 := time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC)
	out := map[string][]event.Envelope{}
	for _, p := range corpus.Load(t) {
		file, _, _ := strings.Cut(p.Label, ":")
		n := len(out[file])
		out[file] = append(out[file], event.Envelope{
			ID:         fmt.Sprintf("0190f000-0000-7000-8000-%012d", n),
			Runtime:    p.Runtime,
			Kind:       event.KindHook,
			ReceivedAt: t0.Add(time.Duration(n) * 250 * time.Millisecond),
			Payload:    p.JSON,
		})
	}
	return out
}

// sessionOf is a session of a Build result as this package reads it.
func sessionOf(s *attribution.Session) Session {
	return Session{Summary: s.Summary(), Agents: s.Agents, ToolCalls: s.ToolCalls}
}

// TestSpanTreeGolden renders the trace of every session of the real
// captures as an indented tree and compares it with testdata; it also
// checks what must hold of any trace (checkTrace).
func TestSpanTreeGolden(t *testing.T) {
	for file, envs := range captures(t) {
		t.Run(file, func(t *testing.T) {
			res := attribution.Build(envs)
			var out bytes.Buffer
			for _, s := range res.Sessions {
				spans := Spans(sessionOf(s))
				checkTrace(t, s, spans)
				fmt.Fprintf(&out, "session %s trace %x\n", s.SessionID, TraceID(s.SessionID))
				writeTree(&out, spans)
			}
			golden(t, strings.TrimSuffix(file, ".jsonl")+".trace.txt", out.Bytes())
		})
	}
}

// checkTrace checks the spans of session s: one trace, one root (the main
// agent), every parent present, one span per agent and per call, each
// agent's invoke_agent span below as many invoke_agent spans as its depth,
// each subagent under the call that spawned it, each call under its agent.
func checkTrace(t *testing.T, s *attribution.Session, spans []*tracepb.Span) {
	t.Helper()
	byID := map[string]*tracepb.Span{}
	for _, sp := range spans {
		if !bytes.Equal(sp.TraceId, TraceID(s.SessionID)) {
			t.Fatalf("%s: span %s in trace %x", s.SessionID, sp.Name, sp.TraceId)
		}
		k := string(sp.SpanId)
		if byID[k] != nil {
			t.Fatalf("%s: two spans with id %x: %s and %s", s.SessionID, sp.SpanId, byID[k].Name, sp.Name)
		}
		byID[k] = sp
		if attr(sp, attrProviderName) != provider(s.Runtime) {
			t.Fatalf("%s: span %s has %s %q, want %q", s.SessionID, sp.Name, attrProviderName, attr(sp, attrProviderName), provider(s.Runtime))
		}
		if sp.EndTimeUnixNano < sp.StartTimeUnixNano {
			t.Fatalf("%s: %s ends before it starts", s.SessionID, sp.Name)
		}
	}
	roots := 0
	for _, sp := range spans {
		if len(sp.ParentSpanId) == 0 {
			roots++
			if attr(sp, attrAgentRole) != attribution.RoleMain {
				t.Fatalf("%s: root %s is not the main agent", s.SessionID, sp.Name)
			}
			continue
		}
		if byID[string(sp.ParentSpanId)] == nil {
			t.Fatalf("%s: the parent of %s is not in the trace", s.SessionID, sp.Name)
		}
	}
	// The main agent has a span per run.
	if runs := max(len(s.Runs), 1); roots != runs {
		t.Fatalf("%s: %d roots, %d runs", s.SessionID, roots, runs)
	}
	if want := len(s.Agents) - 1 + max(len(s.Runs), 1) + len(s.ToolCalls) + len(s.Compactions); len(spans) != want {
		t.Fatalf("%s: %d spans, want %d", s.SessionID, len(spans), want)
	}
	for _, a := range s.Agents {
		sp := byID[string(AgentSpanID(s.SessionID, a.AgentID))]
		if sp == nil || attr(sp, attrAgentName) != AgentName(a) || attr(sp, attrOperationName) != opInvokeAgent {
			t.Fatalf("%s: no invoke_agent span for agent %q", s.SessionID, a.AgentID)
		}
		if d := agentDepth(byID, sp); d != a.Depth {
			t.Fatalf("%s: agent %q (depth %d) is %d invoke_agent spans deep", s.SessionID, a.AgentID, a.Depth, d)
		}
		if a.SpawnToolUseID != "" && !bytes.Equal(sp.ParentSpanId, CallSpanID(s.SessionID, a.SpawnToolUseID)) {
			t.Fatalf("%s: agent %q is not under the call that spawned it", s.SessionID, a.AgentID)
		}
	}
	for _, c := range s.ToolCalls {
		sp := byID[string(CallSpanID(s.SessionID, c.ToolUseID))]
		if sp == nil || attr(sp, attrToolCallID) != c.ToolUseID || attr(sp, attrToolName) != c.ToolName {
			t.Fatalf("%s: no execute_tool span for call %s", s.SessionID, c.ToolUseID)
		}
		if !bytes.Equal(sp.ParentSpanId, parentAgentSpanID(s, c.AgentID, c.StartedAt)) {
			t.Fatalf("%s: call %s is not under its agent %q", s.SessionID, c.ToolUseID, c.AgentID)
		}
		if c.Status == attribution.StatusDenied && attr(sp, attrDeniedReason) != cut(c.Error, maxStatusMessage) {
			t.Fatalf("%s: denied call %s: %s %q, want %q", s.SessionID, c.ToolUseID, attrDeniedReason, attr(sp, attrDeniedReason), c.Error)
		}
		failed := attribution.Failed(c.Status)
		if failed != (attr(sp, attrErrorType) != "") || failed != (sp.Status.GetCode() == tracepb.Status_STATUS_CODE_ERROR) {
			t.Fatalf("%s: call %s with status %s: error.type %q, status %v", s.SessionID, c.ToolUseID, c.Status, attr(sp, attrErrorType), sp.Status)
		}
	}
}

// agentDepth counts the invoke_agent spans above sp.
func agentDepth(byID map[string]*tracepb.Span, sp *tracepb.Span) int {
	d := 0
	for p := byID[string(sp.ParentSpanId)]; p != nil; p = byID[string(p.ParentSpanId)] {
		if attr(p, attrOperationName) == opInvokeAgent {
			d++
		}
	}
	return d
}

// attr returns a span attribute as text, "" when absent.
func attr(sp *tracepb.Span, key string) string {
	for _, kv := range sp.Attributes {
		if kv.Key == key {
			return valueText(kv.Value)
		}
	}
	return ""
}

func valueText(v *commonpb.AnyValue) string {
	switch x := v.Value.(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return fmt.Sprint(x.IntValue)
	case *commonpb.AnyValue_BoolValue:
		return fmt.Sprint(x.BoolValue)
	case *commonpb.AnyValue_DoubleValue:
		return strconv.FormatFloat(x.DoubleValue, 'g', -1, 64)
	case *commonpb.AnyValue_ArrayValue:
		texts := make([]string, len(x.ArrayValue.Values))
		for i, v := range x.ArrayValue.Values {
			texts[i] = valueText(v)
		}
		return "[" + strings.Join(texts, " ") + "]"
	}
	return fmt.Sprint(v)
}

// writeTree writes spans as a tree, children by start then name, each line
// the span's name, its start and duration relative to the trace's first
// start, its status and attributes.
func writeTree(w *bytes.Buffer, spans []*tracepb.Span) {
	children := map[string][]*tracepb.Span{}
	var t0 uint64
	for _, sp := range spans {
		children[string(sp.ParentSpanId)] = append(children[string(sp.ParentSpanId)], sp)
		if t0 == 0 || sp.StartTimeUnixNano < t0 {
			t0 = sp.StartTimeUnixNano
		}
	}
	for _, c := range children {
		slices.SortFunc(c, func(a, b *tracepb.Span) int {
			if a.StartTimeUnixNano != b.StartTimeUnixNano {
				return int(int64(a.StartTimeUnixNano - b.StartTimeUnixNano))
			}
			return strings.Compare(a.Name+hex.EncodeToString(a.SpanId), b.Name+hex.EncodeToString(b.SpanId))
		})
	}
	var walk func(parent string, depth int)
	walk = func(parent string, depth int) {
		for _, sp := range children[parent] {
			fmt.Fprintf(w, "%s%s  +%dms %dms", strings.Repeat("  ", depth+1), sp.Name,
				(sp.StartTimeUnixNano-t0)/1e6, (sp.EndTimeUnixNano-sp.StartTimeUnixNano)/1e6)
			if sp.Status != nil {
				fmt.Fprintf(w, " status=%s %q", sp.Status.Code, sp.Status.Message)
			}
			for _, kv := range sp.Attributes {
				if kv.Key == attrConversationID || kv.Key == attrProviderName || kv.Key == attrOperationName {
					continue // the same on every span of a session
				}
				fmt.Fprintf(w, " %s=%s", kv.Key, valueText(kv.Value))
			}
			for _, l := range sp.Links {
				fmt.Fprintf(w, " link=%x/%x", l.TraceId, l.SpanId)
			}
			w.WriteByte('\n')
			walk(string(sp.SpanId), depth+1)
		}
	}
	walk("", 0)
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs from the golden file; run with -update and review the diff", name)
	}
}

// TestClientTraceLinks: where the hooks ran with TRACEPARENT (the client's
// telemetry on), every span of a call or an agent links to the client's
// span the model recorded for it; a malformed one links nothing.
func TestClientTraceLinks(t *testing.T) {
	f := func(tp string, wantLink bool) {
		t.Helper()
		envs := captures(t)["claude-code-2.1.197.jsonl"]
		for i := range envs {
			envs[i].Traceparent = tp
		}
		s := attribution.Build(envs).Sessions[0]
		for _, sp := range Spans(sessionOf(s)) {
			op := attr(sp, attrOperationName)
			if op == "" {
				continue // a compaction: not an event of the client's
			}
			var client *tracepb.Span_Link
			for _, l := range sp.Links {
				if attr(&tracepb.Span{Attributes: l.Attributes}, attrLinkKind) == "client" {
					client = l
				}
			}
			if (client != nil) != wantLink {
				t.Fatalf("traceparent %q: span %s has client link %v", tp, sp.Name, client)
			}
			if client != nil && (hex.EncodeToString(client.TraceId) != tp[3:35] || hex.EncodeToString(client.SpanId) != tp[36:52]) {
				t.Fatalf("span %s links to %x/%x", sp.Name, client.TraceId, client.SpanId)
			}
		}
	}
	f("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", true)
	f("", false)
	f("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7", false)
}

// TestPolicyDenialReason: a call a policy denied carries the policy's
// reason, as one the client refused carries the client's.
func TestPolicyDenialReason(t *testing.T) {
	t0 := time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC)
	pre := `{"session_id":"s1","transcript_path":"/home/u/.claude/projects/p/s1.jsonl","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"git push --force"},"tool_use_id":"toolu_1"}`
	deny := `{"action":"deny","rule_ids":["no-force-push"],"reason":"force pushes are not allowed","enforced":true}`
	envs := []event.Envelope{{ID: "0190f000-0000-7000-8000-000000000001", Runtime: event.RuntimeClaudeCode, Kind: event.KindHook,
		ReceivedAt: t0, Payload: json.RawMessage(pre), Decision: json.RawMessage(deny)}}
	s := attribution.Build(envs).Sessions[0]
	spans := Spans(sessionOf(s))
	checkTrace(t, s, spans)
	sp := spans[len(spans)-1]
	if c := s.ToolCalls[0]; c.Status != attribution.StatusDenied || attr(sp, attrToolDenied) != "true" || attr(sp, attrDeniedReason) != "force pushes are not allowed" {
		t.Fatalf("call %s %q: span %s denied %q reason %q", c.Status, c.Error, sp.Name, attr(sp, attrToolDenied), attr(sp, attrDeniedReason))
	}
}

// TestFailedSubagentSpan: a subagent whose model request failed (a real
// run of Claude Code 2.1.197, its hooks' envelopes) is reported by a
// StopFailure and no SubagentStop: its invoke_agent span ends at the
// StopFailure, not open, with status ERROR, the error text, and the error
// kind as error.type; the main agent's span says nothing of it.
func TestFailedSubagentSpan(t *testing.T) {
	hooks, _, err := demo.Transcripts("../../attribution/testdata/claude-apierror-2.1.197")
	if err != nil {
		t.Fatal(err)
	}
	s := attribution.Build(hooks).Sessions[0]
	spans := Spans(sessionOf(s))
	checkTrace(t, s, spans)
	sub := s.Agents[1]
	if sub.StoppedAt == nil || sub.StopError == "" {
		t.Fatalf("the subagent: stopped %v, error %q", sub.StoppedAt, sub.StopError)
	}
	sp := AgentSpan(s, sub)
	if attr(sp, attrAgentOpen) != "" || sp.EndTimeUnixNano != unixNano(*sub.StoppedAt) {
		t.Errorf("span %s: open %q, ends %d, want at %v", sp.Name, attr(sp, attrAgentOpen), sp.EndTimeUnixNano, sub.StoppedAt)
	}
	if attr(sp, attrErrorType) != sub.StopError || sp.Status == nil || sp.Status.Code != tracepb.Status_STATUS_CODE_ERROR ||
		!strings.HasPrefix(sp.Status.Message, "API Error: 400 ") {
		t.Errorf("span %s: %s %q, status %v", sp.Name, attrErrorType, attr(sp, attrErrorType), sp.Status)
	}
	if main := AgentSpan(s, s.Agents[0]); attr(main, attrErrorType) != "" || main.Status != nil {
		t.Errorf("the main agent's span: %s %q, status %v", attrErrorType, attr(main, attrErrorType), main.Status)
	}
}

// TestCodexSubagentSpanName: a Codex subagent's nickname (a name Codex
// picks per agent) is its gen_ai.agent.name, and its span is named by its
// type, one Codex ships ("default"), which hookwatch.agent.type keeps too:
// span names stay a bounded set (agentSpanName).
func TestCodexSubagentSpanName(t *testing.T) {
	envs := captures(t)["codex-0.169.jsonl"]
	if len(envs) == 0 {
		t.Fatal("no Codex capture")
	}
	named := 0
	for _, s := range attribution.Build(envs).Sessions {
		for _, a := range s.Agents {
			if a.AgentID == "" || a.Nickname == "" {
				continue
			}
			named++
			sp := AgentSpan(s, a)
			if a.AgentType == nil || sp.Name != opInvokeAgent+" "+*a.AgentType || attr(sp, attrAgentName) != a.Nickname {
				t.Errorf("agent %s (%s): span %q, %s %q", a.AgentID, a.Nickname, sp.Name, attrAgentName, attr(sp, attrAgentName))
			}
			if a.AgentType != nil && attr(sp, attrAgentType) != *a.AgentType {
				t.Errorf("agent %s: %s %q, want %q", a.AgentID, attrAgentType, attr(sp, attrAgentType), *a.AgentType)
			}
		}
	}
	if named == 0 {
		t.Fatal("no Codex subagent with a nickname in the capture")
	}
}

// TestSpanNamesBounded: payload values name spans, and a payload is
// hostile input. A session whose calls name 200 distinct tools (half of
// them MCP tools of one server) made by subagents of 50 distinct types
// gives at most label.MaxTools execute_tool and label.MaxAgentTypes
// invoke_agent span names; every span keeps the real name in its
// attributes.
func TestSpanNamesBounded(t *testing.T) {
	const maxTools, maxAgents = label.MaxTools, label.MaxAgentTypes
	t0 := time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC)
	var envs []event.Envelope
	add := func(payload string) {
		n := len(envs)
		envs = append(envs, event.Envelope{ID: fmt.Sprintf("0190f000-0000-7000-8000-%012d", n), Runtime: event.RuntimeClaudeCode,
			Kind: event.KindHook, ReceivedAt: t0.Add(time.Duration(n) * time.Millisecond), Payload: json.RawMessage(payload)})
	}
	common := `"session_id":"s1","transcript_path":"/home/u/.claude/projects/-w/s1.jsonl","cwd":"/w"`
	add(`{` + common + `,"hook_event_name":"SessionStart","source":"startup"}`)
	for i := range 200 {
		tool := fmt.Sprintf("Tool%d", i)
		if i%2 == 0 {
			tool = fmt.Sprintf("mcp__srv__tool%d", i)
		}
		agent := fmt.Sprintf(`"agent_id":"a%d","agent_type":"custom-%d"`, i%50, i%50)
		if i < 50 {
			add(`{` + common + `,` + agent + `,"hook_event_name":"SubagentStart"}`)
		}
		call := fmt.Sprintf(`,"tool_name":%q,"tool_input":{},"tool_use_id":"toolu_%d"`, tool, i)
		add(`{` + common + `,` + agent + `,"hook_event_name":"PreToolUse"` + call + `}`)
		add(`{` + common + `,` + agent + `,"hook_event_name":"PostToolUse"` + call + `,"tool_response":"ok"}`)
	}
	s := attribution.Build(envs).Session("s1")
	if len(s.ToolCalls) != 200 || len(s.Agents) != 51 {
		t.Fatalf("%d calls, %d agents: the fixture does not say what it should", len(s.ToolCalls), len(s.Agents))
	}
	spans := Spans(sessionOf(s))
	checkTrace(t, s, spans)
	names := map[string]map[string]bool{opExecuteTool: {}, opInvokeAgent: {}}
	realTools, realAgents := map[string]bool{}, map[string]bool{}
	for _, sp := range spans {
		op := attr(sp, attrOperationName)
		if op == "" {
			continue
		}
		names[op][sp.Name] = true
		realTools[attr(sp, attrToolName)] = true
		realAgents[attr(sp, attrAgentName)] = true
	}
	if n := len(names[opExecuteTool]); n > maxTools {
		t.Errorf("%d execute_tool span names, want at most %d", n, maxTools)
	}
	if n := len(names[opInvokeAgent]); n > maxAgents {
		t.Errorf("%d invoke_agent span names, want at most %d", n, maxAgents)
	}
	// Each set also holds "", of the spans that name no tool or no agent.
	if len(realTools) != 200+1 || len(realAgents) != 51+1 {
		t.Errorf("%d tool names, %d agent names in the attributes, want 200 and 51", len(realTools)-1, len(realAgents)-1)
	}

	// The names the clients give their own tools and agents are kept as
	// they are in the real captures.
	for file, envs := range captures(t) {
		for _, s := range attribution.Build(envs).Sessions {
			for _, sp := range Spans(sessionOf(s)) {
				tool, agent := attr(sp, attrToolName), attr(sp, attrAgentName)
				if classify.KnownTool(tool) && sp.Name != opExecuteTool+" "+tool ||
					classify.KnownAgentType(agent) && sp.Name != opInvokeAgent+" "+agent {
					t.Errorf("%s: span %q of %s %q", file, sp.Name, tool, agent)
				}
			}
		}
	}
}

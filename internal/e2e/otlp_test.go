package e2e

import (
	"encoding/hex"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/export/otlp"
	"github.com/hookwatch/hookwatch/internal/otelcol"
)

// rcv is the OpenTelemetry Collector this package's tests export to,
// started once in TestMain; rcvErr says why there is none.
var (
	rcv    *otelcol.Receiver
	rcvErr error
)

// startReceiver starts the collector when its binary is there and returns
// what stops it.
func startReceiver() func() {
	dir, err := os.MkdirTemp("", "e2e-otelcol-")
	if err != nil {
		rcvErr = err
		return func() {}
	}
	rcv, rcvErr = otelcol.Start(dir)
	return func() {
		if rcv != nil {
			rcv.Stop()
		}
		os.RemoveAll(dir)
	}
}

// TestTracesToCollector: the real client plays a session with parallel
// subagents, a 3-deep chain, a failure and a denial while the collector
// pushes its trace live to a real OpenTelemetry Collector. The trace read
// back from the receiver's file must be the agent tree the API answers:
// one invoke_agent span per agent, under the execute_tool span of the call
// that spawned it, as deep as the agent; one execute_tool span per call,
// under its agent; the failure and the denial marked; each call linked to
// the client's span its hooks' TRACEPARENT named.
func TestTracesToCollector(t *testing.T) {
	Clients(t) // skip (or fail in CI) before building anything
	if rcv == nil {
		otelcol.Missing(t, rcvErr)
	}
	c := startCollectorWith(t, []string{"HOOKWATCH_OTLP_ENDPOINT=" + rcv.Endpoint}, map[string]string{"policy.yaml": denyPolicy})
	EachClient(t, func(t *testing.T, cl Client) { testTraces(t, c, cl) })
}

// testTraces plays Traces with client cl and checks its trace.
func testTraces(t *testing.T, c *collectorProc, cl Client) {
	a := c.newEnv(t, cl)
	// As if the client's telemetry were on: its hooks run with the trace
	// context of the client's own span.
	const clientTrace, clientSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	a.Vars = append(a.Vars, "TRACEPARENT=00-"+clientTrace+"-"+clientSpan+"-01")
	res := a.Play(Traces(a.Project))
	a.settle()
	sid := res.SessionID
	agents := a.c.agents(t, sid)
	calls := a.c.toolCalls(t, sid)
	sess := a.c.session(t, sid)
	if sess.Status != "ended" || len(sess.Runs) != 1 {
		t.Fatalf("session %+v", sess)
	}
	if len(agents) != 1+2+NestedDepth {
		t.Fatalf("agents %v, want the main agent, 2 leaves and a chain of %d", agents, NestedDepth)
	}

	// Everything is final once the session ended: the receiver gets one
	// span per agent and per call, no more.
	want := len(agents) + len(calls)
	t.Logf("session %s: %d agents, %d calls", sid, len(agents), len(calls))
	traceID := hex.EncodeToString(otlp.TraceID(sid))
	spans, err := rcv.WaitSpans(traceID, want, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // anything sent twice would arrive by now
	if spans, err = rcv.Spans(traceID); err != nil {
		t.Fatal(err)
	}
	if len(spans) != want {
		for _, sp := range spans {
			t.Logf("%s %s parent %s", sp.SpanID, sp.Name, sp.ParentSpanID)
		}
		t.Fatalf("%d spans in trace %s, want %d (%d agents, %d calls)", len(spans), traceID, want, len(agents), len(calls))
	}
	byID, err := otelcol.ByID(spans)
	if err != nil {
		t.Fatal(err)
	}
	agentSpan := map[string]otelcol.Span{}
	callSpan := map[string]otelcol.Span{}
	for _, sp := range spans {
		if sp.Attr("gen_ai.conversation.id") != sid || sp.Attr("gen_ai.provider.name") != "anthropic" {
			t.Fatalf("span %s: conversation %q provider %q", sp.Name, sp.Attr("gen_ai.conversation.id"), sp.Attr("gen_ai.provider.name"))
		}
		switch sp.Attr("gen_ai.operation.name") {
		case "invoke_agent":
			id := sp.Attr("gen_ai.agent.id")
			if sp.Attr("hookwatch.agent.role") == "main" {
				id = ""
			}
			agentSpan[id] = sp
		case "execute_tool":
			if _, dup := callSpan[sp.Attr("gen_ai.tool.call.id")]; dup {
				t.Fatalf("two spans for call %s", sp.Attr("gen_ai.tool.call.id"))
			}
			callSpan[sp.Attr("gen_ai.tool.call.id")] = sp
		default:
			t.Fatalf("span %s with operation %q", sp.Name, sp.Attr("gen_ai.operation.name"))
		}
	}
	depthOf := func(sp otelcol.Span) int {
		d := 0
		for p, ok := byID[sp.ParentSpanID]; ok; p, ok = byID[p.ParentSpanID] {
			if p.Attr("gen_ai.operation.name") == "invoke_agent" {
				d++
			}
		}
		return d
	}
	if len(agentSpan) != len(agents) {
		t.Fatalf("%d invoke_agent spans for %d agents", len(agentSpan), len(agents))
	}
	maxDepth := 0
	for _, ag := range agents {
		sp, ok := agentSpan[ag.AgentID]
		if !ok {
			t.Fatalf("no span for %v", ag)
		}
		name := "main"
		if ag.AgentID != "" {
			name = *ag.AgentType
			parent := callSpan[ag.SpawnToolUseID]
			if ag.SpawnToolUseID == "" || sp.ParentSpanID != parent.SpanID || parent.Attr("gen_ai.tool.name") != "Agent" {
				t.Fatalf("%v: span parent %s, want the execute_tool span of %s", ag, sp.ParentSpanID, ag.SpawnToolUseID)
			}
		} else if sp.ParentSpanID != "" {
			t.Fatalf("the main agent's span has parent %s", sp.ParentSpanID)
		}
		if sp.Name != "invoke_agent "+name || sp.Attr("gen_ai.agent.name") != name {
			t.Fatalf("%v: span %q, agent name %q", ag, sp.Name, sp.Attr("gen_ai.agent.name"))
		}
		if d := depthOf(sp); d != ag.Depth || sp.Attr("hookwatch.agent.depth") != strconv.Itoa(ag.Depth) {
			t.Fatalf("%v: span %d invoke_agent spans deep, depth attribute %s", ag, d, sp.Attr("hookwatch.agent.depth"))
		}
		maxDepth = max(maxDepth, ag.Depth)
		if ag.StoppedAt != nil && ag.AgentID != "" {
			if end, _ := strconv.ParseInt(sp.End, 10, 64); end != ag.StoppedAt.UnixNano() {
				t.Fatalf("%v: span ends at %s, the agent stopped at %v", ag, sp.End, ag.StoppedAt)
			}
		}
	}
	if maxDepth != NestedDepth {
		t.Fatalf("deepest agent at %d, want %d", maxDepth, NestedDepth)
	}

	failed, denied := 0, 0
	for _, call := range calls {
		sp, ok := callSpan[call.ToolUseID]
		if !ok {
			t.Fatalf("no span for %v", call)
		}
		if sp.Name != "execute_tool "+call.ToolName || sp.Attr("gen_ai.tool.name") != call.ToolName ||
			sp.Attr("hookwatch.tool.status") != call.Status {
			t.Fatalf("%v: span %q tool %q status %q", call, sp.Name, sp.Attr("gen_ai.tool.name"), sp.Attr("hookwatch.tool.status"))
		}
		if sp.ParentSpanID != agentSpan[call.AgentID].SpanID {
			t.Fatalf("%v: span under %s, not its agent's %s", call, sp.ParentSpanID, agentSpan[call.AgentID].SpanID)
		}
		if !linksTo(sp, clientTrace, clientSpan) {
			t.Fatalf("%v: span links %+v, want one to the client's span", call, sp.Links)
		}
		start, _ := strconv.ParseInt(sp.Start, 10, 64)
		end, _ := strconv.ParseInt(sp.End, 10, 64)
		if start != call.StartedAt.UnixNano() || call.EndedAt == nil || end != call.EndedAt.UnixNano() {
			t.Fatalf("%v: span from %s to %s", call, sp.Start, sp.End)
		}
		switch call.Status {
		case "error":
			failed++
			if sp.Attr("error.type") == "" || sp.Status.Code != 2 {
				t.Fatalf("failed %v: error.type %q status %+v", call, sp.Attr("error.type"), sp.Status)
			}
		case "denied":
			denied++
			if sp.Attr("hookwatch.tool.denied") != "true" || sp.Attr("error.type") != "" {
				t.Fatalf("denied %v: span attributes %+v", call, sp.Attributes)
			}
		}
	}
	if failed != 1 || denied != 1 {
		t.Fatalf("%d failed and %d denied calls, want one each: %v", failed, denied, calls)
	}
}

// linksTo reports whether sp links to the client's span trace/span.
func linksTo(sp otelcol.Span, trace, span string) bool {
	for _, l := range sp.Links {
		if l.TraceID == trace && l.SpanID == span && (otelcol.Span{Attributes: l.Attributes}).Attr("hookwatch.link") == "client" {
			return true
		}
	}
	return false
}

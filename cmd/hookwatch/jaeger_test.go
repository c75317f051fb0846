package main

import (
	"context"
	"encoding/hex"
	"strconv"
	"strings"
	"testing"
	"time"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/export/otlp"
	"github.com/hookwatch/hookwatch/internal/corpus"
	"github.com/hookwatch/hookwatch/internal/otelcol"
)

// jaegerSession is the session of claude-code-2.1.332.jsonl with
// subagents two deep, failed calls, a rejected one and a compaction.
const jaegerSession = "74975720-1a50-4d17-9463-df6fabfdeb7c"

// TestJaegerTrace: serve pushes the trace of a real capture's session live
// to a real Jaeger, and Jaeger's query API gives back what a user looks
// at: the model's spans, each once, in the tree docs/otlp.md draws (the
// main agent's runs as roots, each subagent under the call that spawned
// it, each call under its agent), with their names, GenAI attributes and
// the error status of the failed calls. `hookwatch export --format otlp`
// of the same session then lands on the same spans: Jaeger still holds
// one of each.
func TestJaegerTrace(t *testing.T) {
	j := otelcol.SharedJaeger(t)
	freshHome(t)
	t0 := time.Now().Add(-time.Hour)
	var envs []event.Envelope
	for _, p := range corpus.Load(t) {
		if strings.HasPrefix(p.Label, "claude-code-2.1.332.jsonl:") {
			at := t0.Add(time.Duration(len(envs)) * 250 * time.Millisecond)
			envs = append(envs, event.Envelope{ID: event.NewID(at), Runtime: p.Runtime, Kind: event.KindHook, ReceivedAt: at, Payload: p.JSON})
		}
	}
	s := attribution.Build(envs).Session(jaegerSession)
	want := otlp.Spans(otlp.Session{Summary: s.Summary(), Agents: s.Agents, ToolCalls: s.ToolCalls})
	traceID := hex.EncodeToString(otlp.TraceID(jaegerSession))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	line, done := startServe(t, ctx, "--addr", "127.0.0.1:0", "--watch-transcripts", "off", "--codex-rollouts", "off", "--otlp-endpoint", j.Endpoint)
	mustPost(t, servedURL(line), envs)
	// Every span is final once the events are in: the live push sends
	// them all before serve stops (which would send what is open).
	if _, err := j.WaitSpans(traceID, len(want), 30*time.Second); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	checkJaegerTrace(t, j, traceID, want)

	out := mustHW(t, "export", "--format", "otlp", "--session", jaegerSession, "--otlp-endpoint", j.Endpoint)
	if !strings.Contains(out, "(trace "+traceID+")") {
		t.Fatalf("export printed %q, want trace %s", out, traceID)
	}
	checkJaegerTrace(t, j, traceID, want)
}

// checkJaegerTrace checks that Jaeger holds trace traceID as want, the
// spans of the session's model: each span once, with its name, kind,
// parent, status and attributes, and the tree a user reads.
func checkJaegerTrace(t *testing.T, j *otelcol.Jaeger, traceID string, want []*tracepb.Span) {
	t.Helper()
	got, err := j.Spans(traceID)
	if err != nil {
		t.Fatal(err)
	}
	byID, err := otelcol.ByID(got)
	if err != nil {
		t.Fatalf("Jaeger: %v", err)
	}
	if len(got) != len(want) {
		t.Fatalf("Jaeger holds %d spans of trace %s, the model makes %d\n%s", len(got), traceID, len(want), j.Log())
	}
	for _, w := range want {
		g, ok := byID[hex.EncodeToString(w.SpanId)]
		if !ok {
			t.Fatalf("Jaeger has no span %s %x", w.Name, w.SpanId)
		}
		// Jaeger shows a span of no length (a call rejected before it ran)
		// as one of 1 ns, with a warning.
		end := w.EndTimeUnixNano
		if end == w.StartTimeUnixNano {
			end++
		}
		if g.Name != w.Name || g.Kind != int(w.Kind) || g.ParentSpanID != hex.EncodeToString(w.ParentSpanId) ||
			g.Status.Code != int(w.GetStatus().GetCode()) || g.Status.Message != w.GetStatus().GetMessage() ||
			g.Start != strconv.FormatUint(w.StartTimeUnixNano, 10) || g.End != strconv.FormatUint(end, 10) {
			t.Fatalf("span %s %x (%d..%d): Jaeger gives %+v", w.Name, w.SpanId, w.StartTimeUnixNano, w.EndTimeUnixNano, g)
		}
		for _, kv := range w.Attributes {
			if v := g.Attr(kv.Key); v != anyValueText(kv.Value) {
				t.Fatalf("span %s %x: %s is %q in Jaeger, %q in the model", w.Name, w.SpanId, kv.Key, v, anyValueText(kv.Value))
			}
		}
	}

	// The tree and the attributes a user reads in Jaeger's view of the
	// trace, from what Jaeger answered alone.
	var roots, subagents, calls, failed int
	for _, sp := range got {
		if sp.Attr("gen_ai.conversation.id") != jaegerSession || sp.Attr("gen_ai.provider.name") != "anthropic" {
			t.Fatalf("span %s: conversation %q provider %q", sp.Name, sp.Attr("gen_ai.conversation.id"), sp.Attr("gen_ai.provider.name"))
		}
		if svc := (otelcol.Span{Attributes: sp.Resource}).Attr("service.name"); svc != "claude-code" {
			t.Fatalf("span %s: service.name %q", sp.Name, svc)
		}
		parent, hasParent := byID[sp.ParentSpanID]
		if sp.ParentSpanID != "" && !hasParent {
			t.Fatalf("span %s: parent %s not in the trace", sp.Name, sp.ParentSpanID)
		}
		switch op := sp.Attr("gen_ai.operation.name"); {
		case op == "invoke_agent" && sp.Attr("hookwatch.agent.role") == "main":
			roots++
			if hasParent || sp.Name != "invoke_agent main" || sp.Attr("gen_ai.agent.id") != jaegerSession {
				t.Fatalf("main agent's span %s: parent %q, agent id %q", sp.Name, sp.ParentSpanID, sp.Attr("gen_ai.agent.id"))
			}
		case op == "invoke_agent" && sp.Attr("hookwatch.agent.role") == "subagent":
			subagents++
			if sp.Name != "invoke_agent "+sp.Attr("gen_ai.agent.name") || parent.Name != "execute_tool Agent" ||
				parent.Attr("hookwatch.tool.spawned_agent_id") != sp.Attr("gen_ai.agent.id") {
				t.Fatalf("subagent's span %s (%s): under %s spawning %q", sp.Name, sp.Attr("gen_ai.agent.id"), parent.Name, parent.Attr("hookwatch.tool.spawned_agent_id"))
			}
		case op == "execute_tool":
			calls++
			agent := sp.Attr("gen_ai.agent.id") // a subagent's; none for the main agent's calls
			if agent == "" {
				agent = jaegerSession
			}
			if sp.Name != "execute_tool "+sp.Attr("gen_ai.tool.name") || sp.Attr("gen_ai.tool.call.id") == "" ||
				parent.Attr("gen_ai.operation.name") != "invoke_agent" || parent.Attr("gen_ai.agent.id") != agent {
				t.Fatalf("call %s %s: under %s of agent %q, want its agent %q", sp.Name, sp.Attr("gen_ai.tool.call.id"), parent.Name, parent.Attr("gen_ai.agent.id"), agent)
			}
			if sp.Attr("hookwatch.tool.status") == "error" {
				failed++
				if sp.Status.Code != 2 || sp.Status.Message == "" || sp.Attr("error.type") != "tool_error" {
					t.Fatalf("failed call %s: status %+v, error.type %q", sp.Attr("gen_ai.tool.call.id"), sp.Status, sp.Attr("error.type"))
				}
			} else if sp.Status.Code == 2 {
				t.Fatalf("call %s (%s): error status", sp.Attr("gen_ai.tool.call.id"), sp.Attr("hookwatch.tool.status"))
			}
		}
	}
	if roots == 0 || subagents == 0 || calls == 0 || failed == 0 {
		t.Fatalf("%d main agent runs, %d subagents, %d calls, %d failed: want some of each", roots, subagents, calls, failed)
	}
}

// anyValueText is v as otelcol.Span.Attr gives an attribute.
func anyValueText(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return strconv.FormatInt(x.IntValue, 10)
	case *commonpb.AnyValue_BoolValue:
		return strconv.FormatBool(x.BoolValue)
	}
	return "?"
}

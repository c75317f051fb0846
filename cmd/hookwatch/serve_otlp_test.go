package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/export/otlp"
	"github.com/hookwatch/hookwatch/internal/demo"
	"github.com/hookwatch/hookwatch/internal/otelcol"
)

// TestServeResendsOwedSpans: a serve whose OTLP receiver (a real
// OpenTelemetry Collector) is away when a session's spans go out keeps the
// session owed in the home; stopped, and started again once the receiver is
// back, it sends the session's spans, each with its id.
func TestServeResendsOwedSpans(t *testing.T) {
	rcv, err := otelcol.Start(t.TempDir())
	if err != nil {
		otelcol.Missing(t, err)
	}
	defer rcv.Stop()
	if err := rcv.Stop(); err != nil {
		t.Fatal(err)
	}
	home := freshHome(t)
	envs := demo.Big(demo.BigSpec{SessionID: "owed-otlp", Start: time.Now().Add(-time.Hour), Events: 300, Agents: 2, Ended: true, Seed: 5})
	s := attribution.Build(envs).Session("owed-otlp")
	want := otlp.Spans(otlp.Session{Summary: s.Summary(), Agents: s.Agents, ToolCalls: s.ToolCalls})
	args := []string{"--addr", "127.0.0.1:0", "--watch-transcripts", "off", "--codex-rollouts", "off", "--otlp-endpoint", rcv.Endpoint}

	ctx, cancel := context.WithCancel(context.Background())
	line, done := startServe(t, ctx, args...)
	url := servedURL(line)
	body, err := json.Marshal(map[string]any{"envelopes": envs})
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.Post(url+"/v1/events", "application/json", bytes.NewReader(body))
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("POST: %v %v", res, err)
	}
	res.Body.Close()
	owed := filepath.Join(home, "otlp-owed.json")
	deadline := time.Now().Add(20 * time.Second)
	for {
		b, _ := os.ReadFile(owed)
		if strings.Contains(string(b), `"owed-otlp"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s keeps %q, want the session", owed, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(owed); !strings.Contains(string(b), `"owed-otlp"`) {
		t.Fatalf("serve stopped: %s keeps %q, want the session", owed, b)
	}
	traceID := hex.EncodeToString(otlp.TraceID("owed-otlp"))
	if got, _ := rcv.Spans(traceID); len(got) != 0 {
		t.Fatalf("the receiver away holds %d spans", len(got))
	}

	if err := rcv.Restart(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	_, done = startServe(t, ctx, args...)
	got, err := rcv.WaitSpans(traceID, len(want), 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, sp := range got {
		ids[sp.SpanID] = true
	}
	for _, w := range want {
		if !ids[hex.EncodeToString(w.SpanId)] {
			t.Fatalf("span %s %x not received", w.Name, w.SpanId)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(owed); strings.Contains(string(b), `"owed-otlp"`) {
		t.Fatalf("%s keeps %q once the spans were sent", owed, b)
	}
}

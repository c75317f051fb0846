package main

import (
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/export/otlp"
	"github.com/hookwatch/hookwatch/internal/demo"
	"github.com/hookwatch/hookwatch/internal/modeled"
)

// otlpReceiver is an OTLP/HTTP endpoint that decodes what it is sent.
type otlpReceiver struct {
	mu      sync.Mutex
	spans   []*tracepb.Span
	headers []http.Header
}

func (r *otlpReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	var td tracepb.TracesData
	if req.URL.Path != "/v1/traces" || req.Header.Get("Content-Type") != "application/x-protobuf" || proto.Unmarshal(body, &td) != nil {
		http.Error(w, "not an OTLP/HTTP protobuf request", http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.headers = append(r.headers, req.Header.Clone())
	for _, rs := range td.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			r.spans = append(r.spans, ss.Spans...)
		}
	}
}

// TestExportOTLP: `hookwatch export --format otlp` sends a stored session's
// spans, with the headers asked for, and refuses to run without a receiver.
func TestExportOTLP(t *testing.T) {
	envs := demo.Big(demo.BigSpec{SessionID: "export-otlp", Start: time.Now().Add(-time.Hour), Events: 2000, Agents: 4, Ended: true, Seed: 3})
	path := filepath.Join(t.TempDir(), "hookwatch.db")
	if err := modeled.Store(context.Background(), path, envs, time.Minute); err != nil {
		t.Fatal(err)
	}
	s := attribution.Build(envs).Session("export-otlp")
	want := otlp.Spans(otlp.Session{Summary: s.Summary(), Agents: s.Agents, ToolCalls: s.ToolCalls})

	rcv := &otlpReceiver{}
	srv := httptest.NewServer(rcv)
	defer srv.Close()
	// A key in base64 keeps its '+': values are percent-encoded (as
	// OTEL_EXPORTER_OTLP_HEADERS' are), not form-encoded.
	t.Setenv("HOOKWATCH_OTLP_HEADERS", "X-Tenant=team%20a,Authorization=Bearer%20env,X-Api-Key=dG9r+ZW4/a2V5%3D")
	out := mustHW(t, "export", "--format", "otlp", "--session", "export-otlp", "--db", path,
		"--otlp-endpoint", srv.URL, "--otlp-header", "Authorization=Bearer flag")
	if len(rcv.spans) != len(want) || !strings.Contains(out, "1 session, ") {
		t.Fatalf("the receiver got %d spans, the model has %d; output:\n%s", len(rcv.spans), len(want), out)
	}
	byID := map[string]*tracepb.Span{}
	for _, sp := range rcv.spans {
		byID[string(sp.SpanId)] = sp
	}
	for _, w := range want {
		if !proto.Equal(byID[string(w.SpanId)], w) {
			t.Fatalf("span %s differs from the model's", w.Name)
		}
	}
	for _, h := range rcv.headers {
		if h.Get("Authorization") != "Bearer flag" || h.Get("X-Tenant") != "team a" || h.Get("X-Api-Key") != "dG9r+ZW4/a2V5=" ||
			h.Get("User-Agent") != "hookwatch-otlp" {
			t.Fatalf("headers %v", h)
		}
	}

	f := func(wantErr string, args ...string) {
		t.Helper()
		_, _, err := hw(t, "", append([]string{"export", "--db", path}, args...)...)
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("export %v: %v, want %q", args, err, wantErr)
		}
	}
	t.Setenv("HOOKWATCH_OTLP_ENDPOINT", "")
	f("--otlp-endpoint", "--format", "otlp", "--session", "export-otlp")
	f("--session ID or --since", "--format", "otlp", "--otlp-endpoint", srv.URL)
	f("no session", "--format", "otlp", "--session", "nope", "--otlp-endpoint", srv.URL)
	f("cannot use the OTLP endpoint", "--format", "otlp", "--session", "export-otlp", "--otlp-endpoint", "localhost:4318")
	if _, _, err := hw(t, "", "export", "--db", path, "--format", "otlp", "--session", "export-otlp", "--otlp-endpoint", srv.URL+"/elsewhere"); !errors.As(err, new(*otlp.StatusError)) {
		t.Fatalf("a refusing receiver: %v", err)
	}
}

// TestExportOTLPNothingListens: an endpoint where nothing listens fails
// the export at once, in one line naming it and what to check, not after
// every retry.
func TestExportOTLPNothingListens(t *testing.T) {
	envs := demo.Big(demo.BigSpec{SessionID: "export-dead", Start: time.Now().Add(-time.Hour), Events: 200, Agents: 2, Ended: true, Seed: 7})
	path := filepath.Join(t.TempDir(), "hookwatch.db")
	if err := modeled.Store(context.Background(), path, envs, time.Minute); err != nil {
		t.Fatal(err)
	}
	dead := deadPort(t)
	start := time.Now()
	out, errOut, err := hw(t, "", "export", "--format", "otlp", "--session", "export-dead", "--db", path, "--otlp-endpoint", dead.URL())
	if d := time.Since(start); d > otlp.DefaultBackoff {
		t.Errorf("export to a port where nothing listens took %v, want a failure at once", d)
	}
	var msg strings.Builder
	if code := exitCode(err, &msg); code != 1 || out != "" || errOut != "" {
		t.Fatalf("export to a port where nothing listens: exit status %d, stdout %q, stderr %q", code, out, errOut)
	}
	want := "hookwatch: cannot export to " + dead.URL() + "/v1/traces: connection refused, nothing listens there: check --otlp-endpoint (or HOOKWATCH_OTLP_ENDPOINT) and that the OTLP/HTTP receiver is running\n"
	if msg.String() != want {
		t.Fatalf("export to a port where nothing listens said %q, want %q", msg.String(), want)
	}
}

// TestExportOTLPOneSpan: a session of one span (its own: no call, no
// subagent) is counted in the singular.
func TestExportOTLPOneSpan(t *testing.T) {
	at := time.Now().Add(-time.Hour)
	payload := `{"hook_event_name":"SessionStart","session_id":"lone","cwd":"/tmp/p","source":"startup"}`
	envs := []event.Envelope{{ID: event.NewID(at), Runtime: event.RuntimeClaudeCode, Kind: event.KindHook, ReceivedAt: at, Payload: []byte(payload)}}
	path := filepath.Join(t.TempDir(), "hookwatch.db")
	if err := modeled.Store(context.Background(), path, envs, time.Minute); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(&otlpReceiver{})
	defer srv.Close()
	out := mustHW(t, "export", "--format", "otlp", "--session", "lone", "--db", path, "--otlp-endpoint", srv.URL)
	if want := fmt.Sprintf("session lone: 1 span (trace %x)\n1 session, 1 span sent to %s/v1/traces\n", otlp.TraceID("lone"), srv.URL); out != want {
		t.Fatalf("export of a one-span session printed %q, want %q", out, want)
	}
}

// TestExportFlagsOfTheOtherFormat: a flag of the format not asked for is a
// usage error, rather than ignored: --otlp-endpoint without --format otlp
// sends nothing and writes nothing (not the trail into --out); --out with
// --format otlp sends nothing. The receiver in the environment, serve's
// too, leaves a JSONL export alone.
func TestExportFlagsOfTheOtherFormat(t *testing.T) {
	envs := demo.Big(demo.BigSpec{SessionID: "other-format", Start: time.Now().Add(-time.Hour), Events: 200, Agents: 2, Ended: true, Seed: 5})
	path := filepath.Join(t.TempDir(), "hookwatch.db")
	if err := modeled.Store(context.Background(), path, envs, time.Minute); err != nil {
		t.Fatal(err)
	}
	rcv := &otlpReceiver{}
	srv := httptest.NewServer(rcv)
	defer srv.Close()
	out := t.TempDir()
	f := func(wantErr string, args ...string) {
		t.Helper()
		_, _, err := hw(t, "", append([]string{"export", "--db", path, "--session", "other-format"}, args...)...)
		if err == nil || !strings.Contains(err.Error(), wantErr) || exitCode(err, io.Discard) != 2 {
			t.Fatalf("export %v: %v, want a usage error with %q", args, err, wantErr)
		}
		if entries, _ := os.ReadDir(out); len(entries) > 0 || len(rcv.spans) > 0 {
			t.Fatalf("export %v wrote %d files and sent %d spans", args, len(entries), len(rcv.spans))
		}
	}
	f("--otlp-endpoint goes with --format otlp", "--otlp-endpoint", srv.URL, "--out", out)
	f("--otlp-header goes with --format otlp", "--format", "jsonl", "--otlp-header", "k=v", "--out", out)
	f("--out goes with --format jsonl", "--format", "otlp", "--otlp-endpoint", srv.URL, "--out", out)

	t.Setenv("HOOKWATCH_OTLP_ENDPOINT", srv.URL)
	mustHW(t, "export", "--db", path, "--session", "other-format", "--out", out)
	if entries, _ := os.ReadDir(out); len(entries) != 1 || len(rcv.spans) > 0 {
		t.Fatalf("a JSONL export beside HOOKWATCH_OTLP_ENDPOINT wrote %d directories and sent %d spans", len(entries), len(rcv.spans))
	}
}

// TestExportOTLPCAFile: a receiver whose certificate a team's own
// authority signed is refused as unknown, and taken with --otlp-ca-file
// (or HOOKWATCH_OTLP_CA_FILE) naming that authority's PEM.
func TestExportOTLPCAFile(t *testing.T) {
	envs := demo.Big(demo.BigSpec{SessionID: "export-otlp-ca", Start: time.Now().Add(-time.Hour), Events: 50, Agents: 1, Ended: true, Seed: 5})
	path := filepath.Join(t.TempDir(), "hookwatch.db")
	if err := modeled.Store(context.Background(), path, envs, time.Minute); err != nil {
		t.Fatal(err)
	}
	rcv := &otlpReceiver{}
	srv := httptest.NewTLSServer(rcv)
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "otlp-ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOOKWATCH_OTLP_HEADERS", "")
	t.Setenv("HOOKWATCH_OTLP_CA_FILE", "")
	args := []string{"export", "--format", "otlp", "--session", "export-otlp-ca", "--db", path, "--otlp-endpoint", srv.URL}
	if _, _, err := hw(t, "", args...); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("a receiver of an unknown authority: %v, want a certificate error", err)
	}
	if out := mustHW(t, append(args, "--otlp-ca-file", ca)...); !strings.Contains(out, "1 session, ") || len(rcv.spans) == 0 {
		t.Fatalf("--otlp-ca-file: the receiver got %d spans; output:\n%s", len(rcv.spans), out)
	}
	t.Setenv("HOOKWATCH_OTLP_CA_FILE", ca)
	mustHW(t, args...)
	if _, _, err := hw(t, "", append(args, "--otlp-ca-file", filepath.Join(t.TempDir(), "none.pem"))...); err == nil || !strings.Contains(err.Error(), "CA file") {
		t.Fatalf("a CA file that is not there: %v", err)
	}
}

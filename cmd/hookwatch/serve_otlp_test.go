package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/export/otlp"
	"github.com/hookwatch/hookwatch/internal/demo"
	"github.com/hookwatch/hookwatch/internal/otelcol"
	"github.com/hookwatch/hookwatch/internal/pgtest"
	"github.com/hookwatch/hookwatch/internal/testbin"
	"github.com/hookwatch/hookwatch/store/sqlite"
)

// TestServeResendsOwedSpans: a serve whose OTLP receiver (a real
// OpenTelemetry Collector) is away when a session's spans go out keeps the
// session owed in its database; stopped, and started again once the
// receiver is back, it sends the session's spans, each with its id.
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
	mustPost(t, url, envs)
	// A request tried: the session was recorded before it.
	waitMetric(t, url, "hookwatch_otlp_requests_total", "1")
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	dbPath := filepath.Join(home, "hookwatch.db")
	if got := owedRecorded(t, dbPath); !got["owed-otlp"] {
		t.Fatalf("serve stopped: the database records %v as owed, want the session", got)
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
	if missing := missingSpans(want, got); len(missing) > 0 {
		t.Fatalf("span %s %x not received", missing[0].Name, missing[0].SpanId)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := owedRecorded(t, dbPath); len(got) != 0 {
		t.Fatalf("the database records %v as owed once the spans were sent", got)
	}
}

// owedRecorded returns the sessions the SQLite database at path records
// as owed to the OTLP receiver.
func owedRecorded(t *testing.T, path string) map[string]bool {
	t.Helper()
	db, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.OTLPDebts(context.Background(), 100)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, r := range rows {
		if r.SessionID != "" { // "": a collector's record that it runs
			out[r.SessionID] = true
		}
	}
	return out
}

// TestServeMovesOwedFile: the sessions a collector before the upgrade kept
// as owed in the home's otlp-owed.json are moved to the database at the
// first start, the file removed, and their spans sent to the receiver (a
// real OpenTelemetry Collector).
func TestServeMovesOwedFile(t *testing.T) {
	rcv, err := otelcol.Start(t.TempDir())
	if err != nil {
		otelcol.Missing(t, err)
	}
	defer rcv.Stop()
	home := freshHome(t)
	envs := demo.Big(demo.BigSpec{SessionID: "owed-file", Start: time.Now().Add(-time.Hour), Events: 200, Agents: 1, Ended: true, Seed: 3})
	s := attribution.Build(envs).Session("owed-file")
	want := otlp.Spans(otlp.Session{Summary: s.Summary(), Agents: s.Agents, ToolCalls: s.ToolCalls})
	base := []string{"--addr", "127.0.0.1:0", "--watch-transcripts", "off", "--codex-rollouts", "off"}
	// Stored without an exporter: no span sent.
	ctx, cancel := context.WithCancel(context.Background())
	line, done := startServe(t, ctx, base...)
	mustPost(t, servedURL(line), envs)
	waitBody(t, servedURL(line)+"/v1/sessions/owed-file/tool-calls", `"tool_use_id"`)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// What an older collector left in the home.
	owed := filepath.Join(home, "otlp-owed.json")
	if err := os.WriteFile(owed, []byte(`{"sessions":{"owed-file":"2026-05-01T10:00:00Z"}}`), 0o600); err != nil {
		t.Fatal(err)
	}

	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	_, done = startServe(t, ctx, append(base, "--otlp-endpoint", rcv.Endpoint)...)
	traceID := hex.EncodeToString(otlp.TraceID("owed-file"))
	got, err := rcv.WaitSpans(traceID, len(want), 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if missing := missingSpans(want, got); len(missing) > 0 {
		t.Fatalf("span %s %x not received", missing[0].Name, missing[0].SpanId)
	}
	if _, err := os.Stat(owed); !os.IsNotExist(err) {
		t.Errorf("%s is still there once moved: %v", owed, err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := owedRecorded(t, filepath.Join(home, "hookwatch.db")); len(got) != 0 {
		t.Fatalf("the database records %v as owed once the spans were sent", got)
	}
}

// TestServeTeamOwedSpansSurviveHandover: on a team server (two collectors
// on one real PostgreSQL database, each with its own home), the holder of
// the model's lease stores a session while the OTLP receiver (a real
// OpenTelemetry Collector) is away, and stops; the receiver comes back, the
// other collector takes the lease over, and the receiver gets the session's
// spans, each with its id: what the first owed is kept in the database,
// where the next holder reads it.
func TestServeTeamOwedSpansSurviveHandover(t *testing.T) {
	rcv, err := otelcol.Start(t.TempDir())
	if err != nil {
		otelcol.Missing(t, err)
	}
	defer rcv.Stop()
	if err := rcv.Stop(); err != nil {
		t.Fatal(err)
	}
	dbURL := pgtest.NewDatabase(t)
	freshHome(t)
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"HOOKWATCH_TEST_MAIN=1", "HOOKWATCH_DB=" + dbURL, "HOOKWATCH_OTLP_ENDPOINT=" + rcv.Endpoint,
		"HOOKWATCH_WATCH_TRANSCRIPTS=off", "HOME=" + t.TempDir()}
	dir := t.TempDir()
	a := testbin.StartCollector(t, bin, filepath.Join(dir, "a"), "", env...)
	waitMetric(t, a.URL(), "hookwatch_model_leader", "1")
	b := testbin.StartCollector(t, bin, filepath.Join(dir, "b"), "", env...)
	defer b.Stop(t)
	waitMetric(t, b.URL(), "hookwatch_model_leader", "0")

	envs := demo.Big(demo.BigSpec{SessionID: "owed-team", Start: time.Now().Add(-time.Hour), Events: 300, Agents: 2, Ended: true, Seed: 7})
	s := attribution.Build(envs).Session("owed-team")
	want := otlp.Spans(otlp.Session{Summary: s.Summary(), Agents: s.Agents, ToolCalls: s.ToolCalls})
	mustPost(t, a.URL(), envs)
	// The holder's live push gives up on the receiver: the session owed.
	waitMetric(t, a.URL(), "hookwatch_otlp_sessions_owed", "1")
	a.Stop(t)
	traceID := hex.EncodeToString(otlp.TraceID("owed-team"))
	if got, _ := rcv.Spans(traceID); len(got) != 0 {
		t.Fatalf("the receiver away holds %d spans", len(got))
	}

	if err := rcv.Restart(); err != nil {
		t.Fatal(err)
	}
	waitMetric(t, b.URL(), "hookwatch_model_leader", "1")
	// Every span, each with its id: the new holder's own push (the rows it
	// restates) is not enough.
	missing := want
	for deadline := time.Now().Add(30 * time.Second); len(missing) > 0; time.Sleep(100 * time.Millisecond) {
		got, _ := rcv.Spans(traceID)
		missing = missingSpans(want, got)
		if len(missing) > 0 && time.Now().After(deadline) {
			t.Fatalf("%d of %d spans not received, %s %x among them\nthe second collector's log:\n%s",
				len(missing), len(want), missing[0].Name, missing[0].SpanId, b.Log())
		}
	}
	waitMetric(t, b.URL(), "hookwatch_otlp_sessions_owed", "0")
}

// waitMetric waits up to 30 s for the collector at url to report the
// metric name (without labels) at value on /metrics.
func waitMetric(t *testing.T, url, name, value string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	last := ""
	for {
		res, err := http.Get(url + "/metrics")
		if err == nil {
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			for _, line := range strings.Split(string(b), "\n") {
				if v, ok := strings.CutPrefix(line, name+" "); ok {
					last = v
				}
			}
			if last == value {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s is %q, want %s", url, name, last, value)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitBody waits up to 30 s for GET url to answer a body that holds want.
func waitBody(t *testing.T, url, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := http.Get(url)
		var b []byte
		if err == nil {
			b, _ = io.ReadAll(res.Body)
			res.Body.Close()
			if strings.Contains(string(b), want) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s: %q (%v), want %s in it", url, b, err, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// mustPost POSTs envs to the collector at url in one batch, failing
// the test unless it is stored.
func mustPost(t *testing.T, url string, envs []event.Envelope) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"envelopes": envs})
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.Post(url+"/v1/events", "application/json", bytes.NewReader(body))
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("POST: %v %v", res, err)
	}
	res.Body.Close()
}

// missingSpans returns the spans of want no span of got has the id of.
func missingSpans(want []*tracepb.Span, got []otelcol.Span) []*tracepb.Span {
	ids := make(map[string]bool, len(got))
	for _, sp := range got {
		ids[sp.SpanID] = true
	}
	var missing []*tracepb.Span
	for _, w := range want {
		if !ids[hex.EncodeToString(w.SpanId)] {
			missing = append(missing, w)
		}
	}
	return missing
}

// TestDebtOwner: the name a collector records its OTLP debts under is the
// same when it restarts on its home, and another for a home of the same
// path on a machine of the same name (a clone of one image: its home
// keeps another id). A home where the id cannot be kept still gives a
// name, the same at each start, with a warning.
func TestDebtOwner(t *testing.T) {
	var logged bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logged, nil))
	home := t.TempDir()
	first := debtOwner(log, home)
	if again := debtOwner(log, home); again != first || len(first) != 16 {
		t.Errorf("owner %q, then %q at a restart: want one name of 16 hex digits", first, again)
	}
	fi, err := os.Stat(filepath.Join(home, ownerIDFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the home's id: %v, %v: want a file of mode 0600", fi, err)
	}
	// The clone's home: the same path, made anew.
	if err := os.Remove(filepath.Join(home, ownerIDFile)); err != nil {
		t.Fatal(err)
	}
	if clone := debtOwner(log, home); clone == first {
		t.Errorf("a home of the same path and machine name, made anew, is named %q too", clone)
	}
	if logged.Len() > 0 {
		t.Errorf("warned where the id is kept: %s", logged.String())
	}
	// No directory to keep the id in.
	gone := filepath.Join(t.TempDir(), "missing")
	a, b := debtOwner(log, gone), debtOwner(log, gone)
	if a != b || a == "" || !strings.Contains(logged.String(), "machine's and home's alone") {
		t.Errorf("a home that cannot keep the id: %q, then %q; log %q: want one name and a warning", a, b, logged.String())
	}
}

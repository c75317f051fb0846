package collector_test

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/syncbuf"
	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/sqlite"
)

// spillBound is the model's backlog in the spill tests: a burst is a
// hundred times it.
const spillBound = 50

// burstEnvelopes are the 2.1.197 capture (lineage: a fork, a compaction,
// subagents) and sessions of 21 events of tool calls in six projects, each
// session's events close in time.
func burstEnvelopes(t *testing.T, sessions int) []event.Envelope {
	envs := claudeCorpus(t)
	for i := range sessions {
		sid := fmt.Sprintf("burst-%03d", i)
		cwd := fmt.Sprintf("/work/p%d", i%6)
		base := 100_000 + i*1000
		envs = append(envs, synth(base, "session_id", sid, "cwd", cwd, "hook_event_name", "SessionStart", "source", "startup"))
		for k := range 10 {
			ms := base + 10 + k*10
			id := fmt.Sprintf("toolu_%s_%d", sid, k)
			envs = append(envs,
				synth(ms, "session_id", sid, "cwd", cwd, "hook_event_name", "PreToolUse", "tool_name", "Bash", "tool_use_id", id, "tool_input", map[string]any{"command": "ls"}),
				synth(ms+1, "session_id", sid, "cwd", cwd, "hook_event_name", "PostToolUse", "tool_name", "Bash", "tool_use_id", id, "tool_input", map[string]any{"command": "ls"}, "tool_response", map[string]any{"stdout": "a"}))
		}
	}
	return envs
}

// postAll posts envs in batches of size from clients concurrent clients, in
// the order given.
func postAll(t *testing.T, s *testServer, envs []event.Envelope, size, clients int) {
	t.Helper()
	var batches [][]event.Envelope
	for i := 0; i < len(envs); i += size {
		batches = append(batches, envs[i:min(i+size, len(envs))])
	}
	work := make(chan []event.Envelope)
	var wg sync.WaitGroup
	errs := make(chan string, clients)
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range work {
				if code, body := s.do(t, http.MethodPost, "/v1/events", batch(t, b)); code != http.StatusOK {
					errs <- fmt.Sprintf("POST /v1/events: %d %s", code, body)
					return
				}
			}
		}()
	}
	for _, b := range batches {
		work <- b
	}
	close(work)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}

// wantBuild checks every session's agents and tool calls against
// attribution.Build of envs.
func wantBuild(t *testing.T, s *testServer, envs []event.Envelope, sessions int) {
	t.Helper()
	want := attribution.Build(envs)
	n := 0
	for _, v := range s.settle(t) {
		ws := want.Session(v.ID)
		if ws == nil || v.AliasOf != "" {
			continue
		}
		n++
		s.wantRows(t, v.ID, ws)
	}
	if n < sessions {
		t.Fatalf("%d sessions compared with Build", n)
	}
}

// TestModelSpill: a burst fifty times the model's backlog, posted out
// of order by four concurrent clients. No commit waits for the model: the
// POSTs all return while it holds a small part of the burst, the rest
// spilled to the log. A read of a session whose events are in the log waits
// for them; every event is applied exactly once, and the model is the one
// derived without a bound, and Build's.
func TestModelSpill(t *testing.T) {
	envs := burstEnvelopes(t, 120)
	ref := newServer(t, collector.Config{})
	postAll(t, ref, envs, 200, 1)
	want := derivedView(t, ref)

	defer collector.SetModelMaxBacklogForTest(spillBound)()
	s := newServer(t, patient)
	input := slices.Clone(envs)
	rand.New(rand.NewPCG(7, 11)).Shuffle(len(input), func(a, b int) { input[a], input[b] = input[b], input[a] })
	half := len(input) / 2
	// One session's events all at the end of the first half: spilled,
	// and none posted while it is read.
	sid := "burst-042"
	var its []event.Envelope
	input = slices.DeleteFunc(input, func(e event.Envelope) bool {
		if sessionOf(t, e) == sid {
			its = append(its, e)
			return true
		}
		return false
	})
	input = slices.Insert(input, half-len(its), its...)
	postAll(t, s, input[:half], 100, 4)

	// The POSTs returned with far more events committed than the model
	// holds: none waited for it.
	m := s.scrape(t)
	if m["hookwatch_model_pending_events"] <= spillBound || m["hookwatch_model_events_spilled_total"] == 0 {
		t.Fatalf("after %d events posted: %v pending, %v spilled; want more pending than the bound %d",
			half, m["hookwatch_model_pending_events"], m["hookwatch_model_events_spilled_total"], spillBound)
	}

	// That session is in the log, not derived; a read of it, while the
	// second half is posted, waits for it.
	var listed collector.SessionView
	for _, v := range s.sessions(t) {
		if v.ID == sid {
			listed = v
		}
	}
	if listed.ID == "" || listed.DerivedSeq == listed.LastSeq {
		t.Fatalf("session %s is derived already, or not listed: %+v", sid, listed)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		postAll(t, s, input[half:], 100, 4)
	}()
	var v collector.SessionView
	s.getJSON(t, "/v1/sessions/"+sid, &v)
	if v.DerivedSeq != v.LastSeq || v.LastSeq < listed.LastSeq {
		t.Errorf("read during the burst: derived_seq %d, last_seq %d (listed before at %d)", v.DerivedSeq, v.LastSeq, listed.LastSeq)
	}
	<-done

	if got := derivedView(t, s); got != want {
		t.Fatalf("derived state after a spill differs:\n%s\nwant:\n%s", got, want)
	}
	wantBuild(t, s, envs, 120)
	m = s.scrape(t)
	if m["hookwatch_model_events_applied_total"] != float64(len(envs)) {
		t.Errorf("%v events applied, want each of %d once", m["hookwatch_model_events_applied_total"], len(envs))
	}
	if m["hookwatch_model_events_read_total"] != m["hookwatch_model_events_spilled_total"] {
		t.Errorf("%v events spilled, %v read back", m["hookwatch_model_events_spilled_total"], m["hookwatch_model_events_read_total"])
	}
	if m["hookwatch_model_errors_total"] != 0 || m["hookwatch_model_pending_events"] != 0 {
		t.Errorf("%v model errors, %v pending", m["hookwatch_model_errors_total"], m["hookwatch_model_pending_events"])
	}
}

// TestModelSpillStop: a collector stopped with most of a burst spilled,
// given no time to apply it, leaves those sessions stale in the store; the
// next collector on the file applies them and ends with the whole model.
func TestModelSpillStop(t *testing.T) {
	// Fewer sessions: the next collector loads the stale ones a few a
	// round (staleLoads), paced as rounds are.
	envs := burstEnvelopes(t, 60)
	ref := newServer(t, collector.Config{})
	postAll(t, ref, envs, 200, 1)
	want := derivedView(t, ref)

	restore := collector.SetModelMaxBacklogForTest(spillBound)
	restoreWait := collector.SetModelFlushWaitForTest(time.Millisecond)
	path := filepath.Join(t.TempDir(), "hookwatch.db")
	db, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	s := newServerOn(t, collector.Config{}, db)
	postAll(t, s, envs, 100, 4)
	m := s.scrape(t)
	s.stop() // closes db
	restore()
	restoreWait()
	if m["hookwatch_model_events_spilled_total"] == 0 {
		t.Fatal("nothing spilled")
	}
	if db, err = sqlite.Open(path); err != nil {
		t.Fatal(err)
	}
	stale, err := db.StaleModels(context.Background(), attribution.ModelVersion, "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(stale) == 0 {
		t.Fatal("no session left stale by a stop with events spilled")
	}

	next := newServerOn(t, patient, db)
	if got := derivedView(t, next); got != want {
		t.Fatalf("derived state after a stop in a spill differs:\n%s\nwant:\n%s", got, want)
	}
	wantBuild(t, next, envs, 60)
}

// sessionOf is the session id of an envelope's payload.
func sessionOf(t *testing.T, env event.Envelope) string {
	t.Helper()
	p, err := event.Decode(env.Payload)
	if err != nil {
		t.Fatal(err)
	}
	return p.SessionID
}

// sessions lists every session as stored now, without waiting.
func (s *testServer) sessions(t *testing.T) []collector.SessionView {
	t.Helper()
	var page collector.SessionsResponse
	s.getJSON(t, "/v1/sessions?limit=1000", &page)
	return page.Sessions
}

// TestModelSpillPruned: sessions deleted (retention) while their events
// wait in the log for the model are not waited for forever: the events
// gone are dropped from what the model has to read, and once it has
// applied everything else nothing is pending.
func TestModelSpillPruned(t *testing.T) {
	envs := burstEnvelopes(t, 100)
	defer collector.SetModelMaxBacklogForTest(spillBound)()
	s := newServer(t, collector.Config{})
	postAll(t, s, envs, 100, 1)
	// The whole log, sessions and events, older than tomorrow.
	if n, _, err := s.db.PruneSessions(context.Background(), time.Now().Add(24*time.Hour), 1000); err != nil || n == 0 {
		t.Fatalf("pruned %d sessions: %v", n, err)
	}
	// As settle's, a liveness bound: it moves on while the model reads
	// and applies (the race detector's rounds are slow), and fails once
	// it stops with events still pending.
	const stall = 30 * time.Second
	deadline := time.Now().Add(stall)
	progress := -1.0
	for {
		m := s.scrape(t)
		if p := m["hookwatch_model_events_read_total"] + m["hookwatch_model_events_applied_total"] - m["hookwatch_model_pending_events"]; p != progress {
			progress, deadline = p, time.Now().Add(stall)
		}
		if m["hookwatch_model_pending_events"] == 0 {
			if m["hookwatch_model_events_read_total"] >= m["hookwatch_model_events_spilled_total"] {
				t.Fatalf("every one of %v spilled events was read back before the prune: nothing tested", m["hookwatch_model_events_spilled_total"])
			}
			if m["hookwatch_model_errors_total"] != 0 {
				t.Fatalf("%v model errors", m["hookwatch_model_errors_total"])
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%v events still pending, and no progress for %v, after their sessions were deleted (%v spilled, %v read back)",
				m["hookwatch_model_pending_events"], stall, m["hookwatch_model_events_spilled_total"], m["hookwatch_model_events_read_total"])
		}
		time.Sleep(20 * time.Millisecond)
	}
	// A read of a deleted session does not wait for what was spilled.
	if code, _ := s.do(t, http.MethodGet, "/v1/sessions/burst-042", nil); code != http.StatusNotFound {
		t.Fatalf("GET a deleted session: %d", code)
	}
}

// TestModelSpillSessionless: events without a session, interleaved with a
// burst, are stored and skipped by the model while it reads the burst back
// from the log; the model is the one derived without a bound.
func TestModelSpillSessionless(t *testing.T) {
	var envs []event.Envelope
	for i, e := range burstEnvelopes(t, 40) {
		envs = append(envs, e, synth(200_000+i, "hook_event_name", "Notification", "message", fmt.Sprint("no session ", i)))
	}
	ref := newServer(t, collector.Config{})
	postAll(t, ref, envs, 200, 1)
	want := derivedView(t, ref)

	defer collector.SetModelMaxBacklogForTest(spillBound)()
	var log syncbuf.Buffer
	s := newServer(t, collector.Config{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	postAll(t, s, envs, 100, 1)
	if got := derivedView(t, s); got != want {
		t.Fatalf("derived state after a spill with events without a session differs:\n%s\nwant:\n%s", got, want)
	}
	m := s.scrape(t)
	if m["hookwatch_model_events_spilled_total"] == 0 || m["hookwatch_model_events_read_total"] != m["hookwatch_model_events_spilled_total"] ||
		m["hookwatch_model_events_applied_total"] != float64(len(envs)/2) {
		t.Fatalf("%v spilled, %v read back, %v applied of %d with a session",
			m["hookwatch_model_events_spilled_total"], m["hookwatch_model_events_read_total"], m["hookwatch_model_events_applied_total"], len(envs)/2)
	}
	// They were noted with the burst and read back, not taken for
	// events deleted meanwhile.
	if l := log.String(); strings.Contains(l, "deleted before") || strings.Contains(l, "level=ERROR") {
		t.Fatalf("the model logged:\n%s", l)
	}
	page, err := s.db.Events(context.Background(), store.EventFilter{Event: "Notification", Limit: store.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Events) != len(envs)/2 || page.Events[0].SessionID != "" {
		t.Fatalf("%d events without a session stored: %+v", len(page.Events), page.Events[:min(1, len(page.Events))])
	}
}

package collector_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/demo"
	"github.com/hookwatch/hookwatch/store/sqlite"
	"github.com/hookwatch/hookwatch/store/storetest"
)

// TestSignals reads the signals of the real 2.1.197 capture through the
// API: its main agent read main.go and its go vet failed, once each.
func TestSignals(t *testing.T) {
	s := newServer(t, patient)
	envs := claudeCorpus(t)
	s.post(t, envs, len(envs), 0)
	s.settle(t)
	kinds := func(path string) string {
		t.Helper()
		var r collector.SignalsResponse
		s.getJSON(t, path, &r)
		var out []string
		for _, a := range r.Agents {
			for _, sig := range a.Signals {
				out = append(out, a.AgentID+":"+sig.Kind+":"+sig.Detail)
			}
		}
		return strings.Join(out, "; ")
	}
	base := "/v1/sessions/" + corpusMain + "/signals"
	if got := kinds(base); got != "" {
		t.Fatalf("default thresholds raise %q", got)
	}
	got := kinds(base + "?read_repeats=1&failed_repeats=1")
	for _, want := range []string{
		":" + attribution.SignalLoop + ":read /home/dev/src/demo/main.go once",
		":" + attribution.SignalLoop + ":Bash go vet ./... 2>&1; exit 3 failed once",
	} {
		if !strings.Contains(got, want) {
			t.Fatalf("signals %q lack %q", got, want)
		}
	}
	if code, body := s.do(t, http.MethodGet, base+"?read_repeats=0", nil); code != http.StatusBadRequest {
		t.Fatalf("read_repeats=0: %d %s", code, body)
	}
	if code, _ := s.do(t, http.MethodGet, "/v1/sessions/nope/signals", nil); code != http.StatusNotFound {
		t.Fatalf("unknown session: %d", code)
	}
}

// TestSignalPolicies: with the server's thresholds lowered to one, the
// capture's main agent is in a loop; a policy on agent.signals.loop,
// answered by the http hook, denies its next call and says why, while a
// session that raised nothing goes on. The API's thresholds are the
// server's.
func TestSignalPolicies(t *testing.T) {
	cfg := patient
	cfg.Signals = attribution.Thresholds{FailedRepeats: 1, ReadRepeats: 1}
	s := newServer(t, cfg)
	envs := claudeCorpus(t)
	s.post(t, envs, len(envs), 0)
	s.settle(t)
	home := t.TempDir()
	pol := `rules:
  - id: step-back
    event: PreToolUse
    when: agent.signals.loop or agent.failures_in_a_row >= 5
    action: deny
    reason: You are repeating a failing step; step back and try another approach.
`
	if err := os.WriteFile(filepath.Join(home, "policy.yaml"), []byte(pol), 0o600); err != nil {
		t.Fatal(err)
	}
	s.Handle("POST /v1/hooks/claude", s.HandleClaudeHook(collector.ClaudeHookConfig{Home: home}))
	f := func(session, want string) {
		t.Helper()
		payload := `{"session_id":"` + session + `","cwd":"/tmp","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"go vet ./..."},"tool_use_id":"toolu_new"}`
		code, body := s.do(t, "POST", "/v1/hooks/claude", []byte(payload), "Content-Type", "application/json")
		if code != http.StatusOK || !strings.Contains(string(body), want) || (want == "" && len(body) != 0) {
			t.Fatalf("session %s: %d %s, want %q", session, code, body, want)
		}
	}
	f(corpusMain, `"permissionDecisionReason":"You are repeating a failing step; step back and try another approach."`)
	f("fresh-session", "")

	var r collector.SignalsResponse
	s.getJSON(t, "/v1/sessions/"+corpusMain+"/signals", &r)
	if r.Thresholds != collector.SignalThresholdsOf(cfg.Signals.OrDefault()) || len(r.Agents) == 0 || len(r.Agents[0].Signals) == 0 {
		t.Fatalf("signals at the server's thresholds: %+v", r)
	}
}

// capture197 is the real 2.1.197 capture's JSONL, whose payloads
// demo.FanOut and demo.Stalled make sessions of.
func capture197(t *testing.T) []byte {
	b, err := os.ReadFile("../testdata/payloads/claude-code-2.1.197.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func fanOut197(t *testing.T, session string, agents int, start time.Time, counts ...int) []event.Envelope {
	envs, err := demo.FanOut(capture197(t), session, agents, start, counts...)
	if err != nil {
		t.Fatal(err)
	}
	return envs
}

// TestSignalOutlier: of three Explore subagents made of the real
// capture's payloads, the one making 24 calls when its siblings made 3
// and 2 is an outlier, with its spawning call and its calls as evidence,
// counted once on /metrics however often the session changes after; a
// balanced fan-out raises none.
func TestSignalOutlier(t *testing.T) {
	s := newServer(t, patient)
	envs := fanOut197(t, "fan-out-outlier", 0, storetest.At(0), 3, 24, 2)
	s.post(t, envs, len(envs), 0)
	balanced := fanOut197(t, "fan-out-balanced", 0x100, storetest.At(0), 20, 24, 22)
	s.post(t, balanced, len(balanced), 0)
	s.settle(t)
	read := func(id string) []attribution.Signal {
		var r collector.SignalsResponse
		s.getJSON(t, "/v1/sessions/"+id+"/signals", &r)
		var out []attribution.Signal
		for _, a := range r.Agents {
			out = append(out, a.Signals...)
		}
		return out
	}
	got := read("fan-out-outlier")
	if len(got) != 1 || got[0].Kind != attribution.SignalOutlier || got[0].AgentID != "a0000000000000002" ||
		got[0].Calls[0] != "toolu_spawn01" || got[0].Calls[1] != "toolu_01_000" ||
		strings.Join(got[0].Siblings, ",") != "a0000000000000001,a0000000000000003" ||
		got[0].Detail != "Explore made 24 calls, 9.6× the median of its 2 stopped siblings (2.5)" {
		t.Fatalf("outlier: %+v", got)
	}
	if got := read("fan-out-balanced"); len(got) != 0 {
		t.Fatalf("a balanced fan-out: %+v", got)
	}
	// The subagent's own virtual session shows it too.
	if got := read("sub--a0000000000000002"); len(got) != 1 || got[0].Kind != attribution.SignalOutlier {
		t.Fatalf("virtual session: %+v", got)
	}
	if got := sum(s.scrape(t), "hookwatch_signals_total", `kind="outlier"`); got != 1 {
		t.Fatalf(`hookwatch_signals_total{kind="outlier"} = %v, want 1`, got)
	}
	// More of the session, a fourth sibling: the same outlier, compared
	// with three, not counted again.
	more := fanOut197(t, "fan-out-outlier", 3, storetest.At(0).Add(time.Hour), 2)[2:]
	s.post(t, more, len(more), 0)
	s.settle(t)
	if got := read("fan-out-outlier"); len(got) != 1 || got[0].AgentID != "a0000000000000002" || len(got[0].Siblings) != 3 {
		t.Fatalf("after more of the session: %+v", got)
	}
	if got := sum(s.scrape(t), "hookwatch_signals_total", `kind="outlier"`); got != 1 {
		t.Fatalf(`hookwatch_signals_total{kind="outlier"} = %v after more events, want 1`, got)
	}
	if code, body := s.do(t, http.MethodGet, "/v1/sessions/fan-out-outlier/signals?outlier_factor=0.5", nil); code != http.StatusBadRequest {
		t.Fatalf("outlier_factor=0.5: %d %s", code, body)
	}
}

// TestSignalStalled: a session of the real capture's payloads whose Bash
// call has no outcome is stalled once the collector's clock passes five
// minutes after its latest event: the API says so on the main agent, the
// sweep counts it once on /metrics and tells the session's live stream,
// and a policy on session.signals.stalled sees it on the next event, which
// clears it; so does the call's outcome.
func TestSignalStalled(t *testing.T) {
	var clock atomic.Int64
	set := func(at time.Time) { clock.Store(at.UnixNano()) }
	cfg := patient
	cfg.Now = func() time.Time { return time.Unix(0, clock.Load()) }
	cfg.StallSweep = 10 * time.Millisecond
	s := newServer(t, cfg)
	home := t.TempDir()
	pol := `rules:
  - id: after-stall
    event: PreToolUse
    when: session.signals.stalled
    action: ask
    reason: This session stalled; confirm before going on.
`
	if err := os.WriteFile(filepath.Join(home, "policy.yaml"), []byte(pol), 0o600); err != nil {
		t.Fatal(err)
	}
	s.Handle("POST /v1/hooks/claude", s.HandleClaudeHook(collector.ClaudeHookConfig{Home: home}))
	const id = "stalled-session"
	// An hour ago: the http hook's own event is stamped with the real
	// time, after the session's others.
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	at := func(sec int) time.Time { return base.Add(time.Duration(sec) * time.Second) }
	envs, err := demo.Stalled(capture197(t), id, base)
	if err != nil {
		t.Fatal(err)
	}
	set(at(2))
	s.post(t, envs, len(envs), 0)
	s.settle(t)
	stalled := func() []attribution.Signal {
		t.Helper()
		var r collector.SignalsResponse
		s.getJSON(t, "/v1/sessions/"+id+"/signals", &r)
		var out []attribution.Signal
		for _, a := range r.Agents {
			for _, sg := range a.Signals {
				if sg.Kind == attribution.SignalStalled {
					out = append(out, sg)
				}
			}
		}
		return out
	}
	count := func() float64 { return sum(s.scrape(t), "hookwatch_signals_total", `kind="stalled"`) }

	set(at(2).Add(4 * time.Minute))
	if got := stalled(); len(got) != 0 {
		t.Fatalf("stalled after 4 minutes: %+v", got)
	}
	stream := s.openStream(t, "?session_id="+id)
	set(at(2).Add(6 * time.Minute))
	got := stalled()
	if len(got) != 1 || got[0].AgentID != "" || strings.Join(got[0].Calls, ",") != demo.StalledCall || got[0].Key != "stalled:"+demo.StalledCall ||
		!strings.HasPrefix(got[0].Detail, "no event for 6m0s; Bash ") {
		t.Fatalf("stalled after 6 minutes: %+v", got)
	}
	for {
		ev := stream.next()
		if ev.Type != "signals" {
			continue
		}
		if !strings.Contains(ev.Data, `"session_id":"`+id+`"`) || !strings.Contains(ev.Data, `"kind":"stalled"`) {
			t.Fatalf("stall notice: %+v", ev)
		}
		break
	}
	if n := count(); n != 1 {
		t.Fatalf(`hookwatch_signals_total{kind="stalled"} = %v, want 1`, n)
	}
	// Later sweeps count the same stall no more.
	set(at(2).Add(9 * time.Minute))
	time.Sleep(100 * time.Millisecond)
	if n := count(); n != 1 {
		t.Fatalf(`hookwatch_signals_total{kind="stalled"} = %v after more sweeps, want 1`, n)
	}

	// The next event: its policy sees the stall it ends, and the session
	// is no longer stalled.
	payload := `{"session_id":"` + id + `","cwd":"/tmp","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/tmp/x"},"tool_use_id":"toolu_next"}`
	code, body := s.do(t, "POST", "/v1/hooks/claude", []byte(payload), "Content-Type", "application/json")
	if code != http.StatusOK || !strings.Contains(string(body), `"permissionDecisionReason":"This session stalled; confirm before going on."`) {
		t.Fatalf("hook after the stall: %d %s", code, body)
	}
	s.settle(t)
	set(time.Now().Add(time.Minute))
	if got := stalled(); len(got) != 0 {
		t.Fatalf("stalled after the next event: %+v", got)
	}
	// Both calls' outcomes: nothing left to wait on, however late.
	outcome, err := demo.StalledOutcome(capture197(t), id, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	done := []event.Envelope{outcome, storetest.Envelope(event.RuntimeClaudeCode, time.Now().Add(time.Millisecond), []byte(`{"session_id":"`+id+`","cwd":"/tmp","hook_event_name":"PostToolUse","tool_name":"Read","tool_input":{"file_path":"/tmp/x"},"tool_use_id":"toolu_next","tool_response":"x"}`))}
	s.post(t, done, 2, 0)
	s.settle(t)
	set(time.Now().Add(24 * time.Hour))
	if got := stalled(); len(got) != 0 {
		t.Fatalf("stalled after the outcomes: %+v", got)
	}
	if n := count(); n != 1 {
		t.Fatalf(`hookwatch_signals_total{kind="stalled"} = %v at the end, want 1`, n)
	}
}

// TestSignalStalledAfterRestart: a session that waits on a call when the
// collector stops is swept by the next one on the same database, which
// counts the stall once when its clock passes five minutes, though no
// event of the session came since it started.
func TestSignalStalledAfterRestart(t *testing.T) {
	var clock atomic.Int64
	cfg := patient
	cfg.Now = func() time.Time { return time.Unix(0, clock.Load()) }
	cfg.StallSweep = 10 * time.Millisecond
	base := storetest.At(0)
	clock.Store(base.UnixNano())
	path := filepath.Join(t.TempDir(), "hookwatch.db")
	open := func() *sqlite.DB {
		db, err := sqlite.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	envs, err := demo.Stalled(capture197(t), "stalled-before", base)
	if err != nil {
		t.Fatal(err)
	}
	first := serverOn(t, open(), cfg)
	first.post(t, envs, len(envs), 0)
	first.settle(t)
	first.stop()

	second := serverOn(t, open(), cfg)
	stream := second.openStream(t, "")
	clock.Store(base.Add(10 * time.Minute).UnixNano())
	for {
		if ev := stream.next(); ev.Type == "signals" {
			if !strings.Contains(ev.Data, `"session_id":"stalled-before"`) {
				t.Fatalf("stall notice: %+v", ev)
			}
			break
		}
	}
	if n := sum(second.scrape(t), "hookwatch_signals_total", `kind="stalled"`); n != 1 {
		t.Fatalf(`hookwatch_signals_total{kind="stalled"} = %v, want 1`, n)
	}
}

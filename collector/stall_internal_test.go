package collector

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	vm "github.com/VictoriaMetrics/metrics"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/store/sqlite"
)

// TestStandDownForgetsStalls: a collector that held the lease of a shared
// store noted what a session waited on; once it stands down, the new
// holder's rounds take that session's next events, not its own, so it
// must not take the session for stalled when the threshold passes.
func TestStandDownForgetsStalls(t *testing.T) {
	st := newStalls()
	m := newModeler(sqlite.MustOpenDB(t), slog.New(slog.DiscardHandler), newHub(), vm.NewSet(), DefaultDeriveWait, 1<<20, false, nil, nil, attribution.Thresholds{}.OrDefault(), st)
	m.stop()
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	sess := &attribution.Session{SessionID: "s1", Status: attribution.SessionRunning, LastEventAt: t0}
	call := &attribution.ToolCall{SessionID: "s1", ToolUseID: "toolu_1", ToolName: "Bash", Status: attribution.StatusPending, StartedAt: t0}
	later := t0.Add(time.Hour)
	sweep := func() bool {
		return st.sweep(context.Background(), later, attribution.Thresholds{}.OrDefault(), nil, func(context.Context, string) string { return "" })
	}
	st.note(sess, []*attribution.ToolCall{call})
	m.standDown()
	if sweep() {
		t.Errorf("a standby took a session it no longer follows for stalled: %+v", st.notices)
	}
	// While it held the lease, the same session was a stall.
	st.note(sess, []*attribution.ToolCall{call})
	if !sweep() {
		t.Error("the session noted waiting an hour is no stall")
	}
}

// TestStandDownForgetsActive: the active gauges of a collector that stands
// down count none of the sessions and agents it applied while it held the
// lease: the new holder counts them.
func TestStandDownForgetsActive(t *testing.T) {
	m := newModeler(sqlite.MustOpenDB(t), slog.New(slog.DiscardHandler), newHub(), vm.NewSet(), DefaultDeriveWait, 1<<20, true, nil, nil, attribution.Thresholds{}.OrDefault(), newStalls())
	m.stop()
	now := time.Now()
	am := m.perAgent
	am.roundSessions["s1"] = liveSession{running: true, last: now}
	am.roundAgents[rowKey{"s1", "a1"}] = liveAgent{agentType: "Explore", last: now}
	am.flush()
	active := func() string {
		var b strings.Builder
		am.writeActive(&b, now)
		return b.String()
	}
	if got := active(); !strings.Contains(got, "hookwatch_active_sessions 1\n") || !strings.Contains(got, `hookwatch_active_agents{agent_type="Explore"} 1`) {
		t.Fatalf("while leading:\n%s", got)
	}
	m.standDown()
	if got := active(); !strings.Contains(got, "hookwatch_active_sessions 0\n") || strings.Contains(got, "Explore") {
		t.Errorf("after standing down:\n%s", got)
	}
}

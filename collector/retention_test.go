package collector_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/store/storetest"
)

// TestRetention prunes, in the background, the sessions whose latest event
// is older than Retain, whole, keeps the others, and counts what it pruned
// on /metrics.
func TestRetention(t *testing.T) {
	collector.SetPruneEveryForTest(20 * time.Millisecond)
	t.Cleanup(func() { collector.SetPruneEveryForTest(time.Minute) })
	s := newServer(t, collector.Config{Retain: 24 * time.Hour})
	at := func(ago time.Duration, kv ...any) event.Envelope {
		return storetest.Envelope(event.RuntimeClaudeCode, time.Now().Add(-ago), storetest.P(kv...))
	}
	s.post(t, []event.Envelope{
		at(72*time.Hour, "session_id", "old", "hook_event_name", "SessionStart", "source", "startup"),
		at(48*time.Hour, "session_id", "old", "hook_event_name", "Stop"),
		at(48*time.Hour, "session_id", "spans", "hook_event_name", "SessionStart", "source", "startup"),
		at(time.Minute, "session_id", "spans", "hook_event_name", "Stop"),
		at(time.Minute, "session_id", "new", "hook_event_name", "Stop"),
	}, 5, 0)
	deadline := time.Now().Add(20 * time.Second)
	for {
		code, _ := s.do(t, http.MethodGet, "/v1/sessions/old", nil)
		if code == http.StatusNotFound {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the old session is still there: %d", code)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, id := range []string{"spans", "new"} {
		var v struct {
			EventCount int64 `json:"event_count"`
		}
		s.getJSON(t, "/v1/sessions/"+id, &v)
		if want := map[string]int64{"spans": 2, "new": 1}[id]; v.EventCount != want {
			t.Errorf("session %s has %d events, want %d", id, v.EventCount, want)
		}
	}
	if got := metric(t, s, "hookwatch_pruned_sessions_total"); got != "1" {
		t.Errorf("hookwatch_pruned_sessions_total = %s", got)
	}
	if got := metric(t, s, "hookwatch_pruned_events_total"); got != "2" {
		t.Errorf("hookwatch_pruned_events_total = %s", got)
	}
}

package collector_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/pgtest"
	"github.com/hookwatch/hookwatch/store/postgres"
)

// TestSharedDatabase runs two collectors on one real PostgreSQL database:
// they store each envelope once whichever receives it, the stream of one
// shows the events the other took, one of them computes the model and both
// serve it, and when that one stops the other takes over.
func TestSharedDatabase(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a := newServerOn(t, collector.Config{}, postgres.MustOpenDB(t, url))
	b := newServerOn(t, collector.Config{}, postgres.MustOpenDB(t, url))
	stream := b.openStream(t, "")

	envs := corpusEnvelopes(t)
	half := len(envs) / 2
	a.post(t, envs[:half], half, 0)
	b.post(t, envs[half:], len(envs)-half, 0)
	// Retries through the other collector store nothing twice.
	b.post(t, envs[:half], 0, half)
	a.post(t, envs, 0, len(envs))

	seen := map[string]bool{}
	var last int64
	for len(seen) < len(envs) {
		var e struct {
			Seq int64  `json:"seq"`
			ID  string `json:"id"`
		}
		if err := json.Unmarshal([]byte(stream.nextEvent().Data), &e); err != nil {
			t.Fatal(err)
		}
		if seen[e.ID] || e.Seq <= last {
			t.Fatalf("the stream repeated or reordered event %s (seq %d after %d)", e.ID, e.Seq, last)
		}
		seen[e.ID], last = true, e.Seq
	}
	for _, env := range envs {
		if !seen[env.ID] {
			t.Fatalf("the stream of b missed %s", env.ID)
		}
	}

	sessions := map[string]bool{}
	for _, env := range envs {
		var p struct {
			SessionID string `json:"session_id"`
		}
		json.Unmarshal(env.Payload, &p)
		if p.SessionID != "" {
			sessions[p.SessionID] = true
		}
	}
	waitModeled(t, sessions, a, b)
	leader, other := a, b
	if leaders(t, a, b) != "a" {
		leader, other = b, a
	}
	// The holder applied the events as they came, not only by loading
	// stale sessions.
	if got := metric(t, leader, "hookwatch_model_events_applied_total"); got == "0" {
		t.Errorf("the lease holder applied %s events", got)
	}
	if got := metric(t, leader, "hookwatch_model_errors_total"); got != "0" {
		t.Errorf("the lease holder had %s errors", got)
	}

	// The leader goes; the other takes the lease and models what comes.
	leader.Shutdown(context.Background())
	more := []event.Envelope{synth(1e6, "session_id", "shared-2", "hook_event_name", "SessionStart", "cwd", "/p", "source", "startup"),
		synth(1e6+1, "session_id", "shared-2", "hook_event_name", "UserPromptSubmit", "cwd", "/p", "prompt", "hi")}
	other.post(t, more, 2, 0)
	waitModeled(t, map[string]bool{"shared-2": true}, other)
	if got := metric(t, other, "hookwatch_model_leader"); got != "1" {
		t.Fatalf("the remaining collector does not hold the lease: %q", got)
	}
}

// waitModeled waits until every server serves the model of every session
// computed from all of its events.
func waitModeled(t *testing.T, sessions map[string]bool, servers ...*testServer) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for id := range sessions {
		for i, s := range servers {
			for {
				var v struct {
					LastSeq    int64 `json:"last_seq"`
					DerivedSeq int64 `json:"derived_seq"`
				}
				code, body := s.do(t, http.MethodGet, "/v1/sessions/"+id, nil)
				if code == http.StatusOK {
					json.Unmarshal(body, &v)
				}
				if code == http.StatusOK && v.DerivedSeq == v.LastSeq {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("server %d: the model of %s is not up to date: %d %s", i, id, code, body)
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
	}
}

// leaders returns which of a and b computes the model, failing unless
// exactly one does.
func leaders(t *testing.T, a, b *testServer) string {
	t.Helper()
	la, lb := metric(t, a, "hookwatch_model_leader"), metric(t, b, "hookwatch_model_leader")
	switch {
	case la == "1" && lb == "0":
		return "a"
	case la == "0" && lb == "1":
		return "b"
	}
	t.Fatalf("hookwatch_model_leader is %q on a and %q on b, want one leader", la, lb)
	return ""
}

// metric returns the value of an unlabelled metric on /metrics.
func metric(t *testing.T, s *testServer, name string) string {
	t.Helper()
	code, body := s.do(t, http.MethodGet, "/metrics", nil)
	if code != http.StatusOK {
		t.Fatalf("GET /metrics: %d", code)
	}
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			return v
		}
	}
	t.Fatal(fmt.Sprintf("no %s on /metrics", name))
	return ""
}

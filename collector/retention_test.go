package collector_test

import (
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/pgtest"
	"github.com/hookwatch/hookwatch/store/postgres"
	"github.com/hookwatch/hookwatch/store/storetest"
)

// envelopeAgo is a Claude Code envelope of the payload kv (storetest.P) received
// ago before now.
func envelopeAgo(ago time.Duration, kv ...any) event.Envelope {
	return storetest.Envelope(event.RuntimeClaudeCode, time.Now().Add(-ago), storetest.P(kv...))
}

// TestRetention prunes, in the background, the sessions whose latest event
// is older than Retain, whole, keeps the others, and counts what it pruned
// on /metrics.
func TestRetention(t *testing.T) {
	collector.SetPruneEveryForTest(20 * time.Millisecond)
	t.Cleanup(func() { collector.SetPruneEveryForTest(time.Minute) })
	s := newServer(t, collector.Config{Retain: 24 * time.Hour})
	s.post(t, []event.Envelope{
		envelopeAgo(72*time.Hour, "session_id", "old", "hook_event_name", "SessionStart", "source", "startup"),
		envelopeAgo(48*time.Hour, "session_id", "old", "hook_event_name", "Stop"),
		envelopeAgo(48*time.Hour, "session_id", "spans", "hook_event_name", "SessionStart", "source", "startup"),
		envelopeAgo(time.Minute, "session_id", "spans", "hook_event_name", "Stop"),
		envelopeAgo(time.Minute, "session_id", "new", "hook_event_name", "Stop"),
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

// TestFutureTimeClamped: an envelope dated beyond collector.MaxClockAhead
// of the collector's clock is stored at the time the collector took it,
// envelope included: a token's holder could otherwise date a session in
// 2099, which no retention would ever delete and which would head every
// session list. A laptop whose clock runs a few minutes ahead keeps its
// times. On PostgreSQL, as a team server runs.
func TestFutureTimeClamped(t *testing.T) {
	collector.SetPruneEveryForTest(20 * time.Millisecond)
	t.Cleanup(func() { collector.SetPruneEveryForTest(time.Minute) })
	s := newServerOn(t, collector.Config{Retain: 24 * time.Hour}, postgres.MustOpenDB(t, pgtest.NewDatabase(t)))
	far := time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)
	skewed := time.Now().Add(collector.MaxClockAhead / 2).UTC().Truncate(time.Microsecond)
	before := time.Now()
	s.post(t, []event.Envelope{
		storetest.Envelope(event.RuntimeClaudeCode, far, storetest.P("session_id", "far", "hook_event_name", "SessionStart", "source", "startup")),
		storetest.Envelope(event.RuntimeClaudeCode, skewed, storetest.P("session_id", "skewed", "hook_event_name", "SessionStart", "source", "startup")),
	}, 2, 0)
	after := time.Now()
	var v struct {
		LastEventAt time.Time `json:"last_event_at"`
	}
	s.getJSON(t, "/v1/sessions/far", &v)
	if v.LastEventAt.Before(before.Add(-time.Second)) || v.LastEventAt.After(after.Add(time.Second)) {
		t.Errorf("the session dated 2099 ends at %s, want the time it was taken (%s)", v.LastEventAt, before.UTC())
	}
	if evs := s.listEvents(t, "far", ""); len(evs) != 1 || !evs[0].Time.Equal(v.LastEventAt) {
		t.Errorf("the events of the session dated 2099: %+v", evs)
	} else if code, body := s.do(t, http.MethodGet, "/v1/sessions/far/events", nil); code != http.StatusOK || strings.Contains(string(body), far.Format("2006-01-02")) {
		t.Errorf("its stored envelope keeps the date: %d %s", code, body)
	}
	s.getJSON(t, "/v1/sessions/skewed", &v)
	if !v.LastEventAt.Equal(skewed) {
		t.Errorf("a clock %s ahead: the session ends at %s, want %s", collector.MaxClockAhead/2, v.LastEventAt, skewed)
	}
}

// TestRetentionArchives: retention deletes the compaction archive of each
// session it pruned (a copy of its transcript, up to 64 MiB a compaction,
// which would otherwise outlive the session for ever), and keeps the
// archive of a session still stored, and that of a session not stored yet
// whose archive was written lately (its events may still be on their way).
func TestRetentionArchives(t *testing.T) {
	collector.SetPruneEveryForTest(20 * time.Millisecond)
	t.Cleanup(func() { collector.SetPruneEveryForTest(time.Minute) })
	dir := t.TempDir()
	archive := func(session string, ago time.Duration) string {
		d := filepath.Join(dir, session, "main")
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		name := filepath.Join(d, time.Now().Add(-ago).UTC().Format("20060102T150405.000000000Z")+".jsonl")
		if err := os.WriteFile(name, []byte("{}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(name, time.Now().Add(-ago), time.Now().Add(-ago)); err != nil {
			t.Fatal(err)
		}
		return filepath.Join(dir, session)
	}
	s := newServer(t, collector.Config{Retain: 24 * time.Hour, ArchiveDir: dir})
	s.post(t, []event.Envelope{
		envelopeAgo(72*time.Hour, "session_id", "old", "hook_event_name", "SessionStart", "source", "startup"),
		envelopeAgo(48*time.Hour, "session_id", "old", "hook_event_name", "Stop"),
		envelopeAgo(48*time.Hour, "session_id", "spans", "hook_event_name", "SessionStart", "source", "startup"),
		envelopeAgo(time.Minute, "session_id", "spans", "hook_event_name", "Stop"),
	}, 4, 0)
	old, spans, coming := archive("old", 60*time.Hour), archive("spans", 47*time.Hour), archive("coming", time.Minute)
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(old); errors.Is(err, fs.ErrNotExist) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the archive of the pruned session is still there: %s", old)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, d := range []string{spans, coming} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("an archive retention must keep: %v", err)
		}
	}
}

package collector_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/collector"
)

// TestFollowRollouts: the collector following a sessions directory stores
// a rollout's records as Codex appends them, a torn last line once it is
// whole, each once however many looks follow; a rollout older than the
// window is left alone until it grows.
func TestFollowRollouts(t *testing.T) {
	s := newServer(t, collector.Config{})
	const (
		live = "rollout-2026-11-25T14-46-05-01a2132b-c636-7c31-93a8-aeaecf1768f7.jsonl"
		old  = "rollout-2026-11-25T15-19-47-01a2134a-a05f-7352-b020-bbc5e8c0633b.jsonl"
	)
	dir, day := sessionsDay(t)
	oldPath := filepath.Join(day, old)
	if err := os.WriteFile(oldPath, codexRollout(t, old), 0o600); err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-72 * time.Hour)
	if err := os.Chtimes(oldPath, past, past); err != nil {
		t.Fatal(err)
	}
	whole := codexRollout(t, live)
	livePath := filepath.Join(day, live)
	cut := bytes.LastIndex(whole, []byte(`"type":"token_count"`)) // within the last usage record
	if err := os.WriteFile(livePath, whole[:cut], 0o600); err != nil {
		t.Fatal(err)
	}

	collector.FollowForTest(t, func(ctx context.Context) {
		s.FollowRollouts(ctx, collector.RolloutOptions{Dir: dir, Host: "h", User: "u", Interval: 10 * time.Millisecond})
	})

	wait := func(sid string, n int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for s.eventCount(t, sid) != n {
			if time.Now().After(deadline) {
				t.Fatalf("session %s: %d events, want %d", sid, s.eventCount(t, sid), n)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	const liveID, oldID = "01a2132b-c636-7c31-93a8-aeaecf1768f7", "01a2134a-a05f-7352-b020-bbc5e8c0633b"
	// The prompt, 6 tool events and 3 responses' usage; the torn last
	// line is the last usage record, before the turn's end.
	wait(liveID, 10)
	appendTo(t, livePath, whole[cut:])
	wait(liveID, 12)                   // the last usage, and the end of the exec run
	time.Sleep(100 * time.Millisecond) // looks that find nothing new
	if n := s.eventCount(t, liveID); n != 12 {
		t.Errorf("%d events after more looks, want 12", n)
	}
	if n := s.eventCount(t, oldID); n != 0 {
		t.Errorf("a rollout older than the window was read: %d events", n)
	}
	// It grows (a resumed session): read, from its start.
	if err := os.WriteFile(oldPath, append(codexRollout(t, old), "{}\n"...), 0o600); err != nil {
		t.Fatal(err)
	}
	wait(oldID, 2)
}

// TestFollowRolloutsNickname: a Codex subagent known from its own rollout
// alone (its parent's rollout and hooks not seen) is named by the
// nickname its rollout's session_meta gives it.
func TestFollowRolloutsNickname(t *testing.T) {
	s := newServer(t, collector.Config{})
	const (
		session = "01a23446-a8b8-7f03-83b6-760203bd13dd"
		sub     = "01a23446-ad70-7ca2-bafc-64796f33e252"
		name    = "rollout-2026-12-02T01-02-56-" + sub + ".jsonl"
	)
	b, err := os.ReadFile(filepath.Join("../attribution/testdata/codex-subagent", name))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "2026", "12", "02", name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	collector.FollowForTest(t, func(ctx context.Context) {
		s.FollowRollouts(ctx, collector.RolloutOptions{Dir: dir, Host: "h", User: "u", Interval: 10 * time.Millisecond})
	})

	deadline := time.Now().Add(10 * time.Second)
	for {
		var page struct {
			Agents []struct {
				AgentID  string `json:"agent_id"`
				Nickname string `json:"nickname"`
			} `json:"agents"`
		}
		if code, body := s.do(t, http.MethodGet, "/v1/sessions/"+session+"/agents", nil); code == http.StatusOK {
			if err := json.Unmarshal(body, &page); err != nil {
				t.Fatal(err)
			}
		}
		for _, a := range page.Agents {
			if a.AgentID == sub && a.Nickname == "Maxwell" {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("agents %+v, want %s named Maxwell", page.Agents, sub)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestFollowRolloutsRestart: a restarted follower reads on from the
// offsets the import state keeps: a rollout it had read part of, which
// grew while it was stopped, is read on at its first look however long
// ago it was written, and a rollout it had read whole is not read again
// (its lost lines are not counted twice).
func TestFollowRolloutsRestart(t *testing.T) {
	s := newServer(t, collector.Config{})
	const (
		live = "rollout-2026-11-25T14-46-05-01a2132b-c636-7c31-93a8-aeaecf1768f7.jsonl"
		done = "rollout-2026-11-25T15-19-47-01a2134a-a05f-7352-b020-bbc5e8c0633b.jsonl"
	)
	dir, day := sessionsDay(t)
	donePath, livePath := filepath.Join(day, done), filepath.Join(day, live)
	if err := os.WriteFile(donePath, withLostLines(t, codexRollout(t, done), `"type":"response_item"`), 0o600); err != nil {
		t.Fatal(err)
	}
	whole := codexRollout(t, live)
	cut := bytes.LastIndex(whole, []byte(`"type":"token_count"`))
	cut = bytes.LastIndexByte(whole[:cut], '\n') + 1 // before the last usage record
	if err := os.WriteFile(livePath, whole[:cut], 0o600); err != nil {
		t.Fatal(err)
	}
	statePath := filepath.Join(t.TempDir(), "import-state.json")
	follow := func() (stop func()) {
		ctx, cancel := context.WithCancel(context.Background())
		stopped := make(chan struct{})
		go func() {
			defer close(stopped)
			s.FollowRollouts(ctx, collector.RolloutOptions{Dir: dir, StatePath: statePath, Host: "h", User: "u", Interval: 10 * time.Millisecond})
		}()
		stop = func() { cancel(); <-stopped }
		t.Cleanup(stop)
		return stop
	}
	const lost = `hookwatch_followed_lines_lost_total{source="rollout"}`
	until := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatal(what)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	const liveID = "01a2132b-c636-7c31-93a8-aeaecf1768f7"
	stop := follow()
	until("the rollouts were not read", func() bool { return s.eventCount(t, liveID) == 10 && count(t, s, lost) == 2 })
	until("the offsets reached were not kept in the import state", func() bool {
		b, _ := os.ReadFile(statePath)
		return bytes.Contains(b, []byte(strconv.Quote(livePath)+":"+strconv.Itoa(cut))) &&
			bytes.Contains(b, []byte(strconv.Quote(donePath)))
	})
	stop()

	// Codex goes on while no collector runs, and the rollout is not
	// touched again for three days.
	appendTo(t, livePath, whole[cut:])
	past := time.Now().Add(-72 * time.Hour)
	if err := os.Chtimes(livePath, past, past); err != nil {
		t.Fatal(err)
	}

	follow()
	until("the rollout left part read was not read on", func() bool { return s.eventCount(t, liveID) == 12 })
	time.Sleep(100 * time.Millisecond) // looks that find nothing new
	if n := count(t, s, lost); n != 2 {
		t.Errorf("%d rollout lines counted lost after the restart, want the 2 of the rollout read whole before it", n)
	}
}

// codexRollout returns the Codex rollout name of codex/testdata.
func codexRollout(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../codex/testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sessionsDay makes a sessions directory holding the day 2026/11/25, as
// Codex lays its rollouts out, and returns both.
func sessionsDay(t *testing.T) (dir, day string) {
	t.Helper()
	dir = t.TempDir()
	day = filepath.Join(dir, "2026", "11", "25")
	if err := os.MkdirAll(day, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, day
}

// eventCount is how many events the API lists of session sid (at most
// 1000), 0 while it knows no such session.
func (s *testServer) eventCount(t *testing.T, sid string) int {
	t.Helper()
	code, body := s.do(t, http.MethodGet, "/v1/sessions/"+sid+"/events?limit=1000", nil)
	if code != http.StatusOK {
		return 0
	}
	var page struct{ Events []struct{} }
	if err := json.Unmarshal(body, &page); err != nil {
		t.Fatal(err)
	}
	return len(page.Events)
}

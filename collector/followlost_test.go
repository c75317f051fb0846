package collector_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/internal/syncbuf"
)

// withLostLines returns the real file b with, before its first line that
// holds marker (a record's type), two lines a reader loses: that record
// torn by a crash just past marker, and a line that is not JSON.
func withLostLines(t *testing.T, b []byte, marker string) []byte {
	t.Helper()
	lines := bytes.SplitAfter(b, []byte("\n"))
	for i, line := range lines {
		if j := bytes.Index(line, []byte(marker)); i > 0 && j >= 0 {
			var out []byte
			out = append(out, bytes.Join(lines[:i], nil)...)
			out = append(out, line[:j+len(marker)]...)
			out = append(out, "\nnot json\n"...)
			return append(out, bytes.Join(lines[i:], nil)...)
		}
	}
	t.Fatalf("no line past the first holds %s", marker)
	return nil
}

// TestFollowersCountLostLines: the lines a follower passes over for what
// they held (not JSON, torn by a crash) are counted on /metrics by the
// source they were read from, and each file that lost some is named in
// one warning with their count, not one per line; the records around
// them are read.
func TestFollowersCountLostLines(t *testing.T) {
	var log syncbuf.Buffer
	s := newServer(t, collector.Config{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if n := count(t, s, `hookwatch_followed_lines_lost_total{source="rollout"}`); n != 0 {
		t.Fatalf("%d rollout lines lost before any was read", n)
	}
	if n := count(t, s, `hookwatch_followed_lines_lost_total{source="transcript"}`); n != 0 {
		t.Fatalf("%d transcript lines lost before any was read", n)
	}

	// A Codex rollout.
	const rolloutName = "rollout-2026-11-25T14-46-05-01a2132b-c636-7c31-93a8-aeaecf1768f7.jsonl"
	rb, err := os.ReadFile(filepath.Join("../codex/testdata", rolloutName))
	if err != nil {
		t.Fatal(err)
	}
	sessions := t.TempDir()
	rolloutPath := filepath.Join(sessions, "2026", "11", "25", rolloutName)
	if err := os.MkdirAll(filepath.Dir(rolloutPath), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rolloutPath, withLostLines(t, rb, `"type":"response_item"`), 0o600); err != nil {
		t.Fatal(err)
	}
	// A Claude Code transcript.
	projects := t.TempDir()
	tb, transcriptPath := runTranscript(t, projects)
	if err := os.WriteFile(transcriptPath, withLostLines(t, tb, `"type":"assistant"`), 0o600); err != nil {
		t.Fatal(err)
	}

	collector.FollowForTest(t, func(ctx context.Context) {
		s.FollowRollouts(ctx, collector.RolloutOptions{Dir: sessions, Host: "h", User: "u", Interval: 10 * time.Millisecond})
	})
	collector.FollowForTest(t, func(ctx context.Context) {
		s.FollowTranscripts(ctx, collector.TranscriptOptions{Dir: projects, StatePath: filepath.Join(t.TempDir(), "import-state.json"),
			Host: "h", User: "u", Interval: 10 * time.Millisecond})
	})

	deadline := time.Now().Add(20 * time.Second)
	for count(t, s, `hookwatch_followed_lines_lost_total{source="rollout"}`) < 2 ||
		count(t, s, `hookwatch_followed_lines_lost_total{source="transcript"}`) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("lost lines counted: %d of the rollout's, %d of the transcript's; want 2 each",
				count(t, s, `hookwatch_followed_lines_lost_total{source="rollout"}`),
				count(t, s, `hookwatch_followed_lines_lost_total{source="transcript"}`))
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The records after them were read.
	if st, _ := s.sessionState(t, runSession); len(st.Calls) != 3 {
		t.Errorf("%d calls read from the transcript, want its 3", len(st.Calls))
	}
	time.Sleep(100 * time.Millisecond) // more looks, which lose nothing again
	for _, src := range []string{"rollout", "transcript"} {
		if n := count(t, s, `hookwatch_followed_lines_lost_total{source="`+src+`"}`); n != 2 {
			t.Errorf("%d %s lines lost after more looks, want 2", n, src)
		}
	}
	for _, path := range []string{rolloutPath, transcriptPath} {
		if got := log.Lines("WARN", path); len(got) != 1 || !strings.Contains(got[0], "unreadable=2") {
			t.Errorf("warnings naming %s:\n%s\nwant one, of 2 unreadable lines", path, strings.Join(got, "\n"))
		}
	}
}

package collector_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/audit"
	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/store/sqlite"
)

// TestAuditDir feeds the real captures to a collector with an audit
// directory, and holds the continuous trail to what the store keeps: every
// committed event once, every finished call once, chains that verify, and
// records byte for byte those of an export of the same store.
func TestAuditDir(t *testing.T) {
	dir := t.TempDir()
	s := newServer(t, collector.Config{AuditDir: dir, AuditMaxFileBytes: 4 << 10})
	envs := corpusEnvelopes(t)
	for i := 0; i < len(envs); i += 40 {
		s.post(t, envs[i:min(i+40, len(envs))], min(40, len(envs)-i), 0)
		time.Sleep(150 * time.Millisecond) // rounds apart: files rotate between them
	}
	sessions := s.settle(t)
	total := 0
	for _, v := range sessions {
		total += int(v.EventCount)
	}
	// The auditor writes after the model's round: wait for it.
	deadline := time.Now().Add(20 * time.Second)
	for count(t, s, `hookwatch_audit_lines_written_total{file="events"}`) < total {
		if time.Now().After(deadline) {
			t.Fatalf("%v event lines written, want %d", count(t, s, `hookwatch_audit_lines_written_total{file="events"}`), total)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if lost := count(t, s, `hookwatch_audit_lines_lost_total{reason="queue_full"}`) +
		count(t, s, `hookwatch_audit_lines_lost_total{reason="write_error"}`); lost != 0 {
		t.Fatalf("%d lines lost", lost)
	}
	path := s.db.Path()
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	reports, err := audit.Verify(dir)
	if err != nil {
		t.Fatal(err)
	}
	rotated := false
	for _, r := range reports {
		if r.Problem != nil {
			t.Error(audit.Summary(r))
		}
		rotated = rotated || len(r.Files) > 1
	}
	if !rotated {
		t.Error("no stream was rotated at 4 KiB")
	}

	// The same store exported.
	db, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	exported := t.TempDir()
	w, err := audit.NewWriter(exported, audit.WriterOptions{MaxFileBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range sessions {
		if _, err := audit.ExportSession(context.Background(), db, w, v.ID, nil); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	for _, v := range sessions {
		live := records(t, filepath.Join(dir, audit.SessionDir(v.ID)), audit.EventsFile, "seq")
		exp := records(t, filepath.Join(exported, audit.SessionDir(v.ID)), audit.EventsFile, "seq")
		if len(live) != int(v.EventCount) || len(exp) != len(live) {
			t.Errorf("session %s: %d events live, %d exported; the store has %d", v.ID, len(live), len(exp), v.EventCount)
		}
		for k, rec := range exp {
			if live[k] != rec {
				t.Errorf("session %s, event %s: live\n%s\nexported\n%s", v.ID, k, live[k], rec)
			}
		}
		liveCalls := records(t, filepath.Join(dir, audit.SessionDir(v.ID)), audit.ToolCallsFile, "tool_use_id")
		expCalls := records(t, filepath.Join(exported, audit.SessionDir(v.ID)), audit.ToolCallsFile, "tool_use_id")
		finished := 0
		for k, rec := range expCalls {
			if bytes.Contains([]byte(rec), []byte(`"status":"pending"`)) {
				continue
			}
			finished++
			if _, ok := liveCalls[k]; !ok {
				t.Errorf("session %s: finished call %s not in the live trail", v.ID, k)
			}
		}
		if len(liveCalls) != finished {
			t.Errorf("session %s: %d calls live, %d finished exported", v.ID, len(liveCalls), finished)
		}
	}
}

// records reads every line of a stream's files, keyed by the given member,
// without the chain's members; a key seen twice fails the test.
func records(t *testing.T, dir, name, key string) map[string]string {
	t.Helper()
	segs, err := audit.Segments(dir, name)
	if err != nil {
		t.Fatal(err)
	}
	chain := regexp.MustCompile(`,"line":\d+,"prev":"[0-9a-f]*","hash":"[0-9a-f]{64}"\}$`)
	out := map[string]string{}
	for _, f := range segs {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Fatal(err)
			}
			k := string(m[key])
			if _, dup := out[k]; dup {
				t.Errorf("%s: %s %s twice", f, key, k)
			}
			out[k] = chain.ReplaceAllString(sc.Text(), "}")
		}
		fh.Close()
	}
	return out
}

// count reads a counter of the collector's /metrics.
func count(t *testing.T, s *testServer, name string) int {
	t.Helper()
	n, err := strconv.Atoi(metric(t, s, name))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return n
}

// TestAuditDirWriteErrors: lines the audit directory cannot take are
// counted, and ingest and the model go on.
func TestAuditDirWriteErrors(t *testing.T) {
	dir := t.TempDir()
	const blocked = "0e2e0b5d-7136-4322-8086-c38ed16b10ad" // the main session of the capture
	// A file where the session's directory would be.
	if err := os.WriteFile(filepath.Join(dir, blocked), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s := newServer(t, collector.Config{AuditDir: dir})
	envs := claudeCorpus(t)
	s.post(t, envs, len(envs), 0)
	var want int
	for _, v := range s.settle(t) {
		if v.ID == blocked {
			want = int(v.EventCount)
		}
	}
	if want == 0 {
		t.Fatal("the capture's main session is not stored")
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		lost := count(t, s, `hookwatch_audit_lines_lost_total{reason="write_error"}`)
		written := count(t, s, `hookwatch_audit_lines_written_total{file="events"}`)
		if lost >= want && written == len(envs)-want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d lines counted lost, %d event lines written; want at least the session's %d events lost and the other sessions' %d written",
				lost, written, want, len(envs)-want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestAuditDirLeavesLoadedSessions: a session recorded before the audit
// directory was set is not half written into it when a round loads its
// group for another session of the project: neither its events nor its
// calls are in the continuous trail, and the new session's are.
func TestAuditDirLeavesLoadedSessions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hookwatch.db")
	call := func(ms int, session, id string) []event.Envelope {
		tp := "/home/dev/.claude/projects/-w-p/" + session + ".jsonl"
		pre := synth(ms, "session_id", session, "transcript_path", tp, "cwd", "/w/p", "hook_event_name", "PreToolUse",
			"tool_name", "Bash", "tool_use_id", id, "tool_input", map[string]any{"command": "ls"})
		post := synth(ms+1, "session_id", session, "transcript_path", tp, "cwd", "/w/p", "hook_event_name", "PostToolUse",
			"tool_name", "Bash", "tool_use_id", id, "tool_input", map[string]any{"command": "ls"}, "tool_response", "ok")
		return []event.Envelope{pre, post}
	}
	db, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	before := newServerOn(t, collector.Config{}, db)
	before.post(t, call(1, "old", "toolu_old"), 2, 0)
	before.settle(t)
	before.stop()

	dir := t.TempDir()
	db, err = sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	s := newServerOn(t, collector.Config{AuditDir: dir}, db)
	s.post(t, call(1000, "new", "toolu_new"), 2, 0)
	s.settle(t)
	deadline := time.Now().Add(20 * time.Second)
	for count(t, s, `hookwatch_audit_lines_written_total{file="tool_calls"}`) < 1 {
		if time.Now().After(deadline) {
			t.Fatal("the new session's call was not written")
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.stop() // the auditor writes all it was given before it stops
	calls, err := filepath.Glob(filepath.Join(dir, "*", "tool_calls*.jsonl"))
	if err != nil || len(calls) != 1 || filepath.Base(filepath.Dir(calls[0])) != "new" {
		t.Errorf("call files %v, want the new session's alone", calls)
	}
	if _, err := os.Stat(filepath.Join(dir, "old")); err == nil {
		entries, _ := os.ReadDir(filepath.Join(dir, "old"))
		t.Errorf("the session recorded before the audit directory has a trail: %v", entries)
	}
}

// TestAuditRetain: with AuditRetain, a collector deletes at start the
// sessions of its audit directory last written before it, and keeps the
// trail of what it writes now.
func TestAuditRetain(t *testing.T) {
	dir := t.TempDir()
	envs := claudeCorpus(t)
	// A trail a collector wrote long ago.
	const oldSession = "0e2e0b5d-7136-4322-8086-c38ed16b10ad"
	oldAuditTrail(t, dir, oldSession)
	s := newServer(t, collector.Config{AuditDir: dir, AuditRetain: 90 * 24 * time.Hour})
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(dir, oldSession)); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the trail of 100 days ago is still there")
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.post(t, envs, len(envs), 0)
	s.settle(t)
	for time.Now().Before(deadline) && count(t, s, `hookwatch_audit_lines_written_total{file="events"}`) < len(envs) {
		time.Sleep(20 * time.Millisecond)
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	reports, err := audit.Verify(filepath.Join(dir, oldSession))
	if err != nil || reports[0].Problem != nil || reports[0].Pruned != 0 {
		t.Fatalf("the session's new trail: %v %v", reports, err)
	}
}

// TestAuditRetainMetrics: the prune's work reads back from /metrics: the
// session directory it deleted and its bytes, the time of the pass; and a
// pass that fails (the audit directory gone, a file in its place) is
// counted, with the time of the last good pass left behind.
func TestAuditRetainMetrics(t *testing.T) {
	defer collector.SetAuditPruneEveryForTest(20 * time.Millisecond)()
	dir := t.TempDir()
	const oldSession = "0e2e0b5d-7136-4322-8086-c38ed16b10ad"
	size := oldAuditTrail(t, dir, oldSession)
	start := time.Now().Unix()
	s := newServer(t, collector.Config{AuditDir: dir, AuditRetain: 90 * 24 * time.Hour})
	wait := func(name string, want int) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); count(t, s, name) < want; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s = %d, want %d", name, count(t, s, name), want)
			}
		}
	}
	wait("hookwatch_audit_pruned_sessions_total", 1)
	if _, err := os.Stat(filepath.Join(dir, oldSession)); !os.IsNotExist(err) {
		t.Fatalf("counted, not deleted: %v", err)
	}
	for name, want := range map[string]int{
		"hookwatch_audit_pruned_sessions_total": 1,
		"hookwatch_audit_pruned_segments_total": 0,
		"hookwatch_audit_pruned_bytes_total":    size,
		"hookwatch_audit_prune_errors_total":    0,
	} {
		if n := count(t, s, name); n != want {
			t.Errorf("%s = %d, want %d", name, n, want)
		}
	}
	if last := count(t, s, "hookwatch_audit_last_prune_timestamp_seconds"); last < int(start) {
		t.Errorf("hookwatch_audit_last_prune_timestamp_seconds = %d, before the start %d", last, start)
	}

	// The directory gone: every pass fails, and the last good one's time
	// stays where it was.
	if err := os.Rename(dir, dir+".away"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	wait("hookwatch_audit_prune_errors_total", 1)
	lastGood := count(t, s, "hookwatch_audit_last_prune_timestamp_seconds")
	wait("hookwatch_audit_prune_errors_total", count(t, s, "hookwatch_audit_prune_errors_total")+2)
	if last := count(t, s, "hookwatch_audit_last_prune_timestamp_seconds"); last != lastGood {
		t.Errorf("the last prune's time moved from %d to %d while every pass failed", lastGood, last)
	}
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(dir+".away", dir); err != nil {
		t.Fatal(err)
	}
}

// oldAuditTrail writes in dir an audit trail of session, one event, last
// written 100 days ago, and returns its files' size in bytes.
func oldAuditTrail(t *testing.T, dir, session string) int {
	t.Helper()
	w, err := audit.NewWriter(dir, audit.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteEvents(session, []audit.Event{{Schema: audit.EventSchema, SessionID: session, Seq: 1, ID: "old"}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-100 * 24 * time.Hour)
	files, _ := filepath.Glob(filepath.Join(dir, session, "*"))
	size := 0
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		size += int(fi.Size())
		if err := os.Chtimes(f, old, old); err != nil {
			t.Fatal(err)
		}
	}
	if size == 0 {
		t.Fatal("the old trail is empty")
	}
	return size
}

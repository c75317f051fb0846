package audit_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/audit"
)

// realTrail writes the trail of the Claude Code 2.1.197 capture and returns
// the events file of its main session (52 lines: prompts, calls, two
// subagents, a failure).
func realTrail(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, c := range loadCaptures(t) {
		if c.name == "claude-code-2.1.197" {
			writeTrail(t, c, dir, audit.WriterOptions{})
		}
	}
	path := filepath.Join(dir, "0e2e0b5d-7136-4322-8086-c38ed16b10ad", audit.EventsFile)
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	return path
}

func lines(t *testing.T, path string) [][]byte {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.SplitAfter(b, []byte("\n"))[:bytes.Count(b, []byte("\n"))]
}

func writeLines(t *testing.T, path string, ls [][]byte) {
	if err := os.WriteFile(path, bytes.Join(ls, nil), 0o600); err != nil {
		t.Fatal(err)
	}
}

// verifyOne verifies path and returns its only report.
func verifyOne(t *testing.T, path string) audit.StreamReport {
	t.Helper()
	reports, err := audit.Verify(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(reports) != 1 {
		t.Fatalf("%d reports, want 1", len(reports))
	}
	return reports[0]
}

// TestVerifyTampering breaks a real trail each way and checks that Verify
// names the first line at fault and what was done to it.
func TestVerifyTampering(t *testing.T) {
	f := func(name string, tamper func(ls [][]byte) [][]byte, kind string, line int64) {
		t.Helper()
		t.Run(name, func(t *testing.T) {
			path := realTrail(t)
			writeLines(t, path, tamper(lines(t, path)))
			r := verifyOne(t, path)
			if r.Problem == nil {
				t.Fatalf("verified: %s", audit.Summary(r))
			}
			if r.Problem.Kind != kind || r.Problem.Line != line {
				t.Fatalf("got %v; want %s at line %d", r.Problem, kind, line)
			}
		})
	}
	f("edited event name", func(ls [][]byte) [][]byte {
		ls[9] = bytes.Replace(ls[9], []byte(`"time":"2026`), []byte(`"time":"2025`), 1)
		return ls
	}, audit.Altered, 10)
	f("edited payload", func(ls [][]byte) [][]byte {
		ls[19] = bytes.Replace(ls[19], []byte(`"tool_input":{`), []byte(`"tool_input":{"x":1,`), 1)
		return ls
	}, audit.Altered, 20)
	f("edited line with its hash recomputed", func(ls [][]byte) [][]byte {
		ls[4] = rehash(t, bytes.Replace(ls[4], []byte(`"seq":5`), []byte(`"seq":50`), 1))
		return ls
	}, audit.Altered, 6)
	f("deleted middle line", func(ls [][]byte) [][]byte {
		return append(ls[:30:30], ls[31:]...)
	}, audit.Removed, 31)
	f("deleted first line", func(ls [][]byte) [][]byte {
		return ls[1:]
	}, audit.Removed, 1)
	f("reordered pair", func(ls [][]byte) [][]byte {
		ls[12], ls[13] = ls[13], ls[12]
		return ls
	}, audit.Reordered, 13)
	f("duplicated line", func(ls [][]byte) [][]byte {
		return append(ls[:8:8], append([][]byte{ls[7]}, ls[8:]...)...)
	}, audit.Reordered, 9)
	f("truncated file", func(ls [][]byte) [][]byte {
		last := len(ls) - 1
		ls[last] = ls[last][:len(ls[last])/2]
		return ls
	}, audit.Truncated, 52)
	f("hash member removed", func(ls [][]byte) [][]byte {
		i := bytes.LastIndex(ls[2], []byte(`,"hash":`))
		ls[2] = append(append([]byte{}, ls[2][:i]...), "}\n"...)
		return ls
	}, audit.Malformed, 3)
}

// rehash recomputes the hash of an edited line, as a forger would.
func rehash(t *testing.T, line []byte) []byte {
	i := bytes.LastIndex(line, []byte(`,"hash":"`))
	if i < 0 {
		t.Fatalf("no hash in %s", line)
	}
	body := append(append([]byte{}, line[:i]...), '}')
	sum := sha256.Sum256(body)
	return append(append([]byte{}, line[:i]...), `,"hash":"`+hex.EncodeToString(sum[:])+"\"}\n"...)
}

// TestVerifyUntouched accepts the trails of every real capture, reporting
// every line.
func TestVerifyUntouched(t *testing.T) {
	path := realTrail(t)
	r := verifyOne(t, path)
	if r.Problem != nil || r.Lines != 52 || len(r.Head) != 64 {
		t.Fatalf("%s", audit.Summary(r))
	}
	if got := audit.Summary(r); !strings.HasPrefix(got, "OK ") || !strings.Contains(got, "52 lines") {
		t.Fatalf("summary %q", got)
	}
	// The session's directory, and the directory of sessions.
	reports, err := audit.Verify(filepath.Dir(filepath.Dir(path)))
	if err != nil {
		t.Fatal(err)
	}
	if len(reports) != 6 { // 3 sessions × 2 streams
		t.Fatalf("%d reports", len(reports))
	}
	for _, r := range reports {
		if r.Problem != nil {
			t.Error(audit.Summary(r))
		}
	}
	if _, err := audit.Verify(t.TempDir()); err == nil {
		t.Fatal("an empty directory verified")
	}
}

// TestWriterRotatesAndContinues writes a trail in small rotated segments,
// closing and opening the Writer between batches, and verifies the chain
// runs through every segment and restart.
func TestWriterRotatesAndContinues(t *testing.T) {
	var c capture
	for _, x := range loadCaptures(t) {
		if x.name == "claude-code-2.1.332" {
			c = x
		}
	}
	dir := t.TempDir()
	const session = "74975720-1a50-4d17-9463-df6fabfdeb7c"
	var recs []audit.Event
	for i := range c.events {
		if c.events[i].SessionID == session {
			r, err := audit.EventOf(&c.events[i])
			if err != nil {
				t.Fatal(err)
			}
			recs = append(recs, r)
		}
	}
	if len(recs) < 20 {
		t.Fatalf("only %d events", len(recs))
	}
	for i := 0; i < len(recs); i += 7 {
		w, err := audit.NewWriter(dir, audit.WriterOptions{MaxFileBytes: 8 << 10})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteEvents(session, recs[i:min(i+7, len(recs))]); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	sdir := filepath.Join(dir, session)
	segs, err := audit.Segments(sdir, audit.EventsFile)
	if err != nil || len(segs) < 3 {
		t.Fatalf("segments %v, %v", segs, err)
	}
	for _, s := range segs {
		fi, err := os.Stat(s)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v", s, fi.Mode())
		}
	}
	if fi, _ := os.Stat(sdir); fi.Mode().Perm() != 0o700 {
		t.Errorf("%s: mode %v", sdir, fi.Mode())
	}
	reports, err := audit.Verify(sdir)
	if err != nil {
		t.Fatal(err)
	}
	if r := reports[0]; r.Problem != nil || r.Lines != int64(len(recs)) {
		t.Fatalf("%s", audit.Summary(r))
	}
	// A middle segment alone verifies against the one before it.
	if r := verifyOne(t, segs[1]); r.Problem != nil {
		t.Fatalf("%s", audit.Summary(r))
	}
	// A deleted middle segment is a gap.
	if err := os.Remove(segs[1]); err != nil {
		t.Fatal(err)
	}
	reports, _ = audit.Verify(sdir)
	if p := reports[0].Problem; p == nil || p.Kind != audit.Removed {
		t.Fatalf("a missing segment: %s", audit.Summary(reports[0]))
	}
}

// TestWriterCutsTornLine: a line cut by a crash is dropped when the stream
// is opened again, and the chain goes on from the line before it.
func TestWriterCutsTornLine(t *testing.T) {
	path := realTrail(t)
	ls := lines(t, path)
	torn := append(bytes.Join(ls, nil), ls[5][:40]...)
	if err := os.WriteFile(path, torn, 0o600); err != nil {
		t.Fatal(err)
	}
	w, err := audit.NewWriter(filepath.Dir(filepath.Dir(path)), audit.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rec := audit.Event{Schema: audit.EventSchema, SessionID: "0e2e0b5d-7136-4322-8086-c38ed16b10ad", Seq: 1000,
		Time: time.Date(2026, 11, 21, 16, 0, 0, 0, time.UTC), Payload: []byte(`{}`), Decision: []byte(`null`)}
	if err := w.WriteEvents(rec.SessionID, []audit.Event{rec}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if r := verifyOne(t, path); r.Problem != nil || r.Lines != 53 {
		t.Fatalf("%s", audit.Summary(r))
	}
}

// TestSessionDir keeps every session id inside the audit directory.
func TestSessionDir(t *testing.T) {
	f := func(id string, same bool) {
		t.Helper()
		got := audit.SessionDir(id)
		if (got == id) != same || strings.ContainsAny(got, `/\`) || got == "." || got == ".." || got == "" {
			t.Fatalf("SessionDir(%q) = %q", id, got)
		}
	}
	f("0e2e0b5d-7136-4322-8086-c38ed16b10ad", true)
	f("sub--a43b7af849cd70f20", true)
	f("../../etc", false)
	f("..", false)
	f(".", false)
	f("", false)
	f("a/b", false)
	f("x-0123", false) // the prefix of the hashed names stays theirs
	f(strings.Repeat("a", 129), false)
}

// TestVerifyNotRegular: a FIFO, named or found where a stream's file would
// be, is refused at once; opening it would wait for a writer forever.
func TestVerifyNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "named.jsonl")
	session := filepath.Join(dir, "session")
	if err := os.Mkdir(session, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifo, filepath.Join(session, audit.EventsFile)} {
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Skip("no FIFOs here:", err)
		}
	}
	verify := func(path string) ([]audit.StreamReport, error) {
		type result struct {
			r   []audit.StreamReport
			err error
		}
		c := make(chan result, 1)
		go func() {
			r, err := audit.Verify(path)
			c <- result{r, err}
		}()
		select {
		case res := <-c:
			return res.r, res.err
		case <-time.After(5 * time.Second):
			t.Fatalf("Verify(%s) blocks", path)
			return nil, nil
		}
	}
	if _, err := verify(fifo); err == nil || !strings.Contains(err.Error(), "not a regular file or a directory (a named pipe)") {
		t.Errorf("Verify of a FIFO: %v, want an error saying it is not a regular file", err)
	}
	r, err := verify(session)
	if err != nil || len(r) != 1 || r[0].Problem == nil {
		t.Fatalf("Verify of a session whose events file is a FIFO: %+v, %v; want its stream failed", r, err)
	}
}

// TestWriterCallsOnceAcrossRotations: a collector restarted offers every
// finished call of a session again, without the outputs only its events
// gave; a Writer opened then writes none of them a second time, though
// most of the first records are in rotated segments, and the trail keeps
// the first records, outputs included.
func TestWriterCallsOnceAcrossRotations(t *testing.T) {
	var c capture
	for _, x := range loadCaptures(t) {
		if x.name == "claude-code-2.1.332" {
			c = x
		}
	}
	outputs := audit.Outputs{}
	for i := range c.events {
		outputs.Add(&c.events[i])
	}
	var session string
	var first, again []audit.ToolCall
	for _, s := range c.model.Sessions {
		if len(s.ToolCalls) > len(first) {
			session, first, again = s.SessionID, nil, nil
			for _, tc := range s.ToolCalls {
				first = append(first, audit.ToolCallOf(tc, outputs[tc.ToolUseID]))
				again = append(again, audit.ToolCallOf(tc, ""))
			}
		}
	}
	if len(first) < 10 {
		t.Fatalf("the capture's largest session has %d calls", len(first))
	}
	dir := t.TempDir()
	write := func(calls []audit.ToolCall) {
		t.Helper()
		w, err := audit.NewWriter(dir, audit.WriterOptions{MaxFileBytes: 4 << 10})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.WriteToolCalls(session, calls); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < len(first); i += 3 {
		write(first[i:min(i+3, len(first))])
	}
	sdir := filepath.Join(dir, audit.SessionDir(session))
	if segs, err := audit.Segments(sdir, audit.ToolCallsFile); err != nil || len(segs) < 3 {
		t.Fatalf("segments %v, %v: want rotations", segs, err)
	}
	write(again)
	var trail []byte
	segs, _ := audit.Segments(sdir, audit.ToolCallsFile)
	for _, s := range segs {
		b, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		trail = append(trail, b...)
	}
	if n := bytes.Count(trail, []byte("\n")); n != len(first) {
		t.Errorf("%d call records in the trail, want the %d calls once each", n, len(first))
	}
	kept := map[string]string{} // output previews by tool_use_id
	for _, l := range bytes.Split(bytes.TrimSpace(trail), []byte("\n")) {
		var r audit.ToolCall
		if err := json.Unmarshal(l, &r); err != nil {
			t.Fatal(err)
		}
		kept[r.ToolUseID] = r.OutputPreview
	}
	for _, want := range first {
		if got, ok := kept[want.ToolUseID]; !ok || got != want.OutputPreview {
			t.Errorf("call %s: the trail keeps output %q, want the first record's %q", want.ToolUseID, got, want.OutputPreview)
		}
	}
	reports, err := audit.Verify(sdir)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reports {
		if r.Problem != nil {
			t.Errorf("%s", audit.Summary(r))
		}
	}
}

package audit_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/audit"
)

// sessionEvents returns the event records of one session of a real capture.
func sessionEvents(t *testing.T, captureName, session string) []audit.Event {
	t.Helper()
	var recs []audit.Event
	for _, c := range loadCaptures(t) {
		if c.name != captureName {
			continue
		}
		for i := range c.events {
			if c.events[i].SessionID == session {
				r, err := audit.EventOf(&c.events[i])
				if err != nil {
					t.Fatal(err)
				}
				recs = append(recs, r)
			}
		}
	}
	if len(recs) < 20 {
		t.Fatalf("only %d events", len(recs))
	}
	return recs
}

func age(t *testing.T, when time.Time, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if err := os.Chtimes(p, when, when); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPruneSegments: Prune deletes a stream's rotated segments last written
// before the cutoff, oldest first and no further than the first newer one,
// never the active file. What remains verifies, anchored at the last line
// pruned; a segment deleted beyond that is still a gap; and a Writer that
// rotates after the prune neither writes over a segment nor restarts the
// chain.
func TestPruneSegments(t *testing.T) {
	const session = "74975720-1a50-4d17-9463-df6fabfdeb7c"
	recs := sessionEvents(t, "claude-code-2.1.332", session)
	half := len(recs) / 2
	dir := t.TempDir()
	w, err := audit.NewWriter(dir, audit.WriterOptions{MaxFileBytes: 8 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for i := 0; i < half; i += 3 {
		if err := w.WriteEvents(session, recs[i:min(i+3, half)]); err != nil {
			t.Fatal(err)
		}
	}
	sdir := filepath.Join(dir, session)
	segs, err := audit.Segments(sdir, audit.EventsFile)
	if err != nil || len(segs) < 4 {
		t.Fatalf("segments %v, %v", segs, err)
	}
	now := time.Now()
	old := now.Add(-48 * time.Hour)
	// The first two segments are old, the third is not, the fourth is
	// old again: only the first two go, so that what remains is one chain.
	age(t, old, segs[0], segs[1], segs[3])
	st, err := w.Prune(now.Add(-24 * time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if st.Segments != 2 || st.Sessions != 0 || st.Bytes <= 0 {
		t.Fatalf("pruned %+v, want 2 segments", st)
	}
	for i, s := range segs {
		if _, err := os.Stat(s); (err == nil) != (i >= 2) {
			t.Fatalf("%s after the prune: %v", s, err)
		}
	}
	reports, err := audit.Verify(sdir)
	if err != nil {
		t.Fatal(err)
	}
	r := reports[0]
	if r.Problem != nil || r.Pruned == 0 || r.Lines+r.Pruned != int64(half) {
		t.Fatalf("%s: %+v, want %d lines in all", audit.Summary(r), r, half)
	}
	if s := audit.Summary(r); !strings.HasPrefix(s, "OK") || !strings.Contains(s, "pruned") {
		t.Fatalf("summary %q does not say lines were pruned", s)
	}
	// The oldest segment left verifies alone, against the prune's anchor.
	if r := verifyOne(t, segs[2]); r.Problem != nil {
		t.Fatalf("%s", audit.Summary(r))
	}

	// Writing on rotates past the segments left, and the chain goes on.
	for i := half; i < len(recs); i += 3 {
		if err := w.WriteEvents(session, recs[i:min(i+3, len(recs))]); err != nil {
			t.Fatal(err)
		}
	}
	reports, _ = audit.Verify(sdir)
	if r := reports[0]; r.Problem != nil || r.Lines+r.Pruned != int64(len(recs)) {
		t.Fatalf("after writing on: %s, want %d lines in all", audit.Summary(r), len(recs))
	}

	// A segment removed by hand beyond the prune is a gap still.
	if err := os.Remove(segs[2]); err != nil {
		t.Fatal(err)
	}
	reports, _ = audit.Verify(sdir)
	if p := reports[0].Problem; p == nil || p.Kind != audit.Removed {
		t.Fatalf("a segment removed after the prune: %s", audit.Summary(reports[0]))
	}
}

// TestPruneAllSegments: once every rotated segment of a stream is pruned
// and its active file is empty, a Writer opened again continues the chain
// from the prune's anchor rather than starting it over at line 1.
func TestPruneAllSegments(t *testing.T) {
	const session = "74975720-1a50-4d17-9463-df6fabfdeb7c"
	recs := sessionEvents(t, "claude-code-2.1.332", session)
	dir := t.TempDir()
	sdir := filepath.Join(dir, session)
	w, err := audit.NewWriter(dir, audit.WriterOptions{MaxFileBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteEvents(session, recs[:10]); err != nil {
		t.Fatal(err)
	}
	// The file rotated, as a Writer does when it grew past its size,
	// with nothing written since.
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	active := filepath.Join(sdir, audit.EventsFile)
	if err := os.Rename(active, filepath.Join(sdir, "events.000001.jsonl")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(active, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	age(t, time.Now().Add(-48*time.Hour), filepath.Join(sdir, "events.000001.jsonl"))
	w, err = audit.NewWriter(dir, audit.WriterOptions{MaxFileBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if st, err := w.Prune(time.Now().Add(-24 * time.Hour)); err != nil || st.Segments != 1 {
		t.Fatalf("pruned %+v, %v", st, err)
	}
	if err := w.WriteEvents(session, recs[10:20]); err != nil {
		t.Fatal(err)
	}
	reports, err := audit.Verify(sdir)
	if err != nil {
		t.Fatal(err)
	}
	if r := reports[0]; r.Problem != nil || r.Pruned != 10 || r.Lines != 10 {
		t.Fatalf("%s: %+v", audit.Summary(r), r)
	}
}

// TestPruneSessions: a session whose every file was last written before the
// cutoff goes whole, open in the Writer or not; a session written to again
// afterwards starts a new chain.
func TestPruneSessions(t *testing.T) {
	dir := t.TempDir()
	for _, c := range loadCaptures(t) {
		if c.name == "claude-code-2.1.197" {
			writeTrail(t, c, dir, audit.WriterOptions{})
		}
	}
	const session = "74975720-1a50-4d17-9463-df6fabfdeb7c"
	recs := sessionEvents(t, "claude-code-2.1.332", session)
	w, err := audit.NewWriter(dir, audit.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.WriteEvents(session, recs[:5]); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) < 2 {
		t.Fatalf("%d sessions, %v", len(entries), err)
	}
	old := time.Now().Add(-48 * time.Hour)
	for _, e := range entries {
		files, _ := filepath.Glob(filepath.Join(dir, e.Name(), "*"))
		age(t, old, files...)
	}
	// One session of the capture was written to since.
	keep := filepath.Join(dir, entries[0].Name())
	if keep == filepath.Join(dir, session) {
		keep = filepath.Join(dir, entries[1].Name())
	}
	age(t, time.Now(), filepath.Join(keep, audit.EventsFile))
	st, err := w.Prune(time.Now().Add(-24 * time.Hour))
	if err != nil || st.Sessions != len(entries)-1 {
		t.Fatalf("pruned %+v, %v; want %d sessions", st, err, len(entries)-1)
	}
	left, _ := os.ReadDir(dir)
	if len(left) != 1 || filepath.Join(dir, left[0].Name()) != keep {
		t.Fatalf("left %v, want %s", left, keep)
	}
	if err := w.WriteEvents(session, recs[5:8]); err != nil {
		t.Fatal(err)
	}
	reports, err := audit.Verify(filepath.Join(dir, session))
	if err != nil {
		t.Fatal(err)
	}
	if r := reports[0]; r.Problem != nil || r.Lines != 3 || r.Pruned != 0 {
		t.Fatalf("%s", audit.Summary(r))
	}
}

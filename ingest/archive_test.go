package ingest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/ingest"
	"github.com/hookwatch/hookwatch/internal/corpus"
	"github.com/hookwatch/hookwatch/privacy"
)

// compactPayloads returns the real PreCompact and PostCompact payloads of
// the corpus, their transcript moved to a projects directory of the test.
func compactPayloads(t *testing.T, projects string) (pre, post map[string]any) {
	t.Helper()
	projects = filepath.Join(projects, "projects") // the client's layout
	for _, p := range corpus.Load(t) {
		var m map[string]any
		if json.Unmarshal(p.JSON, &m) != nil || m["transcript_path"] == nil {
			continue
		}
		switch m["hook_event_name"] {
		case "PreCompact":
			pre = m
		case "PostCompact":
			post = m
		}
	}
	if pre == nil || post == nil {
		t.Fatal("the corpus has no PreCompact and PostCompact payloads")
	}
	id := pre["session_id"].(string)
	for _, m := range []map[string]any{pre, post} {
		m["transcript_path"] = filepath.Join(projects, "-home-dev-src-demo", id+".jsonl")
		m["session_id"] = id
	}
	return pre, post
}

func runPayload(t *testing.T, pl *ingest.Pipeline, m map[string]any) ingest.Outcome {
	t.Helper()
	b, _ := json.Marshal(m)
	out, err := pl.Run(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func writeTranscript(t *testing.T, path string, lines ...string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestArchiveCompaction: a main agent's PreCompact copies its transcript,
// redacted, 0600 in 0700 directories, and its PostCompact stores the
// summary beside the copy; a subagent's copies its own transcript.
func TestArchiveCompaction(t *testing.T) {
	projects, home := t.TempDir(), t.TempDir()
	dir := filepath.Join(home, "archive")
	pre, post := compactPayloads(t, projects)
	id, main := pre["session_id"].(string), pre["transcript_path"].(string)
	writeTranscript(t, main,
		`{"type":"user","message":{"role":"user","content":"MARKER-BEFORE-COMPACT deploy with `+ghp+`"}}`,
		`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"done"}]}}`)
	sub := filepath.Join(filepath.Dir(main), id, "subagents", "agent-a1b2c3.jsonl")
	writeTranscript(t, sub, `{"type":"user","isSidechain":true,"message":{"role":"user","content":"SUBAGENT-MARKER"}}`)

	now := time.Date(2026, 11, 25, 16, 0, 0, 0, time.UTC)
	pl := &ingest.Pipeline{Privacy: privacy.DefaultOptions(), ArchiveDir: dir, Now: func() time.Time { return now }}
	if out := runPayload(t, pl, pre); len(out.Oddities) > 0 {
		t.Fatalf("PreCompact: %v", out.Oddities)
	}
	post["compact_summary"] = "summary naming " + akia
	now = now.Add(3 * time.Second)
	runPayload(t, pl, post)
	subPre := map[string]any{}
	for k, v := range pre {
		subPre[k] = v
	}
	subPre["agent_id"], subPre["agent_type"] = "a1b2c3", "general-purpose"
	now = now.Add(time.Second)
	if out := runPayload(t, pl, subPre); len(out.Oddities) > 0 {
		t.Fatalf("subagent PreCompact: %v", out.Oddities)
	}

	list, err := ingest.ListArchives(dir, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Agent != ingest.MainAgent || list[1].Agent != "a1b2c3" {
		t.Fatalf("archives: %+v", list)
	}
	f := func(path, want, notWant string) {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), want) || (notWant != "" && strings.Contains(string(b), notWant)) {
			t.Errorf("%s holds %q; want %q and not %q", path, b, want, notWant)
		}
		if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", path, st.Mode().Perm())
		}
		if st, _ := os.Stat(filepath.Dir(path)); st.Mode().Perm() != 0o700 {
			t.Errorf("%s: mode %v, want 0700", filepath.Dir(path), st.Mode().Perm())
		}
	}
	f(list[0].Path, "MARKER-BEFORE-COMPACT", ghp)
	if list[0].SummaryPath == "" || list[1].SummaryPath != "" {
		t.Fatalf("summaries: %+v", list)
	}
	f(list[0].SummaryPath, "summary naming", akia)
	f(list[1].Path, "SUBAGENT-MARKER", "")
	if !list[0].Time.Equal(time.Date(2026, 11, 25, 16, 0, 0, 0, time.UTC)) || list[0].Cut {
		t.Errorf("main archive: %+v", list[0])
	}
}

// TestArchiveCap: a transcript over the cap is cut at a line boundary and
// ends with the marker.
func TestArchiveCap(t *testing.T) {
	projects, dir := t.TempDir(), filepath.Join(t.TempDir(), "archive")
	pre, _ := compactPayloads(t, projects)
	line := `{"type":"user","message":{"content":"` + strings.Repeat("x", 100) + `"}}`
	writeTranscript(t, pre["transcript_path"].(string), line, line, line, line)
	pl := &ingest.Pipeline{Privacy: privacy.DefaultOptions(), ArchiveDir: dir, ArchiveMaxBytes: int64(2*len(line) + 2 + len(ingest.ArchiveCutMarker) + 1)}
	runPayload(t, pl, pre)
	list, _ := ingest.ListArchives(dir, pre["session_id"].(string))
	if len(list) != 1 || !list[0].Cut {
		t.Fatalf("archives: %+v", list)
	}
	b, _ := os.ReadFile(list[0].Path)
	if want := line + "\n" + line + "\n" + ingest.ArchiveCutMarker + "\n"; string(b) != want {
		t.Errorf("archive:\n%s\nwant:\n%s", b, want)
	}
}

// TestArchiveLineEnds: a "\r\n" ends a line as a '\n' does, empty lines
// are dropped, and a last line without its newline (the client was writing
// it) is copied with one.
func TestArchiveLineEnds(t *testing.T) {
	projects, dir := t.TempDir(), filepath.Join(t.TempDir(), "archive")
	pre, _ := compactPayloads(t, projects)
	line := `{"type":"user","message":{"content":"hello"}}`
	path := pre["transcript_path"].(string)
	writeTranscript(t, path) // its directories
	if err := os.WriteFile(path, []byte(line+"\r\n\r\n"+line+"\n\n"+line[:10]), 0o600); err != nil {
		t.Fatal(err)
	}
	runPayload(t, &ingest.Pipeline{Privacy: privacy.DefaultOptions(), ArchiveDir: dir}, pre)
	list, _ := ingest.ListArchives(dir, pre["session_id"].(string))
	if len(list) != 1 || list[0].Cut {
		t.Fatalf("archives: %+v", list)
	}
	b, _ := os.ReadFile(list[0].Path)
	if want := line + "\n" + line + "\n" + line[:10] + "\n"; string(b) != want {
		t.Errorf("archive:\n%q\nwant:\n%q", b, want)
	}
}

// TestArchiveRefuses: what a hostile or unwanted payload asks for is not
// archived, and the event is delivered anyway.
func TestArchiveRefuses(t *testing.T) {
	f := func(name string, edit func(m map[string]any), opts privacy.Options, oddity bool) {
		t.Helper()
		projects, dir := t.TempDir(), filepath.Join(t.TempDir(), "archive")
		pre, _ := compactPayloads(t, projects)
		writeTranscript(t, pre["transcript_path"].(string), `{"type":"user"}`)
		outside := filepath.Join(filepath.Dir(filepath.Dir(pre["transcript_path"].(string))), "secret.txt")
		writeTranscript(t, outside, "secret")
		edit(pre)
		delivered := false
		pl := &ingest.Pipeline{Privacy: opts, ArchiveDir: dir, Deliver: func(context.Context, *event.Envelope) error { delivered = true; return nil }}
		out := runPayload(t, pl, pre)
		if !delivered || (len(out.Oddities) > 0) != oddity {
			t.Errorf("%s: delivered %v, oddities %v", name, delivered, out.Oddities)
		}
		if files, _ := filepath.Glob(filepath.Join(dir, "*", "*", "*")); len(files) > 0 {
			t.Errorf("%s: archived %v", name, files)
		}
	}
	def := privacy.DefaultOptions()
	f("session walks out", func(m map[string]any) { m["session_id"] = ".." }, def, true)
	f("agent walks out", func(m map[string]any) { m["agent_id"] = "../../x" }, def, true)
	f("not a transcript", func(m map[string]any) {
		m["transcript_path"] = filepath.Join(filepath.Dir(filepath.Dir(m["transcript_path"].(string))), "secret.txt")
	}, def, true)
	f("no such transcript", func(m map[string]any) {
		m["transcript_path"] = filepath.Join(filepath.Dir(m["transcript_path"].(string)), m["session_id"].(string)+"x.jsonl")
	}, def, true)
	f("capture none", func(map[string]any) {}, privacy.Options{Capture: privacy.CaptureNone, Redact: true}, false)
	f("not a compaction", func(m map[string]any) { m["hook_event_name"] = "Stop" }, def, false)
}

// BenchmarkArchive measures what a PreCompact costs the hook: the copy,
// redacted, of a transcript of 16 MiB.
func BenchmarkArchive(b *testing.B) {
	projects := filepath.Join(b.TempDir(), "projects")
	const id = "74975720-1a50-4d17-9463-df6fabfdeb7c"
	tp := filepath.Join(projects, "-home-dev-src-demo", id+".jsonl")
	os.MkdirAll(filepath.Dir(tp), 0o700)
	line := `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"` +
		strings.Repeat("package main // reads the config and prints it\\n", 40) + `"}]},"uuid":"0b9e6a1c-5d3e-4f6a-8b7c-9d0e1f2a3b4c"}` + "\n"
	data := []byte(strings.Repeat(line, (16<<20)/len(line)))
	os.WriteFile(tp, data, 0o600)
	payload := []byte(`{"session_id":"` + id + `","transcript_path":"` + tp + `","cwd":"/home/dev/src/demo","hook_event_name":"PreCompact","trigger":"auto"}`)
	pl := &ingest.Pipeline{Privacy: privacy.DefaultOptions(), ArchiveDir: filepath.Join(b.TempDir(), "archive")}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if out, _ := pl.Run(context.Background(), payload); len(out.Oddities) > 0 {
			b.Fatal(out.Oddities)
		}
	}
}

// archiveFile writes n bytes to the archive file rel under dir, last
// written at mtime.
func archiveFile(t *testing.T, dir, rel string, n int, mtime time.Time) {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(strings.Repeat("x", n)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

// TestPruneArchives: a session's archive goes when its files are all older
// than the cutoff and the store no longer has it; with no store to ask
// (nil), when its files are all older than the cutoff. A session with one
// recent file — a copy being written into an old session's archive — is
// kept whole, and so is what is no session's directory.
func TestPruneArchives(t *testing.T) {
	now := time.Now()
	old, recent := now.Add(-40*24*time.Hour), now.Add(-2*24*time.Hour)
	cutoff := now.Add(-30 * 24 * time.Hour)
	dir := filepath.Join(t.TempDir(), "archive")
	archiveFile(t, dir, "old-a/main/20260101T000000.000000000Z.jsonl", 100, old)
	archiveFile(t, dir, "old-a/main/20260101T000000.000000000Z.summary.json", 10, old)
	archiveFile(t, dir, "old-a/agent-1/20260101T000001.000000000Z.jsonl", 50, old)
	archiveFile(t, dir, "old-stored/main/20260101T000000.000000000Z.jsonl", 7, old)
	archiveFile(t, dir, "recent/main/20260101T000000.000000000Z.jsonl", 5, recent)
	archiveFile(t, dir, "mixed/main/20260101T000000.000000000Z.jsonl", 5, old)
	archiveFile(t, dir, "mixed/agent-2/20260101T000000.000000000Z.jsonl", 5, recent)
	archiveFile(t, dir, "stray.jsonl", 5, old) // no session's: left alone
	// A copy being written now into a session whose other files are old.
	archiveFile(t, dir, "writing/main/20260101T000000.000000000Z.jsonl", 5, old)
	w, err := os.OpenFile(filepath.Join(dir, "writing/main/20260201T000000.000000000Z.jsonl"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.WriteString("{}\n"); err != nil {
		t.Fatal(err)
	}

	var asked []string
	stored := func(id string) (bool, error) {
		asked = append(asked, id)
		return id == "old-stored", nil
	}
	sessions, bytes, err := ingest.PruneArchives(dir, cutoff, stored)
	if err != nil || sessions != 1 || bytes != 160 {
		t.Fatalf("PruneArchives with a store = %d sessions, %d bytes, %v; want old-a's 1 session, 160 bytes", sessions, bytes, err)
	}
	if strings.Join(asked, " ") != "old-a old-stored" {
		t.Errorf("the store was asked of %q, want only the sessions past the cutoff", asked)
	}
	exists := func(rel string) bool {
		_, err := os.Stat(filepath.Join(dir, rel))
		return err == nil
	}
	if exists("old-a") || !exists("old-stored") || !exists("recent") || !exists("mixed/main") || !exists("stray.jsonl") {
		t.Fatalf("after the pass with a store: old-a %v, old-stored %v, recent %v, mixed %v, stray %v",
			exists("old-a"), exists("old-stored"), exists("recent"), exists("mixed/main"), exists("stray.jsonl"))
	}

	// No store: what is past the cutoff goes, stored or not.
	sessions, bytes, err = ingest.PruneArchives(dir, cutoff, nil)
	if err != nil || sessions != 1 || bytes != 7 {
		t.Fatalf("PruneArchives with no store = %d sessions, %d bytes, %v; want old-stored's 1 session, 7 bytes", sessions, bytes, err)
	}
	if exists("old-stored") || !exists("recent") || !exists("mixed/main") || !exists("writing/main/20260101T000000.000000000Z.jsonl") || !exists("stray.jsonl") {
		t.Fatal("the pass with no store deleted a session with a recent file, or kept one past the cutoff")
	}
	// The copy goes on being written where it was.
	if _, err := w.WriteString("{}\n"); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(w.Name()); err != nil || string(b) != "{}\n{}\n" {
		t.Fatalf("the copy being written: %q, %v", b, err)
	}

	// No archive directory at all: nothing to do, no error.
	if n, b, err := ingest.PruneArchives(filepath.Join(t.TempDir(), "none"), cutoff, nil); n != 0 || b != 0 || err != nil {
		t.Fatalf("PruneArchives of no directory = %d, %d, %v", n, b, err)
	}
}

// BenchmarkPruneArchivesNothingDue is a forwarder's hourly look at an
// archive with nothing past its age: 1,000 sessions of a main agent's and
// a subagent's copy and a summary, all recent.
func BenchmarkPruneArchivesNothingDue(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "archive")
	now := time.Now()
	for i := range 1000 {
		s := fmt.Sprintf("session-%04d", i)
		for _, rel := range []string{"main/20260101T000000.000000000Z.jsonl", "main/20260101T000000.000000000Z.summary.json", "agent-1/20260101T000100.000000000Z.jsonl"} {
			p := filepath.Join(dir, s, rel)
			if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(p, []byte("{}\n"), 0o600); err != nil {
				b.Fatal(err)
			}
		}
	}
	cutoff := now.Add(-30 * 24 * time.Hour)
	for b.Loop() {
		if n, _, err := ingest.PruneArchives(dir, cutoff, nil); n != 0 || err != nil {
			b.Fatal(n, err)
		}
	}
}

package collector_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookwatch/hookwatch/collector"
)

// TestArchives: an http hook's PreCompact from this machine archives the
// transcript it compacts, its PostCompact the summary, and GET
// /v1/sessions/{id}/archives lists them; a session never seen is not found.
func TestArchives(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "archive")
	s := newServer(t, collector.Config{ArchiveDir: dir})
	s.Handle("POST /v1/hooks/claude", s.HandleClaudeHook(collector.ClaudeHookConfig{Home: t.TempDir()}))
	const id = "74975720-1a50-4d17-9463-df6fabfdeb7c"
	tp := filepath.Join(t.TempDir(), "projects", "-home-dev-src-demo", id+".jsonl")
	if err := os.MkdirAll(filepath.Dir(tp), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tp, []byte(`{"type":"user","message":{"content":"before the compaction"}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"PreCompact", "PostCompact"} {
		payload := `{"session_id":"` + id + `","transcript_path":"` + tp + `","cwd":"/home/dev/src/demo","hook_event_name":"` + name + `","trigger":"manual","compact_summary":"all done"}`
		if code, body := s.do(t, "POST", "/v1/hooks/claude", []byte(payload), "Content-Type", "application/json"); code != 200 {
			t.Fatalf("POST %s: %d %s", name, code, body)
		}
	}
	f := func(session string, want int) collector.ArchivesResponse {
		t.Helper()
		var resp collector.ArchivesResponse
		s.getJSON(t, "/v1/sessions/"+session+"/archives", &resp)
		if len(resp.Archives) != want {
			t.Fatalf("archives of %s: %+v, want %d", session, resp.Archives, want)
		}
		return resp
	}
	if code, body := s.do(t, "GET", "/v1/sessions/other/archives", nil); code != 404 {
		t.Errorf("archives of a session never seen: %d %s, want 404", code, body)
	}
	a := f(id, 1).Archives[0]
	b, _ := os.ReadFile(a.Path)
	if a.Agent != "main" || a.SummaryPath == "" || !strings.Contains(string(b), "before the compaction") {
		t.Errorf("archive %+v holds %s", a, b)
	}
}

package collector_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/stale"
)

// TestFiles: http hooks from this machine record the state of the files
// their tools read and write, and GET /v1/sessions/{id}/files lists them
// from the stored model, most recently touched first, over the session's
// lineage (a /clear continues the session it cleared): a file a shell
// command wrote last is left out, its state unknown. With NoFileStates
// nothing is recorded.
func TestFiles(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	for _, name := range []string{"a.go", "b.go", "c.go", "d.go"} {
		files[name] = filepath.Join(dir, name)
		if err := os.WriteFile(files[name], []byte("package "+name[:1]+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	const first, second = "5a2b0c4e-0000-4000-8000-000000000001", "5a2b0c4e-0000-4000-8000-000000000002"
	run := func(s *testServer, events []map[string]any) {
		t.Helper()
		for i, m := range events {
			m["cwd"] = dir
			m["transcript_path"] = filepath.Join(dir, "projects", "-p", m["session_id"].(string)+".jsonl")
			b, _ := json.Marshal(m)
			if code, body := s.do(t, "POST", "/v1/hooks/claude", b); code != 200 {
				t.Fatalf("event %d: %d %s", i, code, body)
			}
		}
	}
	call := func(session, id, tool string, input map[string]any) []map[string]any {
		pre := map[string]any{"session_id": session, "hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": input, "tool_use_id": id}
		post := map[string]any{"session_id": session, "hook_event_name": "PostToolUse", "tool_name": tool, "tool_input": input, "tool_use_id": id, "tool_response": map[string]any{}}
		return []map[string]any{pre, post}
	}
	var evs []map[string]any
	evs = append(evs, map[string]any{"session_id": first, "hook_event_name": "SessionStart", "source": "startup"})
	evs = append(evs, call(first, "toolu_1", "Read", map[string]any{"file_path": files["a.go"]})...)
	evs = append(evs, call(first, "toolu_2", "Read", map[string]any{"file_path": files["c.go"]})...)
	evs = append(evs, call(first, "toolu_3", "Edit", map[string]any{"file_path": files["b.go"], "old_string": "x", "new_string": "y"})...)
	evs = append(evs, call(first, "toolu_4", "Bash", map[string]any{"command": "echo more >> " + files["c.go"]})...)
	evs = append(evs, map[string]any{"session_id": first, "hook_event_name": "SessionEnd", "reason": "clear"})
	evs = append(evs, map[string]any{"session_id": second, "hook_event_name": "SessionStart", "source": "clear"})
	evs = append(evs, call(second, "toolu_5", "Read", map[string]any{"file_path": files["d.go"]})...)

	s := newServer(t, collector.Config{})
	s.Handle("POST /v1/hooks/claude", s.HandleClaudeHook(collector.ClaudeHookConfig{Home: t.TempDir()}))
	run(s, evs)
	state := func(name string, wrote bool) stale.Recorded {
		t.Helper()
		st, err := stale.Take(files[name])
		if err != nil {
			t.Fatal(err)
		}
		return stale.Recorded{FileState: st, Wrote: wrote}
	}
	check := func(s *testServer, session string, want ...stale.Recorded) {
		t.Helper()
		// The endpoint reads the model as stored, without waiting: a read
		// of the session waits for its events to be applied.
		var view map[string]any
		s.getJSON(t, "/v1/sessions/"+session, &view)
		var resp collector.FilesResponse
		s.getJSON(t, "/v1/sessions/"+session+"/files", &resp)
		if len(resp.Files) != len(want) || resp.Truncated {
			t.Fatalf("files of %s: %+v, want %+v", session, resp, want)
		}
		for i := range want {
			if resp.Files[i] != want[i] {
				t.Errorf("file %d of %s: %+v, want %+v", i, session, resp.Files[i], want[i])
			}
		}
	}
	check(s, first, state("b.go", true), state("a.go", false))
	check(s, second, state("d.go", false), state("b.go", true), state("a.go", false))
	if code, body := s.do(t, http.MethodGet, "/v1/sessions/nope/files", nil); code != http.StatusNotFound {
		t.Errorf("an unknown session: %d %s", code, body)
	}
	// A subagent's virtual session points at its session's files.
	run(s, []map[string]any{{"session_id": first, "hook_event_name": "SubagentStart", "agent_id": "a1", "agent_type": "Explore"}})
	var view map[string]any
	s.getJSON(t, "/v1/sessions/sub--a1", &view)
	if code, body := s.do(t, http.MethodGet, "/v1/sessions/sub--a1/files", nil); code != http.StatusBadRequest || !strings.Contains(string(body), "/v1/sessions/"+first+"/files") {
		t.Errorf("a subagent's files: %d %s", code, body)
	}

	off := newServer(t, collector.Config{NoFileStates: true})
	off.Handle("POST /v1/hooks/claude", off.HandleClaudeHook(collector.ClaudeHookConfig{Home: t.TempDir()}))
	run(off, evs)
	check(off, second)
}

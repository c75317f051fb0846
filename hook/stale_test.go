package hook_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	hwcollector "github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/decision"
	"github.com/hookwatch/hookwatch/hook"
	"github.com/hookwatch/hookwatch/hooksock"
	"github.com/hookwatch/hookwatch/internal/testbin"
	"github.com/hookwatch/hookwatch/stale"
	"github.com/hookwatch/hookwatch/store/sqlite"
)

// TestStaleGuard: hooks record the files a session read, a real collector
// on SQLite keeps them, and the hook of a SessionStart(resume) answers
// with additionalContext naming the file that changed since, merged with
// the policies' answer into one object; with nothing changed, the guard
// off, another source or the collector down, it adds nothing and exits 0.
func TestStaleGuard(t *testing.T) {
	srv, err := hwcollector.New(hwcollector.Config{Store: sqlite.MustOpenDB(t), Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { hs.Close(); srv.Shutdown(context.Background()) })

	dir := t.TempDir()
	kept, changed := filepath.Join(dir, "kept.go"), filepath.Join(dir, "changed.go")
	for _, p := range []string{kept, changed} {
		if err := os.WriteFile(p, []byte("package p\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	const session = "5a2b0c4e-0000-4000-8000-00000000000a"
	payload := func(kv ...any) []byte {
		m := map[string]any{"session_id": session, "cwd": dir, "transcript_path": filepath.Join(dir, "projects", "-p", session+".jsonl")}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		b, _ := json.Marshal(m)
		return b
	}
	run := func(cfg hook.Config, data []byte) hook.Result {
		t.Helper()
		res := hook.Run(context.Background(), cfg, bytes.NewReader(data))
		if res.ExitCode != 0 {
			t.Fatalf("exit %d: %+v", res.ExitCode, res)
		}
		return res
	}
	cfg := config(t, hs.URL)
	run(cfg, payload("hook_event_name", "SessionStart", "source", "startup"))
	for i, p := range []string{kept, changed} {
		id := "toolu_" + string(rune('a'+i))
		in := map[string]any{"file_path": p}
		run(cfg, payload("hook_event_name", "PreToolUse", "tool_name", "Read", "tool_input", in, "tool_use_id", id))
		run(cfg, payload("hook_event_name", "PostToolUse", "tool_name", "Read", "tool_input", in, "tool_use_id", id, "tool_response", map[string]any{}))
	}
	// The guard reads the model as stored: wait, as a read of the session
	// does, for the reads to be applied (at a real resume they were long
	// since).
	if res, err := http.Get(hs.URL + "/v1/sessions/" + session); err != nil || res.StatusCode != 200 {
		t.Fatalf("GET the session: %v %v", res, err)
	} else {
		res.Body.Close()
	}
	resume := payload("hook_event_name", "SessionStart", "source", "resume")
	if res := run(cfg, resume); len(res.Stdout) != 0 || res.Err != nil {
		t.Fatalf("nothing changed: %s %v", res.Stdout, res.Err)
	}
	if err := os.WriteFile(changed, []byte("package p // changed\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	contextOf := func(stdout []byte) string {
		t.Helper()
		var out struct {
			SystemMessage      string
			HookSpecificOutput struct{ HookEventName, AdditionalContext string }
		}
		if err := json.Unmarshal(stdout, &out); err != nil || out.HookSpecificOutput.HookEventName != "SessionStart" {
			t.Fatalf("not one SessionStart answer: %s %v", stdout, err)
		}
		return out.HookSpecificOutput.AdditionalContext
	}
	res := run(cfg, resume)
	if text := contextOf(res.Stdout); !strings.HasPrefix(text, stale.ContextHeader) || !strings.Contains(text, changed) || strings.Contains(text, kept) {
		t.Errorf("the guard's context: %q", text)
	}

	// A policy's answer and the guard's context: one object, both parts.
	polCfg := config(t, hs.URL)
	pol, _ := decision.Render(decision.Decision{Event: "SessionStart", AdditionalContext: []string{"policy context"}, SystemMessages: []string{"policy message"}})
	answering(t, polCfg, func(hooksock.Request) hooksock.Reply { return hooksock.Reply{Stdout: pol} })
	res = run(polCfg, resume)
	if text := contextOf(res.Stdout); !strings.HasPrefix(text, "policy context\n\n"+stale.ContextHeader) || !bytes.Contains(res.Stdout, []byte(`"systemMessage":"policy message"`)) {
		t.Errorf("merged answer: %s", res.Stdout)
	}

	off := config(t, hs.URL)
	off.Stale.Off = true
	for name, c := range map[string]struct {
		cfg  hook.Config
		data []byte
	}{
		"off":            {off, resume},
		"startup":        {cfg, payload("hook_event_name", "SessionStart", "source", "startup")},
		"collector down": {config(t, testbin.DeadURL(t)), resume},
		"forwarded":      {config(t, "https://collector.example:7421"), resume},
	} {
		res := run(c.cfg, c.data)
		if len(res.Stdout) != 0 {
			t.Errorf("%s: %s", name, res.Stdout)
		}
		if wantErr := name == "collector down"; wantErr != (res.Err != nil && strings.Contains(res.Err.Error(), "stale-context guard")) {
			t.Errorf("%s: the guard's failure logged: %v, want %v", name, res.Err, wantErr)
		}
	}
}

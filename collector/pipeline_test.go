package collector_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/hook"
	"github.com/hookwatch/hookwatch/store"
)

// Secrets of formats the redactor knows, built at run time so that the
// source holds none.
var (
	secretGitHub = "ghp_" + strings.Repeat("Zy9xW8vU7t", 3) + "sRqPoN"
	secretAWS    = "AKIA" + "Z7Y6X5W4V3U2T1S0"
)

// TestBatchEndpointRedacts: a secret posted raw to POST /v1/events — by an
// older hook, a script, an import — never reaches the database file or its
// write-ahead log, and neither does one handed to Ingest (the spool drain).
func TestBatchEndpointRedacts(t *testing.T) {
	s := newServer(t, collector.Config{})
	const session = "redact-session-0001"
	payload := func(i int, secret string) json.RawMessage {
		b, _ := json.Marshal(map[string]any{
			"session_id": session, "cwd": "/tmp/p", "hook_event_name": "PostToolUse", "tool_name": "Bash",
			"tool_use_id": "toolu_" + string(rune('a'+i)),
			"tool_input":  map[string]any{"command": "deploy --token " + secret},
			"tool_response": map[string]any{"stdout": "line one\nexport TOKEN=" + secret + "\n", "stderr": "",
				"interrupted": false},
			"prompt": "use " + secret,
		})
		return b
	}
	at := time.Now().UTC()
	s.post(t, []event.Envelope{
		{ID: "redact-1", Runtime: event.RuntimeClaudeCode, ReceivedAt: at, Payload: payload(0, secretGitHub)},
	}, 1, 0)
	if _, err := s.Ingest(context.Background(), []event.Envelope{
		{ID: "redact-2", Runtime: event.RuntimeClaudeCode, ReceivedAt: at, Payload: payload(1, secretAWS)},
	}); err != nil {
		t.Fatal(err)
	}
	page, err := s.db.Events(context.Background(), store.EventFilter{SessionID: session})
	if err != nil || len(page.Events) != 2 {
		t.Fatalf("stored %d events (%v), want 2", len(page.Events), err)
	}
	var disk []byte
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(s.db.Path() + suffix)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		disk = append(disk, b...)
	}
	// The bytes read are those the events went to.
	if !bytes.Contains(disk, []byte(session)) || !bytes.Contains(disk, []byte("deploy --token")) {
		t.Fatalf("the database files (%d bytes) do not hold the stored events", len(disk))
	}
	for _, secret := range []string{secretGitHub, secretAWS} {
		if bytes.Contains(disk, []byte(secret)) {
			t.Errorf("secret %s reached the database file", secret)
		}
	}
}

// TestEveryPathMakesTheSameEnvelope: the same payload, read by the hook
// (which posts an envelope to POST /v1/events) and posted raw by an http
// hook (POST /v1/hooks/claude), is stored as the same envelope — host,
// user, version, runtime, kind, the subagent's sidecar, the payload — but
// for its id and time. Lineage groups sessions by host and user: a field
// one path left out split a session's events into two groups.
func TestEveryPathMakesTheSameEnvelope(t *testing.T) {
	s := newServer(t, collector.Config{})
	home := t.TempDir()
	s.Handle("POST /v1/hooks/claude", s.HandleClaudeHook(collector.ClaudeHookConfig{Home: home}))

	dir := t.TempDir()
	meta := filepath.Join(dir, "path-1", "subagents", "agent-a7.meta.json")
	if err := os.MkdirAll(filepath.Dir(meta), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(meta, []byte(`{"agentType":"Explore","description":"scan","toolUseId":"toolu_spawn","spawnDepth":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	transcript, _ := json.Marshal(filepath.Join(dir, "path-1.jsonl"))
	payloads := []string{
		`{"session_id":"path-1","transcript_path":` + string(transcript) + `,"cwd":"/tmp/p","hook_event_name":"UserPromptSubmit","prompt":"ship it with ` + secretGitHub + `"}`,
		`{"session_id":"path-1","transcript_path":` + string(transcript) + `,"cwd":"/tmp/p","agent_id":"a7","agent_type":"Explore","hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"toolu_9","tool_input":{"command":"ls"},"tool_response":{"stdout":"` + strings.Repeat("x", 3000) + `"}}`,
	}
	cfg, warn := hook.ConfigFromEnv(func(k string) string {
		switch k {
		case "HOOKWATCH_HOME":
			return home
		case "HOOKWATCH_URL":
			return s.http.URL
		case "HOOKWATCH_AUTOSTART":
			return "0"
		}
		return ""
	})
	if len(warn) > 0 {
		t.Fatal(warn)
	}
	cfg.Version = "test"
	for _, p := range payloads {
		if res := hook.Run(context.Background(), cfg, strings.NewReader(p)); !res.Delivered || res.Err != nil {
			t.Fatalf("hook: %+v", res)
		}
		if code, body := s.do(t, http.MethodPost, "/v1/hooks/claude", []byte(p)); code != http.StatusOK {
			t.Fatalf("POST /v1/hooks/claude: %d %s", code, body)
		}
	}
	page, err := s.db.Events(context.Background(), store.EventFilter{SessionID: "path-1"})
	if err != nil || len(page.Events) != 2*len(payloads) {
		t.Fatalf("stored %d events (%v), want %d", len(page.Events), err, 2*len(payloads))
	}
	for i := 0; i < len(page.Events); i += 2 {
		var viaHook, viaHTTP map[string]any
		if err := json.Unmarshal(page.Events[i].Envelope, &viaHook); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(page.Events[i+1].Envelope, &viaHTTP); err != nil {
			t.Fatal(err)
		}
		for _, m := range []map[string]any{viaHook, viaHTTP} {
			if m["id"] == "" || m["received_at"] == "" {
				t.Fatalf("envelope without id or time: %v", m)
			}
			delete(m, "id")
			delete(m, "received_at")
		}
		if !reflect.DeepEqual(viaHook, viaHTTP) {
			t.Errorf("the paths stored different envelopes\nhook: %s\nhttp: %s", page.Events[i].Envelope, page.Events[i+1].Envelope)
		}
		if viaHook["user"] == nil || viaHook["host"] == nil || viaHook["hookwatch_version"] != "test" {
			t.Errorf("envelope without origin: %s", page.Events[i].Envelope)
		}
		if bytes.Contains(page.Events[i].Envelope, []byte(secretGitHub)) || bytes.Contains(page.Events[i+1].Envelope, []byte(secretGitHub)) {
			t.Errorf("a secret was stored")
		}
	}
	if page.Events[2].Envelope == nil || !bytes.Contains(page.Events[3].Envelope, []byte(`"subagent":{"agentType":"Explore"`)) {
		t.Errorf("the sidecar is not in the http hook's envelope: %s", page.Events[3].Envelope)
	}
}

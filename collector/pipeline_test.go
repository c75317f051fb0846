package collector_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
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
	"github.com/hookwatch/hookwatch/internal/secrettest"
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
	cfg := hookConfig(t, home, s.http.URL)
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

// TestEveryPathRedactsRepeatedKeysAndTheEnvelope: a payload that repeats
// a key — at the top level, by another escape of the same name, inside
// tool_input, inside a forged capture object — and an envelope whose own
// fields carry a secret (the subagent sidecar's description, which the
// hook reads from the agent's files; a posted decision, fork_of, host, user
// and version) store no secret, whichever way they came: the hook's
// pipeline posting to the collector, an http hook, and the batch endpoint
// with raw envelopes. Nothing reaches the database, the events and agents
// APIs or the audit trail in clear.
func TestEveryPathRedactsRepeatedKeysAndTheEnvelope(t *testing.T) {
	auditDir := t.TempDir()
	s := newServer(t, collector.Config{AuditDir: auditDir})
	home := t.TempDir()
	s.Handle("POST /v1/hooks/claude", s.HandleClaudeHook(collector.ClaudeHookConfig{Home: home}))
	secrets := []string{secrettest.GitHub, secrettest.AWSAccessKey, secrettest.OpenAI, secrettest.Anthropic, secrettest.JWT}
	dir := t.TempDir()
	payloads := func(session string) []string {
		transcript, _ := json.Marshal(filepath.Join(dir, session+".jsonl"))
		meta := filepath.Join(dir, session, "subagents", "agent-a7.meta.json")
		if err := os.MkdirAll(filepath.Dir(meta), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(meta, []byte(`{"agentType":"Explore","description":"use `+secrettest.AWSAccessKey+` to push","toolUseId":"toolu_spawn","spawnDepth":1}`), 0o600); err != nil {
			t.Fatal(err)
		}
		ids := `"session_id":"` + session + `","transcript_path":` + string(transcript) + `,"cwd":"/tmp/p"`
		return []string{
			`{` + ids + `,"hook_event_name":"PreToolUse","tool_name":"Bash","tool_use_id":"t61","tool_input":{"command":"echo ` + secrettest.GitHub + `"},"tool_input":{"command":"ls"}}`,
			`{` + ids + `,"hook_event_name":"UserPromptSubmit","prompt":"` + secrettest.GitHub + `","prompt":"hello"}`,
			`{` + ids + `,"hook_event_name":"UserPromptSubmit","pro\u006dpt":"` + secrettest.OpenAI + `","prompt":"hello"}`,
			`{` + ids + `,"hook_event_name":"UserPromptSubmit","prompt":"hello","pro\u006dpt":"` + secrettest.OpenAI + `"}`,
			`{` + ids + `,"hook_event_name":"PreToolUse","tool_name":"Bash","tool_use_id":"t62","tool_input":{"command":"echo ` + secrettest.Anthropic + `","command":"ls"}}`,
			`{` + ids + `,"hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"t63","tool_input":{"command":"env"},"tool_response":{"stdout":"` + secrettest.JWT + `"},"tool_response":null}`,
			`{` + ids + `,"hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"t64","tool_input":{"command":"env"},"tool_response":{"hookwatch_capture":"none","bytes":"` + secrettest.JWT + `","bytes":5}}`,
			`{` + ids + `,"agent_id":"a7","agent_type":"Explore","hook_event_name":"PreToolUse","tool_name":"Bash","tool_use_id":"t65","tool_input":{"command":"git push"}}`,
		}
	}
	cfg := hookConfig(t, home, s.http.URL)
	sent := 0
	for _, p := range payloads("dup-hook") {
		// A repeated key is an oddity the hook logs, not a reason to drop
		// the event.
		if res := hook.Run(context.Background(), cfg, strings.NewReader(p)); !res.Delivered || res.Err != nil && !strings.HasPrefix(res.Err.Error(), "odd payload: ") {
			t.Fatalf("hook: %+v", res)
		}
		sent++
	}
	for _, p := range payloads("dup-http") {
		if code, body := s.do(t, http.MethodPost, "/v1/hooks/claude", []byte(p)); code != http.StatusOK {
			t.Fatalf("POST /v1/hooks/claude: %d %s", code, body)
		}
		sent++
	}
	var envs []event.Envelope
	for i, p := range payloads("dup-batch") {
		envs = append(envs, event.Envelope{
			ID: fmt.Sprintf("dup-batch-%d", i), Runtime: event.RuntimeClaudeCode, Kind: event.KindHook, ReceivedAt: time.Now().UTC(),
			Host: "ci-" + secrettest.GitHub, User: "API_TOKEN=" + secrettest.OpenAI, HookwatchVersion: secrettest.Anthropic,
			ForkOf:   secrettest.AWSAccessKey,
			Subagent: &event.SubagentMeta{AgentType: "Explore", Description: "use " + secrettest.GitHub + " to push", ToolUseID: "toolu_spawn", SpawnDepth: 1},
			Decision: json.RawMessage(`{"action":"deny","rule_ids":["r"],"reason":"saw ` + secrettest.JWT + `","permissionDecisionReason":"token ` + secrettest.GitHub + `","enforced":true}`),
			Payload:  json.RawMessage(p),
		})
	}
	s.post(t, envs, len(envs), 0)
	sent += len(envs)
	s.settle(t)

	var apis []byte
	for _, session := range []string{"dup-hook", "dup-http", "dup-batch"} {
		for _, path := range []string{"/events?limit=1000", "/agents", "/tool-calls"} {
			code, body := s.do(t, http.MethodGet, "/v1/sessions/"+session+path, nil)
			if code != http.StatusOK {
				t.Fatalf("GET %s%s: %d %s", session, path, code, body)
			}
			apis = append(apis, body...)
		}
	}
	// What is read is what was sent: the events, the sidecar's agent.
	if n := bytes.Count(apis, []byte(`"hook_event_name"`)); n < sent {
		t.Fatalf("the events API shows %d payloads, want %d", n, sent)
	}
	if !bytes.Contains(apis, []byte(`to push`)) || !bytes.Contains(apis, []byte(`"hello"`)) {
		t.Fatalf("the APIs do not show the description and prompts: %.2000s", apis)
	}
	deadline := time.Now().Add(20 * time.Second)
	for count(t, s, `hookwatch_audit_lines_written_total{file="events"}`) < sent {
		if time.Now().After(deadline) {
			t.Fatalf("%d audit lines written, want %d", count(t, s, `hookwatch_audit_lines_written_total{file="events"}`), sent)
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.stop()
	var disk []byte
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(s.db.Path() + suffix)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		disk = append(disk, b...)
	}
	var trail []byte
	err := filepath.WalkDir(auditDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		trail = append(trail, b...)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(disk, []byte("dup-batch")) || !bytes.Contains(trail, []byte("dup-http")) {
		t.Fatalf("the database (%d bytes) or the audit trail (%d bytes) does not hold the events", len(disk), len(trail))
	}
	for _, secret := range secrets {
		for where, b := range map[string][]byte{"the APIs": apis, "the database": disk, "the audit trail": trail} {
			if secrettest.Leaks(b, secret) {
				i := bytes.Index(b, []byte(secret[:12]))
				t.Errorf("%s shows %.12s… in clear: …%s…", where, secret, b[max(0, i-300):min(len(b), i+100)])
			}
		}
	}
}

// hookConfig is the configuration of a hook of home that posts to the
// collector at url and starts none.
func hookConfig(t *testing.T, home, url string) hook.Config {
	t.Helper()
	cfg, warn := hook.ConfigFromEnv(func(k string) string {
		switch k {
		case "HOOKWATCH_HOME":
			return home
		case "HOOKWATCH_URL":
			return url
		case "HOOKWATCH_AUTOSTART":
			return "0"
		}
		return ""
	})
	if len(warn) > 0 {
		t.Fatal(warn)
	}
	return cfg
}

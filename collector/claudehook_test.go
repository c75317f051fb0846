package collector_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/sjson"

	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/ingest"
	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/sqlite"
	"github.com/hookwatch/hookwatch/store/storetest"
)

// TestClaudeHook: an http hook's payload is answered with the policy's
// decision, and stored, redacted, with the decision's audit record.
func TestClaudeHook(t *testing.T) {
	s := newServer(t, collector.Config{})
	home := t.TempDir()
	pol := `rules:
  - id: no-rm-rf
    description: never delete recursively
    tool: Bash
    when: 'tool_input.command contains "rm -rf"'
    action: deny
    reason: use git clean -n first
`
	if err := os.WriteFile(filepath.Join(home, "policy.yaml"), []byte(pol), 0o600); err != nil {
		t.Fatal(err)
	}
	s.Handle("POST /v1/hooks/claude", s.HandleClaudeHook(collector.ClaudeHookConfig{Home: home}))

	f := func(payload string, wantCode int, wantAnswer string) {
		t.Helper()
		code, body := s.do(t, "POST", "/v1/hooks/claude", []byte(payload), "Content-Type", "application/json")
		if code != wantCode || !strings.Contains(string(body), wantAnswer) || (wantAnswer == "" && len(body) != 0) {
			t.Errorf("POST %s = %d %s, want %d containing %q", payload, code, body, wantCode, wantAnswer)
		}
	}
	f(`{"session_id":"http-1","cwd":"/tmp","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"rm -rf / --token=ghp_abcdefghijklmnopqrstuvwxyz0123456789"},"tool_use_id":"toolu_1"}`,
		200, `"permissionDecision":"deny"`)
	f(`{"session_id":"http-1","cwd":"/tmp","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"toolu_2"}`,
		200, "")
	f(`not json`, 400, "JSON object")
	f(`[1]`, 400, "JSON object")

	page, err := s.db.Events(context.Background(), store.EventFilter{SessionID: "http-1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Events) != 2 {
		t.Fatalf("stored %d events, want 2", len(page.Events))
	}
	first := string(page.Events[0].Envelope)
	if !strings.Contains(first, `"no-rm-rf"`) || strings.Contains(first, "ghp_abcdefghijklmnopqrstuvwxyz0123456789") {
		t.Errorf("stored envelope lacks the decision or keeps the secret: %s", first)
	}
	var env struct{ Decision json.RawMessage }
	if err := json.Unmarshal(page.Events[1].Envelope, &env); err != nil || len(env.Decision) != 0 {
		t.Errorf("an event no rule answered carries a decision: %s", env.Decision)
	}
}

// TestClaudeHookHost posts real payloads as Claude Code's http handlers
// installed for a team server do: the host named in X-Hookwatch-Host (from
// HOOKWATCH_HOST) is recorded, not the collector's, and the token's user
// stays the events' user; without a usable header a request from loopback
// is this machine's.
func TestClaudeHookHost(t *testing.T) {
	db := sqlite.MustOpenDB(t)
	tok, secret := store.NewToken("ann", "", store.RoleUser, time.Now())
	if err := db.CreateToken(t.Context(), tok); err != nil {
		t.Fatal(err)
	}
	s := newServerOn(t, collector.Config{RequireAuth: true}, db)
	s.Handle("POST /v1/hooks/claude", s.HandleClaudeHook(collector.ClaudeHookConfig{Home: t.TempDir()}))
	local := ingest.LocalOrigin("").Host
	var payloads [][]byte
	for _, p := range storetest.Corpus(t) {
		if p.Runtime == event.RuntimeClaudeCode && strings.Contains(string(p.JSON), `"hook_event_name":"PreToolUse"`) {
			payloads = append(payloads, p.JSON)
		}
	}
	if len(payloads) < 4 {
		t.Fatalf("%d PreToolUse payloads in the corpus, want 4", len(payloads))
	}
	for i, c := range []struct{ header, want string }{
		{"laptop-7.corp.example", "laptop-7.corp.example"},
		{"$HOOKWATCH_HOST", local}, // the variable was not set
		{"", local},
		{"bad host\tname", local},
	} {
		sid := fmt.Sprintf("http-host-%d", i)
		payload, err := sjson.SetBytes(payloads[i], "session_id", sid)
		if err != nil {
			t.Fatal(err)
		}
		code, body := s.do(t, "POST", "/v1/hooks/claude", payload, "Content-Type", "application/json",
			"Authorization", "Bearer "+secret, "X-Hookwatch-Host", c.header)
		if code != 200 {
			t.Fatalf("POST with host %q: %d %s", c.header, code, body)
		}
		sess, err := db.Session(t.Context(), sid)
		if err != nil {
			t.Fatalf("host %q: %v", c.header, err)
		}
		if sess.Host != c.want || sess.User != "ann" {
			t.Errorf("X-Hookwatch-Host %q: session recorded on host %q as %q, want host %q as the token's user ann", c.header, sess.Host, sess.User, c.want)
		}
	}
}

// TestClaudeHookForeignSession: an http hook writing into another user's
// session is answered 200 with the policy's answer (an http hook never
// breaks the agent), stores nothing, and is counted on /metrics, where
// POST /v1/events would have answered 403.
func TestClaudeHookForeignSession(t *testing.T) {
	db := sqlite.MustOpenDB(t)
	var secrets []string
	for _, user := range []string{"ann", "bob"} {
		tok, secret := store.NewToken(user, "", store.RoleUser, time.Now())
		if err := db.CreateToken(t.Context(), tok); err != nil {
			t.Fatal(err)
		}
		secrets = append(secrets, secret)
	}
	const admin = "admin-secret-0123456789"
	s := newServerOn(t, collector.Config{Token: admin, RequireAuth: true}, db)
	s.Handle("POST /v1/hooks/claude", s.HandleClaudeHook(collector.ClaudeHookConfig{Home: t.TempDir()}))
	post := func(secret, prompt string) {
		t.Helper()
		payload := `{"session_id":"http-ann","cwd":"/tmp","hook_event_name":"UserPromptSubmit","prompt":"` + prompt + `"}`
		code, body := s.do(t, "POST", "/v1/hooks/claude", []byte(payload), "Authorization", "Bearer "+secret)
		if code != 200 {
			t.Fatalf("POST /v1/hooks/claude: %d %s, want 200", code, body)
		}
	}
	post(secrets[0], "ann's prompt")
	if got := metric(t, s, "hookwatch_http_hook_events_refused_total"); got != "0" {
		t.Fatalf("hookwatch_http_hook_events_refused_total is %s after the owner's event, want 0", got)
	}
	post(secrets[1], "bob's prompt")
	post(secrets[1], "bob's second prompt")
	if got := metric(t, s, "hookwatch_http_hook_events_refused_total"); got != "2" {
		t.Errorf("hookwatch_http_hook_events_refused_total is %s, want 2", got)
	}
	page, err := db.Events(t.Context(), store.EventFilter{SessionID: "http-ann"})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Events) != 1 || !strings.Contains(string(page.Events[0].Envelope), "ann's prompt") {
		t.Errorf("session http-ann holds %d events, want ann's alone", len(page.Events))
	}
}

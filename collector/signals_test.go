package collector_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/collector"
)

// TestSignals reads the signals of the real 2.1.197 capture through the
// API: its main agent read main.go and its go vet failed, once each.
func TestSignals(t *testing.T) {
	s := newServer(t, patient)
	envs := claudeCorpus(t)
	s.post(t, envs, len(envs), 0)
	s.settle(t)
	kinds := func(path string) string {
		t.Helper()
		var r collector.SignalsResponse
		s.getJSON(t, path, &r)
		var out []string
		for _, a := range r.Agents {
			for _, sig := range a.Signals {
				out = append(out, a.AgentID+":"+sig.Kind+":"+sig.Detail)
			}
		}
		return strings.Join(out, "; ")
	}
	base := "/v1/sessions/" + corpusMain + "/signals"
	if got := kinds(base); got != "" {
		t.Fatalf("default thresholds raise %q", got)
	}
	got := kinds(base + "?read_repeats=1&failed_repeats=1")
	for _, want := range []string{
		":" + attribution.SignalLoop + ":read /home/dev/src/demo/main.go once",
		":" + attribution.SignalLoop + ":Bash go vet ./... 2>&1; exit 3 failed once",
	} {
		if !strings.Contains(got, want) {
			t.Fatalf("signals %q lack %q", got, want)
		}
	}
	if code, body := s.do(t, http.MethodGet, base+"?read_repeats=0", nil); code != http.StatusBadRequest {
		t.Fatalf("read_repeats=0: %d %s", code, body)
	}
	if code, _ := s.do(t, http.MethodGet, "/v1/sessions/nope/signals", nil); code != http.StatusNotFound {
		t.Fatalf("unknown session: %d", code)
	}
}

// TestSignalPolicies: with the server's thresholds lowered to one, the
// capture's main agent is in a loop; a policy on agent.signals.loop,
// answered by the http hook, denies its next call and says why, while a
// session that raised nothing goes on. The API's thresholds are the
// server's.
func TestSignalPolicies(t *testing.T) {
	cfg := patient
	cfg.Signals = attribution.Thresholds{FailedRepeats: 1, ReadRepeats: 1}
	s := newServer(t, cfg)
	envs := claudeCorpus(t)
	s.post(t, envs, len(envs), 0)
	s.settle(t)
	home := t.TempDir()
	pol := `rules:
  - id: step-back
    event: PreToolUse
    when: agent.signals.loop or agent.failures_in_a_row >= 5
    action: deny
    reason: You are repeating a failing step; step back and try another approach.
`
	if err := os.WriteFile(filepath.Join(home, "policy.yaml"), []byte(pol), 0o600); err != nil {
		t.Fatal(err)
	}
	s.Handle("POST /v1/hooks/claude", s.HandleClaudeHook(collector.ClaudeHookConfig{Home: home}))
	f := func(session, want string) {
		t.Helper()
		payload := `{"session_id":"` + session + `","cwd":"/tmp","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"go vet ./..."},"tool_use_id":"toolu_new"}`
		code, body := s.do(t, "POST", "/v1/hooks/claude", []byte(payload), "Content-Type", "application/json")
		if code != http.StatusOK || !strings.Contains(string(body), want) || (want == "" && len(body) != 0) {
			t.Fatalf("session %s: %d %s, want %q", session, code, body, want)
		}
	}
	f(corpusMain, `"permissionDecisionReason":"You are repeating a failing step; step back and try another approach."`)
	f("fresh-session", "")

	var r collector.SignalsResponse
	s.getJSON(t, "/v1/sessions/"+corpusMain+"/signals", &r)
	if r.Thresholds != cfg.Signals.OrDefault() || len(r.Agents) == 0 || len(r.Agents[0].Signals) == 0 {
		t.Fatalf("signals at the server's thresholds: %+v", r)
	}
}

package e2ecodex

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/claudecode"
	"github.com/hookwatch/hookwatch/internal/fakeopenai"
	"github.com/hookwatch/hookwatch/internal/testbin"
)

// collector is `hookwatch serve` for one test, and the hook command that
// delivers to it.
type collector struct {
	*testbin.Collector
	hook string // the command Codex runs per event
	vars []string
}

// startCollector runs `hookwatch serve` with a fresh HOOKWATCH_HOME and
// env added to its environment; vars are what Codex (and so each hook)
// needs to deliver to it.
func startCollector(t *testing.T, env ...string) *collector {
	t.Helper()
	CodexBin(t) // skip before building anything
	bin, hook := testbin.Build(t, "./cmd/hookwatch"), testbin.Build(t, "./cmd/hookwatch-hook")
	home := t.TempDir()
	c := testbin.StartCollector(t, bin, home, "", env...)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("hookwatch serve output:\n%s", c.Log())
		}
	})
	return &collector{Collector: c, hook: claudecode.ShellHookCommand(hook),
		vars: []string{"HOOKWATCH_HOME=" + home, "HOOKWATCH_URL=" + c.URL()}}
}

// hookwatch runs the hookwatch binary with args in e's project and
// environment (HOME, CODEX_HOME, the collector's URL) and returns what it
// printed; it fails the test when the command fails.
func hookwatch(t *testing.T, e *Env, args ...string) string {
	t.Helper()
	cmd := exec.Command(testbin.Build(t, "./cmd/hookwatch"), args...)
	cmd.Dir, cmd.Env = e.Project, e.Environ()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("hookwatch %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	t.Logf("hookwatch %s:\n%s", strings.Join(args, " "), out)
	return string(out)
}

// newEnv returns a Codex installation whose hooks deliver to c.
func (c *collector) newEnv(t *testing.T, slug string, script fakeopenai.Script) *Env {
	t.Helper()
	e := New(t, slug, script, c.vars...)
	e.RegisterHooks(c.hook)
	return e
}

func (c *collector) get(t *testing.T, path string, v any) int {
	t.Helper()
	return testbin.GetJSON(t, c.URL()+path, v)
}

type (
	apiSession struct {
		ID              string         `json:"id"`
		Runtime         string         `json:"runtime"`
		Status          string         `json:"status"`
		Title           string         `json:"title"`
		Model           string         `json:"model"`
		ParentSessionID string         `json:"parent_session_id"`
		Lineage         string         `json:"lineage"`
		ChildSessionIDs []string       `json:"child_session_ids"`
		Counts          map[string]int `json:"counts"`
		EventCount      int64          `json:"event_count"`
		LastSeq         int64          `json:"last_seq"`
		DerivedSeq      int64          `json:"derived_seq"`
		Runs            []struct {
			Source string `json:"source"`
		} `json:"runs"`
		Compactions []struct {
			Trigger string `json:"trigger"`
		} `json:"compactions"`
	}
	apiAgent struct {
		AgentID        string  `json:"agent_id"`
		AgentType      *string `json:"agent_type"`
		ParentAgentID  *string `json:"parent_agent_id"`
		SpawnToolUseID string  `json:"spawn_tool_use_id"`
		Depth          int     `json:"depth"`
		Role           string  `json:"role"`
		ResolvedBy     string  `json:"resolved_by"`
		Nickname       string  `json:"nickname"`
		ToolCount      int     `json:"tool_count"`
	}
	apiCall struct {
		ToolUseID         string          `json:"tool_use_id"`
		AgentID           string          `json:"agent_id"`
		ToolName          string          `json:"tool_name"`
		Status            string          `json:"status"`
		StartedAt         time.Time       `json:"started_at"`
		EndedAt           *time.Time      `json:"ended_at"`
		DurationMS        *int64          `json:"duration_ms"`
		Error             string          `json:"error"`
		ExitCode          *int            `json:"exit_code"`
		Files             []apiFile       `json:"files"`
		ParentToolUseID   string          `json:"parent_tool_use_id"`
		Depth             int             `json:"depth"`
		SpawnedAgentID    string          `json:"spawned_agent_id"`
		Input             json.RawMessage `json:"input"`
		PermissionRequest *struct {
			MatchedBy string `json:"matched_by"`
		} `json:"permission_request"`
	}
	apiFile struct {
		Op   string `json:"op"`
		Path string `json:"path"`
	}
	apiEvent struct {
		Seq       int64  `json:"seq"`
		SessionID string `json:"session_id"`
		Event     string `json:"event"`
		AgentID   string `json:"agent_id"`
		// Copy and AlsoReadFrom: a rollout's record of what a hook
		// delivered too, and the hook's event it copies.
		Copy         bool     `json:"copy"`
		AlsoReadFrom []string `json:"also_read_from"`
		Envelope     struct {
			ID      string          `json:"id"`
			Kind    string          `json:"kind"`
			Runtime string          `json:"runtime"`
			Payload json.RawMessage `json:"payload"`
		} `json:"envelope"`
	}
)

func (c apiCall) String() string {
	d := "null"
	if c.DurationMS != nil {
		d = fmt.Sprint(*c.DurationMS)
	}
	x := "null"
	if c.ExitCode != nil {
		x = fmt.Sprint(*c.ExitCode)
	}
	return fmt.Sprintf("call %s %s agent %q status %s exit %s duration %s error %q", c.ToolUseID, c.ToolName, c.AgentID, c.Status, x, d, c.Error)
}

// mustGet is get of a path of session id that must answer 200.
func (c *collector) mustGet(t *testing.T, id, sub string, v any) {
	t.Helper()
	if code := c.get(t, "/v1/sessions/"+url.PathEscape(id)+sub, v); code != http.StatusOK {
		t.Fatalf("GET %s of %s: %d", sub, id, code)
	}
}

func (c *collector) session(t *testing.T, id string) (s apiSession) {
	t.Helper()
	c.mustGet(t, id, "", &s)
	return s
}

func (c *collector) agents(t *testing.T, id string) []apiAgent {
	t.Helper()
	var body struct {
		Agents []apiAgent `json:"agents"`
	}
	c.mustGet(t, id, "/agents", &body)
	return body.Agents
}

func (c *collector) toolCalls(t *testing.T, id string) []apiCall {
	t.Helper()
	var body struct {
		ToolCalls []apiCall `json:"tool_calls"`
	}
	c.mustGet(t, id, "/tool-calls?limit=1000", &body)
	return body.ToolCalls
}

func (c *collector) events(t *testing.T, id string) []apiEvent {
	t.Helper()
	var body struct {
		Events     []apiEvent `json:"events"`
		NextCursor string     `json:"next_cursor"`
	}
	c.mustGet(t, id, "/events?limit=1000", &body)
	if body.NextCursor != "" {
		t.Fatalf("more than 1000 events in %s", id)
	}
	return body.Events
}

// waitEvents waits until session id has n stored events, and returns them.
func (c *collector) waitEvents(t *testing.T, id string, n int) []apiEvent {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		// What the list says of an event besides the event itself (a copy,
		// what else reported it) is the model's: the events are taken
		// once the model had applied every one of them before they were
		// read (the session read first: an event stored between the two
		// reads may be listed before the model applied it).
		late := time.Now().After(deadline)
		var evs []apiEvent
		var s apiSession
		if c.get(t, "/v1/sessions/"+url.PathEscape(id), &s) == http.StatusOK {
			evs = c.events(t, id)
		}
		modelled := true
		for _, e := range evs {
			modelled = modelled && e.Seq <= s.DerivedSeq
		}
		if len(evs) >= n && modelled || late {
			return evs
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// fired counts, by event, the payloads of session id Codex handed the
// recorder hook.
func fired(e *Env, id string) (map[string]int, int) {
	m, n := map[string]int{}, 0
	for _, p := range e.Recorded() {
		if p["session_id"] == id {
			name, _ := p["hook_event_name"].(string)
			m[name]++
			n++
		}
	}
	return m, n
}

// countEvents counts the hook events by name (imported rollout events
// are not the hooks').
func countEvents(evs []apiEvent) map[string]int {
	m := map[string]int{}
	for _, e := range evs {
		if e.Envelope.Kind == "hook" {
			m[e.Event]++
		}
	}
	return m
}

// sameCounts fails unless the counts are equal.
func sameCounts(t *testing.T, what string, got, want map[string]int) {
	t.Helper()
	keys := map[string]bool{}
	for k := range got {
		keys[k] = true
	}
	for k := range want {
		keys[k] = true
	}
	var diff []string
	for k := range keys {
		if got[k] != want[k] {
			diff = append(diff, fmt.Sprintf("%s: %d, want %d", k, got[k], want[k]))
		}
	}
	sort.Strings(diff)
	if len(diff) > 0 {
		t.Errorf("%s: %s", what, strings.Join(diff, "; "))
	}
}

// sessionOf is the id of the session a rollout file holds (its name ends
// with the thread id).
func sessionOf(rollout string) string {
	b := strings.TrimSuffix(filepath.Base(rollout), ".jsonl")
	if len(b) < 36 {
		return ""
	}
	return b[len(b)-36:]
}

// rolloutEvents counts the stored events read from rollouts: tool events,
// session events (the prompts, a codex exec run's end) and token usage
// records (one a model response).
func rolloutEvents(evs []apiEvent) (tools, session, usage int) {
	for _, e := range evs {
		switch {
		case e.Envelope.Kind != "rollout":
		case e.Event == "TranscriptUsage":
			usage++
		case e.Event == "UserPromptSubmit" || e.Event == "SessionEnd":
			session++
		default:
			tools++
		}
	}
	return tools, session, usage
}

// checkUnwatched fails unless the session of a codex exec run with no
// hook installed, known from its rollout alone, has its prompt as title,
// the model, and ended with its turn.
func checkUnwatched(t *testing.T, s apiSession, prompt string) {
	t.Helper()
	if s.Runtime != "codex" || s.Title != prompt || s.Model != ModelClassic || s.Status != "ended" || s.Counts["prompts"] != 1 || s.Counts["events"] != 0 {
		t.Errorf("unwatched session %+v", s)
	}
}

// execUnwatched removes the hooks of e and runs prompt with codex exec, so
// that the rollout is all there is of the session; it returns the new
// session's id (the session before was known as before).
func execUnwatched(t *testing.T, e *Env, prompt, before string) string {
	t.Helper()
	if err := os.Remove(filepath.Join(e.CodexHome, "hooks.json")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // rollout names have second resolution
	if run := e.Exec(prompt); run.Err != nil {
		t.Fatalf("codex exec: %v\n%s", run.Err, run.Stderr)
	}
	rs := e.Rollouts()
	if len(rs) != 2 {
		t.Fatalf("rollouts %v", rs)
	}
	if id := sessionOf(rs[1]); id != before {
		return id
	}
	return sessionOf(rs[0])
}

// writePolicy makes policy the collector's user policy file.
func (c *collector) writePolicy(t *testing.T, policy string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(c.Home, "policy.yaml"), []byte(policy), 0o644); err != nil {
		t.Fatal(err)
	}
}

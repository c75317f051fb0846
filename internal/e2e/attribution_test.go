package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/internal/fakeclaude"
	"github.com/hookwatch/hookwatch/internal/serveproc"
	"github.com/hookwatch/hookwatch/internal/syncbuf"
	"github.com/hookwatch/hookwatch/internal/testbin"
)

// The attribution tests run the real client with the real hook binary
// (cmd/hookwatch-hook) delivering to a real collector (`hookwatch serve`,
// a subprocess on a loopback port), and the recorder hook registered beside
// it for every event. They check through the collector's HTTP API only:
// every payload the client handed a hook is stored exactly once, and the
// agents, tool calls and lineage the collector derived are what the client
// really did, as the scripted model's requests and replies show.
//
// One collector serves every scenario; each scenario has its own project
// directory, so its sessions form a lineage group of their own.

// collectorProc is `hookwatch serve` running for the test.
type collectorProc struct {
	url  string // base URL
	home string // HOOKWATCH_HOME of the collector and of the hooks
	hook string // the hookwatch-hook binary
	out  *syncbuf.Buffer
}

// startCollector starts `hookwatch serve [serveArgs]` on a free loopback port with a
// fresh HOOKWATCH_HOME and stops it (SIGTERM) when t ends.
func startCollector(t *testing.T, serveArgs ...string) *collectorProc {
	t.Helper()
	return startCollectorWith(t, nil, nil, serveArgs...)
}

// startCollectorWith is startCollector with more environment variables and
// files written into its HOOKWATCH_HOME first (a policy.yaml).
func startCollectorWith(t *testing.T, env []string, files map[string]string, serveArgs ...string) *collectorProc {
	t.Helper()
	bin, hook := testbin.Build(t, "./cmd/hookwatch"), testbin.Build(t, "./cmd/hookwatch-hook")
	home := t.TempDir()
	for name, content := range files {
		writeFile(t, filepath.Join(home, name), content)
	}
	out := &syncbuf.Buffer{}
	p, err := serveproc.Start(serveproc.Options{
		Bin: bin, Stdout: out, Stderr: out, Args: serveArgs,
		// A clean environment: nothing of the caller's HOOKWATCH_* applies.
		Env: append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "HOOKWATCH_HOME=" + home}, env...),
	})
	if err != nil {
		t.Fatalf("hookwatch serve did not become healthy: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if err := p.Stop(20 * time.Second); err != nil {
			t.Errorf("%v\n%s", err, out)
		}
		if t.Failed() {
			t.Logf("hookwatch serve output:\n%s", out)
			if log, err := os.ReadFile(filepath.Join(home, "hook.log")); err == nil {
				t.Logf("hook.log:\n%s", log)
			}
		}
	})
	return &collectorProc{url: p.URL(), home: home, hook: hook, out: out}
}

// get GETs an API path and decodes the JSON body into v; it returns the
// status code.
func (c *collectorProc) get(t *testing.T, path string, v any) int {
	t.Helper()
	return testbin.GetJSON(t, c.url+path, v)
}

// mustGet is get that wants 200.
func (c *collectorProc) mustGet(t *testing.T, path string, v any) {
	t.Helper()
	if code := c.get(t, path, v); code != http.StatusOK {
		t.Fatalf("GET %s: %d", path, code)
	}
}

// What the API answers, as a client reads it.
type (
	apiSession struct {
		ID              string   `json:"id"`
		Project         string   `json:"project"`
		CWD             string   `json:"cwd"`
		Title           string   `json:"title"`
		Status          string   `json:"status"`
		ParentSessionID string   `json:"parent_session_id"`
		Lineage         string   `json:"lineage"`
		ChildSessionIDs []string `json:"child_session_ids"`
		AliasSessionIDs []string `json:"alias_session_ids"`
		AliasOf         string   `json:"alias_of"`
		Runs            []struct {
			Source         string     `json:"source"`
			EndedAt        *time.Time `json:"ended_at"`
			ForkedTo       string     `json:"forked_to"`
			AliasSessionID string     `json:"alias_session_id"`
		} `json:"runs"`
		Compactions []struct {
			Trigger string `json:"trigger"`
			AgentID string `json:"agent_id"`
		} `json:"compactions"`
		Counts map[string]int `json:"counts"`
		Shape  *struct {
			Kind      string `json:"kind"`
			Subagents int    `json:"subagents"`
			Depth     int    `json:"depth"`
			Width     int    `json:"width"`
		} `json:"shape"`
		EventCount int64   `json:"event_count"`
		LastSeq    int64   `json:"last_seq"`
		DerivedSeq int64   `json:"derived_seq"`
		AgentID    *string `json:"agent_id"`
	}
	apiAgent struct {
		AgentID        string     `json:"agent_id"`
		AgentType      *string    `json:"agent_type"`
		ParentAgentID  *string    `json:"parent_agent_id"`
		SpawnToolUseID string     `json:"spawn_tool_use_id"`
		Depth          int        `json:"depth"`
		StartedAt      time.Time  `json:"started_at"`
		StoppedAt      *time.Time `json:"stopped_at"`
		Role           string     `json:"role"`
		ResolvedBy     string     `json:"resolved_by"`
		Description    string     `json:"description"`
		Events         int        `json:"events"`
		ToolCount      int        `json:"tool_count"`
	}
	apiCall struct {
		ToolUseID       string         `json:"tool_use_id"`
		AgentID         string         `json:"agent_id"`
		AgentType       *string        `json:"agent_type"`
		ToolName        string         `json:"tool_name"`
		Status          string         `json:"status"`
		StartedAt       time.Time      `json:"started_at"`
		EndedAt         *time.Time     `json:"ended_at"`
		DurationMS      *int64         `json:"duration_ms"`
		Error           string         `json:"error"`
		ParentToolUseID string         `json:"parent_tool_use_id"`
		Depth           int            `json:"depth"`
		SpawnedAgentID  string         `json:"spawned_agent_id"`
		Input           map[string]any `json:"input"`
	}
	apiEvent struct {
		Seq       int64  `json:"seq"`
		SessionID string `json:"session_id"`
		Event     string `json:"event"`
		AgentID   string `json:"agent_id"`
		// Kind is where the event came from: "hook", or "transcript"
		// for a record the collector read from the client's transcript
		// (which may tell of what a hook told of too: the model counts
		// it once).
		Kind string `json:"kind"`
		// TaskNotification: the collector's mark of a prompt the
		// client submitted itself.
		TaskNotification bool `json:"task_notification"`
		Envelope         struct {
			ID      string          `json:"id"`
			Payload json.RawMessage `json:"payload"`
		} `json:"envelope"`
	}
)

func (a apiAgent) String() string {
	typ := "<none>"
	if a.AgentType != nil {
		typ = fmt.Sprintf("%q", *a.AgentType)
	}
	parent := "<none>"
	if a.ParentAgentID != nil {
		parent = fmt.Sprintf("%q", *a.ParentAgentID)
	}
	return fmt.Sprintf("agent %q type %s parent %s spawn %q depth %d role %s by %s", a.AgentID, typ, parent,
		a.SpawnToolUseID, a.Depth, a.Role, a.ResolvedBy)
}

func (c apiCall) String() string {
	d := "null"
	if c.DurationMS != nil {
		d = fmt.Sprint(*c.DurationMS)
	}
	return fmt.Sprintf("call %s %s agent %q parent %q depth %d status %s duration %s error %q", c.ToolUseID, c.ToolName,
		c.AgentID, c.ParentToolUseID, c.Depth, c.Status, d, c.Error)
}

// events returns every stored event of session id, through the paged API.
func (c *collectorProc) events(t *testing.T, id string) []apiEvent {
	t.Helper()
	var out []apiEvent
	cursor := ""
	for range 1000 {
		var page struct {
			Events     []apiEvent `json:"events"`
			NextCursor string     `json:"next_cursor"`
		}
		code := c.get(t, "/v1/sessions/"+url.PathEscape(id)+"/events?limit=1000&cursor="+url.QueryEscape(cursor), &page)
		if code == http.StatusNotFound {
			return nil
		}
		if code != http.StatusOK {
			t.Fatalf("events of %s: %d", id, code)
		}
		out = append(out, page.Events...)
		if page.NextCursor == "" {
			return out
		}
		cursor = page.NextCursor
	}
	t.Fatal("event paging never ended")
	return nil
}

func (c *collectorProc) session(t *testing.T, id string) apiSession {
	t.Helper()
	var s apiSession
	c.mustGet(t, "/v1/sessions/"+url.PathEscape(id), &s)
	return s
}

func (c *collectorProc) agents(t *testing.T, id string) []apiAgent {
	t.Helper()
	var body struct {
		Agents []apiAgent `json:"agents"`
	}
	c.mustGet(t, "/v1/sessions/"+url.PathEscape(id)+"/agents", &body)
	return body.Agents
}

func (c *collectorProc) toolCalls(t *testing.T, id string) []apiCall {
	t.Helper()
	var out []apiCall
	cursor := ""
	for range 1000 {
		var page struct {
			ToolCalls  []apiCall `json:"tool_calls"`
			NextCursor string    `json:"next_cursor"`
		}
		c.mustGet(t, "/v1/sessions/"+url.PathEscape(id)+"/tool-calls?cursor="+url.QueryEscape(cursor), &page)
		out = append(out, page.ToolCalls...)
		if page.NextCursor == "" {
			return out
		}
		cursor = page.NextCursor
	}
	t.Fatal("tool call paging never ended")
	return nil
}

// attrEnv is a client installation whose hooks are hookwatch-hook,
// delivering to the shared collector, and the recorder.
type attrEnv struct {
	*Env
	t   *testing.T
	c   *collectorProc
	rec string // the recorder's file: every payload, one per line
}

func (c *collectorProc) newEnv(t *testing.T, cl Client) *attrEnv {
	t.Helper()
	rec := filepath.Join(t.TempDir(), "events.jsonl")
	a := &attrEnv{t: t, c: c, rec: rec}
	a.Env = New(t, cl, Hook{Command: c.hook},
		"HOOKWATCH_URL="+c.url, "HOOKWATCH_HOME="+c.home, "HOOKWATCH_AUTOSTART=0", "HOOKWATCH_E2E_RECORD="+rec)
	addRecorder(t, a.Settings)
	return a
}

// addRecorder registers the recorder beside the first handler of every
// hook group in the settings file: the client runs both for every event,
// with the first handler's timeout and async setting.
func addRecorder(t *testing.T, settingsPath string) {
	t.Helper()
	recorderHook := recorder(t)
	var settings map[string]any
	b, err := os.ReadFile(settingsPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &settings); err != nil {
		t.Fatal(err)
	}
	for _, groups := range settings["hooks"].(map[string]any) {
		g := groups.([]any)[0].(map[string]any)
		hooks := g["hooks"].([]any)
		h := map[string]any{}
		for k, v := range hooks[0].(map[string]any) {
			switch k {
			case "timeout", "async":
				h[k] = v
			}
		}
		h["type"], h["command"], h["args"] = "command", recorderHook.Command, recorderHook.Args
		g["hooks"] = append(hooks, h)
	}
	b, err = json.MarshalIndent(settings, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, settingsPath, string(b))
}

// recorded returns the payloads the recorder saw, in arrival order.
func (a *attrEnv) recorded() []event {
	a.t.Helper()
	r := &recorded{t: a.t, path: a.rec}
	return r.events()
}

// hookKey identifies a hook payload by what the hook must not change.
func hookKey(p map[string]any) string {
	str := func(k string) string {
		switch v := p[k].(type) {
		case nil:
			return "<none>"
		case string:
			return fmt.Sprintf("%q", v)
		default:
			b, _ := json.Marshal(v)
			return string(b)
		}
	}
	var b strings.Builder
	for _, k := range []string{"hook_event_name", "session_id", "agent_id", "agent_type", "tool_use_id", "tool_name",
		"prompt_id", "source", "reason", "trigger", "prompt", "last_assistant_message"} {
		b.WriteString(str(k))
		b.WriteByte('|')
	}
	return b.String()
}

// settle waits until the collector holds every payload the recorder saw,
// each exactly once and nothing else under those sessions, and the derived
// state of each session is current. It returns the session ids, in order
// of first appearance.
func (a *attrEnv) settle() []string {
	t := a.t
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var diff string
	for {
		recs := a.recorded()
		want := map[string]int{}
		var ids []string
		for _, ev := range recs {
			want[hookKey(ev)]++
			if id := ev.str("session_id"); !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
		got := map[string]int{}
		envIDs := map[string]bool{}
		dup := ""
		for _, id := range ids {
			for _, e := range a.c.events(t, id) {
				var p map[string]any
				if err := json.Unmarshal(e.Envelope.Payload, &p); err != nil {
					t.Fatalf("stored payload is not JSON: %s", e.Envelope.Payload)
				}
				got[hookKey(p)]++
				if envIDs[e.Envelope.ID] {
					dup = e.Envelope.ID
				}
				envIDs[e.Envelope.ID] = true
			}
		}
		if dup != "" {
			t.Fatalf("envelope %s listed twice", dup)
		}
		diff = multisetDiff(want, got)
		if diff == "" && len(recs) > 0 {
			// Derived state: every session current.
			fresh := true
			for _, id := range ids {
				if s := a.c.session(t, id); s.DerivedSeq != s.LastSeq {
					fresh = false
				}
			}
			if fresh {
				a.checkNoStrangers(ids)
				return ids
			}
			diff = "derived state not current"
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 60 s the collector still differs from what the client sent (- recorded only, + stored only):\n%s", diff)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// checkNoStrangers fails when the collector lists a session of this
// project that no recorded payload named.
func (a *attrEnv) checkNoStrangers(ids []string) {
	t := a.t
	t.Helper()
	var page struct {
		Sessions []apiSession `json:"sessions"`
	}
	a.c.mustGet(t, "/v1/sessions?limit=1000", &page)
	for _, s := range page.Sessions {
		if s.CWD == a.Project && !slices.Contains(ids, s.ID) {
			t.Fatalf("the collector lists session %s of this project, which no hook payload named", s.ID)
		}
	}
}

// multisetDiff describes how two multisets differ, "" when equal.
func multisetDiff(want, got map[string]int) string {
	var lines []string
	for k, n := range want {
		if got[k] != n {
			lines = append(lines, fmt.Sprintf("%+d %s", got[k]-n, k))
		}
	}
	for k, n := range got {
		if _, ok := want[k]; !ok {
			lines = append(lines, fmt.Sprintf("%+d %s", n, k))
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// replies returns the tool_use blocks the model answered conversation key
// with, in order.
func replies(reqs []fakeclaude.Request, key string) []fakeclaude.Block {
	var out []fakeclaude.Block
	for _, q := range turnRequests(reqs, key) {
		for _, b := range q.Reply {
			if b.IsToolUse() {
				out = append(out, b)
			}
		}
	}
	return out
}

// inputOf returns a string field of a reply block's input.
func inputOf(b fakeclaude.Block, key string) string {
	m, _ := b.Input.(map[string]any)
	s, _ := m[key].(string)
	return s
}

func callsByID(calls []apiCall) map[string]apiCall {
	m := map[string]apiCall{}
	for _, c := range calls {
		m[c.ToolUseID] = c
	}
	return m
}

func agentsByID(agents []apiAgent) map[string]apiAgent {
	m := map[string]apiAgent{}
	for _, a := range agents {
		m[a.AgentID] = a
	}
	return m
}

// checkCall fails unless the call ran to the given status with the given
// attribution, and has an end and a duration.
func checkCall(t *testing.T, c apiCall, tool, agent, parentCall string, depth int, status string) {
	t.Helper()
	if c.ToolName != tool || c.AgentID != agent || c.ParentToolUseID != parentCall || c.Depth != depth || c.Status != status {
		t.Fatalf("%v; want %s by agent %q (spawned by %q, depth %d), %s", c, tool, agent, parentCall, depth, status)
	}
	if c.EndedAt == nil || c.DurationMS == nil || *c.DurationMS < 0 || c.EndedAt.Before(c.StartedAt) {
		t.Fatalf("%v: no end or duration (ended %v)", c, c.EndedAt)
	}
}

// checkMain fails unless a is the main agent.
func checkMain(t *testing.T, a apiAgent) {
	t.Helper()
	if a.AgentID != "" || a.AgentType != nil || a.ParentAgentID != nil || a.Depth != 0 || a.Role != "main" || a.SpawnToolUseID != "" {
		t.Fatalf("main agent: %v", a)
	}
}

func TestAttribution(t *testing.T) {
	Clients(t) // skip (or fail in CI) before building anything
	c := startCollector(t)
	EachClient(t, func(t *testing.T, cl Client) { testAttribution(t, c, cl) })
}

// testAttribution plays each scenario with client cl, every one in a
// project of its own served by collector c.
func testAttribution(t *testing.T, c *collectorProc, cl Client) {

	t.Run("ToolKinds", func(t *testing.T) {
		t.Parallel()
		a := c.newEnv(t, cl)
		sc := ToolKinds(a.Project, a.WebURL)
		res := a.Play(sc)
		ids := a.settle()
		if len(ids) != 1 || ids[0] != res.SessionID {
			t.Fatalf("sessions %v, want only %s", ids, res.SessionID)
		}
		calls := a.c.toolCalls(t, res.SessionID)
		byID := callsByID(calls)
		blocks := replies(a.Model.Requests(), "[e2e:tool-kinds]")
		if len(calls) != len(blocks) || len(blocks) < 4 {
			t.Fatalf("%d tool calls, the model made %d: %v", len(calls), len(blocks), calls)
		}
		for _, b := range blocks {
			checkCall(t, byID[b.ID], b.Tool, "", "", 0, "ok")
		}
		agents := a.c.agents(t, res.SessionID)
		if len(agents) != 1 {
			t.Fatalf("agents %v, want the main agent only", agents)
		}
		checkMain(t, agents[0])
		s := a.c.session(t, res.SessionID)
		if s.Status != "ended" || s.Title != sc.Prompt || s.Counts["tool_calls"] != len(blocks) || s.Counts["failures"] != 0 ||
			s.Counts["agents"] != 1 || s.ParentSessionID != "" || s.Lineage != "" || s.Project == "" {
			t.Fatalf("session %+v", s)
		}
	})

	t.Run("FailingBash", func(t *testing.T) {
		t.Parallel()
		a := c.newEnv(t, cl)
		res := a.Play(FailingBash())
		a.settle()
		blocks := replies(a.Model.Requests(), "[e2e:failing-bash]")
		calls := a.c.toolCalls(t, res.SessionID)
		if len(blocks) != 1 || len(calls) != 1 || calls[0].ToolUseID != blocks[0].ID {
			t.Fatalf("calls %v, model calls %v", calls, blocks)
		}
		checkCall(t, calls[0], "Bash", "", "", 0, "error")
		if !strings.HasPrefix(calls[0].Error, "Exit code 3") {
			t.Fatalf("error %q", calls[0].Error)
		}
		if s := a.c.session(t, res.SessionID); s.Counts["failures"] != 1 || s.Status != "ended" {
			t.Fatalf("session counts %v status %s", s.Counts, s.Status)
		}
	})

	t.Run("PermissionDenials", func(t *testing.T) {
		t.Parallel()
		a := c.newEnv(t, cl)
		writeFile(t, filepath.Join(a.Project, ".claude", "settings.json"), DenyingSettings)
		writeFile(t, filepath.Join(a.Project, "secret.txt"), "s3cret\n")
		res := a.Play(PermissionDenials(a.Project))
		a.settle()
		blocks := replies(a.Model.Requests(), "[e2e:permission-denials]")
		calls := a.c.toolCalls(t, res.SessionID)
		if len(blocks) != 2 || len(calls) != 2 {
			t.Fatalf("calls %v, model calls %v", calls, blocks)
		}
		for _, got := range calls {
			if got.Status != "denied" || !strings.Contains(got.Error, "denied") {
				t.Errorf("%s %s: status %s error %q, want denied", got.ToolName, got.ToolUseID, got.Status, got.Error)
			}
		}
		if s := a.c.session(t, res.SessionID); s.Counts["denials"] != 2 || s.Counts["failures"] != 0 {
			t.Errorf("session counts %v, want 2 denials and no failure", s.Counts)
		}
	})

	t.Run("RejectedCall", func(t *testing.T) {
		t.Parallel()
		a := c.newEnv(t, cl)
		res := a.Play(RejectedCall())
		a.settle()
		blocks := replies(a.Model.Requests(), "[e2e:rejected-call]")
		calls := a.c.toolCalls(t, res.SessionID)
		if len(blocks) != 1 || len(calls) != 1 {
			t.Fatalf("calls %v, model calls %v", calls, blocks)
		}
		// The client refused the call before running it: no duration.
		got := calls[0]
		if got.ToolUseID != blocks[0].ID || got.ToolName != "Glob" || got.AgentID != "" || got.ParentToolUseID != "" ||
			got.Status != "rejected" || got.DurationMS != nil || got.EndedAt == nil || !strings.Contains(got.Error, "Glob") {
			t.Fatalf("%v", got)
		}
		if s := a.c.session(t, res.SessionID); s.Counts["rejected"] != 1 || s.Counts["tool_calls"] != 1 {
			t.Fatalf("session counts %v", s.Counts)
		}
	})

	t.Run("ParallelSubagents", func(t *testing.T) {
		t.Parallel()
		a := c.newEnv(t, cl)
		res := a.Play(ParallelSubagents(a.Project))
		a.settle()
		sid := res.SessionID
		reqs := a.Model.Requests()
		spawns := replies(reqs, "[e2e:parallel]")
		if len(spawns) != 3 {
			t.Fatalf("the model spawned %d agents", len(spawns))
		}
		agents := a.c.agents(t, sid)
		if len(agents) != 4 {
			t.Fatalf("agents %v, want the main agent and 3 subagents", agents)
		}
		checkMain(t, agents[0])
		calls := callsByID(a.c.toolCalls(t, sid))
		bySpawn := map[string]apiAgent{}
		var types []string
		for _, ag := range agents[1:] {
			if ag.ParentAgentID == nil || *ag.ParentAgentID != "" || ag.Depth != 1 || ag.Role != "subagent" || ag.StoppedAt == nil {
				t.Fatalf("subagent %v", ag)
			}
			bySpawn[ag.SpawnToolUseID] = ag
			types = append(types, *ag.AgentType)
		}
		slices.Sort(types)
		if !slices.Equal(types, []string{"Explore", "general-purpose", "general-purpose"}) {
			t.Fatalf("subagent types %v", types)
		}
		// Each Agent call spawned the agent of its type, which ran its
		// own Bash and Read.
		for i, b := range spawns {
			ag, ok := bySpawn[b.ID]
			if !ok || *ag.AgentType != inputOf(b, "subagent_type") || ag.Description != inputOf(b, "description") {
				t.Fatalf("Agent call %s (%s): spawned %v", b.ID, inputOf(b, "description"), ag)
			}
			checkCall(t, calls[b.ID], b.Tool, "", "", 0, "ok")
			if calls[b.ID].SpawnedAgentID != ag.AgentID {
				t.Fatalf("Agent call %s names %q as spawned, want %s", b.ID, calls[b.ID].SpawnedAgentID, ag.AgentID)
			}
			word := []string{"alpha", "beta", "gamma"}[i]
			var tools []string
			for _, tc := range calls {
				if tc.AgentID != ag.AgentID {
					continue
				}
				tools = append(tools, tc.ToolName)
				checkCall(t, tc, tc.ToolName, ag.AgentID, b.ID, 1, "ok")
				if tc.ToolName == "Bash" && tc.Input["command"] != "echo "+word {
					t.Fatalf("agent of %q ran %v", inputOf(b, "description"), tc.Input["command"])
				}
			}
			slices.Sort(tools)
			if !slices.Equal(tools, []string{"Bash", "Read"}) {
				t.Fatalf("agent %s called %v", ag.AgentID, tools)
			}
			// The subagent as a session of its own.
			v := a.c.session(t, "sub--"+ag.AgentID)
			if v.ParentSessionID != sid || v.Lineage != "subagent" || v.Counts["tool_calls"] != 2 || v.Status != "ended" {
				t.Fatalf("virtual session of %s: %+v", ag.AgentID, v)
			}
			if evs := a.c.events(t, "sub--"+ag.AgentID); len(evs) != ag.Events || len(evs) == 0 {
				t.Fatalf("virtual session of %s: %d events, want %d", ag.AgentID, len(evs), ag.Events)
			}
		}
		if s := a.c.session(t, sid); s.Counts["subagents"] != 3 || s.Counts["tool_calls"] != 9 {
			t.Fatalf("session counts %v", s.Counts)
		} else if s.Shape == nil || s.Shape.Kind != "fan_out" || s.Shape.Width != 3 || s.Shape.Depth != 1 {
			t.Fatalf("shape %+v, want a fan-out of 3", s.Shape)
		}
	})

	t.Run("NestedSubagents", func(t *testing.T) {
		t.Parallel()
		a := c.newEnv(t, cl)
		res := a.Play(NestedSubagents())
		a.settle()
		sid := res.SessionID
		agents := a.c.agents(t, sid)
		if len(agents) != NestedDepth+1 {
			t.Fatalf("agents %v, want %d levels below the main agent", agents, NestedDepth)
		}
		checkMain(t, agents[0])
		calls := a.c.toolCalls(t, sid)
		byID := callsByID(calls)
		// Walk down: at each level the agent was spawned by the Agent call
		// of the level above, which that agent made.
		parent := ""
		byAgent := agentsByID(agents)
		for depth := 1; depth <= NestedDepth; depth++ {
			var next *apiAgent
			for _, ag := range agents {
				if ag.ParentAgentID != nil && *ag.ParentAgentID == parent && ag.AgentID != "" {
					if next != nil {
						t.Fatalf("two agents spawned by %q: %v and %v", parent, *next, ag)
					}
					next = &ag
				}
			}
			if next == nil || next.Depth != depth || *next.AgentType != "general-purpose" || next.Role != "subagent" {
				t.Fatalf("no agent at depth %d below %q: %v", depth, parent, agents)
			}
			spawn := byID[next.SpawnToolUseID]
			checkCall(t, spawn, "Agent", parent, byAgent[parent].SpawnToolUseID, depth-1, "ok")
			if spawn.SpawnedAgentID != next.AgentID {
				t.Fatalf("%v spawned %q, want %s", spawn, spawn.SpawnedAgentID, next.AgentID)
			}
			parent = next.AgentID
		}
		var bash []apiCall
		for _, c := range calls {
			if c.ToolName == "Bash" {
				bash = append(bash, c)
			}
		}
		if len(bash) != 1 || bash[0].Input["command"] != "echo deepest" {
			t.Fatalf("Bash calls %v", bash)
		}
		checkCall(t, bash[0], "Bash", parent, byAgent[parent].SpawnToolUseID, NestedDepth, "ok")
		// The deepest agent's virtual session holds it and nothing above.
		var sub struct {
			Agents []apiAgent `json:"agents"`
		}
		a.c.mustGet(t, "/v1/sessions/sub--"+agents[1].AgentID+"/agents", &sub)
		if len(sub.Agents) != NestedDepth {
			t.Fatalf("the top subagent's tree has %d agents, want %d", len(sub.Agents), NestedDepth)
		}
		if s := a.c.session(t, sid).Shape; s == nil || s.Kind != "chain" || s.Depth != NestedDepth || s.Subagents != NestedDepth {
			t.Fatalf("shape %+v, want a chain of %d", s, NestedDepth)
		}
	})

	t.Run("Lifecycle", func(t *testing.T) {
		t.Parallel()
		a := c.newEnv(t, cl)
		lc := a.PlayLifecycle(Lifecycle())
		ids := a.settle()
		id, forked := lc.Start.SessionID, lc.Fork.SessionID
		if lc.Resume.SessionID != id || lc.Compact.SessionID != id || lc.Continue.SessionID != id || forked == id {
			t.Fatalf("session ids: start %s resume %s fork %s compact %s continue %s", id,
				lc.Resume.SessionID, lc.Fork.SessionID, lc.Compact.SessionID, lc.Continue.SessionID)
		}
		main, fork := a.c.session(t, id), a.c.session(t, forked)

		// Fork: a child session.
		if fork.ParentSessionID != id || fork.Lineage != "fork" || fork.Title != ForkPrompt || fork.Status != "ended" {
			t.Fatalf("forked session: %+v", fork)
		}
		if !slices.Equal(main.ChildSessionIDs, []string{forked}) || main.ParentSessionID != "" || main.Lineage != "" {
			t.Fatalf("main session lineage: %+v", main)
		}
		// Resume, the compaction's run and the continue: runs of the same
		// session. So is the run that forked on 2.1.197, whose fork starts
		// under the old id; a newer client starts it under the fork's. The
		// fork has one run either way.
		sources := func(s apiSession) []string {
			var out []string
			for _, r := range s.Runs {
				out = append(out, r.Source)
			}
			return out
		}
		mainRuns, continued := []string{"startup", "resume", "resume", "resume", "resume"}, 4
		if cl.ForksAsNewSession() {
			mainRuns, continued = []string{"startup", "resume", "resume", "resume"}, 3
		}
		if !slices.Equal(sources(main), mainRuns) || (!cl.ForksAsNewSession() && main.Runs[2].ForkedTo != forked) {
			t.Fatalf("main session runs %+v", main.Runs)
		}
		if got := sources(fork); !slices.Equal(got, []string{"fork"}) {
			t.Fatalf("forked session runs %+v, want one run, source fork", fork.Runs)
		}
		// Continue: the throwaway id the client used before switching to
		// the continued session is folded into it.
		var throwaways []string
		for _, other := range ids {
			if other == id || other == forked {
				continue
			}
			throwaways = append(throwaways, other)
			if s := a.c.session(t, other); s.AliasOf != id {
				t.Fatalf("session %s (a continue's throwaway id?) is not folded into %s: %+v", other, id, s)
			}
		}
		slices.Sort(throwaways)
		aliases := slices.Clone(main.AliasSessionIDs)
		slices.Sort(aliases)
		if !slices.Equal(aliases, throwaways) {
			t.Fatalf("aliases %v, throwaway ids %v", aliases, throwaways)
		}
		if len(throwaways) > 0 && main.Runs[continued].AliasSessionID == "" {
			t.Fatalf("the continue's run names no throwaway id: %+v", main.Runs[continued])
		}
		if main.Status != "ended" || main.Title != Lifecycle().Prompt {
			t.Fatalf("main session status %q title %q", main.Status, main.Title)
		}

		// Compaction: one compaction, done by the compaction agent, whose
		// type is "" (not absent).
		agents := a.c.agents(t, id)
		checkMain(t, agents[0])
		if len(agents) != 2 {
			t.Fatalf("agents %v, want the main agent and the compaction agent", agents)
		}
		compactor := agents[1]
		if compactor.AgentType == nil || *compactor.AgentType != "" || compactor.Role != "compaction" || compactor.Depth != 1 ||
			compactor.SpawnToolUseID != "" || compactor.StoppedAt == nil || compactor.ParentAgentID == nil || *compactor.ParentAgentID != "" {
			t.Fatalf("compaction agent: %v", compactor)
		}
		if len(main.Compactions) != 1 || main.Compactions[0].AgentID != compactor.AgentID || main.Compactions[0].Trigger != "manual" ||
			main.Counts["compactions"] != 1 {
			t.Fatalf("compactions %+v", main.Compactions)
		}

		// The session's one tool call, before all that.
		calls := a.c.toolCalls(t, id)
		blocks := replies(a.Model.Requests(), "[e2e:lifecycle]")
		if len(calls) != 1 || len(blocks) != 1 || calls[0].ToolUseID != blocks[0].ID {
			t.Fatalf("calls %v, the model made %v", calls, blocks)
		}
		checkCall(t, calls[0], "Bash", "", "", 0, "ok")
		if fc := a.c.toolCalls(t, forked); len(fc) != 0 {
			t.Fatalf("the fork made calls %v", fc)
		}
		// The fork beside its baseline, the session it was forked from.
		var cmp struct {
			Baseline *struct {
				SessionID string `json:"session_id"`
				B         struct {
					Via []string `json:"via"`
				} `json:"b"`
			} `json:"baseline"`
			Tools []struct {
				Name string `json:"name"`
				A, B int
			} `json:"tools"`
		}
		a.c.mustGet(t, "/v1/sessions/"+url.PathEscape(id)+"/compare/"+url.PathEscape(forked), &cmp)
		if cmp.Baseline == nil || cmp.Baseline.SessionID != id || !slices.Equal(cmp.Baseline.B.Via, []string{forked}) ||
			len(cmp.Tools) != 1 || cmp.Tools[0].Name != "Bash" || cmp.Tools[0].A != 1 || cmp.Tools[0].B != 0 {
			t.Fatalf("the fork compared with its baseline: %+v", cmp)
		}
		// Prompts: the start, the resume and the continue under the main
		// session, the fork's under the fork.
		prompts := 0
		for _, ev := range a.recorded() {
			if ev.name() == "UserPromptSubmit" && ev.str("session_id") == id {
				prompts++
			}
		}
		if main.Counts["prompts"] != prompts || prompts < 3 || fork.Counts["prompts"] != 1 {
			t.Fatalf("prompts: main %d (recorded %d), fork %d", main.Counts["prompts"], prompts, fork.Counts["prompts"])
		}
	})

	// Forks of one session, and a fork of a fork: every transcript of the
	// family holds the session's first message, so each fork must be told
	// from its siblings and its own forks. Each names the session it was
	// forked from, and each session lists exactly its own forks.
	t.Run("ForkFamily", func(t *testing.T) {
		t.Parallel()
		a := c.newEnv(t, cl)
		x := a.Play(Lifecycle()).SessionID
		y := a.Fork(x, ForkPrompt).SessionID
		z := a.Fork(x, ForkPrompt).SessionID
		w := a.Fork(y, ForkPrompt).SessionID
		a.settle()
		for _, s := range []struct {
			id, parent string
			children   []string
		}{{x, "", []string{y, z}}, {y, x, []string{w}}, {z, x, nil}, {w, y, nil}} {
			got := a.c.session(t, s.id)
			children := slices.Clone(got.ChildSessionIDs)
			slices.Sort(children)
			slices.Sort(s.children)
			if got.ParentSessionID != s.parent || !slices.Equal(children, s.children) {
				t.Errorf("session %s: parent %q, forks %v; want parent %q, forks %v (x %s, y %s, z %s, w %s)",
					s.id, got.ParentSessionID, got.ChildSessionIDs, s.parent, s.children, x, y, z, w)
			}
		}
	})
}

package e2e

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/internal/fakeclaude"
)

// apiBackground is what the background test reads of agents and calls
// beyond apiAgent and apiCall.
type apiBackground struct {
	AgentID            string         `json:"agent_id"`
	Description        string         `json:"description"`
	SpawnedAgentID     string         `json:"spawned_agent_id"`
	ToolUseID          string         `json:"tool_use_id"`
	Background         bool           `json:"background"`
	NotifiedAt         *time.Time     `json:"notified_at"`
	NotificationStatus string         `json:"notification_status"`
	StoppedAt          *time.Time     `json:"stopped_at"`
	EndedAt            *time.Time     `json:"ended_at"`
	Status             string         `json:"status"`
	Input              map[string]any `json:"input"`
}

// TestBackgroundSubagents runs two subagents spawned in parallel, the slow
// one held by the model, and follows the session through the API while it
// runs. A client that launches them in the background (from 2.1.332) has
// the slow one held until the main agent has stopped: the spawning calls
// end at once, the session waits on background work while the slow agent
// runs on, the client's task notifications are no prompts, and both agents
// end marked by their notification. An older client runs them in the
// foreground, the main agent waiting: the slow one is held while the
// session runs, and the spawning calls end after their agents, none of
// them background, with no notification.
func TestBackgroundSubagents(t *testing.T) {
	Clients(t) // skip (or fail in CI) before building anything
	c := startCollector(t)
	EachClient(t, func(t *testing.T, cl Client) { testBackgroundSubagents(t, c, cl) })
}

func testBackgroundSubagents(t *testing.T, c *collectorProc, cl Client) {
	bg := cl.RunsAgentsInBackground()
	a := c.newEnv(t, cl)
	a.Timeout = 4 * time.Minute

	release := make(chan struct{})
	const prompt = "[e2e:background] survey in the background"
	sub := func(name string, hold bool) []fakeclaude.Turn {
		return []fakeclaude.Turn{
			func(*fakeclaude.Request) []fakeclaude.Block {
				if hold {
					select {
					case <-release:
					case <-time.After(2 * time.Minute):
					}
				}
				return []fakeclaude.Block{fakeclaude.ToolUse("Bash", input{"command": "echo " + name, "description": "Say " + name})}
			},
			fakeclaude.Reply(fakeclaude.Text(name + " finished")),
		}
	}
	a.Model.SetScript(fakeclaude.Script{
		"[e2e:background]": {
			func(r *fakeclaude.Request) []fakeclaude.Block {
				return []fakeclaude.Block{
					fakeclaude.Text("Two agents at once."),
					spawn(r, "general-purpose", "fast survey", "[e2e:bg-fast] survey quickly"),
					spawn(r, "general-purpose", "slow survey", "[e2e:bg-slow] survey slowly"),
				}
			},
			fakeclaude.Reply(fakeclaude.Text("Both are running.")),
		},
		"[e2e:bg-fast]": sub("fast", false),
		"[e2e:bg-slow]": sub("slow", true),
	})

	type result struct {
		res Result
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := a.RunContext(context.Background(), prompt)
		done <- result{res, err}
	}()

	// The session's id is in the first payload the client sent.
	var id string
	deadline := time.Now().Add(90 * time.Second)
	for id == "" {
		if evs := a.recorded(); len(evs) > 0 {
			id = evs[0].str("session_id")
		}
		if time.Now().After(deadline) {
			close(release)
			t.Fatalf("no hook payload after 90 s: %v", <-done)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// While the slow agent is held (the fast one has stopped), the session
	// waits on it: on background work, or running while the main agent
	// waits for the call.
	waiting := "running"
	if bg {
		waiting = "background"
	}
	var statuses []string
	note := func(s string) {
		if n := len(statuses); n == 0 || statuses[n-1] != s {
			statuses = append(statuses, s)
		}
	}
	var slow apiBackground
	for {
		if st := c.get(t, "/v1/sessions/"+url.PathEscape(id), nil); st == 200 {
			s := c.session(t, id)
			note(s.Status)
			if s.Status == waiting {
				var running, stopped []apiBackground
				for _, ag := range backgroundAgents(t, c, id) {
					switch {
					case ag.AgentID == "":
					case ag.StoppedAt == nil:
						running = append(running, ag)
					default:
						stopped = append(stopped, ag)
					}
				}
				if len(running) == 1 && len(stopped) == 1 {
					slow = running[0]
					break
				}
			}
		}
		if time.Now().After(deadline) {
			close(release)
			t.Fatalf("the session never waited on the slow agent (%s): statuses %v", waiting, statuses)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if slow.Background != bg {
		t.Errorf("the slow agent, still running, is marked background %v, want %v: %+v", slow.Background, bg, slow)
	}
	var spawning apiBackground
	var calls struct {
		ToolCalls []apiBackground `json:"tool_calls"`
	}
	c.mustGet(t, "/v1/sessions/"+url.PathEscape(id)+"/tool-calls", &calls)
	for _, call := range calls.ToolCalls {
		if call.Input["description"] == "slow survey" {
			spawning = call
		}
	}
	switch {
	case bg && (spawning.Status != "ok" || spawning.EndedAt == nil):
		t.Errorf("the slow agent's spawning call has not returned while the agent runs: %+v", spawning)
	case !bg && (spawning.ToolUseID == "" || spawning.EndedAt != nil):
		t.Errorf("the slow agent's spawning call has returned while the agent runs: %+v", spawning)
	}

	close(release)
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	a.settle()
	note(c.session(t, id).Status)

	s := c.session(t, id)
	notes := 0
	for _, ev := range a.recorded() {
		if ev.str("hook_event_name") == "UserPromptSubmit" && strings.HasPrefix(ev.str("prompt"), "<task-notification>") {
			notes++
		}
	}
	if s.Status != "ended" || s.Title != prompt || s.Counts["prompts"] != 1 || (notes == 0) == bg || s.Counts["task_notifications"] != notes {
		t.Fatalf("session: status %s title %q counts %v; %d notifications recorded", s.Status, s.Title, s.Counts, notes)
	}
	// The events API marks the same prompts, for the views that draw
	// prompts.
	marked := 0
	for _, ev := range c.events(t, id) {
		if ev.TaskNotification {
			marked++
		}
	}
	if marked != notes {
		t.Errorf("%d events marked as task notifications, %d recorded", marked, notes)
	}
	// Spans: in the background each spawning call returned while its agent
	// ran on, in the foreground after its agent stopped; each agent's own
	// Bash call is its own.
	all := c.toolCalls(t, id)
	ended := map[string]*time.Time{}
	for _, call := range all {
		if call.SpawnedAgentID != "" {
			if call.Status != "ok" || call.AgentID != "" {
				t.Errorf("spawning call %v", call)
			}
			ended[call.SpawnedAgentID] = call.EndedAt
		}
	}
	subs := 0
	for _, ag := range backgroundAgents(t, c, id) {
		if ag.AgentID == "" {
			continue
		}
		subs++
		e := ended[ag.AgentID]
		if e == nil || ag.StoppedAt == nil || e.Before(*ag.StoppedAt) != bg {
			t.Errorf("agent %s stopped at %v, its spawning call ended at %v: want the call first %v", ag.AgentID, ag.StoppedAt, e, bg)
		}
		bash := 0
		for _, call := range all {
			if call.AgentID == ag.AgentID && call.ToolName == "Bash" && call.Status == "ok" && call.Depth == 1 {
				bash++
			}
		}
		if bash != 1 {
			t.Errorf("agent %s made %d Bash calls, want 1: %v", ag.AgentID, bash, all)
		}
		switch {
		case bg && (!ag.Background || ag.StoppedAt == nil || ag.NotificationStatus != "completed" || ag.NotifiedAt == nil || ag.NotifiedAt.Before(*ag.StoppedAt)):
			t.Errorf("agent %+v: want background, stopped, then notified completed", ag)
		case !bg && (ag.Background || ag.NotifiedAt != nil || ag.NotificationStatus != ""):
			t.Errorf("agent %+v: want a foreground agent, never notified", ag)
		}
	}
	if subs != 2 {
		t.Fatalf("%d subagents, want 2", subs)
	}
	// Through time: running (when the poll is quick enough to see it),
	// waiting on the slow agent, ended; nothing else in between.
	if !slices.Contains(statuses, waiting) || statuses[len(statuses)-1] != "ended" {
		t.Fatalf("statuses through time %v", statuses)
	}
	for _, st := range statuses {
		if st != "running" && st != waiting && st != "ended" {
			t.Fatalf("statuses through time %v", statuses)
		}
	}
	t.Logf("statuses through time: %v", statuses)
}

// backgroundAgents returns the agents of session id as the background test
// reads them.
func backgroundAgents(t *testing.T, c *collectorProc, id string) []apiBackground {
	t.Helper()
	var body struct {
		Agents []apiBackground `json:"agents"`
	}
	c.mustGet(t, "/v1/sessions/"+url.PathEscape(id)+"/agents", &body)
	return body.Agents
}

package e2e

import (
	"context"
	"net/url"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/internal/fakeclaude"
)

// clientVersion returns the version `claude --version` reports, as
// [major, minor, patch], or nil when it cannot tell.
func clientVersion(t *testing.T, bin string) []int {
	t.Helper()
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		return nil
	}
	m := regexp.MustCompile(`(\d+)\.(\d+)\.(\d+)`).FindStringSubmatch(string(out))
	if m == nil {
		return nil
	}
	v := make([]int, 3)
	for i := range v {
		v[i], _ = strconv.Atoi(m[i+1])
	}
	return v
}

// before reports whether version v is older than w.
func before(v, w []int) bool {
	for i := range w {
		if v[i] != w[i] {
			return v[i] < w[i]
		}
	}
	return false
}

// apiBackground is what the background test reads of agents and calls
// beyond apiAgent and apiCall.
type apiBackground struct {
	AgentID            string     `json:"agent_id"`
	Description        string     `json:"description"`
	SpawnedAgentID     string     `json:"spawned_agent_id"`
	ToolUseID          string     `json:"tool_use_id"`
	Background         bool       `json:"background"`
	NotifiedAt         *time.Time `json:"notified_at"`
	NotificationStatus string     `json:"notification_status"`
	StoppedAt          *time.Time `json:"stopped_at"`
	EndedAt            *time.Time `json:"ended_at"`
	Status             string     `json:"status"`
}

// TestBackgroundSubagents runs two subagents the client (from 2.1.332)
// launches in the background, the slow one held by the model until the
// main agent has stopped, and follows the session through the API while it
// runs: the spawning calls end at once, the session waits on background
// work while the slow agent runs on, the client's task notifications are
// no prompts, and both agents end marked by their notification.
func TestBackgroundSubagents(t *testing.T) {
	bin := ClaudeBin(t)
	if v := clientVersion(t, bin); v == nil || before(v, []int{2, 1, 332}) {
		t.Skipf("the client at %s (version %v) runs no subagent in the background", bin, v)
	}
	c := startCollector(t)
	a := c.newEnv(t)
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

	// While the slow agent is held, the session waits on it.
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
			if s.Status == "background" {
				for _, ag := range backgroundAgents(t, c, id) {
					if ag.Description == "slow survey" {
						slow = ag
					}
				}
				if slow.AgentID != "" && slow.StoppedAt == nil {
					break
				}
			}
		}
		if time.Now().After(deadline) {
			close(release)
			t.Fatalf("the session never waited on background work: statuses %v", statuses)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !slow.Background {
		t.Errorf("the slow agent, still running, is not marked background: %+v", slow)
	}
	var spawning apiBackground
	var calls struct {
		ToolCalls []apiBackground `json:"tool_calls"`
	}
	c.mustGet(t, "/v1/sessions/"+url.PathEscape(id)+"/tool-calls", &calls)
	for _, call := range calls.ToolCalls {
		if call.SpawnedAgentID == slow.AgentID {
			spawning = call
		}
	}
	if spawning.Status != "ok" || spawning.EndedAt == nil {
		t.Errorf("the slow agent's spawning call has not returned while the agent runs: %+v", spawning)
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
	if s.Status != "ended" || s.Title != prompt || s.Counts["prompts"] != 1 || notes == 0 || s.Counts["task_notifications"] != notes {
		t.Fatalf("session: status %s title %q counts %v; %d notifications recorded", s.Status, s.Title, s.Counts, notes)
	}
	// Spans: each spawning call returned while its agent ran on; each
	// agent's own Bash call is its own.
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
		if e := ended[ag.AgentID]; e == nil || ag.StoppedAt == nil || !e.Before(*ag.StoppedAt) {
			t.Errorf("agent %s stopped at %v, its spawning call ended at %v: want the call first", ag.AgentID, ag.StoppedAt, e)
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
		if !ag.Background || ag.StoppedAt == nil || ag.NotificationStatus != "completed" || ag.NotifiedAt == nil || ag.NotifiedAt.Before(*ag.StoppedAt) {
			t.Errorf("agent %+v: want background, stopped, then notified completed", ag)
		}
	}
	if subs != 2 {
		t.Fatalf("%d subagents, want 2", subs)
	}
	// Through time: running (when the poll is quick enough to see it),
	// waiting on the slow agent, ended; nothing else in between.
	if !slices.Contains(statuses, "background") || statuses[len(statuses)-1] != "ended" {
		t.Fatalf("statuses through time %v", statuses)
	}
	for _, st := range statuses {
		if st != "running" && st != "background" && st != "ended" {
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

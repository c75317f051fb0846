package attribution

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/event"
)

// notification is the prompt 2.1.332 submits when background subagent
// agentID, spawned by call toolUseID, ends.
func notification(agentID, toolUseID, status string) ev {
	return prompt(fmt.Sprintf("<task-notification>\n<task-id>%s</task-id>\n<tool-use-id>%s</tool-use-id>\n"+
		"<output-file>/tmp/tasks/%s.output</output-file>\n<status>%s</status>\n<summary>Agent \"x\" finished</summary>\n"+
		"<result>done</result>\n</task-notification>", agentID, toolUseID, agentID, status))
}

// stop is the main agent's Stop listing running background subagents.
func stop(running ...string) ev {
	tasks := []any{}
	for _, id := range running {
		tasks = append(tasks, map[string]any{"id": id, "type": "subagent", "status": "running", "description": "d", "agent_type": "worker"})
	}
	return ev{"hook_event_name": "Stop", "last_assistant_message": "ok", "background_tasks": tasks, "session_crons": []any{}}
}

var async = map[string]any{"isAsync": true, "status": "async_launched", "agentId": "", "outputFile": "/tmp/x.output"}

func launched(id, agentID string) ev {
	r := map[string]any{}
	for k, v := range async {
		r[k] = v
	}
	r["agentId"] = agentID
	return spawned(id, "worker", r)
}

// statuses applies envs one at a time to a Group and returns the session's
// status after each, space separated.
func statuses(t *testing.T, envs []event.Envelope, session string) string {
	t.Helper()
	g := NewGroup()
	var out []string
	for _, e := range envs {
		g.Apply(e)
		st := "-"
		if s := g.Session(session); s != nil {
			st = s.Status
		}
		out = append(out, st)
	}
	return strings.Join(out, " ")
}

// checkOrders checks that envs give Build's model whatever the order and
// batches they arrive in.
func checkOrders(t *testing.T, envs []event.Envelope) {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, uint64(len(envs))))
	for i := range 10 {
		checkGroup(t, fmt.Sprintf("shuffled %d", i), envs, batches(rng, shuffled(rng, envs), 1+rng.IntN(len(envs))))
	}
}

func TestSessionBackgroundStatus(t *testing.T) {
	f := func(name string, evs []ev, want string) {
		t.Helper()
		envs := stream(t, evs...)
		if got := statuses(t, envs, "s1"); got != want {
			t.Fatalf("%s: statuses\n got %s\nwant %s", name, got, want)
		}
		checkOrders(t, envs)
	}
	// Two background subagents; the main agent stops while both run, is
	// woken by the first one's notification, stops again while the second
	// still runs, and is idle once it stopped.
	f("two background subagents", []ev{
		sessionStart("startup"), prompt("go"),
		spawn("t1", "worker"), spawn("t2", "worker"),
		subStart("a1", "worker"), launched("t1", "a1"),
		subStart("a2", "worker"), launched("t2", "a2"),
		stop("a1", "a2"),
		subStop("a2", "worker"),
		notification("a2", "t2", "completed"),
		stop("a1"),
		subStop("a1", "worker"),
		notification("a1", "t1", "completed"),
		stop(),
		sessionEnd("other"),
	}, "running running running running running running running running background background running background running running running ended")
	// The wait ends when the listed agents stopped, even before the
	// notification; an agent never seen counts as running.
	f("listed agent unseen", []ev{sessionStart("startup"), stop("a9"), subStart("a9", "worker"), subStop("a9", "worker")},
		"running background background running")
	// A prompt of the user, StopFailure or a new run end the wait.
	f("user prompt", []ev{sessionStart("startup"), stop("a1"), prompt("more")}, "running background running")
	f("stop failure", []ev{sessionStart("startup"), stop("a1"), {"hook_event_name": "StopFailure", "error": "rate_limit"}},
		"running background failed")
	f("resumed", []ev{sessionStart("startup"), stop("a1"), sessionStart("resume")}, "running background running")
	f("ended", []ev{sessionStart("startup"), stop("a1"), sessionEnd("other")}, "running background ended")
	// A subagent's Stop-like event lists the background tasks too: it is
	// not the main agent's turn.
	f("subagent stop lists tasks", []ev{sessionStart("startup"), subStart("a2", "worker"),
		subStop("a2", "worker").with("background_tasks", []any{map[string]any{"id": "a1", "type": "subagent", "status": "running"}})},
		"running running running")
	// Entries that are not running subagents do not keep it waiting.
	f("other tasks", []ev{sessionStart("startup"), stop().with("background_tasks", []any{
		map[string]any{"id": "b1", "type": "shell", "status": "running"},
		map[string]any{"id": "a1", "type": "subagent", "status": "completed"}, "junk", 3})},
		"running running")
}

func TestTaskNotification(t *testing.T) {
	evs := []ev{
		sessionStart("startup"),
		notification("a1", "t1", "completed"), // before anything: not a title
		prompt("the user's prompt"),
		spawn("t1", "worker"), subStart("a1", "worker"), launched("t1", "a1"),
		stop("a1"), subStop("a1", "worker"),
		notification("a1", "t1", "completed"),
		notification("a1", "t1", "failed"), // the same task may notify again
		notification("a7", "t7", "completed"),
	}
	envs := stream(t, evs...)
	s := only(t, Build(envs))
	if s.Counts.Prompts != 1 || s.Counts.TaskNotifications != 4 || s.Title != "the user's prompt" {
		t.Fatalf("prompts %d, notifications %d, title %q", s.Counts.Prompts, s.Counts.TaskNotifications, s.Title)
	}
	a, c := agentOf(t, s, "a1"), callOf(t, s, "t1")
	when := at(len(evs) - 2)
	if !a.Background || a.NotificationStatus != "failed" || a.NotifiedAt == nil || !a.NotifiedAt.Equal(when) {
		t.Fatalf("agent: background %v, notified %v %q", a.Background, a.NotifiedAt, a.NotificationStatus)
	}
	if c.Status != StatusOK || c.NotificationStatus != "failed" || c.NotifiedAt == nil || !c.NotifiedAt.Equal(when) {
		t.Fatalf("call: %s, notified %v %q", c.Status, c.NotifiedAt, c.NotificationStatus)
	}
	// The call spawning the agent ended when it returned; the agent later.
	if !c.EndedAt.Before(*a.StoppedAt) {
		t.Fatalf("call ended %v, agent stopped %v", c.EndedAt, a.StoppedAt)
	}
	// A notification of an unknown agent makes no agent.
	if s.Counts.Agents != 2 {
		t.Fatalf("%d agents", s.Counts.Agents)
	}
	checkOrders(t, envs)
}

func TestBackgroundAgent(t *testing.T) {
	f := func(name string, evs []ev, want bool) {
		t.Helper()
		envs := stream(t, append([]ev{sessionStart("startup")}, evs...)...)
		if got := agentOf(t, only(t, Build(envs)), "a1").Background; got != want {
			t.Fatalf("%s: background %v, want %v", name, got, want)
		}
		checkOrders(t, envs)
	}
	f("async response", []ev{spawn("t1", "worker"), subStart("a1", "worker"), launched("t1", "a1")}, true)
	f("async response as text", []ev{spawn("t1", "worker"), subStart("a1", "worker"),
		spawned("t1", "worker", `{"isAsync":true,"agentId":"a1"}`)}, true)
	f("listed by a Stop", []ev{subStart("a1", "worker"), stop("a1")}, true)
	f("named by a notification", []ev{subStart("a1", "worker"), notification("a1", "t1", "completed")}, true)
	f("synchronous", []ev{spawn("t1", "worker"), subStart("a1", "worker"), subStop("a1", "worker"),
		spawned("t1", "worker", map[string]any{"status": "completed", "agentId": "a1"})}, false)
	f("preview of an async response", []ev{spawn("t1", "worker"), subStart("a1", "worker"),
		spawned("t1", "worker", map[string]any{"hookwatch_capture": "preview", "agentId": "a1", "head": `{"isAsync":true,"status":"async_launched","agentId":"a1"`})}, true)
}

func TestParseTaskNotification(t *testing.T) {
	f := func(prompt string, want taskNotification, wantOK bool) {
		t.Helper()
		got, ok := parseTaskNotification(prompt)
		if ok != wantOK || got != want {
			t.Fatalf("%q: %+v %v, want %+v %v", prompt, got, ok, want, wantOK)
		}
	}
	f("<task-notification>\n<task-id>a1</task-id>\n<tool-use-id>t1</tool-use-id>\n<status>completed</status>\n<summary> s </summary>\n</task-notification>",
		taskNotification{TaskID: "a1", ToolUseID: "t1", Status: "completed", Summary: "s"}, true)
	f("  <task-notification><task-id>a1</task-id>", taskNotification{TaskID: "a1"}, true)
	f("<task-notification><status>completed</status></task-notification>", taskNotification{Status: "completed"}, false)
	f("please read <task-notification><task-id>a1</task-id></task-notification>", taskNotification{}, false)
	f("<task-notification></task-notification><task-id>a1</task-id>", taskNotification{}, false)
	f("<task-notification><task-id>"+strings.Repeat("x", maxTag+1)+"</task-id>", taskNotification{}, false)
	f("", taskNotification{}, false)
}

func TestResumeStats(t *testing.T) {
	f := func(name string, evs []ev, runs []string, session string) {
		t.Helper()
		envs := stream(t, evs...)
		s := only(t, Build(envs))
		show := func(r *ResumeStats) string {
			if r == nil {
				return "nil"
			}
			v := func(p any) string {
				switch p := p.(type) {
				case *int64:
					if p != nil {
						return fmt.Sprint(*p)
					}
				case *float64:
					if p != nil {
						return fmt.Sprint(*p)
					}
				case *bool:
					if p != nil {
						return fmt.Sprint(*p)
					}
				}
				return "-"
			}
			return v(r.ContextTokens) + "/" + v(r.SecondsSinceLastResponse) + "/" + v(r.PromptCacheLikelyExpired) + "/" + v(r.EstimatedCacheWriteUSD)
		}
		var got []string
		for _, r := range s.Runs {
			got = append(got, show(r.Resume))
		}
		if strings.Join(got, " ") != strings.Join(runs, " ") || show(s.Resume) != session {
			t.Fatalf("%s: runs %v session %s; want %v %s", name, got, show(s.Resume), runs, session)
		}
		checkOrders(t, envs)
	}
	resume := func(tokens, secs, expired, usd any) ev {
		return sessionStart("resume").with("context_tokens", tokens, "seconds_since_last_response", secs,
			"prompt_cache_likely_expired", expired, "estimated_cache_write_usd", usd)
	}
	f("latest figures", []ev{sessionStart("startup"), sessionEnd("other"), resume(15, 0, false, 0.0001), sessionEnd("other"),
		resume(2597, 4000, true, 0.013), prompt("go")},
		[]string{"nil", "15/0/false/0.0001", "2597/4000/true/0.013"}, "2597/4000/true/0.013")
	// A run without figures keeps the latest that had some.
	f("older client", []ev{resume(10, 1, false, 0.5), sessionEnd("other"), sessionStart("resume")},
		[]string{"10/1/false/0.5", "nil"}, "10/1/false/0.5")
	// Hostile figures are dropped one by one.
	f("hostile", []ev{resume("many", -3, "yes", json.RawMessage("1e400"))}, []string{"-/-/-/-"}, "-/-/-/-")
	f("partial", []ev{resume(nil, nil, true, nil)}, []string{"-/-/true/-"}, "-/-/true/-")
	// The compact SessionStart makes no run.
	f("compact", []ev{sessionStart("startup"), sessionStart("compact").with("context_tokens", 9)}, []string{"nil"}, "nil")
}

func TestCompactionAgents(t *testing.T) {
	f := func(name string, evs []ev, want [][]string) {
		t.Helper()
		envs := stream(t, evs...)
		s := only(t, Build(envs))
		var got [][]string
		for _, c := range s.Compactions {
			got = append(got, c.AgentIDs)
			if len(c.AgentIDs) > 0 && c.AgentID != c.AgentIDs[0] {
				t.Fatalf("%s: agent_id %q, agent_ids %v", name, c.AgentID, c.AgentIDs)
			}
			for _, id := range c.AgentIDs {
				if a := agentOf(t, s, id); a.Role != RoleCompaction || !a.StartedAt.Equal(c.StartedAt) {
					t.Fatalf("%s: agent %s is %s from %v", name, id, a.Role, a.StartedAt)
				}
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s: compaction agents %v, want %v", name, got, want)
		}
		checkOrders(t, envs)
	}
	pre := ev{"hook_event_name": "PreCompact", "trigger": "manual"}
	postC := ev{"hook_event_name": "PostCompact", "trigger": "manual"}
	f("two in one", []ev{sessionStart("startup"), pre, subStop("c1", ""), subStop("c2", ""), subStop("c1", ""), postC},
		[][]string{{"c1", "c2"}})
	f("one each", []ev{sessionStart("startup"), pre, subStop("c1", ""), postC, pre, subStop("c2", ""), subStop("c3", ""), postC},
		[][]string{{"c1"}, {"c2", "c3"}})
	f("after the end", []ev{sessionStart("startup"), pre, postC, subStop("c1", "")}, [][]string{nil})
}

// TestClaudeCode2332Background follows the real 2.1.332 capture event by
// event: the status says when the session waits on background subagents,
// and the client's notifications are not prompts.
func TestClaudeCode2332Background(t *testing.T) {
	envs := loadCorpus(t, "claude-code-2.1.332.jsonl", event.RuntimeClaudeCode)
	const id = "74975720-1a50-4d17-9463-df6fabfdeb7c"
	got := strings.Fields(statuses(t, envs, id))
	// Background from the first run's Stop (line 28) until the inspect
	// agent's notification wakes the main agent (29), again from its
	// next Stop (32), which still lists the survey agent, until that
	// agent stopped (36); the same in the continue (81–82, 86–89).
	var bg []int
	for i, st := range got {
		if st == SessionBackground {
			bg = append(bg, i+1)
		}
	}
	want := "[28 32 33 34 35 81 82 86 87 88 89]"
	if fmt.Sprint(bg) != want {
		t.Fatalf("background at lines %v, want %s", bg, want)
	}
	s := Build(envs).Session(id)
	if s.Counts.Prompts != 3 || s.Counts.TaskNotifications != 4 {
		t.Fatalf("prompts %d, notifications %d", s.Counts.Prompts, s.Counts.TaskNotifications)
	}
	for _, a := range s.Agents {
		bgWant := a.Description == "survey" || a.Description == "inspect"
		if a.Background != bgWant || bgWant && (a.NotificationStatus != "completed" || !a.NotifiedAt.After(*a.StoppedAt)) {
			t.Fatalf("agent %s (%s): background %v, notified %v %q", a.AgentID, a.Description, a.Background, a.NotifiedAt, a.NotificationStatus)
		}
		if bgWant {
			c := callOf(t, s, a.SpawnToolUseID)
			if c.Status != StatusOK || c.EndedAt.Sub(a.StartedAt) > time.Second || !c.EndedAt.Before(*a.StoppedAt) || c.NotificationStatus != "completed" {
				t.Fatalf("spawning call %s: %s ended %v; agent %v–%v", c.ToolUseID, c.Status, c.EndedAt, a.StartedAt, a.StoppedAt)
			}
		}
	}
}

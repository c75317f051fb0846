package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookwatch/hookwatch/internal/fakeclaude"
)

// The policies of the signals test: rm -rf is denied; an agent in a loop
// is told to step back. The collector raises a loop at the fifth failure
// of the same call (serve --signal-failed-repeats 5), so the sixth run is
// the one denied.
const (
	signalsStepBack = "You ran the same failing command five times. Step back: read the failure and try another approach."
	signalsPolicy   = `rules:
  - id: no-rm-rf
    tool: Bash
    when: 'tool_input.command startsWith "rm -rf"'
    action: deny
    reason: Do not delete recursively.
  - id: step-back
    event: PreToolUse
    when: agent.signals.loop
    action: deny
    reason: "` + signalsStepBack + `"` + "\n"
	// signalsTest is the failing test the subagent runs; each run leaves a
	// line in runs.log.
	signalsTest = "echo run >> runs.log; echo '--- FAIL: TestParse' >&2; exit 1"
)

// SignalsGoingWrong spawns a subagent that, denied rm -rf build, deletes
// build with find -delete, then runs the same failing test six times
// (when nothing stops it), then gives up.
func SignalsGoingWrong() Scenario {
	bash := func(cmd string) fakeclaude.Turn {
		return fakeclaude.Reply(fakeclaude.ToolUse("Bash", input{"command": cmd, "description": "Work"}))
	}
	sub := []fakeclaude.Turn{bash("rm -rf build"), bash("find build -delete")}
	for range 6 {
		sub = append(sub, bash(signalsTest))
	}
	sub = append(sub, fakeclaude.Reply(fakeclaude.Text("I step back.")))
	return Scenario{
		Name:   "SignalsGoingWrong",
		Prompt: "[e2e:signals] fix the parser",
		Script: fakeclaude.Script{
			"[e2e:signals]": {
				func(r *fakeclaude.Request) []fakeclaude.Block {
					return []fakeclaude.Block{spawn(r, "general-purpose", "fix the parser", "[e2e:signals-sub] fix the parser")}
				},
				fakeclaude.Reply(fakeclaude.Text("The subagent stepped back.")),
			},
			"[e2e:signals-sub]": sub,
		},
	}
}

// SignalsOutlier has the main agent spawn three general-purpose
// subagents in turn: the first and last run a command twice and three
// times, the second twelve times; then it answers.
func SignalsOutlier() Scenario {
	sub := func(n int) []fakeclaude.Turn {
		var turns []fakeclaude.Turn
		for i := range n {
			turns = append(turns, fakeclaude.Reply(fakeclaude.ToolUse("Bash", input{"command": fmt.Sprintf("echo look %d", i), "description": "Look"})))
		}
		return append(turns, fakeclaude.Reply(fakeclaude.Text("Looked.")))
	}
	spawnSub := func(marker string) fakeclaude.Turn {
		return func(r *fakeclaude.Request) []fakeclaude.Block {
			return []fakeclaude.Block{spawn(r, "general-purpose", "look around", marker+" look around")}
		}
	}
	return Scenario{
		Name:   "SignalsOutlier",
		Prompt: "[e2e:outlier] look around, three times",
		Script: fakeclaude.Script{
			"[e2e:outlier]": {spawnSub("[e2e:sib-a]"), spawnSub("[e2e:sib-b]"), spawnSub("[e2e:sib-c]"), fakeclaude.Reply(fakeclaude.Text("Done."))},
			"[e2e:sib-a]":   sub(2),
			"[e2e:sib-b]":   sub(12),
			"[e2e:sib-c]":   sub(3),
		},
	}
}

// apiSignals is GET /v1/sessions/{id}/signals as a client reads it.
type apiSignals struct {
	Agents []struct {
		AgentID string `json:"agent_id"`
		Signals []struct {
			Kind     string   `json:"kind"`
			Calls    []string `json:"calls"`
			Detail   string   `json:"detail"`
			Siblings []string `json:"siblings"`
		} `json:"signals"`
		FailuresInARow int `json:"failures_in_a_row"`
	} `json:"agents"`
}

// TestSignals: the real client's subagent retries a denied rm -rf as find
// -delete and runs the same failing test again and again, through the
// real hook into `hookwatch serve`, which answers the policies on its
// socket. The API raises the retried deny and the loop on that subagent;
// the policy on the loop denies the sixth run, which never runs, and the
// model reads why. A clean session raises nothing. Of three sibling
// subagents, the one making 12 calls against 2 and 3 is an outlier
// (serve --signal-outlier-calls 10).
func TestSignals(t *testing.T) {
	Clients(t) // skip (or fail in CI) before building anything
	EachClient(t, testSignals)
}

func testSignals(t *testing.T, cl Client) {
	c := startCollector(t, "--signal-failed-repeats", "5", "--signal-outlier-calls", "10")
	writeFile(t, filepath.Join(c.home, "policy.yaml"), signalsPolicy)

	a := c.newEnv(t, cl)
	writeFile(t, filepath.Join(a.Project, "build", "out.o"), "object")
	res := a.Play(SignalsGoingWrong())
	if res.SessionID == "" {
		t.Fatalf("no session: %s", res.Stderr)
	}
	ids := a.settle()

	// The sixth run never ran; the model read the policy's reason.
	runs, _ := os.ReadFile(filepath.Join(a.Project, "runs.log"))
	if n := strings.Count(string(runs), "run\n"); n != 5 {
		t.Errorf("the failing test ran %d times, want 5 (the sixth denied)", n)
	}
	told := false
	for _, r := range a.Model.Requests() {
		if strings.Contains(r.FirstUserText(), "[e2e:signals-sub]") && strings.Contains(r.AllText(), signalsStepBack) {
			told = true
		}
	}
	if !told {
		t.Error("no request of the subagent holds the step-back reason")
	}

	var sig apiSignals
	c.mustGet(t, "/v1/sessions/"+ids[0]+"/signals", &sig)
	var kinds []string
	for _, ag := range sig.Agents {
		for _, s := range ag.Signals {
			who := "main"
			if ag.AgentID != "" {
				who = "subagent"
			}
			kinds = append(kinds, who+":"+s.Kind)
			t.Logf("%s %s: %s (%d calls)", who, s.Kind, s.Detail, len(s.Calls))
		}
	}
	if got := strings.Join(kinds, " "); got != "subagent:loop subagent:retried_deny" {
		t.Errorf("signals %q, want the subagent's loop and retried deny", got)
	}

	// A clean session raises nothing.
	clean := c.newEnv(t, cl)
	if res := clean.Play(FailingBash()); res.SessionID == "" {
		t.Fatalf("no clean session: %s", res.Stderr)
	}
	for _, id := range clean.settle() {
		var s apiSignals
		c.mustGet(t, "/v1/sessions/"+id+"/signals", &s)
		for _, ag := range s.Agents {
			if len(ag.Signals) != 0 {
				t.Errorf("the clean session %s raised %+v", id, ag.Signals)
			}
		}
	}

	// Three siblings, one making far more calls.
	fan := c.newEnv(t, cl)
	if res := fan.Play(SignalsOutlier()); res.SessionID == "" {
		t.Fatalf("no fan-out session: %s", res.Stderr)
	}
	ids = fan.settle()
	var out apiSignals
	c.mustGet(t, "/v1/sessions/"+ids[0]+"/signals", &out)
	var got []string
	for _, ag := range out.Agents {
		for _, s := range ag.Signals {
			t.Logf("%s %s: %s (%d calls, siblings %v)", ag.AgentID, s.Kind, s.Detail, len(s.Calls), s.Siblings)
			got = append(got, fmt.Sprintf("%s %d %d", s.Kind, len(s.Calls), len(s.Siblings)))
			if ag.AgentID == "" || !strings.Contains(s.Detail, "made 12 calls") {
				t.Errorf("the outlier is not the subagent that made 12 calls: %s %s", ag.AgentID, s.Detail)
			}
		}
	}
	// The evidence: the spawning call and the agent's 12 calls.
	if strings.Join(got, ";") != "outlier 13 2" {
		t.Errorf("signals of the fan-out %q, want one outlier with 13 calls and 2 siblings", got)
	}
}

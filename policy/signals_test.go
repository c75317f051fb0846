package policy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/classify"
	"github.com/hookwatch/hookwatch/decision"
)

const signalRules = `rules:
  - id: step-back
    event: PreToolUse
    when: agent.signals.loop or agent.failures_in_a_row >= 5
    action: deny
    reason: You are repeating a failing step. Step back and try another approach.
  - id: session-warn
    event: PreToolUse
    when: session.signals.retried_deny or agent.signals.thrash
    action: ask
    reason: An agent of this session retried a denied command in another form.
`

// sessionCalls are classified calls of one session: agent, tool, status
// and input.
func sessionCalls(calls ...[4]string) []*attribution.ToolCall {
	var out []*attribution.ToolCall
	for i, c := range calls {
		tc := &attribution.ToolCall{ToolUseID: fmt.Sprintf("toolu_%02d", i), AgentID: c[0], ToolName: c[1], Status: c[2],
			Input: json.RawMessage(c[3])}
		tc.Meta = classify.Call(tc.ToolName, tc.Input, "/proj")
		out = append(out, tc)
	}
	return out
}

// TestSignalConditions: rules on session and agent read the signals that
// attribution.Signals raises from the session's calls, for the event's own
// agent and for the whole session.
func TestSignalConditions(t *testing.T) {
	set := loadYAML(t, signalRules)
	test := `{"command":"go test ./..."}`
	failing := [4]string{"a1", "Bash", attribution.StatusError, test}
	f := func(agent string, calls []*attribution.ToolCall, want string) {
		t.Helper()
		asked := 0
		src := func(_ context.Context, session string) ([]attribution.AgentSignals, error) {
			asked++
			if session != "s" {
				t.Fatalf("asked for session %q", session)
			}
			return attribution.Signals(nil, calls, attribution.Thresholds{FailedRepeats: 5}), nil
		}
		p := bashCall("go test ./...")
		p["agent_id"] = agent
		d := set.EvaluateWithSignals(context.Background(), p, MemoryState(), src)
		if got := summary(d); got != want {
			t.Fatalf("agent %q: %s, want %s", agent, got, want)
		}
		if asked != 1 {
			t.Fatalf("the source was asked %d times, want once", asked)
		}
	}
	// Four failures: nothing; the fifth makes a loop for that agent only.
	f("a1", sessionCalls(failing, failing, failing, failing), "none")
	five := sessionCalls(failing, failing, failing, failing, failing)
	f("a1", five, "deny step-back")
	f("", five, "none")
	// Five different failures in a row are no loop, but still a run.
	var run [][4]string
	for i := range 5 {
		run = append(run, [4]string{"a1", "Bash", attribution.StatusError, fmt.Sprintf(`{"command":"go test -run T%d"}`, i)})
	}
	f("a1", sessionCalls(run...), "deny step-back")
	f("a1", sessionCalls(append(run, [4]string{"a1", "Read", attribution.StatusOK, `{"file_path":"/proj/x.go"}`})...), "none")
	// A retried deny of a subagent shows on the session, for every agent.
	retried := sessionCalls([4]string{"a2", "Bash", attribution.StatusDenied, `{"command":"rm -rf build"}`},
		[4]string{"a2", "Bash", attribution.StatusOK, `{"command":"find build -delete"}`})
	f("", retried, "ask session-warn")
	// Two agents taking turns on a file: both thrash, a third does not.
	edit := func(agent string) [4]string {
		return [4]string{agent, "Edit", attribution.StatusOK, `{"file_path":"/proj/p.go","old_string":"a","new_string":"b"}`}
	}
	thrash := sessionCalls(edit("a1"), edit(""), edit("a1"), edit(""), [4]string{"a3", "Read", attribution.StatusOK, `{"file_path":"/proj/p.go"}`})
	f("", thrash, "ask session-warn")
	f("a1", thrash, "ask session-warn")
	f("a3", thrash, "none")
}

func summary(d decision.Decision) string {
	var out []string
	for _, n := range d.Notes {
		out = append(out, string(n.Action)+" "+n.RuleID)
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

// TestSignalsWithoutSource: a one-shot process has no signals: the rules
// read none raised; a failing source adds a warning and fails open; a rule
// that reads no signal never asks.
func TestSignalsWithoutSource(t *testing.T) {
	set := loadYAML(t, signalRules)
	if d := set.Evaluate(context.Background(), bashCall("go test"), MemoryState()); summary(d) != "none" || len(d.SystemMessages) != 0 {
		t.Fatalf("no source: %+v", d)
	}
	broken := func(context.Context, string) ([]attribution.AgentSignals, error) {
		return nil, errors.New("store closed")
	}
	d := set.EvaluateWithSignals(context.Background(), bashCall("go test"), MemoryState(), broken)
	if summary(d) != "none" || len(d.SystemMessages) != 1 || !strings.Contains(d.SystemMessages[0], "store closed") {
		t.Fatalf("failing source: %+v", d)
	}
	plain := loadYAML(t, effectRule)
	never := func(context.Context, string) ([]attribution.AgentSignals, error) {
		t.Fatal("a rule without signals asked for them")
		return nil, nil
	}
	plain.EvaluateWithSignals(context.Background(), bashCall("rm -rf /"), MemoryState(), never)
}

// TestStepBackAfterDeny: the rule of docs/policy.md denies the call after
// a loop of failures, lets the next one through (the deny ended the run),
// and denies again after another failure.
func TestStepBackAfterDeny(t *testing.T) {
	set := loadYAML(t, `rules:
  - id: step-back
    event: PreToolUse
    when: agent.failures_in_a_row > 0 and agent.signals.loop or agent.failures_in_a_row >= 5
    action: deny
    reason: Step back.
`)
	failing := [4]string{"a1", "Bash", attribution.StatusError, `{"command":"go test ./..."}`}
	denied := [4]string{"a1", "Bash", attribution.StatusDenied, `{"command":"go test ./..."}`}
	f := func(want string, calls ...[4]string) {
		t.Helper()
		src := func(context.Context, string) ([]attribution.AgentSignals, error) {
			return attribution.Signals(nil, sessionCalls(calls...), attribution.Thresholds{}), nil
		}
		p := bashCall("go test ./...")
		p["agent_id"] = "a1"
		if got := summary(set.EvaluateWithSignals(context.Background(), p, MemoryState(), src)); got != want {
			t.Fatalf("after %d calls: %s, want %s", len(calls), got, want)
		}
	}
	f("none", failing, failing)
	f("deny step-back", failing, failing, failing)
	f("none", failing, failing, failing, denied)
	f("deny step-back", failing, failing, failing, denied, failing)
}

// TestOutlierAndStalledConditions: a rule on agent.signals.outlier stops
// the subagent that made far more calls than its siblings, not them; one
// on session.signals.stalled sees a session that had waited on a pending
// call when the event came, on every agent of it.
func TestOutlierAndStalledConditions(t *testing.T) {
	set := loadYAML(t, `rules:
  - id: runaway
    event: PreToolUse
    when: agent.signals.outlier
    action: deny
    reason: You have made far more calls than the other agents given the same task; report what you have.
  - id: after-stall
    event: PreToolUse
    when: session.signals.stalled and not agent.signals.outlier
    action: ask
    reason: This session stalled; confirm before going on.
`)
	t0 := time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC)
	main := ""
	sub := func(id string, calls int) *attribution.Agent {
		typ, stop := "Explore", t0.Add(time.Minute)
		return &attribution.Agent{AgentID: id, AgentType: &typ, ParentAgentID: &main, Role: attribution.RoleSubagent,
			StartedAt: t0, StoppedAt: &stop, LastEventAt: stop, ToolCount: calls}
	}
	agents := []*attribution.Agent{sub("a1", 4), sub("a2", 60), sub("a3", 5)}
	pending := &attribution.ToolCall{ToolUseID: "toolu_p", ToolName: "Bash", Status: attribution.StatusPending, StartedAt: t0.Add(2 * time.Minute)}
	sess := &attribution.Session{SessionID: "s", Status: attribution.SessionRunning, LastEventAt: pending.StartedAt}
	f := func(agent string, quiet time.Duration, want string) {
		t.Helper()
		src := func(context.Context, string) ([]attribution.AgentSignals, error) {
			return attribution.SignalsAt(sess, agents, []*attribution.ToolCall{pending}, sess.LastEventAt.Add(quiet), attribution.Thresholds{}), nil
		}
		p := bashCall("ls")
		p["agent_id"] = agent
		if got := summary(set.EvaluateWithSignals(context.Background(), p, MemoryState(), src)); got != want {
			t.Fatalf("agent %q after %s: %s, want %s", agent, quiet, got, want)
		}
	}
	f("a2", 0, "deny runaway")
	f("a1", 0, "none")
	f("a1", 6*time.Minute, "ask after-stall")
	f("", 6*time.Minute, "ask after-stall")
	f("a2", 6*time.Minute, "deny runaway")
}

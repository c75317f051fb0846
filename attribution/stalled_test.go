package attribution

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestStalled: a session waiting on a pending call with no event for
// StalledAfter is stalled, on the agent that waits; an event clears it;
// calls left behind (a later run, a stopped subagent, a later prompt's
// call, an ended session) are not waited on.
func TestStalled(t *testing.T) {
	th := Thresholds{StalledAfter: 5 * time.Minute}
	f := func(evs []ev, quiet time.Duration, want ...string) {
		t.Helper()
		s := only(t, Build(stream(t, evs...)))
		now := s.LastEventAt.Add(quiet)
		var got []string
		for _, sg := range Stalled(s, s.Agents, s.ToolCalls, now, th) {
			got = append(got, fmt.Sprintf("%s %s %s %s", sg.AgentID, sg.Kind, sg.Key, strings.Join(sg.Calls, ",")))
		}
		if strings.Join(got, "; ") != strings.Join(want, "; ") {
			t.Fatalf("stalled %q, want %q", got, want)
		}
		// The sweep keeps the waiting calls and asks again at each look.
		if w := StalledWaiting(s, Waiting(s, s.Agents, s.ToolCalls), now, th); !reflect.DeepEqual(w, Stalled(s, s.Agents, s.ToolCalls, now, th)) {
			t.Fatalf("StalledWaiting = %+v, Stalled %+v", w, got)
		}
	}
	test := bash("go test ./...")
	started := []ev{sessionStart("startup"), prompt("test it"), pre("Bash", "t1", test)}
	f(started, 4*time.Minute+59*time.Second)
	f(started, 5*time.Minute, " stalled stalled:t1 t1")
	// The next event clears it: an outcome, or anything else of the session
	// (the clock restarts from it).
	f(append(started, post("Bash", "t1", test, "ok")), time.Hour)
	f(append(started, ev{"hook_event_name": "Notification", "message": "waiting"}), time.Minute)
	// Parallel calls, one of them still running: the session waits on it.
	f(append(started, pre("Read", "t2", map[string]any{"file_path": "/w/p/a"}), post("Read", "t2", map[string]any{"file_path": "/w/p/a"}, "x")),
		time.Hour, " stalled stalled:t1 t1")
	// A subagent waiting: raised on it; once it stopped, not.
	inSub := append(append([]ev{}, started[:2]...), spawn("t0", "Explore"), subStart("a1", "Explore"), pre("Bash", "t1", test).in("a1", "Explore"))
	f(inSub, time.Hour, " stalled stalled:t0 t0", "a1 stalled stalled:t1 t1")
	f(append(inSub, subStop("a1", "Explore")), time.Hour, " stalled stalled:t0 t0")
	// An ended session, a resumed one, a later prompt's call.
	f(append(started, sessionEnd("other")), time.Hour)
	f(append(started, sessionStart("resume")), time.Hour)
	withPrompt := func(e ev, id string) ev { return e.with("prompt_id", id) }
	f([]ev{sessionStart("startup"), prompt("one"), withPrompt(pre("Bash", "t1", test), "p1"), prompt("two"),
		withPrompt(pre("Read", "t2", map[string]any{"file_path": "/w/p/a"}), "p2"), withPrompt(post("Read", "t2", map[string]any{"file_path": "/w/p/a"}, "x"), "p2")}, time.Hour)
}

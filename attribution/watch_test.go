package attribution

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"
)

// lowThresholds raise every kind of signal on small sessions, so that the
// properties below compare signals, not empty lists.
var lowThresholds = Thresholds{
	FailedRepeats: 2, ReadRepeats: 2, ThrashSwitches: 1,
	OutlierFactor: 1.2, OutlierSiblings: 1, OutlierCalls: 1, OutlierDuration: time.Nanosecond,
}

// watches feeds a Group's Changes to one Watch per session, as the
// collector does.
type watches struct {
	th Thresholds
	ws map[string]*Watch
}

func (w *watches) apply(ch Changes) {
	if ch.Reset || w.ws == nil {
		w.ws = map[string]*Watch{}
	}
	for _, sc := range ch.Sessions {
		id := sc.Session.SessionID
		wt := w.ws[id]
		if wt == nil {
			wt = NewWatch(w.th)
			w.ws[id] = wt
		}
		wt.Apply(sc, ch.Reset || sc.Reset)
	}
}

// raisedKinds counts the signals the checks compared, by kind (of each
// agent's first), so that the tests can tell they compared some.
var raisedKinds = map[string]int{}

// freshSeen are the signals (agent and key) each Watch's Fresh returned.
var freshSeen = map[*Watch]map[string]bool{}

// compared fails t unless the checks since clear compared each of kinds.
func compared(t *testing.T, kinds ...string) {
	t.Helper()
	for _, k := range kinds {
		if raisedKinds[k] == 0 {
			t.Errorf("no %s compared (%v)", k, raisedKinds)
		}
	}
}

// checkWatch compares what a Watch reads with Signals and Waiting over the
// same agents and calls.
func checkWatch(t *testing.T, what string, w *Watch, s *Session, agents []*Agent, calls []*ToolCall, th Thresholds) {
	t.Helper()
	want, got := Signals(agents, calls, th), w.Signals()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: Watch.Signals differs from Signals:\n%s", what, firstDiff(mustJSON(t, got), mustJSON(t, want)))
	}
	// Fresh: each of its signals as Signals has it, and every signal not
	// seen before among them.
	now := map[string]Signal{}
	for _, a := range want {
		for _, sg := range a.Signals {
			raisedKinds[sg.Kind]++
			now[sg.AgentID+"\x00"+sg.Key] = sg
		}
	}
	seen := freshSeen[w]
	if seen == nil {
		seen = map[string]bool{}
		freshSeen[w] = seen
	}
	for _, sg := range w.Fresh() {
		k := sg.AgentID + "\x00" + sg.Key
		if n, ok := now[k]; !ok || !reflect.DeepEqual(n, sg) {
			t.Fatalf("%s: Watch.Fresh has %+v, Signals %+v", what, sg, n)
		}
		seen[k] = true
	}
	for k, sg := range now {
		if !seen[k] {
			t.Fatalf("%s: %+v raised and never in Watch.Fresh", what, sg)
		}
	}
	wantW, gotW := Waiting(s, agents, calls), w.Waiting(s)
	if !reflect.DeepEqual(gotW, wantW) {
		t.Fatalf("%s: Watch.Waiting differs from Waiting:\n%s", what, firstDiff(mustJSON(t, gotW), mustJSON(t, wantW)))
	}
	if len(wantW) > 0 {
		raisedKinds["waiting"]++
	}
}

// TestWatchEqualsSignals is the property the collector relies on when it
// reads a session's signals and waits after each round from a Watch: fed
// the Changes of a Group that is given the real captures, fan-outs and a
// synthetic session in any order and batches, a Watch answers what Signals
// and Waiting answer over the Group's agents and calls, after every batch.
func TestWatchEqualsSignals(t *testing.T) {
	clear(raisedKinds)
	sets := corpora(t)
	sets["fan-out"] = fanOut(t, 3, 24, 2, 7, 30)
	sets["synthetic"] = syntheticSession(t, 1200, 12)
	for name, envs := range sets {
		for _, th := range []Thresholds{{}, lowThresholds} {
			t.Run(fmt.Sprintf("%s/%v", name, th.FailedRepeats), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(11, uint64(len(envs))))
				for i := range 6 {
					order := envs
					switch i % 3 {
					case 1:
						order = nearlyOrdered(rng, envs)
					case 2:
						order = shuffled(rng, envs)
					}
					g, w := NewGroup(), &watches{th: th}
					for j, p := range batches(rng, order, 1+rng.IntN(60)) {
						g.Apply(p...)
						ch := g.Changes()
						w.apply(ch)
						for _, sc := range ch.Sessions {
							id := sc.Session.SessionID
							checkWatch(t, fmt.Sprintf("order %d, batch %d, session %s", i, j, id), w.ws[id], sc.Session, g.Agents(id), g.ToolCalls(id), th)
						}
					}
				}
			})
		}
	}
	compared(t, SignalLoop, SignalOutlier, "waiting")
}

// TestWatchCallsChanging: calls that change status, agent, files and
// prompt from one version to the next, at random, read as the latest
// versions read; so do agents that stop and grow.
func TestWatchCallsChanging(t *testing.T) {
	clear(raisedKinds)
	rng := rand.New(rand.NewPCG(5, 9))
	statuses := []string{StatusPending, StatusOK, StatusOK, StatusError, StatusDenied, StatusInterrupted}
	agentIDs := []string{"", "a1", "a2", "a3", "a4"}
	files := []string{"/p/a.go", "/p/b.go", "/p/dir", "/p/dir/c.go"}
	parent := ""
	for round := range 40 {
		th := []Thresholds{{}, lowThresholds}[round%2]
		w := NewWatch(th)
		calls := map[string]*ToolCall{}
		agents := map[string]*Agent{}
		s := &Session{SessionID: "s", Status: SessionRunning, Runs: []Run{{StartedAt: at(3)}}}
		for step := range 60 {
			var sc SessionChanges
			for range 1 + rng.IntN(6) {
				n := rng.IntN(40)
				tool := []string{"Bash", "Read", "Edit", "Write"}[rng.IntN(4)]
				input := `{"command":"rm -rf /p/dir"}`
				switch tool {
				case "Read", "Edit", "Write":
					input = fmt.Sprintf(`{"file_path":%q,"old_string":"a","new_string":"b","content":"x"}`, files[rng.IntN(len(files))])
				}
				c := call(n, agentIDs[rng.IntN(len(agentIDs))], tool, statuses[rng.IntN(len(statuses))], input)
				if rng.IntN(8) == 0 {
					c.StartedAt = c.StartedAt.Add(time.Duration(rng.IntN(3000)) * time.Millisecond) // a later version moves it
				}
				if rng.IntN(3) > 0 {
					c.PromptID = fmt.Sprintf("p%d", n/10)
				}
				calls[c.ToolUseID] = c
				sc.ToolCalls = append(sc.ToolCalls, c)
			}
			for range rng.IntN(3) {
				id := agentIDs[1+rng.IntN(len(agentIDs)-1)]
				a := &Agent{AgentID: id, Role: RoleSubagent, ParentAgentID: &parent, StartedAt: at(rng.IntN(10)),
					LastEventAt: at(10 + rng.IntN(100)), ToolCount: rng.IntN(30)}
				if rng.IntN(2) == 0 {
					stop := at(20 + rng.IntN(200))
					a.StoppedAt = &stop
				}
				agents[id] = a
				sc.Agents = append(sc.Agents, a)
			}
			reset := rng.IntN(15) == 0
			if reset {
				sc.ToolCalls, sc.Agents = nil, nil
				for _, c := range calls {
					sc.ToolCalls = append(sc.ToolCalls, c)
				}
				for _, a := range agents {
					sc.Agents = append(sc.Agents, a)
				}
			}
			w.Apply(sc, reset)
			var as []*Agent
			var cs []*ToolCall
			for _, a := range agents {
				as = append(as, a)
			}
			for _, c := range calls {
				cs = append(cs, c)
			}
			checkWatch(t, fmt.Sprintf("round %d, step %d", round, step), w, s, as, cs, th)
		}
	}
	compared(t, SignalLoop, SignalRetriedDeny, SignalThrash, SignalOutlier, "waiting")
}

// TestWatchFreshReadsWhatChanged: Fresh returns the signals of the loops
// and denials a change touched, not every signal of an agent whose calls
// changed, so that a round's work is that of what it changed.
func TestWatchFreshReadsWhatChanged(t *testing.T) {
	test, rm := `{"command":"go test ./..."}`, `{"command":"rm -rf /p/dir"}`
	w := NewWatch(Thresholds{})
	first := []*ToolCall{call(1, "a1", "Bash", StatusError, test), call(2, "a1", "Bash", StatusError, test), call(3, "a1", "Bash", StatusError, test),
		call(4, "a1", "Bash", StatusDenied, rm), call(5, "a1", "Bash", StatusOK, `{"command":"find /p/dir -delete"}`)}
	w.Apply(SessionChanges{ToolCalls: first}, false)
	var keys []string
	for _, sg := range w.Fresh() {
		keys = append(keys, sg.Key)
	}
	slices.Sort(keys)
	if want := []string{"denied:toolu_04", "failed:toolu_01"}; !slices.Equal(keys, want) {
		t.Fatalf("first Fresh: %q, want %q", keys, want)
	}
	// Another call of the same agent touches neither the loop nor the denial.
	w.Apply(SessionChanges{ToolCalls: []*ToolCall{call(6, "a1", "Read", StatusOK, `{"file_path":"/p/x.go"}`)}}, false)
	if got := w.Fresh(); len(got) != 0 {
		t.Fatalf("Fresh after an unrelated call: %+v, want none", got)
	}
	// A fourth failure grows the loop, whose key stays: nothing new.
	w.Apply(SessionChanges{ToolCalls: []*ToolCall{call(7, "a1", "Bash", StatusError, test)}}, false)
	if got := w.Fresh(); len(got) != 0 {
		t.Fatalf("Fresh after a fourth failure: %+v, want none", got)
	}
	// A failure before the first gives the loop another key.
	w.Apply(SessionChanges{ToolCalls: []*ToolCall{call(0, "a1", "Bash", StatusError, test)}}, false)
	got := w.Fresh()
	if len(got) != 1 || got[0].Key != "failed:toolu_00" || len(got[0].Calls) != 5 {
		t.Fatalf("Fresh after an earlier failure: %+v, want the loop of five from toolu_00", got)
	}
	// Agents taking turns at a file: its thrash on each, once; then on a
	// writer that joins, alone.
	write := `{"file_path":"/p/t.go","content":"x"}`
	w.Apply(SessionChanges{ToolCalls: []*ToolCall{call(10, "a2", "Write", StatusOK, write), call(11, "a3", "Write", StatusOK, write),
		call(12, "a2", "Write", StatusOK, write), call(13, "a3", "Write", StatusOK, write)}}, false)
	thrashOn := func(what string, want ...string) {
		t.Helper()
		var on []string
		for _, sg := range w.Fresh() {
			if sg.Kind != SignalThrash {
				t.Fatalf("%s: Fresh has %+v", what, sg)
			}
			on = append(on, sg.AgentID)
		}
		slices.Sort(on)
		if !slices.Equal(on, want) {
			t.Fatalf("%s: thrash on %q, want %q", what, on, want)
		}
	}
	thrashOn("turns", "a2", "a3")
	w.Apply(SessionChanges{ToolCalls: []*ToolCall{call(14, "a2", "Write", StatusOK, write)}}, false)
	thrashOn("another turn")
	w.Apply(SessionChanges{ToolCalls: []*ToolCall{call(15, "a4", "Write", StatusOK, write)}}, false)
	thrashOn("a new writer", "a4")
}

// BenchmarkWatch reads the signals and waits of a session of 20,000
// events after each batch of 50, as the collector does after each round:
// with a Watch the work per batch stays flat as the session grows; none
// is the Group alone.
func BenchmarkWatch(b *testing.B) {
	envs := syntheticSession(b, 20000, 20)
	parts := batches(rand.New(rand.NewPCG(1, 2)), envs, 50)
	for _, mode := range []string{"none", "full", "watch"} {
		b.Run(mode, func(b *testing.B) {
			for b.Loop() {
				g, w := NewGroup(), &watches{}
				for _, p := range parts {
					g.Apply(p...)
					ch := g.Changes()
					w.apply(ch)
					for _, sc := range ch.Sessions {
						id := sc.Session.SessionID
						switch mode {
						case "full":
							agents, calls := g.Agents(id), g.ToolCalls(id)
							Signals(agents, calls, Thresholds{})
							Waiting(sc.Session, agents, calls)
						case "watch":
							w.ws[id].Signals()
							w.ws[id].Waiting(sc.Session)
						}
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(envs)), "ns/event")
		})
	}
}

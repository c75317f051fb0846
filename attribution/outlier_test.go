package attribution

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/event"
)

// sub is a subagent of parent with agent type typ (nil for "-") that
// started at minute 0 and made calls calls; stopped after minutes, or
// still running with its latest event at -minutes.
func sub(id, parent, typ string, calls, minutes int) *Agent {
	a := &Agent{AgentID: id, Role: RoleSubagent, ParentAgentID: &parent, StartedAt: t0, ToolCount: calls, SpawnToolUseID: "toolu_spawn_" + id}
	if typ != "-" {
		a.AgentType = &typ
	}
	end := t0.Add(time.Duration(max(minutes, -minutes)) * time.Minute)
	a.LastEventAt = end
	if minutes >= 0 {
		a.StoppedAt = &end
	}
	return a
}

func TestSignalOutlier(t *testing.T) {
	f := func(agents []*Agent, want ...string) {
		t.Helper()
		var got []string
		for _, a := range Signals(agents, nil, Thresholds{}) {
			for _, s := range a.Signals {
				got = append(got, fmt.Sprintf("%s %s %s [%s] %s", a.AgentID, s.Kind, s.Key, strings.Join(s.Siblings, ","), s.Detail))
			}
		}
		if strings.Join(got, "; ") != strings.Join(want, "; ") {
			t.Fatalf("signals\n%q\nwant\n%q", got, want)
		}
	}
	// Far more calls than its siblings.
	f([]*Agent{sub("a1", "", "Explore", 5, 2), sub("a2", "", "Explore", 42, 3), sub("a3", "", "Explore", 7, 2)},
		"a2 outlier outlier [a1,a3] Explore made 42 calls, 7× the median of its 2 stopped siblings (6)")
	// Balanced: none.
	f([]*Agent{sub("a1", "", "Explore", 10, 2), sub("a2", "", "Explore", 12, 3), sub("a3", "", "Explore", 11, 2)})
	// Tiny agents: 12 is 12× the median but below the floor of 20.
	f([]*Agent{sub("a1", "", "Explore", 1, 1), sub("a2", "", "Explore", 12, 1), sub("a3", "", "Explore", 1, 1)})
	// Siblings that made no calls at all: the floor decides.
	f([]*Agent{sub("a1", "", "Explore", 0, 1), sub("a2", "", "Explore", 25, 1), sub("a3", "", "Explore", 0, 1)},
		"a2 outlier outlier [a1,a3] Explore made 25 calls, against the median of its 2 stopped siblings (0)")
	// One sibling is too few; other types, other parents are not siblings.
	f([]*Agent{sub("a1", "", "Explore", 2, 1), sub("a2", "", "Explore", 40, 1)})
	f([]*Agent{sub("a1", "", "Plan", 2, 1), sub("a2", "", "Explore", 40, 1), sub("a3", "", "Plan", 2, 1)})
	f([]*Agent{sub("a1", "a9", "Explore", 2, 1), sub("a2", "", "Explore", 40, 1), sub("a3", "a9", "Explore", 2, 1)})
	// A missing type is a type of its own.
	f([]*Agent{sub("a1", "", "-", 2, 1), sub("a2", "", "-", 40, 1), sub("a3", "", "-", 2, 1)},
		"a2 outlier outlier [a1,a3] subagent made 40 calls, 20× the median of its 2 stopped siblings (2)")
	// Still running: an outlier by its calls so far; running siblings are
	// not compared with.
	f([]*Agent{sub("a1", "", "Explore", 5, 2), sub("a2", "", "Explore", 30, -2), sub("a3", "", "Explore", 5, 2)},
		"a2 outlier outlier [a1,a3] Explore made 30 calls, 6× the median of its 2 stopped siblings (5)")
	f([]*Agent{sub("a1", "", "Explore", 2, -1), sub("a2", "", "Explore", 30, 2), sub("a3", "", "Explore", 2, -1)})
	// By duration, stopped or still running (to its latest event); below
	// the 5 minutes floor it is not.
	f([]*Agent{sub("a1", "", "Explore", 5, 3), sub("a2", "", "Explore", 5, 20), sub("a3", "", "Explore", 5, 4), sub("a4", "", "Explore", 5, 5)},
		"a2 outlier outlier [a1,a3,a4] Explore ran 20m0s, 5× the median of its 3 stopped siblings (4m0s)")
	f([]*Agent{sub("a1", "", "Explore", 5, 3), sub("a2", "", "Explore", 5, -16), sub("a3", "", "Explore", 5, 4), sub("a4", "", "Explore", 5, 5)},
		"a2 outlier outlier [a1,a3,a4] Explore has run 16m0s, 4× the median of its 3 stopped siblings (4m0s)")
	f([]*Agent{sub("a1", "", "Explore", 5, 1), sub("a2", "", "Explore", 5, 4), sub("a3", "", "Explore", 5, 1)})
	// Both at once: one signal.
	f([]*Agent{sub("a1", "", "Explore", 5, 2), sub("a2", "", "Explore", 50, 30), sub("a3", "", "Explore", 5, 2)},
		"a2 outlier outlier [a1,a3] Explore made 50 calls, 10× the median of its 2 stopped siblings (5); ran 30m0s, 15× the median of its 2 stopped siblings (2m0s)")
	// The main agent and compaction agents have no siblings.
	main := &Agent{AgentID: "", Role: RoleMain, ToolCount: 500, StartedAt: t0, LastEventAt: t0.Add(time.Hour)}
	compact := sub("c1", "", "", 90, 1)
	compact.Role = RoleCompaction
	f([]*Agent{main, compact, sub("a1", "", "", 1, 1), sub("a3", "", "", 1, 1)})
}

// fanOut is a session whose main agent spawns len(calls) Explore
// subagents in turn, each making calls[i] calls and stopping.
func fanOut(t testing.TB, calls ...int) []event.Envelope {
	evs := []ev{sessionStart("startup"), prompt("look around")}
	for i, n := range calls {
		id, spawnID := fmt.Sprintf("a%016x", i+1), fmt.Sprintf("toolu_spawn%02d", i)
		evs = append(evs, spawn(spawnID, "Explore"), subStart(id, "Explore"))
		for c := range n {
			cid := fmt.Sprintf("toolu_%02d_%03d", i, c)
			in := map[string]any{"file_path": fmt.Sprintf("/w/p/f%d.go", c)}
			evs = append(evs, pre("Read", cid, in).in(id, "Explore"), post("Read", cid, in, "x").in(id, "Explore"))
		}
		evs = append(evs, subStop(id, "Explore"),
			spawned(spawnID, "Explore", map[string]any{"status": "completed", "agentId": id, "content": []any{map[string]any{"type": "text", "text": "done"}}}))
	}
	return stream(t, evs...)
}

// signalsJSON is the signals of every session of r, as JSON.
func signalsJSON(t testing.TB, r *Result) []byte {
	var all [][]AgentSignals
	for _, s := range r.Sessions {
		all = append(all, Signals(s.Agents, s.ToolCalls, Thresholds{}))
	}
	return mustJSON(t, all)
}

// TestSignalOutlierOrderIndependent: the outlier of a fan-out read from
// the events, with its evidence; a balanced fan-out has none; and the
// signals of the model a Group keeps, fed the events of the fan-out and
// of the real captures in any order and batches, with their agents and
// calls in any order, equal those of Build.
func TestSignalOutlierOrderIndependent(t *testing.T) {
	envs := fanOut(t, 3, 24, 2)
	s := only(t, Build(envs))
	sigs := Signals(s.Agents, s.ToolCalls, Thresholds{})
	var out []Signal
	for _, a := range sigs {
		out = append(out, a.Signals...)
	}
	if len(out) != 1 || out[0].Kind != SignalOutlier || out[0].AgentID != "a0000000000000002" ||
		out[0].Calls[0] != "toolu_spawn01" || out[0].Calls[1] != "toolu_01_000" || len(out[0].Calls) != 20 ||
		!slices.Equal(out[0].Siblings, []string{"a0000000000000001", "a0000000000000003"}) {
		t.Fatalf("fan-out signals: %+v", sigs)
	}
	if b := signalsJSON(t, Build(fanOut(t, 20, 24, 22))); bytes.Contains(b, []byte(SignalOutlier)) {
		t.Fatalf("a balanced fan-out raised an outlier: %s", b)
	}

	sets := corpora(t)
	sets["fan-out"] = envs
	for name, envs := range sets {
		t.Run(name, func(t *testing.T) {
			want := signalsJSON(t, Build(envs))
			rng := rand.New(rand.NewPCG(7, uint64(len(envs))))
			for i := range 10 {
				g := NewGroup()
				for _, p := range batches(rng, shuffled(rng, envs), 1+rng.IntN(8)) {
					g.Apply(p...)
				}
				res := g.Result()
				if got := signalsJSON(t, res); !bytes.Equal(got, want) {
					t.Fatalf("order %d: Group's signals differ from Build's:\n%s", i, firstDiff(got, want))
				}
				for _, s := range res.Sessions {
					rng.Shuffle(len(s.Agents), func(i, j int) { s.Agents[i], s.Agents[j] = s.Agents[j], s.Agents[i] })
					rng.Shuffle(len(s.ToolCalls), func(i, j int) { s.ToolCalls[i], s.ToolCalls[j] = s.ToolCalls[j], s.ToolCalls[i] })
				}
				if got := signalsJSON(t, res); !bytes.Equal(got, want) {
					t.Fatalf("order %d: signals depend on the order of agents and calls:\n%s", i, firstDiff(got, want))
				}
			}
		})
	}
}

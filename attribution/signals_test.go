package attribution

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/hookwatch/hookwatch/classify"
)

// call is a classified tool call of agent made at second n.
func call(n int, agent, tool, status, input string) *ToolCall {
	c := &ToolCall{ToolUseID: fmt.Sprintf("toolu_%02d", n), AgentID: agent, ToolName: tool, Status: status,
		StartedAt: at(n), Input: json.RawMessage(input)}
	c.Meta = classify.Call(tool, c.Input, "/proj")
	return c
}

func TestSignals(t *testing.T) {
	f := func(calls []*ToolCall, want ...string) {
		t.Helper()
		var got []string
		for _, a := range Signals(nil, calls, Thresholds{}) {
			for _, s := range a.Signals {
				got = append(got, fmt.Sprintf("%s %s %s", a.AgentID, s.Kind, strings.Join(s.Calls, ",")))
			}
		}
		if strings.Join(got, "; ") != strings.Join(want, "; ") {
			t.Fatalf("signals %q, want %q", got, want)
		}
	}
	test := `{"command":"go test ./..."}`
	// The same test failing three times in a subagent is a loop; twice is not.
	f([]*ToolCall{call(1, "a1", "Bash", StatusError, test), call(2, "a1", "Bash", StatusError, test), call(3, "a1", "Read", StatusOK, `{"file_path":"x.go"}`)})
	f([]*ToolCall{call(1, "a1", "Bash", StatusError, test), call(2, "a1", "Bash", StatusError, test), call(3, "a1", "Bash", StatusError, test),
		call(4, "", "Bash", StatusError, test)},
		"a1 loop toolu_01,toolu_02,toolu_03")
	// Reading one file five times is a loop.
	read := `{"file_path":"/proj/notes.txt"}`
	f([]*ToolCall{call(1, "", "Read", StatusOK, read), call(2, "", "Read", StatusOK, read), call(3, "", "Bash", StatusOK, `{"command":"cat notes.txt"}`),
		call(4, "", "Read", StatusOK, read), call(5, "", "Read", StatusOK, read)},
		" loop toolu_01,toolu_02,toolu_03,toolu_04,toolu_05")
	// rm -rf denied, then find -delete on the same tree: the deny retried.
	f([]*ToolCall{call(1, "a2", "Bash", StatusDenied, `{"command":"rm -rf build"}`), call(2, "a2", "Bash", StatusOK, `{"command":"ls build"}`),
		call(3, "a2", "Bash", StatusOK, `{"command":"find build -name '*.o' -delete"}`)},
		"a2 retried_deny toolu_01,toolu_03")
	// Another target is not a retry.
	f([]*ToolCall{call(1, "a2", "Bash", StatusDenied, `{"command":"rm -rf build"}`), call(2, "a2", "Bash", StatusOK, `{"command":"rm -rf dist"}`)})

	got := Signals(nil, []*ToolCall{call(1, "", "Bash", StatusOK, test), call(2, "", "Bash", StatusError, test), call(3, "", "Bash", StatusInterrupted, test),
		call(4, "", "Bash", StatusPending, test)}, Thresholds{})
	if got[0].FailuresInARow != 2 {
		t.Fatalf("failures in a row: %d", got[0].FailuresInARow)
	}
}

// TestSignalsOfCapture: the 2.1.332 capture's main agent ran a failing
// command twice; a threshold of two sees the loop, the default does not.
func TestSignalsOfCapture(t *testing.T) {
	var s *Session
	for _, x := range Build(load2332(t)).Sessions {
		if len(x.ToolCalls) > 0 {
			s = x
			break
		}
	}
	if got := Signals(s.Agents, s.ToolCalls, Thresholds{}); len(got) == 0 || len(got[0].Signals) != 0 {
		t.Fatalf("default thresholds: %+v", got)
	}
	got := Signals(s.Agents, s.ToolCalls, Thresholds{FailedRepeats: 2})
	if len(got[0].Signals) != 1 || got[0].Signals[0].Kind != SignalLoop || !strings.Contains(got[0].Signals[0].Detail, "echo failing; exit 4 failed 2 times") {
		t.Fatalf("threshold 2: %+v", got[0])
	}
}

// TestSignalKeys: a failing read is two loops, told apart by their keys,
// which stay the same as the loops grow.
func TestSignalKeys(t *testing.T) {
	read := `{"file_path":"/proj/gone.txt"}`
	keys := func(calls ...*ToolCall) string {
		var out []string
		for _, s := range Signals(nil, calls, Thresholds{FailedRepeats: 1, ReadRepeats: 1})[0].Signals {
			out = append(out, s.Key)
		}
		return strings.Join(out, " ")
	}
	one := keys(call(1, "", "Read", StatusError, read))
	if one != "failed:toolu_01 read:/proj/gone.txt" {
		t.Fatalf("keys %q", one)
	}
	if two := keys(call(1, "", "Read", StatusError, read), call(2, "", "Read", StatusError, read)); two != one {
		t.Fatalf("keys changed as the loops grew: %q, then %q", one, two)
	}
}

// TestSignalThrash: two agents taking turns writing a file thrash, both
// of them; one agent rewriting its own file, or a single hand-over, does
// not; a write that failed takes no turn.
func TestSignalThrash(t *testing.T) {
	f := func(calls []*ToolCall, want ...string) {
		t.Helper()
		var got []string
		for _, a := range Signals(nil, calls, Thresholds{}) {
			for _, s := range a.Signals {
				if s.Kind == SignalThrash {
					got = append(got, fmt.Sprintf("%s %s %s", a.AgentID, s.Key, strings.Join(s.Calls, ",")))
				}
			}
		}
		if strings.Join(got, "; ") != strings.Join(want, "; ") {
			t.Fatalf("thrash %q, want %q", got, want)
		}
	}
	edit := func(n int, agent, status string) *ToolCall {
		return call(n, agent, "Edit", status, `{"file_path":"/proj/parse.go","old_string":"a","new_string":"b"}`)
	}
	f([]*ToolCall{edit(1, "a1", StatusOK), edit(2, "a2", StatusOK), edit(3, "a1", StatusOK), edit(4, "a2", StatusOK)},
		"a1 thrash:/proj/parse.go toolu_01,toolu_02,toolu_03,toolu_04",
		"a2 thrash:/proj/parse.go toolu_01,toolu_02,toolu_03,toolu_04")
	f([]*ToolCall{edit(1, "a1", StatusOK), edit(2, "a1", StatusOK), edit(3, "a1", StatusOK), edit(4, "a2", StatusOK)})
	f([]*ToolCall{edit(1, "a1", StatusOK), edit(2, "a2", StatusOK), edit(3, "a1", StatusError), edit(4, "a2", StatusOK)})
	// The main agent and a subagent, the shell writing too.
	f([]*ToolCall{edit(1, "", StatusOK), call(2, "a1", "Bash", StatusOK, `{"command":"echo x > parse.go"}`), edit(3, "", StatusOK),
		call(4, "a1", "Bash", StatusOK, `{"command":"sed -i s/a/b/ parse.go"}`)},
		" thrash:/proj/parse.go toolu_01,toolu_02,toolu_03,toolu_04",
		"a1 thrash:/proj/parse.go toolu_01,toolu_02,toolu_03,toolu_04")
}

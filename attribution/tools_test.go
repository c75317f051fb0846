package attribution

import (
	"fmt"
	"slices"
	"testing"

	"github.com/hookwatch/hookwatch/event"
)

// TestToolCounts: on the real captures, a session's Tools are its calls
// counted by tool name and by Failed, denial and rejection, most used
// first, and add up to its Counts; every call's Failed is Failed(Status).
func TestToolCounts(t *testing.T) {
	failures := 0
	for name, runtime := range map[string]string{
		"claude-code-2.1.197.jsonl": event.RuntimeClaudeCode, "claude-code-2.1.332.jsonl": event.RuntimeClaudeCode,
		"public-captures.jsonl": event.RuntimeClaudeCode, "codex-0.169.jsonl": event.RuntimeCodex,
	} {
		for _, s := range Build(loadCorpus(t, name, runtime)).Sessions {
			want := map[string]ToolCounts{}
			for _, c := range s.ToolCalls {
				if c.Failed != Failed(c.Status) {
					t.Errorf("%s: call %s status %s failed %v", name, c.ToolUseID, c.Status, c.Failed)
				}
				w := want[c.ToolName]
				w.ToolName = c.ToolName
				w.Calls++
				switch c.Status {
				case StatusError, StatusInterrupted:
					w.Failures++
				case StatusDenied:
					w.Denials++
				case StatusRejected:
					w.Rejected++
				}
				want[c.ToolName] = w
			}
			var sum ToolCounts
			for i, got := range s.Tools {
				if got != want[got.ToolName] {
					t.Errorf("%s %s: %+v, want %+v", name, s.SessionID, got, want[got.ToolName])
				}
				if i > 0 && (s.Tools[i-1].Calls < got.Calls || s.Tools[i-1].Calls == got.Calls && s.Tools[i-1].ToolName >= got.ToolName) {
					t.Errorf("%s %s: tools out of order: %+v", name, s.SessionID, s.Tools)
				}
				sum.Calls += got.Calls
				sum.Failures += got.Failures
				sum.Denials += got.Denials
				sum.Rejected += got.Rejected
			}
			k := s.Counts
			if len(s.Tools) != len(want) || sum != (ToolCounts{Calls: k.ToolCalls, Failures: k.Failures, Denials: k.Denials, Rejected: k.Rejected}) {
				t.Errorf("%s %s: %d tools adding up to %+v, want %d and counts %+v", name, s.SessionID, len(s.Tools), sum, len(want), k)
			}
			failures += k.Failures
		}
	}
	if failures == 0 {
		t.Fatal("no capture has a failed call: the test proves nothing of failures")
	}
}

// TestToolsBound: a session that calls more tools than Tools lists keeps
// the most used and sums the others in one row, whatever the order of the
// calls.
func TestToolsBound(t *testing.T) {
	var evs []ev
	call := func(tool, id string) {
		evs = append(evs, pre(tool, id, bash("x")), post(tool, id, bash("x"), "done"))
	}
	for i := range maxNames + 50 {
		call(fmt.Sprintf("mcp__t%03d", i), fmt.Sprint("a", i))
	}
	for i := range 3 {
		call("mcp__t249", fmt.Sprint("b", i)) // the last named, most used
	}
	evs = append(evs, ev{"hook_event_name": "PostToolUseFailure", "tool_name": "mcp__t249", "tool_use_id": "b0", "error": "boom"})
	s := only(t, Build(stream(t, evs...)))
	if len(s.Tools) != maxNames+1 {
		t.Fatalf("%d rows, want %d", len(s.Tools), maxNames+1)
	}
	if first := s.Tools[0]; first != (ToolCounts{ToolName: "mcp__t249", Calls: 4, Failures: 1}) {
		t.Errorf("first row %+v", first)
	}
	if s.Tools[1].ToolName != "mcp__t000" {
		t.Errorf("second row %+v, want mcp__t000: ties go by name", s.Tools[1])
	}
	if last := s.Tools[maxNames]; last != (ToolCounts{ToolName: OtherNames, Calls: 50}) {
		t.Errorf("others %+v, want the 50 least used", last)
	}
	// The same calls in reverse give the same rows.
	slices.Reverse(evs)
	if r := only(t, Build(stream(t, evs...))); !slices.Equal(r.Tools, s.Tools) {
		t.Errorf("reversed: %+v", r.Tools[:3])
	}
}

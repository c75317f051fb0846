package toolhook

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
)

// TestAttributionTree runs an orchestrator whose "Task" tool spawns two
// workers in parallel, each of which spawns two sub-workers in parallel, and
// checks every recorded call's depth, agent and parent against the tree.
func TestAttributionTree(t *testing.T) {
	rec := &memRecorder{}
	x := &Executor{Recorder: rec, SessionID: "sess"}
	var spawn Tool
	spawn = func(ctx context.Context, in map[string]any) (any, error) {
		// The agent started by this call, then its own calls.
		agent := in["agent"].(string)
		actx := SpawnAgent(ctx, agent, fmt.Sprintf("worker-%d", scopeOf(ctx).depth+1))
		if _, err := x.Call(actx, "Read", map[string]any{"by": agent}); err != nil {
			return nil, err
		}
		if in["children"] == nil {
			return agent, nil
		}
		var wg sync.WaitGroup
		errs := make(chan error, 2)
		for _, child := range in["children"].([]string) {
			wg.Go(func() {
				_, err := x.CallID(actx, "Task", "spawn-"+child, map[string]any{"agent": child})
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				return nil, err
			}
		}
		return agent, nil
	}
	x.Tools = map[string]Tool{"Task": spawn, "Read": echo}

	ctx := WithPhase(WithTask(context.Background(), "task-1"), "execute")
	tasks := map[string][]string{"w1": {"w11", "w12"}, "w2": {"w21", "w22"}}
	var wg sync.WaitGroup
	for _, w := range []string{"w1", "w2"} {
		wg.Go(func() {
			if _, err := x.CallID(ctx, "Task", "spawn-"+w, map[string]any{"agent": w, "children": tasks[w]}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()

	var got []string
	for _, c := range rec.calls {
		if c.SessionID != "sess" || c.TaskID != "task-1" || c.Phase != "execute" {
			t.Fatalf("%s lost its scope: %+v", c.ToolUseID, c)
		}
		id := c.ToolUseID
		if c.ToolName == "Read" {
			id = "read"
		}
		got = append(got, fmt.Sprintf("%s by %q/%s depth %d parent %q", id, c.AgentID, c.AgentType, c.Depth, c.ParentToolUseID))
	}
	sort.Strings(got)
	want := []string{
		`read by "w1"/worker-1 depth 1 parent "spawn-w1"`,
		`read by "w11"/worker-2 depth 2 parent "spawn-w11"`,
		`read by "w12"/worker-2 depth 2 parent "spawn-w12"`,
		`read by "w2"/worker-1 depth 1 parent "spawn-w2"`,
		`read by "w21"/worker-2 depth 2 parent "spawn-w21"`,
		`read by "w22"/worker-2 depth 2 parent "spawn-w22"`,
		`spawn-w1 by ""/ depth 0 parent ""`,
		`spawn-w11 by "w1"/worker-1 depth 1 parent "spawn-w1"`,
		`spawn-w12 by "w1"/worker-1 depth 1 parent "spawn-w1"`,
		`spawn-w2 by ""/ depth 0 parent ""`,
		`spawn-w21 by "w2"/worker-1 depth 1 parent "spawn-w2"`,
		`spawn-w22 by "w2"/worker-1 depth 1 parent "spawn-w2"`,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("calls:\n%s\nwant:\n%s", join(got), join(want))
	}
}

func join(s []string) (out string) {
	for _, l := range s {
		out += l + "\n"
	}
	return out
}

func TestFreshToolUseIDsAreUnique(t *testing.T) {
	rec := &memRecorder{}
	x := &Executor{Recorder: rec, Tools: map[string]Tool{"T": echo}}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 250 {
				x.Call(context.Background(), "T", nil)
			}
		})
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, c := range rec.calls {
		if seen[c.ToolUseID] || len(c.ToolUseID) != len(idPrefix)+16 {
			t.Fatalf("tool_use_id %q repeated or malformed", c.ToolUseID)
		}
		seen[c.ToolUseID] = true
	}
	if CurrentCall(context.Background()) != nil {
		t.Fatal("a call outside any tool")
	}
}

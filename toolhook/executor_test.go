package toolhook

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/hookwatch/hookwatch/decision"
	"github.com/hookwatch/hookwatch/event"
)

type memRecorder struct {
	mu    sync.Mutex
	calls []*Call
}

func (m *memRecorder) Record(c *Call) {
	m.mu.Lock()
	m.calls = append(m.calls, c)
	m.mu.Unlock()
}

func echo(_ context.Context, in map[string]any) (any, error) { return in, nil }

func TestHookOrderAndMatchers(t *testing.T) {
	var trace []string
	var r Registry
	add := func(pattern, label string, opts ...Option) {
		t.Helper()
		if err := r.Pre(pattern, func(context.Context, *Call) PreResult {
			trace = append(trace, "pre:"+label)
			return PreResult{}
		}, opts...); err != nil {
			t.Fatal(err)
		}
		if err := r.Post(pattern, func(context.Context, *Call) PostResult {
			trace = append(trace, "post:"+label)
			return PostResult{}
		}, opts...); err != nil {
			t.Fatal(err)
		}
	}
	add("*", "all")
	add("Bash|Edit", "list")
	add("mcp__.*", "regexp")
	add("Bash", "plan", InPhase("plan"))
	add("Edit.*", "edit-regexp")
	x := &Executor{Registry: &r, Tools: map[string]Tool{"Bash": echo, "NotebookEdit": echo, "mcp__db__query": echo}}

	f := func(ctx context.Context, tool string, want ...string) {
		t.Helper()
		trace = nil
		if _, err := x.Call(ctx, tool, nil); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(trace, want) {
			t.Fatalf("%s: hooks ran %q, want %q", tool, trace, want)
		}
	}
	f(context.Background(), "Bash", "pre:all", "pre:list", "post:all", "post:list")
	f(WithPhase(context.Background(), "plan"), "Bash", "pre:all", "pre:list", "pre:plan", "post:all", "post:list", "post:plan")
	// Claude Code's unanchored regular expression: Edit.* matches NotebookEdit.
	f(context.Background(), "NotebookEdit", "pre:all", "pre:edit-regexp", "post:all", "post:edit-regexp")
	f(context.Background(), "mcp__db__query", "pre:all", "pre:regexp", "post:all", "post:regexp")

	if err := r.Pre("(?<=x)", func(context.Context, *Call) PreResult { return PreResult{} }); err == nil {
		t.Fatal("a pattern Go cannot compile was registered")
	}
}

func TestSkipAndAbort(t *testing.T) {
	var ran []string
	tool := func(context.Context, map[string]any) (any, error) { ran = append(ran, "tool"); return "real", nil }
	pre := func(label string, res PreResult) PreHook {
		return func(context.Context, *Call) PreResult { ran = append(ran, label); return res }
	}
	post := func(label string, res PostResult) PostHook {
		return func(context.Context, *Call) PostResult { ran = append(ran, label); return res }
	}

	f := func(build func(r *Registry), wantOut any, wantErr string, wantStatus string, wantRan ...string) {
		t.Helper()
		ran = nil
		var r Registry
		build(&r)
		rec := &memRecorder{}
		x := &Executor{Registry: &r, Tools: map[string]Tool{"T": tool}, Recorder: rec}
		out, err := x.Call(context.Background(), "T", map[string]any{})
		if fmt.Sprint(err) != wantErr {
			t.Fatalf("error %v, want %s", err, wantErr)
		}
		if !reflect.DeepEqual(out, wantOut) {
			t.Fatalf("output %v, want %v", out, wantOut)
		}
		if !reflect.DeepEqual(ran, wantRan) {
			t.Fatalf("ran %q, want %q", ran, wantRan)
		}
		if len(rec.calls) != 1 || rec.calls[0].Status != wantStatus {
			t.Fatalf("recorded %d calls, status %q, want one, %q", len(rec.calls), rec.calls[0].Status, wantStatus)
		}
	}
	f(func(r *Registry) {
		r.Pre("*", pre("a", PreResult{Action: Skip, Output: "cached"}))
		r.Pre("*", pre("b", PreResult{}))
		r.Post("*", post("p", PostResult{}))
	}, "cached", "<nil>", "ok", "a")
	// A Skip answers in place of the tool only if the merged decision
	// lets the call through: a deny before or with it refuses the call.
	deny := decision.Decision{Verdict: decision.Deny, Reasons: []string{"no"}}
	f(func(r *Registry) {
		r.Pre("*", pre("a", PreResult{Decision: deny}))
		r.Pre("*", pre("b", PreResult{Action: Skip, Output: "cached"}))
		r.Pre("*", pre("c", PreResult{}))
		r.Post("*", post("p", PostResult{}))
	}, nil, "tool T: deny: no", "denied", "a", "b")
	f(func(r *Registry) {
		r.Pre("*", pre("a", PreResult{Action: Skip, Output: "cached", Decision: deny}))
	}, nil, "tool T: deny: no", "denied", "a")
	f(func(r *Registry) {
		r.Pre("*", pre("a", PreResult{Decision: decision.Decision{Verdict: decision.Allow}}))
		r.Pre("*", pre("b", PreResult{Action: Skip, Output: "cached"}))
	}, "cached", "<nil>", "ok", "a", "b")
	f(func(r *Registry) {
		r.Pre("*", pre("a", PreResult{}))
		r.Pre("*", pre("b", PreResult{Action: Abort, Reason: "budget spent"}))
		r.Pre("*", pre("c", PreResult{}))
		r.Post("*", post("p", PostResult{}))
	}, nil, "tool T aborted by a hook: budget spent", "interrupted", "a", "b")
	f(func(r *Registry) {
		r.Post("*", post("p1", PostResult{Action: Abort, Reason: "leak", Output: "[cut]"}))
		r.Post("*", post("p2", PostResult{}))
	}, "[cut]", "tool T aborted by a hook: leak", "interrupted", "tool", "p1")
	f(func(r *Registry) {
		r.Post("*", post("p1", PostResult{Action: Skip}))
		r.Post("*", post("p2", PostResult{}))
	}, "real", "<nil>", "ok", "tool", "p1", "p2")
}

func TestRewritesCompose(t *testing.T) {
	var r Registry
	r.Pre("*", func(_ context.Context, c *Call) PreResult {
		return PreResult{Input: map[string]any{"cmd": c.Input["cmd"].(string) + " --dry-run"}, Metadata: map[string]any{"a": 1, "k": "first"}}
	})
	r.Pre("*", func(_ context.Context, c *Call) PreResult {
		return PreResult{Input: map[string]any{"cmd": strings.ToUpper(c.Input["cmd"].(string))}, Metadata: map[string]any{"k": "second"}}
	})
	r.Post("*", func(_ context.Context, c *Call) PostResult {
		return PostResult{Output: c.Output.(string) + "!"}
	})
	r.Post("*", func(_ context.Context, c *Call) PostResult {
		return PostResult{Output: "<" + c.Output.(string) + ">"}
	})
	rec := &memRecorder{}
	var seen map[string]any
	x := &Executor{Registry: &r, Recorder: rec, Tools: map[string]Tool{"Bash": func(_ context.Context, in map[string]any) (any, error) {
		seen = in
		return in["cmd"], nil
	}}}
	out, err := x.Call(context.Background(), "Bash", map[string]any{"cmd": "ls"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "LS --DRY-RUN"; seen["cmd"] != want {
		t.Fatalf("tool saw %v, want %s", seen["cmd"], want)
	}
	if want := "<LS --DRY-RUN!>"; out != want {
		t.Fatalf("output %v, want %s", out, want)
	}
	c := rec.calls[0]
	if !reflect.DeepEqual(c.Metadata, map[string]any{"a": 1, "k": "second"}) {
		t.Fatalf("metadata %v", c.Metadata)
	}
	if c.Output != out {
		t.Fatalf("recorded output %v, returned %v", c.Output, out)
	}
}

func TestVerdicts(t *testing.T) {
	f := func(approve bool, wantRan bool, wantErr string, vs ...decision.Verdict) {
		t.Helper()
		var r Registry
		for i, v := range vs {
			r.Pre("*", func(context.Context, *Call) PreResult {
				return PreResult{Decision: decision.Decision{Verdict: v, Reasons: []string{fmt.Sprintf("r%d", i)}}}
			})
		}
		ran := false
		x := &Executor{Registry: &r, Tools: map[string]Tool{"T": func(context.Context, map[string]any) (any, error) { ran = true; return nil, nil }}}
		if approve {
			x.Approve = func(context.Context, *Call) bool { return true }
		}
		_, err := x.Call(context.Background(), "T", nil)
		if ran != wantRan || fmt.Sprint(err) != wantErr {
			t.Fatalf("%v: ran %v, err %v; want %v, %s", vs, ran, err, wantRan, wantErr)
		}
		var de *DeniedError
		if err != nil && !errors.As(err, &de) {
			t.Fatalf("%T is not a *DeniedError", err)
		}
	}
	f(false, true, "<nil>", decision.Allow, decision.Allow)
	f(false, false, "tool T: ask: r1", decision.Allow, decision.Ask)
	f(true, true, "<nil>", decision.Allow, decision.Ask)
	f(true, false, "tool T: defer: r0", decision.Defer, decision.Ask)
	f(true, false, "tool T: deny: r1\nr2", decision.Ask, decision.Deny, decision.Deny, decision.Defer)
}

func TestStopAborts(t *testing.T) {
	var r Registry
	r.Pre("*", func(context.Context, *Call) PreResult {
		return PreResult{Decision: decision.Decision{Verdict: decision.Allow}}
	})
	r.Pre("*", func(context.Context, *Call) PreResult {
		return PreResult{Decision: decision.Decision{Stop: true, StopReasons: []string{"session budget spent"}}}
	})
	rec := &memRecorder{}
	ran := false
	x := &Executor{Registry: &r, Recorder: rec, Tools: map[string]Tool{"T": func(context.Context, map[string]any) (any, error) { ran = true; return nil, nil }}}
	_, err := x.Call(context.Background(), "T", nil)
	var ae *AbortError
	if ran || !errors.As(err, &ae) || ae.Reason != "session budget spent" || rec.calls[0].Status != "interrupted" {
		t.Fatalf("ran %v, err %v, status %q", ran, err, rec.calls[0].Status)
	}
}

func TestWrapAndUnknownTool(t *testing.T) {
	var r Registry
	r.Pre("lookup", func(_ context.Context, c *Call) PreResult {
		return PreResult{Input: map[string]any{"key": strings.ToLower(c.Input["key"].(string))}}
	})
	rec := &memRecorder{}
	x := &Executor{Registry: &r, Recorder: rec}
	lookup := x.Wrap("lookup", func(_ context.Context, in map[string]any) (any, error) { return in["key"], nil })
	if out, err := lookup(context.Background(), map[string]any{"key": "ABC"}); out != "abc" || err != nil {
		t.Fatalf("wrapped tool: %v, %v", out, err)
	}
	if _, err := x.Call(context.Background(), "nope", nil); !errors.Is(err, ErrUnknownTool) {
		t.Fatalf("unknown tool: %v", err)
	}
	if len(rec.calls) != 2 || rec.calls[0].ToolName != "lookup" || rec.calls[1].Status != "error" {
		t.Fatalf("recorded %d calls", len(rec.calls))
	}
}

// idRecorder keeps the tool_use_ids of the calls it records.
type idRecorder struct {
	mu  sync.Mutex
	ids []string
}

func (r *idRecorder) Record(c *Call) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ids = append(r.ids, c.ToolUseID)
}

// TestIDsOfParallelFirstCalls starts the first calls of an Executor
// together: each gets an id from the random base, none a small number of
// the counter that another Executor (another process recording the same
// session) would give too.
func TestIDsOfParallelFirstCalls(t *testing.T) {
	rec := &idRecorder{}
	x := &Executor{Tools: map[string]Tool{"echo": echo}, Recorder: rec}
	start := make(chan struct{})
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			x.Call(context.Background(), "echo", nil)
		}()
	}
	close(start)
	wg.Wait()
	seen := map[string]bool{}
	for _, id := range rec.ids {
		n, err := strconv.ParseUint(strings.TrimPrefix(id, idPrefix), 16, 64)
		if err != nil || seen[id] || n < 1<<20 {
			t.Fatalf("id %q (%d, %v) among %q", id, n, err, rec.ids)
		}
		seen[id] = true
	}
}

// TestSessionWithoutID checks that an Executor without a SessionID records
// its calls in one session of its own, not in the session "".
func TestSessionWithoutID(t *testing.T) {
	rec := &memRecorder{}
	x := &Executor{Recorder: rec, Tools: map[string]Tool{"T": echo}}
	x.Call(context.Background(), "T", nil)
	x.Call(WithTask(context.Background(), "task"), "T", nil)
	if s := rec.calls[0].SessionID; s == "" || rec.calls[1].SessionID != s {
		t.Fatalf("sessions %q and %q, want one, not empty", s, rec.calls[1].SessionID)
	}
	other := &Executor{Recorder: rec, Tools: map[string]Tool{"T": echo}}
	other.Call(context.Background(), "T", nil)
	if rec.calls[2].SessionID == rec.calls[0].SessionID {
		t.Fatalf("two executors share session %q", rec.calls[0].SessionID)
	}
	x.Call(WithSession(context.Background(), "named"), "T", nil)
	if rec.calls[3].SessionID != "named" {
		t.Fatalf("session %q, want the context's", rec.calls[3].SessionID)
	}
}

// TestSessionDir: every call carries the session's cwd — the process's
// working directory at the Executor's first call, which a later change of
// directory does not move — and its permission mode and transcript.
func TestSessionDir(t *testing.T) {
	first, later := t.TempDir(), t.TempDir()
	t.Chdir(first)
	rec := &memRecorder{}
	x := &Executor{Recorder: rec, PermissionMode: "plan", TranscriptPath: "/t/conversation.jsonl", Tools: map[string]Tool{"T": echo}}
	x.Call(context.Background(), "T", nil)
	t.Chdir(later)
	x.Call(WithSession(context.Background(), "other"), "T", nil)
	for _, c := range rec.calls {
		if c.Cwd != first || c.PermissionMode != x.PermissionMode || c.TranscriptPath != x.TranscriptPath {
			t.Errorf("call in %s: cwd %q, mode %q, transcript %q; want %s", c.SessionID, c.Cwd, c.PermissionMode, c.TranscriptPath, first)
		}
	}
	x = &Executor{Recorder: rec, Dir: first, Tools: map[string]Tool{"T": echo}}
	if x.Call(context.Background(), "T", nil); rec.calls[2].Cwd != first {
		t.Errorf("Dir %s: cwd %q", first, rec.calls[2].Cwd)
	}
}

// endRecorder is a memRecorder that also keeps the ends of sessions.
type endRecorder struct {
	memRecorder
	ends []*SessionEnd
}

func (m *endRecorder) RecordEnd(e *SessionEnd) {
	m.mu.Lock()
	m.ends = append(m.ends, e)
	m.mu.Unlock()
}

// TestEndSession ends the session of a context and the Executor's own,
// through Recorders, which hands the ends to its SessionRecorders only,
// each with the session's cwd and transcript, as its calls have them.
func TestEndSession(t *testing.T) {
	ends, calls := &endRecorder{}, &memRecorder{}
	x := &Executor{Recorder: Recorders{calls, ends}, TranscriptPath: "/t/conversation.jsonl", Tools: map[string]Tool{"T": echo}}
	x.Call(context.Background(), "T", nil)
	other := WithSession(context.Background(), "other")
	x.EndSession(other, "logout")
	x.EndSession(context.Background(), "")
	if len(calls.calls) != 1 || len(ends.calls) != 1 || len(ends.ends) != 2 {
		t.Fatalf("%d and %d calls, %d ends recorded", len(calls.calls), len(ends.calls), len(ends.ends))
	}
	c := calls.calls[0]
	for i, want := range []SessionEnd{
		{SessionID: "other", Reason: "logout"},
		{SessionID: c.SessionID, Reason: DefaultEndReason},
	} {
		e := ends.ends[i]
		if e.SessionID != want.SessionID || e.Reason != want.Reason || e.Cwd != c.Cwd || e.Cwd == "" || e.TranscriptPath != c.TranscriptPath || e.At.IsZero() {
			t.Errorf("end %d: %+v, want session %s, reason %s, the call's cwd %s", i, e, want.SessionID, want.Reason, c.Cwd)
		}
	}

	// Without a SessionRecorder, there is nothing to tell.
	(&Executor{Recorder: calls}).EndSession(context.Background(), "")
	(&Executor{}).EndSession(context.Background(), "")
}

// agentRecorder keeps, in order, what it records: a call as "<tool>
// <agent>", a sub-agent's start or stop as "<event> <agent> <parent>
// <depth>".
type agentRecorder struct {
	mu     sync.Mutex
	lines  []string
	events []*AgentEvent
}

func (m *agentRecorder) Record(c *Call) {
	m.mu.Lock()
	m.lines = append(m.lines, c.ToolName+" "+c.AgentID)
	m.mu.Unlock()
}

func (m *agentRecorder) RecordAgent(e *AgentEvent) {
	m.mu.Lock()
	m.lines = append(m.lines, fmt.Sprintf("%s %s %s %d", e.Event, e.AgentID, e.ParentToolUseID, e.Depth))
	m.events = append(m.events, e)
	m.mu.Unlock()
}

// TestAgentStartsAndStops spawns sub-agents as Claude Code runs its own:
// each starts when SpawnAgent starts it, before its first call, and stops
// when the call it was spawned in ends, before that call is recorded; one
// spawned again in the same call starts once; one spawned from another
// sub-agent's context outside any tool runs inside the same call; one
// spawned from the main agent's context outside any tool has neither a
// start nor a stop. Recorders hands the events to its AgentRecorders only.
func TestAgentStartsAndStops(t *testing.T) {
	rec, calls := &agentRecorder{}, &memRecorder{}
	var x *Executor
	x = &Executor{Recorder: Recorders{calls, rec}, SessionID: "s", PermissionMode: "plan", Tools: map[string]Tool{
		"Read": echo,
		"Inner": func(ctx context.Context, in map[string]any) (any, error) {
			return x.Call(SpawnAgent(ctx, "w2", "inner"), "Read", nil)
		},
		"Task": func(ctx context.Context, in map[string]any) (any, error) {
			w := SpawnAgent(ctx, "w1", "worker")
			x.Call(w, "Read", nil)
			SpawnAgent(ctx, "w1", "worker") // the same agent, again
			x.CallID(w, "Inner", "nested", nil)
			x.Call(SpawnAgent(w, "w1-b", "helper"), "Read", nil) // no call of w1 in between
			return nil, errors.New("the worker failed")
		},
	}}
	ctx := WithTask(context.Background(), "turn-1")
	x.CallID(ctx, "Task", "task", nil)
	x.Call(SpawnAgent(ctx, "loose", "worker"), "Read", nil)
	want := []string{
		"SubagentStart w1 task 1",
		"Read w1",
		// The sub-agent of w1's call, spawned in it.
		"SubagentStart w2 nested 2",
		"Read w2",
		"SubagentStop w2 nested 2",
		"Inner w1",
		"SubagentStart w1-b task 2",
		"Read w1-b",
		"SubagentStop w1 task 1",
		"SubagentStop w1-b task 2",
		"Task ",
		"Read loose",
	}
	if !reflect.DeepEqual(rec.lines, want) {
		t.Fatalf("recorded\n%s\nwant\n%s", strings.Join(rec.lines, "\n"), strings.Join(want, "\n"))
	}
	task := calls.calls[len(calls.calls)-2]
	for _, e := range rec.events {
		if e.SessionID != "s" || e.TaskID != "turn-1" || e.Cwd != task.Cwd || e.PermissionMode != "plan" || e.At.Before(task.Start) {
			t.Errorf("%+v: not of the spawning call %+v", e, task)
		}
		if e.Event == event.SubagentStop && e.ParentToolUseID == "task" && !e.At.Equal(task.Start.Add(task.Duration)) {
			t.Errorf("%s %s stopped at %v, its call ended at %v", e.Event, e.AgentID, e.At, task.Start.Add(task.Duration))
		}
	}

	// Without an AgentRecorder, the calls are recorded as before.
	plain := &memRecorder{}
	x.Recorder = plain
	x.CallID(ctx, "Task", "task-2", nil)
	if len(plain.calls) != 5 {
		t.Fatalf("%d calls recorded, want 5", len(plain.calls))
	}
}

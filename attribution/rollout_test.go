package attribution

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/codex/rollout"
	"github.com/hookwatch/hookwatch/event"
)

// codexRun is one real run of Codex 0.169 captured twice: its hooks'
// payloads (testdata/codex-rollout/hooks.jsonl, with the times the hooks
// ran) and its rollout. The hooks carry no exit code: `exit 3` looks like
// a success to them.
func codexRun(t *testing.T) (hooks, imported []event.Envelope) {
	t.Helper()
	f, err := os.Open("testdata/codex-rollout/hooks.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line struct {
			T       float64         `json:"t"`
			Payload json.RawMessage `json:"payload"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatal(err)
		}
		sec, frac := math.Modf(line.T)
		hooks = append(hooks, event.Envelope{ID: envID(len(hooks)), Runtime: event.RuntimeCodex, Kind: event.KindHook,
			ReceivedAt: time.Unix(int64(sec), int64(frac*1e9)).UTC(), Payload: line.Payload})
	}
	imported, err = rollout.Read("../codex/testdata/rollout-2026-11-25T14-46-05-01a2132b-c636-7c31-93a8-aeaecf1768f7.jsonl", "", "")
	if err != nil {
		t.Fatal(err)
	}
	return hooks, imported
}

// TestRolloutMerge: the same session captured by hooks and imported from
// its rollout has each call once, the hooks' events counted once, and the
// exit code the rollout adds; the rollout alone gives the same calls.
func TestRolloutMerge(t *testing.T) {
	hooks, imported := codexRun(t)
	f := func(name string, envs []event.Envelope, events int, status3 string) {
		t.Helper()
		s := only(t, Build(envs))
		if s.Counts.Events != events || s.Counts.ToolCalls != 3 || len(s.ToolCalls) != 3 {
			t.Fatalf("%s: %d events, %d calls: %+v", name, s.Counts.Events, s.Counts.ToolCalls, s.ToolCalls)
		}
		for i, id := range []string{"call_000004", "call_000007", "call_000010"} {
			c := s.ToolCalls[i]
			if c.ToolUseID != id || c.EndedAt == nil || c.DurationMS == nil {
				t.Errorf("%s: call %d %+v", name, i, c)
			}
		}
		if c := callOf(t, s, "call_000010"); c.Status != status3 {
			t.Errorf("%s: exit 3 has status %s (%v)", name, c.Status, c.ExitCode)
		}
		if c := callOf(t, s, "call_000007"); len(c.Files) != 1 || c.Files[0].Path != "notes.md" {
			t.Errorf("%s: patch files %+v", name, c.Files)
		}
	}
	f("hooks", hooks, 10, StatusOK)
	both := append(append([]event.Envelope(nil), hooks...), imported...)
	f("hooks and rollout", both, 10, StatusError)
	f("rollout", imported, 0, StatusError)

	// The hook's view of a call wins: its start is the PreToolUse's.
	s := only(t, Build(both))
	for _, e := range hooks {
		if p, _ := event.Decode(e.Payload); p.Name() == event.PreToolUse && !callOf(t, s, p.Tool().ToolUseID).StartedAt.Equal(e.ReceivedAt) {
			t.Errorf("call %s starts at %v, its PreToolUse at %v", p.Tool().ToolUseID, callOf(t, s, p.Tool().ToolUseID).StartedAt, e.ReceivedAt)
		}
	}

	// Whatever the order and batches, the Group equals Build.
	rng := rand.New(rand.NewPCG(7, 7))
	for i := range 20 {
		sh := shuffled(rng, both)
		checkGroup(t, fmt.Sprintf("shuffled %d", i), both, batches(rng, sh, 1+rng.IntN(len(sh))))
	}
}

// TestRolloutDenied: a call a hook denied, known from the rollout alone.
func TestRolloutDenied(t *testing.T) {
	envs, err := rollout.Read("../codex/testdata/rollout-2026-11-25T15-19-47-01a2134a-a05f-7352-b020-bbc5e8c0633b.jsonl", "", "")
	if err != nil {
		t.Fatal(err)
	}
	s := only(t, Build(envs))
	if c := callOf(t, s, "call_000003"); c.Status != StatusDenied || c.Error != "nope" || s.Counts.Denials != 1 || s.Counts.Events != 0 {
		t.Errorf("denied call %+v, counts %+v", c, s.Counts)
	}
}

// TestRolloutFallbackKeys: hooks that send no tool_use_id (the id-less
// clients) and the rollout that has the call ids: each call is matched by
// its agent, turn, tool name and input, counted once, with the rollout's
// exit code — whichever arrives first.
func TestRolloutFallbackKeys(t *testing.T) {
	hooks, imported := codexRun(t)
	idless := make([]event.Envelope, len(hooks))
	for i, e := range hooks {
		var p map[string]json.RawMessage
		if err := json.Unmarshal(e.Payload, &p); err != nil {
			t.Fatal(err)
		}
		delete(p, "tool_use_id")
		e.Payload, _ = json.Marshal(p)
		idless[i] = e
	}
	f := func(name string, envs []event.Envelope) {
		t.Helper()
		s := only(t, Build(envs))
		if s.Counts.ToolCalls != 3 || len(s.ToolCalls) != 3 || s.Counts.Events != 10 {
			t.Fatalf("%s: %d calls, %d events: %+v", name, s.Counts.ToolCalls, s.Counts.Events, s.ToolCalls)
		}
		var statuses []string
		for _, c := range s.ToolCalls {
			if c.EndedAt == nil {
				t.Errorf("%s: call %+v never ended", name, c)
			}
			statuses = append(statuses, c.Status)
		}
		if fmt.Sprint(statuses) != "[ok ok error]" {
			t.Errorf("%s: statuses %v (exit 3 is an error only the rollout knows)", name, statuses)
		}
	}
	f("id-less hooks, then the rollout", append(append([]event.Envelope(nil), idless...), imported...))
	f("the rollout, then id-less hooks", append(append([]event.Envelope(nil), imported...), idless...))
	// Different inputs do not match: the calls stay apart.
	other := append([]event.Envelope(nil), idless...)
	for i, e := range other {
		if p, _ := event.Decode(e.Payload); p.Name() == event.PreToolUse || p.Name() == event.PostToolUse {
			other[i].Payload = []byte(strings.Replace(string(e.Payload), `"command":"`, `"command":"x`, 1))
		}
	}
	if s := only(t, Build(append(other, imported...))); s.Counts.ToolCalls != 6 {
		t.Errorf("other inputs: %d calls, want 6", s.Counts.ToolCalls)
	}

	both := append(append([]event.Envelope(nil), idless...), imported...)
	rng := rand.New(rand.NewPCG(9, 9))
	for i := range 20 {
		sh := shuffled(rng, both)
		checkGroup(t, fmt.Sprintf("shuffled %d", i), both, batches(rng, sh, 1+rng.IntN(len(sh))))
	}
}

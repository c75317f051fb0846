package attribution

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
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
	hooks = codexHooks(t, "testdata/codex-rollout/hooks.jsonl")
	imported, _, err := rollout.Read("../codex/testdata/rollout-2026-11-25T14-46-05-01a2132b-c636-7c31-93a8-aeaecf1768f7.jsonl", "", "")
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
	envs, _, err := rollout.Read("../codex/testdata/rollout-2026-11-25T15-19-47-01a2134a-a05f-7352-b020-bbc5e8c0633b.jsonl", "", "")
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
		// CallOf ties each hook event of a call and each rollout record
		// of it to the call, which both reported.
		if len(s.MatchedCalls) != 3 {
			t.Fatalf("%s: matched calls %+v", name, s.MatchedCalls)
		}
		for _, e := range envs {
			p, _ := event.Decode(e.Payload)
			tc := p.Tool()
			if tc == nil || p.Name() != event.PreToolUse && p.Name() != event.PostToolUse {
				continue
			}
			id := s.CallOf(e.ID, tc.ToolUseID)
			if id == "" && e.Kind == event.KindRollout {
				id = tc.ToolUseID // the call is stored under the rollout's id
			}
			c := callOf(t, s, id)
			if src := c.SourcesOf(p.Name()); src != SourceHook|SourceRollout {
				t.Errorf("%s: %s %s %q: call %s reported by %v", name, e.Kind, p.Name(), tc.ToolUseID, id, src.Names())
			}
		}
	}
	f("id-less hooks, then the rollout", append(append([]event.Envelope(nil), idless...), imported...))
	f("the rollout, then id-less hooks", append(append([]event.Envelope(nil), imported...), idless...))
	// Hooks received a minute earlier start each call before its rollout
	// record: the call keeps its synthetic id, which the rollout's joins.
	early := make([]event.Envelope, len(idless))
	for i, e := range idless {
		e.ReceivedAt = e.ReceivedAt.Add(-time.Minute)
		early[i] = e
	}
	f("id-less hooks a minute earlier", append(append([]event.Envelope(nil), early...), imported...))
	if s := only(t, Build(append(append([]event.Envelope(nil), early...), imported...))); !s.ToolCalls[0].SyntheticID {
		t.Errorf("hooks a minute earlier: call %+v has the rollout's id", s.ToolCalls[0])
	}
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
	both = append(append([]event.Envelope(nil), early...), imported...)
	for i := range 20 {
		sh := shuffled(rng, both)
		checkGroup(t, fmt.Sprintf("shuffled early %d", i), both, batches(rng, sh, 1+rng.IntN(len(sh))))
	}
}

// rolloutOf reads a real rollout of Codex 0.169 from codex/testdata.
func rolloutOf(t *testing.T, name string) []event.Envelope {
	t.Helper()
	return rolloutAt(t, "../codex/testdata/"+name)
}

// rolloutAt reads the rollout at path, as import --codex does.
func rolloutAt(t *testing.T, path string) []event.Envelope {
	t.Helper()
	envs, _, err := rollout.Read(path, "", "")
	if err != nil {
		t.Fatal(err)
	}
	return envs
}

// codexHook returns a Codex hook's envelope of payload p at the given
// time (RFC 3339), the n-th of a test.
func codexHook(t *testing.T, n int, at string, p map[string]any) event.Envelope {
	t.Helper()
	tm, err := time.Parse(time.RFC3339Nano, at)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(p)
	return event.Envelope{ID: envID(n), Runtime: event.RuntimeCodex, Kind: event.KindHook, ReceivedAt: tm, Payload: b}
}

// TestRolloutInterrupted: a command interrupted with Ctrl-C (a real
// rollout: its output "aborted by user", then turn_aborted, then its
// item_completed with exit code -1) is interrupted and counted as a
// failure, known from the rollout alone or merged with the hooks that
// fired (PreToolUse, then Interrupt: no PostToolUse).
func TestRolloutInterrupted(t *testing.T) {
	const session, turn = "01a229da-93cd-7040-bd45-f5ddb1d5c40a", "01a229da-93dd-7990-b276-cc903d1d1afd"
	imported := rolloutOf(t, "rollout-2026-11-30T00-28-40-"+session+".jsonl")
	common := func(name string) map[string]any {
		return map[string]any{"session_id": session, "turn_id": turn, "cwd": "/home/dev/src/demo", "hook_event_name": name,
			"model": "gpt-5.5", "permission_mode": "bypassPermissions"}
	}
	pre := common(event.PreToolUse)
	pre["tool_name"], pre["tool_use_id"], pre["tool_input"] = "Bash", "call_000016", map[string]string{"command": "sleep 30; echo late"}
	hooks := []event.Envelope{
		codexHook(t, 1, "2026-11-30T00:28:40.390Z", pre),
		codexHook(t, 2, "2026-11-30T00:28:46.135Z", common(event.Interrupt)),
	}
	f := func(name string, envs []event.Envelope) {
		t.Helper()
		s := only(t, Build(envs))
		c := callOf(t, s, "call_000016")
		if c.Status != StatusInterrupted || !c.Failed || c.EndedAt == nil || s.Counts.Failures != 1 || s.Counts.ToolCalls != 1 {
			t.Errorf("%s: call %+v, counts %+v", name, c, s.Counts)
		}
		if tc := s.Tools[0]; tc.ToolName != "Bash" || tc.Failures != 1 {
			t.Errorf("%s: tools %+v", name, s.Tools)
		}
	}
	f("rollout", imported)
	both := append(append([]event.Envelope(nil), hooks...), imported...)
	f("hooks and rollout", both)
	checkOrders(t, both)
}

// TestRolloutYielded: a command that yielded and was killed when `codex
// exec` ended (a real rollout; no PostToolUse hook fires for it) is an
// error with exit code -1, ended when its process did.
func TestRolloutYielded(t *testing.T) {
	s := only(t, Build(rolloutOf(t, "rollout-2026-11-30T00-30-20-01a229dc-1aa3-7a63-b2bf-bdf2419a639b.jsonl")))
	c := callOf(t, s, "call_000011")
	if c.Status != StatusError || !c.Failed || c.ExitCode == nil || *c.ExitCode != -1 || s.Counts.Failures != 1 {
		t.Fatalf("call %+v, counts %+v", c, s.Counts)
	}
	if c.EndedAt.Format(time.RFC3339Nano) != "2026-11-30T00:30:21.187Z" {
		t.Errorf("the call ended at %v, not when its process did", c.EndedAt)
	}
}

// TestRolloutPatchFailed: a patch Codex refused (a real rollout: no
// FileChange item, the output "apply_patch verification failed: …") is an
// error, counted as a failure, with a failed command beside it, from the
// rollout alone or with the hooks that fired (a PreToolUse: 0.169 fires no
// PostToolUse for a patch it refused). A Codex PostToolUse, which fires
// whatever the outcome (for `exit 3` too), does not overrule the failure
// the rollout records.
func TestRolloutPatchFailed(t *testing.T) {
	const session = "01a229dc-18be-7000-9cea-a05da2ec00c3"
	imported := rolloutOf(t, "rollout-2026-11-30T00-30-19-"+session+".jsonl")
	patch := "*** Begin Patch\n*** Update File: missing.md\n@@\n-old\n+new\n*** End Patch\n"
	refused := "apply_patch verification failed: Failed to read file to update /home/dev/src/demo/missing.md: No such file or directory (os error 2)"
	common := func(name string) map[string]any {
		return map[string]any{"session_id": session, "turn_id": "01a229dc-18e2-7153-a022-f30ef5be939f", "cwd": "/home/dev/src/demo",
			"hook_event_name": name, "model": "gpt-5.5", "permission_mode": "bypassPermissions",
			"tool_name": "apply_patch", "tool_use_id": "call_000003", "tool_input": map[string]string{"command": patch}}
	}
	post := common(event.PostToolUse)
	post["tool_response"] = refused
	hooks := []event.Envelope{codexHook(t, 1, "2026-11-30T00:30:19.967Z", common(event.PreToolUse))}
	f := func(name string, envs []event.Envelope) {
		t.Helper()
		s := only(t, Build(envs))
		c := callOf(t, s, "call_000003")
		if c.Status != StatusError || !c.Failed || c.Error != refused || s.Counts.Failures != 2 {
			t.Errorf("%s: patch %+v, counts %+v", name, c, s.Counts)
		}
		if c := callOf(t, s, "call_000006"); c.Status != StatusError || *c.ExitCode != 127 {
			t.Errorf("%s: command %+v", name, c)
		}
	}
	f("rollout", imported)
	both := append(append([]event.Envelope(nil), hooks...), imported...)
	f("hooks and rollout", both)
	checkOrders(t, both)
	blind := append(append([]event.Envelope(nil), both...), codexHook(t, 2, "2026-11-30T00:30:19.977Z", post))
	f("a PostToolUse, hooks and rollout", blind)
	checkOrders(t, blind)
	// The hooks alone cannot tell: the PostToolUse is the patch's result.
	if c := callOf(t, only(t, Build(blind[:1:1])), "call_000003"); c.Status != StatusPending {
		t.Errorf("PreToolUse alone: %+v", c)
	}
	if c := callOf(t, only(t, Build([]event.Envelope{blind[0], blind[len(blind)-1]})), "call_000003"); c.Status != StatusOK {
		t.Errorf("hooks alone: %+v", c)
	}
}

// TestRolloutOnlySession: a `codex exec` run with no hook installed,
// known from its rollout alone (real), has its prompt as its title, the
// turn's model, Codex as its runtime and its directory, and ends with its
// turn; a prompt the hooks also report counts once.
func TestRolloutOnlySession(t *testing.T) {
	imported := rolloutOf(t, "rollout-2026-11-30T00-30-19-01a229dc-18be-7000-9cea-a05da2ec00c3.jsonl")
	s := only(t, Build(imported))
	if s.Title != "Patch failure" || s.Model != "gpt-5.5" || s.Runtime != event.RuntimeCodex || s.CWD != "/home/dev/src/demo" ||
		s.Status != SessionEnded || s.EndedAt == nil || s.EndReason != "other" || s.Counts.Prompts != 1 || s.Counts.Events != 0 {
		t.Errorf("session %q model %q runtime %q cwd %q status %q ended %v (%q), counts %+v",
			s.Title, s.Model, s.Runtime, s.CWD, s.Status, s.EndedAt, s.EndReason, s.Counts)
	}
	if s.EndedAt.Format(time.RFC3339Nano) != "2026-11-30T00:30:20.174Z" || !s.LastEventAt.Equal(*s.EndedAt) {
		t.Errorf("ended at %v, last event at %v: want task_complete's time", s.EndedAt, s.LastEventAt)
	}
	// Until the turn completes, the session runs.
	var open []event.Envelope
	for _, e := range imported {
		if p, _ := event.Decode(e.Payload); p.Name() != event.SessionEnd {
			open = append(open, e)
		}
	}
	if s := only(t, Build(open)); s.Status != SessionRunning || s.EndedAt != nil {
		t.Errorf("before its end: %q %v", s.Status, s.EndedAt)
	}
	checkOrders(t, imported)
}

// TestRolloutOnlyFork: a thread forked through the app-server (real
// rollouts of Codex 0.169, the parent's and the fork's) that no hook saw
// is linked to the session it was forked from, as the fork's hooks link
// it: the rollout's first record names the parent (forked_from_id). With
// the fork's hooks too (its SessionStart(fork), which the hook read the
// same record for), the link and the fork's runs are the hooks' alone.
func TestRolloutOnlyFork(t *testing.T) {
	const parent, fork = "01a23316-345b-74a0-a31e-017bc0d13103", "01a23316-3758-7a81-a9c2-a6bb4415263b"
	imported := append(rolloutAt(t, "testdata/codex-fork/rollout-2026-12-01T19-30-22-"+parent+".jsonl"),
		rolloutOf(t, "rollout-2026-12-01T19-30-23-"+fork+".jsonl")...)
	f := func(name string, envs []event.Envelope, runs int, from Sources) {
		t.Helper()
		r := Build(envs)
		p, s := r.Session(parent), r.Session(fork)
		if len(r.Sessions) != 2 || p == nil || s == nil {
			t.Fatalf("%s: %d sessions", name, len(r.Sessions))
		}
		if s.ParentSessionID != parent || s.Lineage != LineageFork || len(s.Runs) != runs || s.Title != "Second thing" || s.ForkSources != from || p.ForkSources != 0 {
			t.Errorf("%s: fork parent %q lineage %q, %d runs, title %q, fork reported by %v", name, s.ParentSessionID, s.Lineage, len(s.Runs), s.Title, s.ForkSources.Names())
		}
		if p.ParentSessionID != "" || len(p.ChildSessionIDs) != 1 || p.ChildSessionIDs[0] != fork || len(p.Runs) != 1 || p.Runs[0].Source != "startup" {
			t.Errorf("%s: parent's parent %q, children %v, %d runs", name, p.ParentSessionID, p.ChildSessionIDs, len(p.Runs))
		}
		// Each has its own call: the fork's rollout copies none of its
		// parent's records.
		if c := callOf(t, s, "call_000008"); len(s.ToolCalls) != 1 || c.Status != StatusOK {
			t.Errorf("%s: fork's calls %+v", name, s.ToolCalls)
		}
		if len(p.ToolCalls) != 1 || p.ToolCalls[0].ToolUseID != "call_000003" {
			t.Errorf("%s: parent's calls %+v", name, p.ToolCalls)
		}
		checkOrders(t, envs)
	}
	// Each has the run its rollout records: the parent's startup, the
	// fork's.
	f("rollouts", imported, 1, SourceRollout)

	// The fork's SessionStart as its hook sends it (the shape of
	// Codex 0.169's, the parent read from the fork's rollout).
	start := codexHook(t, 1, "2026-12-01T19:30:23.760Z", map[string]any{
		"session_id": fork, "cwd": "/home/dev/src/demo", "hook_event_name": "SessionStart", "model": "gpt-5.5",
		"permission_mode": "default", "source": "fork",
		"transcript_path": "/home/dev/.codex/sessions/2026/12/01/rollout-2026-12-01T19-30-23-" + fork + ".jsonl",
	})
	start.ForkOf = parent
	withStart := append([]event.Envelope{start}, imported...)
	f("rollouts and the fork's SessionStart", withStart, 1, SourceHook|SourceRollout)

	// A later session of the same directory that no hook saw began in
	// no other's process: the rollout's SessionStart, followed by the
	// hook's, is no orphan a session could be forked from.
	later := append(withStart, rolloutAt(t, "testdata/codex-subagent/rollout-2026-12-02T01-02-55-01a23446-a8b8-7f03-83b6-760203bd13dd.jsonl")...)
	if s := Build(later).Session("01a23446-a8b8-7f03-83b6-760203bd13dd"); s == nil || s.ParentSessionID != "" || s.Lineage != "" {
		t.Errorf("a later session: %+v", s)
	}
	checkOrders(t, later)
}

// codexSubagentRun is one real `codex exec` run of Codex 0.169 that
// spawned a subagent (spawn_agent, wait_agent), captured twice: its hooks'
// payloads (testdata/codex-subagent/hooks.jsonl, with the times the hooks
// ran) and its two rollouts, the session's and the subagent's.
func codexSubagentRun(t *testing.T) (hooks, imported []event.Envelope) {
	t.Helper()
	hooks = codexHooks(t, "testdata/codex-subagent/hooks.jsonl")
	for _, name := range []string{"2026-12-02T01-02-55-01a23446-a8b8-7f03-83b6-760203bd13dd", "2026-12-02T01-02-56-01a23446-ad70-7ca2-bafc-64796f33e252"} {
		imported = append(imported, rolloutAt(t, "testdata/codex-subagent/rollout-"+name+".jsonl")...)
	}
	return hooks, imported
}

// TestRolloutSubagentPrompt: a Codex subagent's prompt (its parent's
// spawn message), which its hook (UserPromptSubmit in the subagent) and
// its rollout both report, is one prompt reported by both, as the main
// agent's prompt and every call are: the subagent's turn names it, there
// being no prompt id. Reported by one alone, it is shared by none.
func TestRolloutSubagentPrompt(t *testing.T) {
	const session, sub, subTurn, mainTurn = "01a23446-a8b8-7f03-83b6-760203bd13dd", "01a23446-ad70-7ca2-bafc-64796f33e252",
		"01a23446-ad80-7481-86ea-9ee12f9c119d", "01a23446-a939-7bf0-a548-94646b3449fe"
	hooks, imported := codexSubagentRun(t)
	both := append(append([]event.Envelope(nil), hooks...), imported...)
	s := only(t, Build(both))
	want := []PromptSources{
		{PromptID: mainTurn, Sources: SourceHook | SourceRollout},
		{AgentID: sub, TurnID: subTurn, Sources: SourceHook | SourceRollout},
	}
	if !reflect.DeepEqual(s.SharedPrompts, want) {
		t.Errorf("shared prompts %+v, want %+v", s.SharedPrompts, want)
	}
	if got := s.PromptSourcesOf(sub, "", subTurn); got != SourceHook|SourceRollout {
		t.Errorf("the subagent's prompt reported by %v", got.Names())
	}
	if got := s.PromptSourcesOf("", mainTurn, mainTurn); got != SourceHook|SourceRollout {
		t.Errorf("the main agent's prompt reported by %v", got.Names())
	}
	// Counted once, as before: a subagent's prompt is no prompt of the
	// user's.
	if s.Counts.Prompts != 1 || s.Counts.Agents != 2 || s.Counts.ToolCalls != 3 {
		t.Errorf("counts %+v", s.Counts)
	}
	for name, envs := range map[string][]event.Envelope{"hooks": hooks, "rollouts": imported} {
		if s := only(t, Build(envs)); len(s.SharedPrompts) != 0 || s.PromptSourcesOf(sub, "", subTurn) != 0 {
			t.Errorf("%s alone: shared prompts %+v", name, s.SharedPrompts)
		}
	}
	checkOrders(t, both)
}

// codexHooks reads the hooks' payloads of a captured Codex run, one
// {"t": seconds, "payload": …} a line, as the envelopes the hook made of
// them at those times.
func codexHooks(t *testing.T, path string) []event.Envelope {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var hooks []event.Envelope
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
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return hooks
}

// TestCodexSubagentNickname: the nickname Codex gives a subagent (its
// screen's name for it, "Maxwell"), which the spawning call's response
// carries beside the agent's id, names the agent in the model, whether the
// hooks or the rollouts reported the call; when the response names none,
// or no call is known (the subagent's rollout alone), the subagent's own
// rollout names it (its session_meta's agent_nickname).
func TestCodexSubagentNickname(t *testing.T) {
	const sub = "01a23446-ad70-7ca2-bafc-64796f33e252"
	hooks, imported := codexSubagentRun(t)
	both := append(append([]event.Envelope(nil), hooks...), imported...)
	subOnly := rolloutAt(t, "testdata/codex-subagent/rollout-2026-12-02T01-02-56-"+sub+".jsonl")
	// The spawn call's response without the nickname, in the hook's
	// payload and the parent's rollout.
	var unnamed []event.Envelope
	for _, e := range both {
		e.Payload = bytes.ReplaceAll(e.Payload, []byte(`,\"nickname\":\"Maxwell\"`), nil)
		if bytes.Contains(e.Payload, []byte(`"spawn_agent"`)) && bytes.Contains(e.Payload, []byte(`Maxwell`)) {
			t.Fatalf("the spawn call still names the nickname: %s", e.Payload)
		}
		unnamed = append(unnamed, e)
	}
	if s := only(t, Build(unnamed[:len(hooks)])); len(s.Agents) != 2 || s.Agents[1].Nickname != "" {
		t.Fatalf("the hooks without the response's nickname: agents %+v, want a subagent without one", s.Agents)
	}
	for name, envs := range map[string][]event.Envelope{"hooks": hooks, "rollouts": imported, "both": both,
		"the subagent's rollout alone": subOnly, "no nickname in the response": unnamed} {
		s := only(t, Build(envs))
		var got *Agent
		for _, a := range s.Agents {
			if a.AgentID == sub {
				got = a
			}
		}
		if got == nil || got.Nickname != "Maxwell" {
			t.Errorf("%s: subagent %+v, want nickname Maxwell", name, got)
		}
		if main := s.Agents[0]; main.AgentID != "" || main.Nickname != "" {
			t.Errorf("%s: main agent %+v has a nickname", name, main)
		}
	}
	checkOrders(t, unnamed)
}

// TestRolloutRuns: a session known from its rollouts alone has the runs
// its hooks report — a `codex exec` run's startup, ended with its turn,
// and (a real exec, then exec resume) the resume's —, and the hooks' runs
// win when both reported the session.
func TestRolloutRuns(t *testing.T) {
	type run struct {
		source string
		ended  bool
	}
	runsOf := func(s *Session) []run {
		var out []run
		for _, r := range s.Runs {
			out = append(out, run{r.Source, r.EndedAt != nil})
		}
		return out
	}
	hooks, imported := codexSubagentRun(t)
	fromHooks, fromFiles := only(t, Build(hooks)), only(t, Build(imported))
	if got, want := runsOf(fromFiles), runsOf(fromHooks); !reflect.DeepEqual(got, want) || len(want) != 1 {
		t.Errorf("runs read from the rollouts %+v, the hooks' %+v", got, want)
	}
	if !fromFiles.Runs[0].StartedAt.Before(fromFiles.Runs[0].EndedAt.Add(time.Nanosecond)) || fromFiles.EndedAt == nil {
		t.Errorf("rollouts' run %+v, session ended %v", fromFiles.Runs[0], fromFiles.EndedAt)
	}
	both := only(t, Build(append(append([]event.Envelope(nil), hooks...), imported...)))
	if !reflect.DeepEqual(both.Runs, fromHooks.Runs) {
		t.Errorf("runs of hooks and rollouts %+v, the hooks' %+v", both.Runs, fromHooks.Runs)
	}

	resumed := only(t, Build(rolloutAt(t, "testdata/codex-resume/rollout-2026-12-02T04-55-43-01a2351b-cb65-76a1-b806-bfab14d65ef5.jsonl")))
	if got, want := runsOf(resumed), []run{{"startup", true}, {"resume", true}}; !reflect.DeepEqual(got, want) {
		t.Errorf("exec, then exec resume: runs %+v, want %+v", got, want)
	}
}

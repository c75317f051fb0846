package attribution

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/hookwatch/hookwatch/claudecode"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/demo"
)

// claudeRun is one real run of Claude Code 2.1.197 (three subagents in
// parallel, each running a command) captured twice: the envelopes its
// hooks delivered to a collector (testdata/claude-transcript/
// envelopes.jsonl) and the transcripts it wrote (testdata/
// claude-transcript/projects), read by the importer into envelopes of kind
// transcript, with the hooks' host and user.
func claudeRun(t *testing.T) (hooks, imported []event.Envelope) {
	t.Helper()
	hooks, imported, err := demo.Transcripts("testdata/claude-transcript")
	if err != nil {
		t.Fatal(err)
	}
	return hooks, imported
}

// sessionKeys are what a session's hooks and its transcripts must agree on:
// its agents (identity, type, place in the tree) and its calls (identity,
// agent, outcome).
func sessionKeys(s *Session) []string {
	var out []string
	for _, a := range s.Agents {
		out = append(out, fmt.Sprintf("agent %q type %q parent %q spawn %q depth %d stopped %v", a.AgentID, deref(a.AgentType),
			deref(a.ParentAgentID), a.SpawnToolUseID, a.Depth, a.StoppedAt != nil && a.AgentID != ""))
	}
	for _, c := range s.ToolCalls {
		out = append(out, fmt.Sprintf("call %s %s agent %q parent %q status %s", c.ToolUseID, c.ToolName, c.AgentID, c.ParentToolUseID, c.Status))
	}
	slices.Sort(out)
	return out
}

// TestTranscriptMerge: a session reported by its hooks and read from its
// transcripts has each call, prompt and agent once — the counts are the
// hooks' alone —, plus the tokens only the transcripts carry; the
// transcripts alone give the same agents and calls, and no event.
func TestTranscriptMerge(t *testing.T) {
	hooks, imported := claudeRun(t)
	both := append(append([]event.Envelope(nil), hooks...), imported...)
	h, tr, b := only(t, Build(hooks)), only(t, Build(imported)), only(t, Build(both))
	if h.Counts.ToolCalls == 0 || h.Counts.Subagents != 3 || h.Counts.Prompts == 0 {
		t.Fatalf("the hooks' session: %+v", h.Counts)
	}
	if b.Counts != h.Counts {
		t.Errorf("hooks and transcripts count %+v, the hooks alone %+v", b.Counts, h.Counts)
	}
	if got, want := sessionKeys(b), sessionKeys(h); !slices.Equal(got, want) {
		t.Errorf("hooks and transcripts:\n%q\nthe hooks alone:\n%q", got, want)
	}
	if got, want := sessionKeys(tr), sessionKeys(h); !slices.Equal(got, want) {
		t.Errorf("the transcripts alone:\n%q\nthe hooks alone:\n%q", got, want)
	}
	if tr.Counts.Events != 0 || tr.Counts.Prompts != h.Counts.Prompts || tr.Counts.ToolCalls != h.Counts.ToolCalls {
		t.Errorf("the transcripts alone count %+v, the hooks %+v", tr.Counts, h.Counts)
	}
	if b.Usage == nil || tr.Usage == nil || fmt.Sprint(*b.Usage) != fmt.Sprint(*tr.Usage) {
		t.Errorf("usage with hooks %+v, transcripts alone %+v", b.Usage, tr.Usage)
	}
	for _, a := range b.Agents {
		if a.Usage == nil || a.Usage.InputTokens == 0 {
			t.Errorf("agent %q has no tokens: %+v", a.AgentID, a.Usage)
		}
	}
	// The hook's view of a call wins: its start is the PreToolUse's.
	for _, e := range hooks {
		if p, _ := event.Decode(e.Payload); p != nil && p.Name() == event.PreToolUse {
			if c := callOf(t, b, p.Tool().ToolUseID); !c.StartedAt.Equal(e.ReceivedAt) {
				t.Errorf("call %s starts at %v, its PreToolUse at %v", c.ToolUseID, c.StartedAt, e.ReceivedAt)
			}
		}
	}

	// Whatever the order, batches and repeats, the Group equals Build.
	rng := rand.New(rand.NewPCG(11, 11))
	for i := range 30 {
		sh := shuffled(rng, both)
		checkGroup(t, fmt.Sprintf("shuffled %d", i), both, batches(rng, sh, 1+rng.IntN(len(sh))))
	}
	checkGroup(t, "hooks first", both, [][]event.Envelope{hooks, imported})
	// As serve delivers them: the usage read from the transcripts while the
	// hooks report (the importer leaves out what the collector has), the
	// rest of them imported later.
	var usage, rest []event.Envelope
	for _, e := range imported {
		if p, _ := event.Decode(e.Payload); p != nil && p.Name() == event.TranscriptUsage {
			usage = append(usage, e)
		} else {
			rest = append(rest, e)
		}
	}
	g := checkGroup(t, "as serve delivers them", both, append(servedLive(hooks, usage, 5), rest))
	t.Logf("as serve delivers them: %d rebuilds", g.Rebuilds())
	checkGroup(t, "transcripts first", both, [][]event.Envelope{imported, hooks})
}

// servedLive batches hooks and imported, two streams of one session, as
// serve --watch-transcripts delivers them: the hooks' events in order, a
// few at a time, and after each batch the transcripts' records stamped
// before its last event, which sort before events applied already.
func servedLive(hooks, imported []event.Envelope, per int) [][]event.Envelope {
	ts := newTables()
	byOrder := func(a, b event.Envelope) int {
		return compareItems(newItem(&a, nil, &ts, nil), newItem(&b, nil, &ts, nil))
	}
	hooks, imported = slices.Clone(hooks), slices.Clone(imported)
	slices.SortFunc(hooks, byOrder)
	slices.SortFunc(imported, byOrder)
	var out [][]event.Envelope
	for len(hooks) > 0 {
		n := min(per, len(hooks))
		out = append(out, hooks[:n])
		last := hooks[n-1]
		hooks = hooks[n:]
		k := 0
		for k < len(imported) && byOrder(imported[k], last) < 0 {
			k++
		}
		if k > 0 {
			out = append(out, imported[:k])
			imported = imported[k:]
		}
	}
	return append(out, imported)
}

// TestTranscriptSources: of a real run reported by its hooks and read
// from its transcripts, every record the transcripts hold of a call's
// start or end, or of a subagent's start or stop, that a hook delivered
// too is a copy (Sources.Copy), and the hook's event names the
// transcript (Sources.Also); a call whose hook events are missing is the
// transcript's alone, and its records are no copies.
func TestTranscriptSources(t *testing.T) {
	hooks, imported := claudeRun(t)
	kept, lost := demo.LoseCall(hooks)
	all := append(append([]event.Envelope(nil), kept...), imported...)
	s := only(t, Build(all))
	calls := map[string]*ToolCall{}
	for _, c := range s.ToolCalls {
		calls[c.ToolUseID] = c
	}
	agents := map[string]*Agent{}
	for _, a := range s.Agents {
		agents[a.AgentID] = a
	}
	sourcesOf := func(e event.Envelope) (Sources, bool) {
		p, err := event.Decode(e.Payload)
		if err != nil {
			t.Fatal(err)
		}
		if tc := p.Tool(); tc != nil && tc.ToolUseID != "" {
			c := calls[tc.ToolUseID]
			if c == nil {
				t.Fatalf("no call %s", tc.ToolUseID)
			}
			return c.SourcesOf(p.HookEventName), p.HookEventName != event.PermissionRequest
		}
		if a := agents[p.AgentID]; a != nil && (p.HookEventName == event.SubagentStart || p.HookEventName == event.SubagentStop) {
			return a.SourcesOf(p.HookEventName), true
		}
		return 0, false
	}
	copies, own, also := 0, 0, 0
	for _, e := range imported {
		src, ok := sourcesOf(e)
		if !ok {
			continue
		}
		p, _ := event.Decode(e.Payload)
		isLost := p.Tool() != nil && p.Tool().ToolUseID == lost
		if src.Copy(e.Kind) == isLost {
			t.Errorf("%s %s (lost %v): sources %v, copy %v", p.HookEventName, e.ID, isLost, src.Names(), src.Copy(e.Kind))
		}
		if isLost {
			own++
		} else {
			copies++
		}
	}
	for _, e := range kept {
		src, ok := sourcesOf(e)
		if !ok {
			continue
		}
		if src.Copy(e.Kind) {
			t.Errorf("hook event %s is a copy", e.ID)
		}
		if src.Also(e.Kind) == SourceTranscript {
			also++
		}
	}
	if copies == 0 || own == 0 || also == 0 {
		t.Fatalf("copies %d, transcript's own %d, hook events also in the transcript %d: want some of each", copies, own, also)
	}
	t.Logf("copies %d, transcript's own %d, hook events also read from the transcript %d", copies, own, also)
}

// TestTranscriptOnlyFork: a session forked with --resume X --fork-session,
// by real clients (testdata/claude-fork-<version>: its hooks' envelopes and
// the transcripts of X and of the fork). Read from its transcripts alone,
// the fork names X as its hooks do: the transcript's first record is read
// as the SessionStart(fork) a 2.1.332 hook sends, with the parent the hook
// proves from the same transcript. Seen both ways, the fork has one start,
// which both reported (2.1.332); a 2.1.197 client reports the fork's start
// under X as a resume, and that run of X is still the one the fork took
// over.
func TestTranscriptOnlyFork(t *testing.T) {
	f := func(dir, parent, fork string, hookFork Sources) {
		t.Helper()
		hooks, imported, err := demo.Transcripts("testdata/" + dir)
		if err != nil {
			t.Fatal(err)
		}
		check := func(name string, envs []event.Envelope, from Sources, runs int) {
			t.Helper()
			r := Build(envs)
			p, s := r.Session(parent), r.Session(fork)
			if len(r.Sessions) != 2 || p == nil || s == nil {
				t.Fatalf("%s %s: %d sessions", dir, name, len(r.Sessions))
			}
			if s.ParentSessionID != parent || s.Lineage != LineageFork || s.ForkSources != from || p.ForkSources != 0 {
				t.Errorf("%s %s: fork parent %q lineage %q, fork reported by %v", dir, name, s.ParentSessionID, s.Lineage, s.ForkSources.Names())
			}
			if p.ParentSessionID != "" || !slices.Equal(p.ChildSessionIDs, []string{fork}) {
				t.Errorf("%s %s: parent's parent %q, children %v", dir, name, p.ParentSessionID, p.ChildSessionIDs)
			}
			forkedTo := ""
			for _, run := range p.Runs {
				forkedTo += run.ForkedTo
			}
			if want := map[bool]string{true: fork}[hookFork == 0 && runs > 0]; forkedTo != want {
				t.Errorf("%s %s: the parent's runs forked to %q, want %q", dir, name, forkedTo, want)
			}
			if len(s.Runs) != runs {
				t.Errorf("%s %s: the fork has %d runs", dir, name, len(s.Runs))
			}
			checkOrders(t, envs)
		}
		check("transcripts", imported, SourceTranscript, 0)
		check("hooks", hooks, hookFork, 1)
		check("hooks and transcripts", append(append([]event.Envelope(nil), hooks...), imported...), hookFork|SourceTranscript, 1)
	}
	f("claude-fork-2.1.332", "95f71cd0-68f7-43c7-aa4f-2d4f54f69415", "ade817eb-d549-4f37-8dec-fccc9a21af82", SourceHook)
	f("claude-fork-2.1.197", "ef495ce9-4e55-4d23-8aab-80eff1bceacd", "7726c990-717e-4482-a085-bca66fb9d688", 0)
}

// TestSubagentAPIError: a subagent whose model request failed (a real run
// of Claude Code, testdata/claude-apierror-<version>) is reported by a
// StopFailure of its agent_id and no SubagentStop, its transcript ends
// with the client's own record of the error. From the hooks alone, the
// transcripts alone and both, the subagent is stopped, failed with the
// error kind the client named, its last message the error text; the main
// agent's StopFailure still fails the session, and the records the client
// wrote itself count as no response.
func TestSubagentAPIError(t *testing.T) {
	for _, version := range []string{"2.1.197", "2.1.332"} {
		hooks, imported, err := demo.Transcripts("testdata/claude-apierror-" + version)
		if err != nil {
			t.Fatal(err)
		}
		var failure *event.StopFailureInput
		for _, e := range hooks {
			p, err := event.Decode(e.Payload)
			if err != nil {
				t.Fatal(err)
			}
			if f, ok := p.Event.(*event.StopFailureInput); ok && p.AgentID != "" {
				failure = f
			}
		}
		if failure == nil || failure.Error == "" || !strings.HasPrefix(failure.LastAssistantMessage, "API Error: 400 ") {
			t.Fatalf("%s: the subagent's StopFailure: %+v", version, failure)
		}
		both := append(append([]event.Envelope(nil), hooks...), imported...)
		var keys []string
		for _, c := range []struct {
			name string
			envs []event.Envelope
			from Sources
		}{{"hooks", hooks, SourceHook}, {"transcripts", imported, SourceTranscript}, {"both", both, SourceHook | SourceTranscript}} {
			s := only(t, Build(c.envs))
			if len(s.Agents) != 2 {
				t.Fatalf("%s %s: %d agents", version, c.name, len(s.Agents))
			}
			sub := s.Agents[1]
			if sub.StoppedAt == nil || sub.StopError != failure.Error || sub.LastMessage != failure.LastAssistantMessage || sub.StopSources != c.from {
				t.Errorf("%s %s: the subagent stopped %v, error %q, last message %q, stop told by %v", version, c.name,
					sub.StoppedAt, sub.StopError, sub.LastMessage, sub.StopSources.Names())
			}
			if s.Agents[0].StopError != "" {
				t.Errorf("%s %s: the main agent's stop error %q", version, c.name, s.Agents[0].StopError)
			}
			if c.from&SourceHook != 0 && s.Status != SessionFailed {
				t.Errorf("%s %s: session status %q", version, c.name, s.Status)
			}
			for _, a := range s.Agents {
				if a.Usage != nil && slices.Contains(a.Usage.Models, claudecode.SyntheticModel) {
					t.Errorf("%s %s: agent %q answered by %q", version, c.name, a.AgentID, a.Usage.Models)
				}
			}
			if k := sessionKeys(s); keys == nil {
				keys = k
			} else if !slices.Equal(k, keys) {
				t.Errorf("%s %s:\n%q\nthe hooks alone:\n%q", version, c.name, k, keys)
			}
			checkOrders(t, c.envs)
		}
	}
}

// TestSyntheticUsage: a usage envelope of model claudecode.SyntheticModel,
// which earlier imports made of the records the client wrote itself, is no
// response: the session comes out as without it (the envelope is one
// the model skips).
func TestSyntheticUsage(t *testing.T) {
	hooks, imported, err := demo.Transcripts("testdata/claude-apierror-2.1.197")
	if err != nil {
		t.Fatal(err)
	}
	envs := append(append([]event.Envelope(nil), hooks...), imported...)
	want := mustJSON(t, Build(envs).Sessions)
	var usage *event.Envelope
	for i, e := range imported {
		if p, err := event.Decode(e.Payload); err == nil && p.Name() == event.TranscriptUsage {
			usage = &imported[i]
		}
	}
	if usage == nil {
		t.Fatal("no usage envelope imported")
	}
	var m map[string]any
	if err := json.Unmarshal(usage.Payload, &m); err != nil {
		t.Fatal(err)
	}
	m["model"], m["message_id"] = claudecode.SyntheticModel, "synthetic-1"
	m["usage"] = map[string]any{"input_tokens": 0, "output_tokens": 0}
	synthetic := *usage
	synthetic.ID = "synthetic-usage"
	if synthetic.Payload, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	r := Build(append(envs, synthetic))
	if got := mustJSON(t, r.Sessions); !bytes.Equal(got, want) || r.Skipped != 1 {
		t.Errorf("a usage of model %q changed the model (%d skipped)", claudecode.SyntheticModel, r.Skipped)
	}
}

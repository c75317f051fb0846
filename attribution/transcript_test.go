package attribution

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/importer"
	"github.com/hookwatch/hookwatch/ingest"
	"github.com/hookwatch/hookwatch/privacy"
)

// claudeRun is one real run of Claude Code 2.1.197 (three subagents in
// parallel, each running a command) captured twice: the envelopes its
// hooks delivered to a collector (testdata/claude-transcript/
// envelopes.jsonl) and the transcripts it wrote (testdata/
// claude-transcript/projects), read by the importer into envelopes of kind
// transcript, with the hooks' host and user.
func claudeRun(t *testing.T) (hooks, imported []event.Envelope) {
	t.Helper()
	f, err := os.Open("testdata/claude-transcript/envelopes.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var e event.Envelope
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		hooks = append(hooks, e)
	}
	files, err := importer.Find([]string{"testdata/claude-transcript/projects"})
	if err != nil {
		t.Fatal(err)
	}
	pl := &ingest.Pipeline{Origin: ingest.Origin{Host: hooks[0].Host, User: hooks[0].User}, Privacy: privacy.DefaultOptions()}
	_, err = importer.Run(context.Background(), files, importer.Options{Pipeline: pl,
		Deliver: func(_ context.Context, envs []event.Envelope) error {
			imported = append(imported, envs...)
			return nil
		}})
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
	byOrder := func(a, b event.Envelope) int { return compareEnvelopes(&a, &b) }
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

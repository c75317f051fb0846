package attribution

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/pricing"
)

// usageRec is one transcript record of an API response.
func usageRec(msg, model string, in, out, cacheRead, cacheWrite int) ev {
	return ev{"hook_event_name": event.TranscriptUsage, "message_id": msg, "model": model, "uuid": "u-" + msg,
		"usage": map[string]any{"input_tokens": in, "output_tokens": out, "cache_read_input_tokens": cacheRead, "cache_creation_input_tokens": cacheWrite}}
}

func TestUsage(t *testing.T) {
	envs := stream(t,
		sessionStart("startup"),
		prompt("first").with("prompt_id", "p1"),
		// One response written as three records: the usage repeats, and
		// only the last has the final output.
		usageRec("m1", "claude-sonnet-4-5", 100, 1, 1000, 0).with("prompt_id", "p1"),
		usageRec("m1", "claude-sonnet-4-5", 100, 1, 1000, 0).with("prompt_id", "p1", "uuid", "u-m1b"),
		usageRec("m1", "claude-sonnet-4-5", 100, 40, 1000, 0).with("prompt_id", "p1", "uuid", "u-m1c"),
		spawn("toolu_1", "Explore"),
		subStart("a1", "Explore"),
		usageRec("m2", "claude-haiku-4-5-20251001", 7, 3, 0, 500).with("prompt_id", "p1").in("a1", "Explore"),
		subStop("a1", "Explore"),
		prompt("second").with("prompt_id", "p2"),
		usageRec("m3", "claude-opus-4-8", 10, 5, 0, 0).with("prompt_id", "p2"),
		sessionEnd("other"),
	)
	s := only(t, Build(envs))
	main, sub := agentOf(t, s, ""), agentOf(t, s, "a1")
	f := func(what string, got *Usage, in, out, read, write int64, responses, unpriced int, cost float64) {
		t.Helper()
		if got == nil {
			t.Fatalf("%s: no usage", what)
		}
		if got.InputTokens != in || got.OutputTokens != out || got.CacheReadTokens != read || got.CacheCreationTokens != write ||
			got.Responses != responses || got.Unpriced != unpriced || fmt.Sprintf("%.9f", got.CostUSD) != fmt.Sprintf("%.9f", cost) {
			t.Fatalf("%s: %+v; want in %d out %d read %d write %d, %d responses, %d unpriced, $%.9f", what, *got, in, out, read, write, responses, unpriced, cost)
		}
	}
	sonnet := (100*3 + 40*15 + 1000*0.3) / 1e6
	haiku := (7*1 + 3*5 + 500*1.25) / 1e6
	f("main agent", main.Usage, 110, 45, 1000, 0, 2, 1, sonnet)
	f("subagent", sub.Usage, 7, 3, 0, 500, 1, 0, haiku)
	f("session", s.Usage, 117, 48, 1000, 500, 3, 1, sonnet+haiku)
	if len(s.Turns) != 2 || s.Turns[0].PromptID != "p1" || s.Turns[1].PromptID != "p2" {
		t.Fatalf("turns %+v", s.Turns)
	}
	f("turn p1", &s.Turns[0].Usage, 107, 43, 1000, 500, 2, 0, sonnet+haiku)
	f("turn p2", &s.Turns[1].Usage, 10, 5, 0, 0, 1, 1, 0)
	// Usage records are not hook events, and do not keep a run open.
	if s.Counts.Events != 7 || main.Events != 5 || s.Status != SessionEnded {
		t.Fatalf("events %d (main %d), status %s", s.Counts.Events, main.Events, s.Status)
	}

	// A price table that knows the model prices it.
	pricing.SetDefault(&pricing.Table{Date: "2026-11-01", Models: map[string]pricing.Price{"claude-opus-4-8": {Input: 5, Output: 25}}})
	defer pricing.SetDefault(nil)
	s = only(t, Build(envs))
	f("turn p2 priced", &s.Turns[1].Usage, 10, 5, 0, 0, 1, 0, (10*5+5*25)/1e6)

	// The group's changes, applied in any order, end where Build does.
	rng := rand.New(rand.NewPCG(7, 7))
	for i := range 20 {
		checkGroup(t, fmt.Sprintf("shuffled %d", i), envs, batches(rng, shuffled(rng, envs), 1+rng.IntN(len(envs))))
	}
}

// TestUsageFromRollout: a Codex rollout's token_count records come as
// TranscriptUsage envelopes of kind rollout, summed like a transcript's.
func TestUsageFromRollout(t *testing.T) {
	envs := stream(t, sessionStart("startup"), usageRec("thread:14", "gpt-5.5", 120, 30, 1000, 0).with("prompt_id", "turn-1"))
	envs[1].Kind, envs[1].Runtime = event.KindRollout, event.RuntimeCodex
	s := only(t, Build(envs))
	u := agentOf(t, s, "").Usage
	if u == nil || u.InputTokens != 120 || u.OutputTokens != 30 || u.CacheReadTokens != 1000 || u.Responses != 1 || u.Unpriced != 1 {
		t.Fatalf("usage %+v", u)
	}
	if len(s.Turns) != 1 || s.Turns[0].PromptID != "turn-1" || s.Counts.Events != 1 {
		t.Fatalf("turns %+v, events %d", s.Turns, s.Counts.Events)
	}
}

// TestAgentModel: each agent names the one model it ran. In the real run
// of Claude Code (testdata/claude-transcript) one Explore subagent
// answered with Haiku while the main agent and the other two ran Opus:
// its hooks name no subagent's model, its transcripts do. The main agent
// has the session's model; a subagent never does: without a model of its
// own (no response read yet, or several models) it names none.
func TestAgentModel(t *testing.T) {
	const haikuAgent = "aefc1976db18e23bf"
	hooks, imported := claudeRun(t)
	both := only(t, Build(append(append([]event.Envelope(nil), hooks...), imported...)))
	for _, a := range both.Agents {
		want := "claude-opus-4-8"
		if a.AgentID == haikuAgent {
			want = "claude-haiku-4-5-20251001"
		}
		if a.Model != want || a.Usage == nil || len(a.Usage.Models) != 1 || a.Usage.Models[0] != want {
			t.Errorf("hooks and transcripts: agent %q model %q (usage %+v), want %q", a.AgentID, a.Model, a.Usage, want)
		}
	}
	h := only(t, Build(hooks))
	for _, a := range h.Agents {
		if want := map[bool]string{true: h.Model}[a.AgentID == ""]; a.Model != want {
			t.Errorf("hooks alone: agent %q model %q, want %q (session's %q)", a.AgentID, a.Model, want, h.Model)
		}
	}
	if v := VirtualSession(both, both.Agents, agentOf(t, both, haikuAgent)); v.Model != "claude-haiku-4-5-20251001" {
		t.Errorf("the Haiku subagent as a session has model %q", v.Model)
	}

	envs := stream(t,
		sessionStart("startup").with("model", "claude-opus-4-8"),
		prompt("first").with("prompt_id", "p1"),
		usageRec("m1", "claude-opus-4-8", 10, 1, 0, 0).with("prompt_id", "p1"),
		usageRec("m2", "claude-sonnet-4-5", 10, 1, 0, 0).with("prompt_id", "p1"),
		spawn("toolu_1", "Explore"),
		subStart("a1", "Explore"),
		usageRec("m3", "claude-haiku-4-5-20251001", 7, 3, 0, 0).with("prompt_id", "p1").in("a1", "Explore"),
		usageRec("m4", "claude-sonnet-4-5", 7, 3, 0, 0).with("prompt_id", "p1").in("a1", "Explore"),
		subStop("a1", "Explore"),
		spawn("toolu_2", "Plan"),
		subStart("a2", "Plan"),
		subStop("a2", "Plan"),
		// Codex names a subagent's own model on its events: no response
		// needs reading.
		subStart("a3", "default").with("model", "gpt-5.5-mini"),
		sessionEnd("other"),
	)
	s := only(t, Build(envs))
	for id, want := range map[string]string{
		"":   "claude-opus-4-8", // the session's, though two models answered it
		"a1": "",                // two models answered, no event named one
		"a2": "",                // no response read: not the session's
		"a3": "gpt-5.5-mini",
	} {
		if got := agentOf(t, s, id).Model; got != want {
			t.Errorf("agent %q model %q, want %q", id, got, want)
		}
	}
	// Without the session's model, the main agent's one answering model.
	noModel := stream(t, sessionStart("startup"), prompt("first").with("prompt_id", "p1"),
		usageRec("m1", "claude-opus-4-8", 10, 1, 0, 0).with("prompt_id", "p1"))
	if got := agentOf(t, only(t, Build(noModel)), "").Model; got != "claude-opus-4-8" {
		t.Errorf("main agent without a session model: %q", got)
	}
	rng := rand.New(rand.NewPCG(9, 9))
	for i := range 20 {
		checkGroup(t, fmt.Sprintf("shuffled %d", i), envs, batches(rng, shuffled(rng, envs), 1+rng.IntN(len(envs))))
	}
}

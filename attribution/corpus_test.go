package attribution

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/classify"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/demo"
)

func TestClaudeCode2197Golden(t *testing.T) {
	res := Build(loadCorpus(t, "claude-code-2.1.197.jsonl", event.RuntimeClaudeCode))
	golden(t, "claude-code-2.1.197.golden.json", mustJSON(t, res))
}

func TestClaudeCode2332Golden(t *testing.T) {
	res := Build(load2332(t))
	golden(t, "claude-code-2.1.332.golden.json", mustJSON(t, res))
}

// The 2.1.332 capture's sessions: X, resumed and then forked into Y.
const (
	capture2332X = "74975720-1a50-4d17-9463-df6fabfdeb7c"
	capture2332Y = "03760423-27f3-4a00-8d63-b14ec37ed695"
)

// load2332 returns the 2.1.332 capture in envelopes as the hook makes them:
// the fork's SessionEnd names the parent its transcript was copied from
// (its SessionStart cannot: the transcript is not written yet; the capture
// kept payloads, not transcripts; ingest's tests read transcript files).
func load2332(t testing.TB) []event.Envelope {
	envs := loadCorpus(t, "claude-code-2.1.332.jsonl", event.RuntimeClaudeCode)
	n := 0
	for i := range envs {
		p, err := event.Decode(envs[i].Payload)
		if err != nil {
			t.Fatal(err)
		}
		if p.SessionID == capture2332Y && p.Name() == event.SessionEnd {
			envs[i].ForkOf = capture2332X
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d SessionEnds of the fork in the 2.1.332 capture, want 1", n)
	}
	return envs
}

// TestFork2332: a fork on 2.1.332 sends SessionStart(fork) under the new id
// only; the parent the hook read from its transcript links it.
func TestFork2332(t *testing.T) {
	f := func(envs []event.Envelope, wantParent string) {
		t.Helper()
		res := Build(envs)
		var y, x *Session
		for _, s := range res.Sessions {
			switch s.SessionID {
			case capture2332Y:
				y = s
			case capture2332X:
				x = s
			}
		}
		if x == nil || y == nil {
			t.Fatalf("sessions %v: missing X or Y", res.Sessions)
		}
		if y.Lineage != LineageFork || y.ParentSessionID != wantParent {
			t.Errorf("fork: lineage %q parent %q, want %q %q", y.Lineage, y.ParentSessionID, LineageFork, wantParent)
		}
		if x.ParentSessionID != "" {
			t.Errorf("X has parent %q", x.ParentSessionID)
		}
		if got, want := slices.Contains(x.ChildSessionIDs, capture2332Y), wantParent == capture2332X; got != want {
			t.Errorf("X's children %v: has Y %v, want %v", x.ChildSessionIDs, got, want)
		}
	}
	envs := load2332(t)
	f(envs, capture2332X)
	f(reversed(envs), capture2332X)
	// Without the hook's finding, no event names the parent.
	plain := loadCorpus(t, "claude-code-2.1.332.jsonl", event.RuntimeClaudeCode)
	f(plain, "")
	// What an envelope claims cannot make a cycle or link across groups:
	// the parent must have begun before the fork, in its project.
	set := func(forkOf string) []event.Envelope {
		envs := load2332(t)
		for i := range envs {
			if envs[i].ForkOf != "" {
				envs[i].ForkOf = forkOf
			}
		}
		return envs
	}
	f(set(capture2332Y), "")
	later := set("later")
	later = append(later, event.Envelope{ID: envID(len(later)), Runtime: event.RuntimeClaudeCode, Kind: event.KindHook, ReceivedAt: at(len(later)),
		Payload: json.RawMessage(`{"session_id":"later","transcript_path":"/home/dev/.claude/projects/-home-dev-src-demo/later.jsonl","hook_event_name":"SessionStart","source":"startup"}`)})
	f(later, "")
	// A parent whose events were not captured is named all the same.
	f(set("uncaptured"), "uncaptured")
	// Another event naming a parent is not the hook's finding.
	moved := loadCorpus(t, "claude-code-2.1.332.jsonl", event.RuntimeClaudeCode)
	for i := range moved {
		if p, _ := event.Decode(moved[i].Payload); p.SessionID == capture2332Y && p.Name() == event.Stop {
			moved[i].ForkOf = capture2332X
		}
	}
	f(moved, "")
	// A session that is not a fork keeps no parent, whatever it claims.
	claims := load2332(t)
	for i := range claims {
		if p, _ := event.Decode(claims[i].Payload); p.SessionID == capture2332X && p.Name() == event.SessionEnd {
			claims[i].ForkOf = capture2332Y
		}
	}
	f(claims, capture2332X)
}

// corpora are the real payload captures, each wrapped in envelopes in file
// order.
func corpora(t testing.TB) map[string][]event.Envelope {
	return map[string][]event.Envelope{
		"claude-code-2.1.197":     loadCorpus(t, "claude-code-2.1.197.jsonl", event.RuntimeClaudeCode),
		"claude-code-2.1.332":     load2332(t),
		"public-captures":         loadCorpus(t, "public-captures.jsonl", event.RuntimeClaudeCode),
		"codex-0.169":             loadCorpus(t, "codex-0.169.jsonl", event.RuntimeCodex),
		"claude-apierror-2.1.197": apiErrorRun(t, "2.1.197"),
		"claude-apierror-2.1.332": apiErrorRun(t, "2.1.332"),
	}
}

// apiErrorRun returns a real run of Claude Code (testdata/
// claude-apierror-<version>) whose subagent's model request, then the main
// agent's, failed with an API error (400): the envelopes its hooks spooled
// and those the importer read from its transcripts, together.
func apiErrorRun(t testing.TB, version string) []event.Envelope {
	hooks, imported, err := demo.Transcripts("testdata/claude-apierror-" + version)
	if err != nil {
		t.Fatal(err)
	}
	return append(hooks, imported...)
}

func TestPublicCaptures(t *testing.T) {
	envs := loadCorpus(t, "public-captures.jsonl", event.RuntimeClaudeCode)
	r := Build(envs)
	mustJSON(t, r)
	events := r.Skipped
	for _, s := range r.Sessions {
		events += s.Counts.Events
	}
	if events != len(envs) {
		t.Fatalf("%d envelopes accounted for, want %d", events, len(envs))
	}
	// Task (the older name of Agent) is delegation; subagents seen only at
	// their start or stop still get an agent of their type.
	tasks, builder := 0, false
	for _, s := range r.Sessions {
		for _, c := range s.ToolCalls {
			if c.ToolName == "Task" {
				tasks++
				if c.Family != classify.FamilyDelegation {
					t.Fatalf("Task is %s", c.Family)
				}
			}
		}
		for _, a := range s.Agents {
			if a.AgentID == "a02f136ff80fff7b9" && deref(a.AgentType) == "builder" && a.Depth == 1 && a.StoppedAt != nil {
				builder = true
			}
		}
	}
	if tasks != 3 || !builder || len(r.Sessions) != 17 {
		t.Fatalf("%d Task calls, builder agent %v, %d sessions", tasks, builder, len(r.Sessions))
	}
}

func TestCodex(t *testing.T) {
	r := Build(loadCorpus(t, "codex-0.169.jsonl", event.RuntimeCodex))
	mustJSON(t, r)
	var sub *Agent
	for _, s := range r.Sessions {
		if s.Runtime != event.RuntimeCodex {
			t.Fatalf("session %s runtime %q", s.SessionID, s.Runtime)
		}
		for _, a := range s.Agents {
			if a.AgentID != "" {
				sub = a
			}
		}
	}
	// spawn_agent's response is JSON text naming agent_id.
	if sub == nil || sub.ResolvedBy != ResolvedByToolResponse || sub.SpawnToolUseID != "call_000003" || deref(sub.AgentType) != "default" {
		t.Fatalf("codex subagent %+v", sub)
	}
	if sub.TranscriptPath == "" || sub.LastMessage == "" {
		t.Fatalf("codex subagent transcript %q message %q", sub.TranscriptPath, sub.LastMessage)
	}
	// The run interrupted while `sleep 30` ran.
	var interrupted int
	for _, s := range r.Sessions {
		interrupted += countStatus(s, StatusInterrupted)
	}
	if interrupted != 1 {
		t.Fatalf("%d interrupted calls, want 1", interrupted)
	}
	// A main agent's call's prompt is the Codex turn its PreToolUse names,
	// as a Claude Code call's is the prompt_id its events carry; a
	// subagent's turn is no user prompt.
	turns := map[[2]string]string{} // of session and call
	for _, e := range loadCorpus(t, "codex-0.169.jsonl", event.RuntimeCodex) {
		var p struct {
			Event   string `json:"hook_event_name"`
			Session string `json:"session_id"`
			Call    string `json:"tool_use_id"`
			Turn    string `json:"turn_id"`
		}
		if json.Unmarshal(e.Payload, &p) == nil && p.Event == event.PreToolUse {
			turns[[2]string{p.Session, p.Call}] = p.Turn
		}
	}
	calls := 0
	for _, s := range r.Sessions {
		for _, c := range s.ToolCalls {
			if want, ok := turns[[2]string{s.SessionID, c.ToolUseID}]; ok {
				calls++
				if c.AgentID != "" {
					want = ""
				}
				if c.PromptID != want || want == "" && c.AgentID == "" {
					t.Errorf("call %s: prompt %q, want the turn %q", c.ToolUseID, c.PromptID, want)
				}
			}
		}
	}
	if calls == 0 {
		t.Fatal("no call of a PreToolUse")
	}
}

func countStatus(s *Session, status string) int {
	n := 0
	for _, c := range s.ToolCalls {
		if c.Status == status {
			n++
		}
	}
	return n
}

// shuffled returns envs in a random order with some envelopes repeated, and
// some repeated with their received_at in another time zone (the same
// instant).
func shuffled(rng *rand.Rand, envs []event.Envelope) []event.Envelope {
	out := append([]event.Envelope(nil), envs...)
	for range rng.IntN(len(envs)/2 + 1) {
		d := envs[rng.IntN(len(envs))]
		if rng.IntN(2) == 0 {
			d.ReceivedAt = d.ReceivedAt.In(time.FixedZone("X", 3600))
		}
		out = append(out, d)
	}
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

func TestOrderIndependence(t *testing.T) {
	all := []event.Envelope(nil)
	sets := corpora(t)
	for _, name := range []string{"claude-code-2.1.197", "public-captures", "codex-0.169"} {
		all = append(all, sets[name]...)
	}
	// The corpora reuse envelope ids; give the merged set its own.
	for i := range all {
		all[i].ID = envID(i)
	}
	sets["all"] = all
	for name, envs := range sets {
		t.Run(name, func(t *testing.T) {
			want := Build(envs)
			rng := rand.New(rand.NewPCG(1, uint64(len(envs))))
			for i := range 50 {
				got := Build(shuffled(rng, envs))
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("order %d: result differs:\n%s\nwant:\n%s", i, mustJSON(t, got), mustJSON(t, want))
				}
			}
			g := NewGroup()
			for _, e := range shuffled(rng, envs) {
				g.Apply(e)
			}
			if !reflect.DeepEqual(g.Result(), want) || g.Len() != len(envs) {
				t.Fatalf("Group differs from Build (%d envelopes)", g.Len())
			}
		})
	}
}

// TestConflictingDuplicates: envelopes that share an id but not their
// content are resolved the same way whatever the order.
func TestConflictingDuplicates(t *testing.T) {
	envs := loadCorpus(t, "claude-code-2.1.197.jsonl", event.RuntimeClaudeCode)
	rng := rand.New(rand.NewPCG(7, 7))
	var variants []event.Envelope
	for range 20 {
		d := envs[rng.IntN(len(envs))]
		src := envs[rng.IntN(len(envs))]
		d.Payload = src.Payload // same id, other content
		d.ReceivedAt = d.ReceivedAt.Add(time.Duration(rng.IntN(3)-1) * time.Second)
		variants = append(variants, d)
	}
	input := append(append([]event.Envelope(nil), envs...), variants...)
	want := Build(input)
	for i := range 50 {
		if got := Build(shuffled(rng, input)); !reflect.DeepEqual(got, want) {
			t.Fatalf("order %d: result differs", i)
		}
	}
}

// TestCorpusResolutionFallbacks replays the 2.1.197 corpus as the hook
// would store it under each resolution rule alone, and checks that every
// rule finds the same spawning calls: (a) with the sidecar on every event
// after SubagentStart (the client writes it late), (b) with the Agent
// response replaced by a privacy preview, (c) with no Agent response at all.
func TestCorpusResolutionFallbacks(t *testing.T) {
	spawnOf := map[string]string{"a43b7af849cd70f20": "toolu_00000013", "a0b378cebfb773646": "toolu_00000014"}
	edit := func(transform func(p map[string]any, e *event.Envelope) bool) []event.Envelope {
		var out []event.Envelope
		for _, e := range loadCorpus(t, "claude-code-2.1.197.jsonl", event.RuntimeClaudeCode) {
			var p map[string]any
			if err := json.Unmarshal(e.Payload, &p); err != nil {
				t.Fatal(err)
			}
			if !transform(p, &e) {
				continue
			}
			b, err := json.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			e.Payload = b
			out = append(out, e)
		}
		return out
	}
	f := func(name string, envs []event.Envelope, by string) {
		t.Helper()
		s := Build(envs).Session("0e2e0b5d-7136-4322-8086-c38ed16b10ad")
		for id, spawn := range spawnOf {
			a := agentOf(t, s, id)
			if a.SpawnToolUseID != spawn || deref(a.ParentAgentID) != "" || a.Depth != 1 || a.ResolvedBy != by {
				t.Fatalf("%s: agent %s spawned by %q (%s), want %q (%s)", name, id, a.SpawnToolUseID, a.ResolvedBy, spawn, by)
			}
		}
	}
	f("sidecar", edit(func(p map[string]any, e *event.Envelope) bool {
		id, _ := p["agent_id"].(string)
		if spawn, ok := spawnOf[id]; ok && p["hook_event_name"] != "SubagentStart" {
			e.Subagent = &event.SubagentMeta{AgentType: p["agent_type"].(string), ToolUseID: spawn, SpawnDepth: 1}
		}
		return true
	}), ResolvedBySidecar)
	f("preview", edit(func(p map[string]any, e *event.Envelope) bool {
		if p["hook_event_name"] == "PostToolUse" && p["tool_name"] == "Agent" {
			full, _ := json.Marshal(p["tool_response"])
			p["tool_response"] = map[string]any{"hookwatch_capture": "preview", "bytes": len(full), "head": string(full[:100])}
		}
		return true
	}), ResolvedByToolResponse)
	f("types only", edit(func(p map[string]any, e *event.Envelope) bool {
		return p["hook_event_name"] != "PostToolUse" || p["tool_name"] != "Agent"
	}), ResolvedBySubagentType)
}

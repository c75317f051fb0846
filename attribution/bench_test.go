package attribution

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/event"
)

// syntheticSession returns a session of n events in which the main agent
// spawns subagents five at a time (the fifth of each batch spawned by the
// fourth, so the tree is two levels deep), each making tool calls; the
// events of a batch's subagents interleave round-robin. Half the subagents
// carry the sidecar; the others are resolved from the Agent response.
func syntheticSession(tb testing.TB, n, subagents int) []event.Envelope {
	evs := []ev{sessionStart("startup"), prompt("build it")}
	type sub struct {
		id, typ, spawn string
		parent         *sub
	}
	subs := make([]*sub, subagents)
	for i := range subs {
		subs[i] = &sub{id: fmt.Sprintf("a%016x", i+1), typ: []string{"Explore", "general-purpose", "Plan"}[i%3], spawn: fmt.Sprintf("toolu_spawn%03d", i)}
		if i%5 == 4 {
			subs[i].parent = subs[i-1]
		}
	}
	byParent := func(s *sub, e ev) ev {
		if s.parent != nil {
			return e.in(s.parent.id, s.parent.typ)
		}
		return e
	}
	calls := (n - len(evs) - subagents*4) / 3 / subagents
	for b := 0; b < subagents; b += 5 {
		batch := subs[b:min(b+5, subagents)]
		bodies := make([][]ev, len(batch))
		for j, s := range batch {
			evs = append(evs, byParent(s, spawn(s.spawn, s.typ)), subStart(s.id, s.typ))
			in := func(e ev) ev {
				e = e.in(s.id, s.typ)
				if (b+j)%2 == 0 {
					e = e.with("_sidecar", &event.SubagentMeta{AgentType: s.typ, ToolUseID: s.spawn, SpawnDepth: 1})
				}
				return e
			}
			for c := range calls {
				id := fmt.Sprintf("toolu_%03d_%05d", b+j, c)
				input := map[string]any{"command": fmt.Sprintf("go test ./pkg%d/... -run Test%d", c%17, c)}
				first, second := in(pre("Bash", id, input)), in(post("Bash", id, input, map[string]any{"stdout": "ok  \tpkg\t0.01s\n", "stderr": "", "interrupted": false}).with("duration_ms", 120))
				if c%29 == 7 {
					// The PreToolUse read after the PostToolUse (a
					// clock that went back): the call's start moves.
					first, second = second, first
				}
				bodies[j] = append(bodies[j],
					first, second,
					in(ev{"hook_event_name": "PostToolBatch", "tool_calls": []any{map[string]any{"tool_name": "Bash", "tool_use_id": id, "tool_input": input, "tool_response": "ok"}}}),
				)
			}
		}
		for k := 0; k < 3*calls; k++ {
			for j := range batch {
				evs = append(evs, bodies[j][k])
			}
		}
		for _, s := range batch {
			resp := spawned(s.spawn, s.typ, map[string]any{"status": "completed", "agentId": s.id, "content": []any{map[string]any{"type": "text", "text": "done"}}})
			evs = append(evs, subStop(s.id, s.typ), byParent(s, resp))
		}
	}
	for len(evs) < n {
		evs = append(evs, ev{"hook_event_name": "Notification", "message": "waiting"})
	}
	return stream(tb, evs[:n]...)
}

func BenchmarkBuild(b *testing.B) {
	envs := syntheticSession(b, 20000, 50)
	r := Build(envs)
	s := only(b, r)
	if s.Counts.Subagents != 50 || s.Counts.Events != 20000 {
		b.Fatalf("synthetic session: %d subagents, %d events", s.Counts.Subagents, s.Counts.Events)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		Build(envs)
	}
}

// BenchmarkGroupApply measures the live model: one more event applied to a
// Group holding the 20,000-event session, and its changes taken.
func BenchmarkGroupApply(b *testing.B) {
	envs := syntheticSession(b, 20001, 50)
	g := NewGroup()
	g.Apply(envs[:20000]...)
	g.Changes()
	last := envs[20000]
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		e := last
		e.ID = fmt.Sprintf("new-%09d", i)
		e.ReceivedAt = last.ReceivedAt.Add(time.Duration(i) * time.Microsecond)
		g.Apply(e)
		g.Changes()
	}
	if g.Rebuilds() != 0 {
		b.Fatalf("%d rebuilds", g.Rebuilds())
	}
}

// benchGroupSession measures batch(i, last), envelopes applied to a Group
// holding the 20,000-event session whose last envelope was received at
// last, and the changes taken; it reports the agents and calls changed
// per op, the rows a store is given.
func benchGroupSession(b *testing.B, batch func(i int, last time.Time) []event.Envelope) {
	envs := syntheticSession(b, 20000, 50)
	g := NewGroup()
	g.Apply(envs...)
	g.Changes()
	last := envs[len(envs)-1].ReceivedAt
	rows := 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		g.Apply(batch(i, last)...)
		for _, s := range g.Changes().Sessions {
			rows += len(s.ToolCalls) + len(s.Agents)
		}
	}
	b.ReportMetric(float64(rows)/float64(b.N), "rows/op")
	if g.Rebuilds() != 0 {
		b.Fatalf("%d rebuilds", g.Rebuilds())
	}
}

// BenchmarkGroupRelink measures an event that may change the lineage (a
// CLAUDE.md loaded lazily, as Claude Code does when a tool reads a
// directory that has one) on the 20,000-event session: the lineage is
// derived again, and must cost what the sessions' starts, ends and
// compactions do, not what all their events do.
func BenchmarkGroupRelink(b *testing.B) {
	loaded := stream(b, ev{"hook_event_name": "InstructionsLoaded", "file_path": "/w/p/pkg/CLAUDE.md", "memory_type": "Project", "load_reason": "nested_traversal"})[0]
	benchGroupSession(b, func(i int, last time.Time) []event.Envelope {
		e := loaded
		e.ID = fmt.Sprintf("new-%09d", i)
		e.ReceivedAt = last.Add(time.Duration(i+1) * time.Microsecond)
		return []event.Envelope{e}
	})
}

// BenchmarkGroupLate measures what serve --watch-transcripts sends a live
// session every look: the usage of the API responses since the last look,
// stamped by the transcript, so before the hooks' latest events, on the
// 20,000-event session.
func BenchmarkGroupLate(b *testing.B) {
	const perLook = 4
	template := stream(b, usageRec("msg_000000000", "claude-sonnet-4-5", 100, 40, 1000, 0))[0]
	benchGroupSession(b, func(i int, last time.Time) []event.Envelope {
		batch := make([]event.Envelope, perLook)
		for k := range batch {
			n := i*perLook + k
			e := template
			e.Payload = bytes.Replace(e.Payload, []byte("msg_000000000"), fmt.Appendf(nil, "msg_%09d", n), 1)
			e.ID = fmt.Sprintf("usage-%09d", n)
			e.ReceivedAt = last.Add(-time.Second + time.Duration(n)*time.Microsecond)
			batch[k] = e
		}
		return batch
	})
}

// BenchmarkGroupLateEvidence measures a late event that derives its
// session again (a transcript's record of a call the hooks reported, read
// after their later events) on the 20,000-event session: what the store is
// given is what moved.
func BenchmarkGroupLateEvidence(b *testing.B) {
	envs := syntheticSession(b, 20000, 50)
	var post event.Envelope
	for _, e := range envs[len(envs)/2:] {
		if p, _ := event.Decode(e.Payload); p != nil && p.Name() == event.PostToolUse {
			post = e
			break
		}
	}
	post.Kind = event.KindTranscript
	benchGroupSession(b, func(i int, last time.Time) []event.Envelope {
		e := post
		e.ID = fmt.Sprintf("evidence-%09d", i)
		e.ReceivedAt = last.Add(-time.Second + time.Duration(i)*time.Microsecond)
		return []event.Envelope{e}
	})
}

func TestSyntheticSession(t *testing.T) {
	s := only(t, Build(syntheticSession(t, 2000, 10)))
	if s.Counts.Subagents != 10 {
		t.Fatalf("%d subagents", s.Counts.Subagents)
	}
	for _, a := range s.Agents[1:] {
		want := 1
		if a.ParentAgentID != nil && *a.ParentAgentID != "" {
			want = 2
		}
		if a.SpawnToolUseID == "" || a.Depth != want || a.ResolvedBy == ResolvedByNone {
			t.Fatalf("agent %+v", a)
		}
	}
	if s.Agents[5].ParentAgentID == nil || *s.Agents[5].ParentAgentID != s.Agents[4].AgentID {
		t.Fatalf("agent 5's parent %q, want agent 4 %s", deref(s.Agents[5].ParentAgentID), s.Agents[4].AgentID)
	}
}

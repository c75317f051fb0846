package attribution

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/hookwatch/hookwatch/event"
)

// mirror is what a store holds after applying every Changes of a Group in
// turn, as the collector stores them: one summary per session, agents
// upserted by id, calls upserted by start and id after the row at the start
// they moved from is deleted (store.ModelBatch.ToolCalls).
type mirror struct {
	sessions map[string]*Session
	agents   map[string]map[string]*Agent
	calls    map[string]map[callKey]*ToolCall
	aliases  map[string]string
}

// callKey is the key of a call's row in a store.
type callKey struct {
	start time.Time
	id    string
}

func newMirror() *mirror {
	m := &mirror{}
	m.clear()
	return m
}

func (m *mirror) clear() {
	m.sessions, m.agents, m.calls = map[string]*Session{}, map[string]map[string]*Agent{}, map[string]map[callKey]*ToolCall{}
}

func (m *mirror) apply(ch Changes) {
	if ch.Reset {
		m.clear()
	}
	m.aliases = ch.Aliases
	for _, sc := range ch.Sessions {
		id := sc.Session.SessionID
		m.sessions[id] = sc.Session
		if m.agents[id] == nil || sc.Reset {
			m.agents[id], m.calls[id] = map[string]*Agent{}, map[callKey]*ToolCall{}
		}
		for _, a := range sc.Agents {
			m.agents[id][a.AgentID] = a
		}
		for _, c := range sc.ToolCalls {
			for _, from := range c.MovedFrom() {
				delete(m.calls[id], callKey{from.UTC(), c.ToolUseID})
			}
			m.calls[id][callKey{c.StartedAt.UTC(), c.ToolUseID}] = c
		}
	}
}

// result rebuilds a Result from the mirror, ordered as Build orders it.
func (m *mirror) result(skipped int) *Result {
	res := &Result{Skipped: skipped, Sessions: []*Session{}}
	for id, s := range m.sessions {
		c := *s
		for _, a := range m.agents[id] {
			c.Agents = append(c.Agents, a)
		}
		slices.SortFunc(c.Agents, compareAgents)
		for _, tc := range m.calls[id] {
			c.ToolCalls = append(c.ToolCalls, tc)
		}
		slices.SortFunc(c.ToolCalls, compareCalls)
		if c.ToolCalls == nil {
			c.ToolCalls = []*ToolCall{}
		}
		res.Sessions = append(res.Sessions, &c)
	}
	slices.SortFunc(res.Sessions, func(a, b *Session) int {
		if c := a.StartedAt.Compare(b.StartedAt); c != 0 {
			return c
		}
		return strings.Compare(a.SessionID, b.SessionID)
	})
	if len(m.aliases) > 0 {
		res.Aliases = m.aliases
	}
	return res
}

// batches splits envs into consecutive batches of random sizes (1 to max).
func batches(rng *rand.Rand, envs []event.Envelope, max int) [][]event.Envelope {
	var out [][]event.Envelope
	for len(envs) > 0 {
		n := min(1+rng.IntN(max), len(envs))
		out = append(out, envs[:n])
		envs = envs[n:]
	}
	return out
}

// nearlyOrdered returns envs in canonical order with a few neighbours
// swapped and a few envelopes repeated, as concurrent hooks deliver them.
func nearlyOrdered(rng *rand.Rand, envs []event.Envelope) []event.Envelope {
	out := append([]event.Envelope(nil), envs...)
	for range len(out) / 20 {
		i := rng.IntN(len(out))
		j := min(i+1+rng.IntN(3), len(out)-1)
		out[i], out[j] = out[j], out[i]
	}
	for range len(out) / 20 {
		i := rng.IntN(len(out))
		out = slices.Insert(out, min(i+rng.IntN(5), len(out)), out[i])
	}
	return out
}

// checkGroup applies envs to a Group in the given batches, taking Changes
// after each, and checks that both the Group's Result and the store the
// changes build are byte for byte Build of envs. It does so twice: with
// Apply, and with ApplyDecoded given each envelope's typed views as the
// collector's admission makes them (viewsOf), which the group keeps as
// they are. It returns the first group.
func checkGroup(t *testing.T, name string, envs []event.Envelope, parts [][]event.Envelope) *Group {
	t.Helper()
	want := mustJSON(t, Build(envs))
	views := make([][]*event.Payload, len(parts))
	for i, p := range parts {
		views[i] = viewsOf(p)
	}
	g := checkApplied(t, name+", Apply", want, parts, nil)
	checkApplied(t, name+", ApplyDecoded", want, parts, views)
	return g
}

// checkApplied applies parts to a new Group, with ApplyDecoded and
// payloads[i] for parts[i] (Apply when payloads is nil), taking Changes
// after each, and checks that both the Group's Result and the store the
// changes build are byte for byte want.
func checkApplied(t *testing.T, name string, want []byte, parts [][]event.Envelope, payloads [][]*event.Payload) *Group {
	t.Helper()
	g, m := NewGroup(), newMirror()
	for i, p := range parts {
		if payloads == nil {
			g.Apply(p...)
		} else {
			g.ApplyDecoded(p, payloads[i])
		}
		m.apply(g.Changes())
	}
	if got := mustJSON(t, g.Result()); !bytes.Equal(got, want) {
		t.Fatalf("%s: Group result differs from Build:\n%s", name, firstDiff(got, want))
	}
	if got := mustJSON(t, m.result(g.skipped)); !bytes.Equal(got, want) {
		t.Fatalf("%s: the model built from Changes differs from Build:\n%s", name, firstDiff(got, want))
	}
	return g
}

// viewsOf returns the typed views of each envelope's payload as the
// collector's admission makes them (event.ViewsOf of its members), nil
// where they cannot be made.
func viewsOf(envs []event.Envelope) []*event.Payload {
	out := make([]*event.Payload, len(envs))
	for i := range envs {
		if ms, _, err := event.SplitMembers(envs[i].Payload, nil); err == nil {
			out[i], _ = event.ViewsOf(ms)
		}
	}
	return out
}

// firstDiff shows the first line where got and want differ, with context.
func firstDiff(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			lo := max(0, i-8)
			return fmt.Sprintf("line %d:\n got: %s\nwant: %s\ncontext (want):\n%s", i+1, g[i], w[i], strings.Join(w[lo:min(len(w), i+4)], "\n"))
		}
	}
	return fmt.Sprintf("lengths differ: %d lines vs %d", len(g), len(w))
}

// TestGroupEqualsBuild is the property the collector relies on: however
// the envelopes of the real captures and of random sessions are ordered,
// split into batches and repeated, the Group and the rows its Changes
// write equal Build of them.
func TestGroupEqualsBuild(t *testing.T) {
	sets := corpora(t)
	var all []event.Envelope
	for _, name := range []string{"claude-code-2.1.197", "claude-code-2.1.332", "public-captures", "codex-0.169"} {
		all = append(all, sets[name]...)
	}
	for i := range all {
		all[i].ID = envID(i)
	}
	sets["all"] = all
	sets["synthetic"] = syntheticSession(t, 800, 12)
	for name, envs := range sets {
		t.Run(name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, uint64(len(envs))))
			// In order, one at a time: the live case.
			g := checkGroup(t, "in order", envs, batches(rng, envs, 1))
			t.Logf("in order, one at a time: %d rebuilds for %d envelopes", g.Rebuilds(), len(envs))
			for i := range 20 {
				checkGroup(t, fmt.Sprintf("in order, batches %d", i), envs, batches(rng, envs, 1+rng.IntN(40)))
				near := nearlyOrdered(rng, envs)
				checkGroup(t, fmt.Sprintf("nearly ordered %d", i), envs, batches(rng, near, 1+rng.IntN(10)))
				sh := shuffled(rng, envs)
				checkGroup(t, fmt.Sprintf("shuffled %d", i), envs, batches(rng, sh, 1+rng.IntN(len(sh))))
			}
		})
	}
}

// TestGroupAppendsWithoutRebuild: a live session streamed in order is
// rebuilt only for the events that touch lineage, not per event.
func TestGroupAppendsWithoutRebuild(t *testing.T) {
	envs := syntheticSession(t, 5000, 20)
	g := NewGroup()
	g.Apply(envs[:1]...)
	g.Changes()
	for _, e := range envs[1:] {
		g.Apply(e)
		ch := g.Changes()
		if ch.Reset {
			t.Fatalf("rebuilt at %s", e.ID)
		}
		if len(ch.Sessions) != 1 || len(ch.Sessions[0].ToolCalls) > 2 || len(ch.Sessions[0].Agents) > 3 {
			t.Fatalf("one event changed %d sessions, %d calls, %d agents", len(ch.Sessions), len(ch.Sessions[0].ToolCalls), len(ch.Sessions[0].Agents))
		}
	}
	if g.Rebuilds() != 0 {
		t.Fatalf("%d rebuilds", g.Rebuilds())
	}
}

// TestGroupLateEnvelope: an envelope that sorts before what was applied
// derives its session again, not the group, and the changes say so; one
// that can change the lineage (a SessionStart) rebuilds the group.
func TestGroupLateEnvelope(t *testing.T) {
	envs := stream(t, sessionStart("startup"), prompt("hi"), pre("Bash", "t1", bash("ls")), post("Bash", "t1", bash("ls"), "ok"),
		prompt("again").sess("s2"))
	g := NewGroup()
	g.Apply(envs[0], envs[1], envs[3], envs[4])
	g.Changes()
	g.Apply(envs[2])
	ch := g.Changes()
	if ch.Reset || g.Rebuilds() != 0 || len(ch.Sessions) != 1 || !ch.Sessions[0].Reset {
		t.Fatalf("group reset %v, %d rebuilds, %d sessions changed", ch.Reset, g.Rebuilds(), len(ch.Sessions))
	}
	if c := ch.Sessions[0].ToolCalls[0]; c.Status != StatusOK || c.DurationMS == nil || *c.DurationMS != 250 {
		t.Fatalf("call after the late PreToolUse: %+v", c)
	}
	late := stream(t, sessionStart("resume"))[0]
	late.ID, late.ReceivedAt = envID(99), envs[1].ReceivedAt.Add(time.Millisecond)
	g.Apply(late)
	if ch := g.Changes(); !ch.Reset || g.Rebuilds() != 1 {
		t.Fatalf("a late SessionStart: group reset %v, %d rebuilds", ch.Reset, g.Rebuilds())
	}
}

// TestGroupLateUsage: the usage of API responses that arrives after later
// events (serve --watch-transcripts reads it from the transcripts) is
// applied to its session as it stands, which reports its agent's new
// tokens and nothing else; a late record that could change what the
// session keeps first-come derives the session again. Either way the group
// equals Build.
func TestGroupLateUsage(t *testing.T) {
	envs := syntheticSession(t, 2000, 10)
	at := envs[len(envs)-1].ReceivedAt.Add(-time.Second)
	late := func(n int, e ev) event.Envelope {
		x := stream(t, e)[0]
		x.ID, x.ReceivedAt = envID(100000+n), at.Add(time.Duration(n)*time.Millisecond)
		return x
	}
	g := NewGroup()
	g.Apply(envs...)
	g.Changes()
	sub := only(t, g.Result()).Agents[1]

	batch := []event.Envelope{
		late(1, usageRec("m1", "claude-sonnet-4-5", 100, 40, 1000, 0)),
		late(2, usageRec("m2", "claude-sonnet-4-5", 7, 3, 0, 500).in(sub.AgentID, deref(sub.AgentType))),
		late(3, usageRec("m1", "claude-sonnet-4-5", 100, 90, 1000, 0).with("uuid", "u-m1b")),
	}
	envs = append(envs, batch...)
	g.Apply(batch...)
	ch := g.Changes()
	if ch.Reset || len(ch.Sessions) != 1 || ch.Sessions[0].Reset || len(ch.Sessions[0].ToolCalls) != 0 || len(ch.Sessions[0].Agents) != 2 {
		t.Fatalf("late usage: group reset %v, %d sessions changed, session reset %v, %d calls and %d agents changed",
			ch.Reset, len(ch.Sessions), ch.Sessions[0].Reset, len(ch.Sessions[0].ToolCalls), len(ch.Sessions[0].Agents))
	}
	if g.Rederived() != 0 {
		t.Fatalf("late usage derived its session again %d times", g.Rederived())
	}
	if u := ch.Sessions[0].Session.Usage; u == nil || u.OutputTokens != 93 {
		t.Fatalf("session usage after the late responses: %+v", u)
	}
	if got, want := mustJSON(t, g.Result()), mustJSON(t, Build(envs)); !bytes.Equal(got, want) {
		t.Fatalf("late usage: Group differs from Build:\n%s", firstDiff(got, want))
	}

	// The same response claimed by another agent: whose it is depends on
	// which record comes first, so the session is derived again, and
	// reports the two agents whose tokens moved.
	other := late(4, usageRec("m2", "claude-sonnet-4-5", 9, 9, 0, 0).with("uuid", "u-m2b"))
	other.ReceivedAt = at.Add(-time.Millisecond)
	envs = append(envs, other)
	g.Apply(other)
	if ch := g.Changes(); ch.Reset || len(ch.Sessions) != 1 || ch.Sessions[0].Reset || len(ch.Sessions[0].ToolCalls) != 0 || len(ch.Sessions[0].Agents) != 2 {
		t.Fatalf("a late response of another agent: group reset %v, %d sessions changed, session reset %v, %d calls and %d agents changed",
			ch.Reset, len(ch.Sessions), ch.Sessions[0].Reset, len(ch.Sessions[0].ToolCalls), len(ch.Sessions[0].Agents))
	}
	if got, want := mustJSON(t, g.Result()), mustJSON(t, Build(envs)); !bytes.Equal(got, want) {
		t.Fatalf("late response of another agent: Group differs from Build:\n%s", firstDiff(got, want))
	}
	if g.Rebuilds() != 0 || g.Rederived() != 1 {
		t.Fatalf("%d rebuilds, the session derived again %d times (want once)", g.Rebuilds(), g.Rederived())
	}
}

// TestGroupRestate: a group that applied events whose changes another
// writer stored only in part (a standby taking over from a writer that
// died) brings the store up to date by restating its sessions, and keeps
// it so by its changes alone.
func TestGroupRestate(t *testing.T) {
	envs := append(syntheticSession(t, 3000, 20), stream(t, sessionStart("startup").sess("other"), prompt("hi").sess("other"))...)
	want := mustJSON(t, Build(envs))
	parts := batches(rand.New(rand.NewPCG(7, 11)), envs, 50)
	standby, writer, m := NewGroup(), NewGroup(), newMirror()
	died, takeover := len(parts)/3, len(parts)/2
	for i, p := range parts[:takeover] {
		standby.Apply(p...)
		standby.Changes() // not stored
		if i < died {
			writer.Apply(p...)
			m.apply(writer.Changes())
		}
	}
	standby.Restate("no-such-session")
	for _, id := range standby.order {
		standby.Restate(id)
	}
	ch := standby.Changes()
	if ch.Reset || len(ch.Sessions) != len(standby.order) || !ch.Sessions[0].Reset {
		t.Fatalf("restated: group reset %v, %d of %d sessions", ch.Reset, len(ch.Sessions), len(standby.order))
	}
	m.apply(ch)
	storeRest(t, standby, m, parts[takeover:], want)
}

// storeRest has the group that took over apply the batches left, storing
// its changes in m, and checks that the model stored across the takeover is
// want, Build's of every batch.
func storeRest(t *testing.T, g *Group, m *mirror, rest [][]event.Envelope, want []byte) {
	t.Helper()
	for _, p := range rest {
		g.Apply(p...)
		m.apply(g.Changes())
	}
	if got := mustJSON(t, m.result(g.skipped)); !bytes.Equal(got, want) {
		t.Fatalf("the model stored across the takeover differs from Build:\n%s", firstDiff(got, want))
	}
}

// TestGroupRestateRows: a standby that notes in which batch each row last
// changed restates, when it takes over, only the rows that changed after
// the last batch the writer stored (a session derived again since, whole),
// and the model stored across the takeover is Build's.
func TestGroupRestateRows(t *testing.T) {
	envs := append(syntheticSession(t, 3000, 20), stream(t, sessionStart("startup").sess("other"), prompt("hi").sess("other"))...)
	want := mustJSON(t, Build(envs))
	parts := batches(rand.New(rand.NewPCG(7, 11)), envs, 50)
	standby, writer, m := NewGroup(), NewGroup(), newMirror()
	died, takeover := len(parts)/3, len(parts)/2
	// The batch each row of each session last changed in, and in which
	// the session was last reported whole.
	type marks struct {
		whole         int
		agents, calls map[string]int
	}
	changed := map[string]*marks{}
	for i, p := range parts[:takeover] {
		standby.Apply(p...)
		ch := standby.Changes() // not stored
		for _, sc := range ch.Sessions {
			id := sc.Session.SessionID
			mk := changed[id]
			if mk == nil || ch.Reset || sc.Reset {
				mk = &marks{whole: i, agents: map[string]int{}, calls: map[string]int{}}
				changed[id] = mk
			}
			for _, a := range sc.Agents {
				mk.agents[a.AgentID] = i
			}
			for _, c := range sc.ToolCalls {
				mk.calls[c.ToolUseID] = i
			}
		}
		if i < died {
			writer.Apply(p...)
			m.apply(writer.Changes())
		}
	}
	standby.RestateRows("no-such-session", func(string) bool { return true }, func(string) bool { return true })
	calls := 0
	for _, id := range standby.order {
		mk := changed[id]
		calls += len(mk.calls)
		if mk.whole >= died {
			standby.Restate(id)
			continue
		}
		standby.RestateRows(id, func(a string) bool { return mk.agents[a] >= died }, func(c string) bool { return mk.calls[c] >= died })
	}
	ch := standby.Changes()
	restated := 0
	for _, sc := range ch.Sessions {
		restated += len(sc.ToolCalls)
	}
	if ch.Reset || len(ch.Sessions) != len(standby.order) || restated == 0 || restated >= calls {
		t.Fatalf("restated: group reset %v, %d of %d sessions, %d of %d calls", ch.Reset, len(ch.Sessions), len(standby.order), restated, calls)
	}
	m.apply(ch)
	if got, at := mustJSON(t, m.result(standby.skipped)), mustJSON(t, Build(slices.Concat(parts[:takeover]...))); !bytes.Equal(got, at) {
		t.Fatalf("the model stored at the takeover differs from Build:\n%s", firstDiff(got, at))
	}
	storeRest(t, standby, m, parts[takeover:], want)
}

// TestGroupApplyDecoded: payloads decoded by the caller (the collector's
// admission) give the model Build gives, statusLines included. The group
// reads them as they are given, typed views alone (event.ViewsOf, as the
// collector's admission makes them) or whole (event.Decode), and leaves
// them as they are: what it keeps of one shares none of its objects (but
// for an event other than a tool's) and points into none of its bytes.
func TestGroupApplyDecoded(t *testing.T) {
	decoders := map[string]func([]byte) *event.Payload{
		"decoded": func(b []byte) *event.Payload {
			p, _ := event.Decode(b)
			return p
		},
		"views": func(b []byte) *event.Payload {
			return viewsOf([]event.Envelope{{Payload: b}})[0]
		},
	}
	for name, envs := range corpora(t) {
		for how, decode := range decoders {
			t.Run(name+"/"+how, func(t *testing.T) {
				want := mustJSON(t, Build(envs))
				payloads := make([]*event.Payload, len(envs))
				for i := range envs {
					payloads[i] = decode(envs[i].Payload)
				}
				var parts [][]event.Envelope
				var given [][]*event.Payload
				for i := 0; i < len(envs); i += 7 {
					j := min(i+7, len(envs))
					parts, given = append(parts, envs[i:j]), append(given, payloads[i:j])
				}
				g := checkApplied(t, how, want, parts, given)
				tools := 0
				for i, p := range payloads {
					it, _ := g.byID.get(envs[i].ID)
					if p == nil || it == nil || it.id != envs[i].ID {
						continue
					}
					if (p.Raw != nil) != (how == "decoded") {
						t.Fatalf("payload %d changed: its map of members is %v", i, p.Raw)
					}
					if it.p.Common == &p.Common || it.p.Effort != nil && it.p.Effort == p.Effort || it.p.Name() != p.Name() {
						t.Fatalf("payload %d: its common fields kept, not a copy, or its name lost (%q)", i, it.p.Name())
					}
					if tc := it.p.Tool(); tc != nil {
						tools++
						if _, pre := p.Event.(*event.PreToolUseInput); p.Event == it.p.Event && (pre || p.Name() == event.PostToolUse) {
							t.Fatalf("payload %d: its tool event kept, not the view's own", i)
						}
						for _, v := range [][]byte{[]byte(tc.ToolUseID), []byte(tc.ToolName), tc.ToolInput, responseOf(it.p)} {
							if within(v, envs[i].Payload) {
								t.Fatalf("payload %d: a view kept points into the payload's bytes: %.40s", i, v)
							}
						}
					}
				}
				if tools == 0 {
					t.Fatal("no tool event kept")
				}
			})
		}
	}
}

// responseOf is a PostToolUse's tool_response, nil for any other event.
// within reports whether v's bytes lie in data's.
func within(v, data []byte) bool {
	if len(v) == 0 || len(data) == 0 {
		return false
	}
	at, lo := uintptr(unsafe.Pointer(unsafe.SliceData(v))), uintptr(unsafe.Pointer(unsafe.SliceData(data)))
	return at >= lo && at < lo+uintptr(len(data))
}

// TestGroupKeepsNoPayload: what a group keeps of a session whose tools
// return whole files costs a small part of the payloads once the caller
// drops them: a tool's output is not kept where the model does not read
// it, and no view kept holds its payload's bytes alive. Before, the group
// kept every payload whole.
func TestGroupKeepsNoPayload(t *testing.T) {
	const calls, output = 200, 64 << 10
	file := strings.Repeat("x", output)
	at := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	envs := []event.Envelope{}
	add := func(payload string) {
		envs = append(envs, event.Envelope{ID: fmt.Sprint("e", len(envs)), ReceivedAt: at.Add(time.Duration(len(envs)) * time.Millisecond), Kind: event.KindHook, Payload: []byte(payload)})
	}
	common := `"session_id":"s1","transcript_path":"/home/u/.claude/projects/-p/s1.jsonl","cwd":"/p",`
	add(`{` + common + `"hook_event_name":"SessionStart","source":"startup"}`)
	for i := range calls {
		call := fmt.Sprintf(`"tool_name":"Read","tool_use_id":"toolu_%04d","tool_input":{"file_path":"/p/f%d.go"}`, i, i)
		add(`{` + common + `"hook_event_name":"PreToolUse",` + call + `}`)
		add(`{` + common + `"hook_event_name":"PostToolUse",` + call + `,"tool_response":{"type":"text","file":{"filePath":"/p/f.go","content":"` + file + `"}}}`)
	}
	sent := 0
	for _, e := range envs {
		sent += len(e.Payload)
	}
	for how, apply := range map[string]func(*Group, []event.Envelope){
		"Apply":        func(g *Group, envs []event.Envelope) { g.Apply(envs...) },
		"ApplyDecoded": func(g *Group, envs []event.Envelope) { g.ApplyDecoded(envs, viewsOf(envs)) },
	} {
		before := liveHeap()
		g := NewGroup()
		for i := 0; i < len(envs); i += 50 {
			// Each batch's payloads the group's alone, as the collector's.
			part := slices.Clone(envs[i:min(i+50, len(envs))])
			for j := range part {
				part[j].Payload = bytes.Clone(part[j].Payload)
			}
			apply(g, part)
			g.Changes()
		}
		kept := int(liveHeap()) - int(before)
		if got := g.Result().Sessions[0].ToolCalls; len(got) != calls {
			t.Fatalf("%s: %d calls, want %d", how, len(got), calls)
		}
		t.Logf("%s: %d payload bytes sent, %d kept", how, sent, kept)
		// ~0.6 MB kept of 13.2 MB sent (the calls' ids and inputs and
		// what the model derives); all of it and more before. The bound
		// leaves room for what the runtime keeps beside.
		if kept > sent/5 {
			t.Errorf("%s: the group keeps %d bytes of %d sent: the payloads' bytes are kept", how, kept, sent)
		}
		// Bytes, which the collector's bound on its groups reads, counts
		// what is kept: the calls' ids and inputs, once a call
		// (TestPostSharesPreBytes).
		if b := g.Bytes(); b > kept || b < calls*len(`toolu_0000{"file_path":"/p/f0.go"}`) {
			t.Errorf("%s: Bytes %d, with %d bytes kept", how, b, kept)
		}
		runtime.KeepAlive(g)
	}
}

// TestPostSharesPreBytes: a PostToolUse keeps no copy of the tool_use_id
// and tool_input its PreToolUse has alike, whether the PreToolUse came in
// the same batch or an earlier one, and keeps its own where they differ.
func TestPostSharesPreBytes(t *testing.T) {
	common := `"session_id":"s1","transcript_path":"/home/u/.claude/projects/-p/s1.jsonl","cwd":"/p",`
	pre := func(id, input string) string {
		return `{` + common + `"hook_event_name":"PreToolUse","tool_name":"Read","tool_use_id":"` + id + `","tool_input":` + input + `}`
	}
	post := func(id, input string) string {
		return `{` + common + `"hook_event_name":"PostToolUse","tool_name":"Read","tool_use_id":"` + id + `","tool_input":` + input + `,"tool_response":"ok"}`
	}
	at := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	var envs []event.Envelope
	for _, p := range []string{
		`{` + common + `"hook_event_name":"SessionStart","source":"startup"}`,
		pre("toolu_1", `{"file_path":"/p/a"}`), post("toolu_1", `{"file_path":"/p/a"}`), // one batch
		pre("toolu_2", `{"file_path":"/p/b"}`), post("toolu_2", `{"file_path":"/p/b"}`), // two
		pre("toolu_3", `{"file_path":"/p/c"}`), post("toolu_3", `{"file_path":"/p/other"}`),
	} {
		envs = append(envs, event.Envelope{ID: fmt.Sprint("e", len(envs)), ReceivedAt: at.Add(time.Duration(len(envs)) * time.Millisecond),
			Kind: event.KindHook, Payload: []byte(p)})
	}
	g := NewGroup()
	g.Apply(envs[:3]...)
	g.Apply(envs[3])
	g.Apply(envs[4:]...)
	calls := map[string][2]*event.ToolCall{}
	for _, it := range g.all {
		if tc := it.p.Tool(); tc != nil {
			pair, i := calls[tc.ToolUseID], 0
			if it.p.Name() == event.PostToolUse {
				i = 1
			}
			pair[i] = tc
			calls[tc.ToolUseID] = pair
		}
	}
	same := func(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }
	for _, id := range []string{"toolu_1", "toolu_2", "toolu_3"} {
		p, q := calls[id][0], calls[id][1]
		if p == nil || q == nil {
			t.Fatalf("%s: no PreToolUse and PostToolUse among the items", id)
		}
		if !same(p.ToolUseID, q.ToolUseID) {
			t.Errorf("%s: the PostToolUse keeps a tool_use_id of its own", id)
		}
		sharedInput := &p.ToolInput[0] == &q.ToolInput[0]
		if want := id != "toolu_3"; sharedInput != want {
			t.Errorf("%s: the PostToolUse shares its PreToolUse's tool_input: %v, want %v (%s, %s)", id, sharedInput, want, p.ToolInput, q.ToolInput)
		}
	}
	checkGroup(t, "shared", envs, [][]event.Envelope{envs[:3], envs[3:4], envs[4:]})
}

// liveHeap is the heap reachable after a collection.
func liveHeap() uint64 {
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestKeepsResponse: a PostToolUse's tool_response is kept where the model
// reads it (a delegation call's names its agent; one that says it runs in
// the background is read for a spawn a sidecar names), and dropped
// elsewhere.
func TestKeepsResponse(t *testing.T) {
	for _, c := range []struct {
		tool, resp string
		keep       bool
	}{
		{"Agent", `{"agentId":"a1","content":[]}`, true},
		{"Task", `{"agentId":"a1"}`, true},
		{"spawn_agent", `"{\"agent_id\":\"a1\"}"`, true},
		{"Bash", `{"stdout":"ok","stderr":""}`, false},
		{"Read", `{"file":{"content":"package x"}}`, false},
		{"mcp__team__delegate", `{"status":"async_launched","agentId":"a2"}`, true},
		{"mcp__team__delegate", `"{\"isAsync\":true}"`, true},
		{"mcp__team__delegate", `{"status":"done"}`, false},
	} {
		p, err := event.Decode([]byte(`{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"` + c.tool + `","tool_use_id":"t1","tool_input":{},"tool_response":` + c.resp + `}`))
		if err != nil {
			t.Fatal(err)
		}
		id := strings.Clone("0190b3c2-envelope")
		ts := newTables()
		v := ts.view(p)
		ownTool(&v, &id, ts.strs, nil)
		if got := responseOf(v); (got != nil) != c.keep || c.keep && string(got) != c.resp {
			t.Errorf("%s %s: kept %q, want kept %v", c.tool, c.resp, got, c.keep)
		}
		// The envelope's id shares the views' bytes: one object, not two.
		call := v.Event.(*event.PostToolUseInput).ToolCall
		if id != "0190b3c2-envelope" || unsafe.Add(unsafe.Pointer(unsafe.StringData(id)), len(id)) != unsafe.Pointer(unsafe.StringData(call.ToolUseID)) {
			t.Errorf("%s: the id %q is not kept right before the tool_use_id %q", c.tool, id, call.ToolUseID)
		}
	}
}

// TestStrs: a group's strings are kept once, and the table stops growing
// at its bound.
func TestStrs(t *testing.T) {
	in := strs{}
	first := in.of(strings.Clone("session-a"))
	if got := in.of(strings.Clone("session-a")); got != "session-a" || unsafe.StringData(got) != unsafe.StringData(first) {
		t.Fatalf("of gave %q at %p, want the table's copy at %p", got, unsafe.StringData(got), unsafe.StringData(first))
	}
	for i := range 2 * maxStrs {
		in.of(fmt.Sprint("id-", i))
	}
	if len(in) != maxStrs {
		t.Fatalf("%d strings kept, want the bound %d", len(in), maxStrs)
	}
	if in.of("") != "" {
		t.Fatal("the empty string")
	}
}

// TestGroupChangesHandedOut: the calls a Group's Changes hands out stay as
// they were given whatever the group applies next (a Watch and the audit
// keep them), and the group holds a call that did not change since it was
// handed out as that same version, not as a copy of it: the calls of the
// real captures and of a synthetic session, given in batches out of order.
func TestGroupChangesHandedOut(t *testing.T) {
	sets := corpora(t)
	sets["synthetic"] = syntheticSession(t, 1200, 12)
	for name, envs := range sets {
		rng := rand.New(rand.NewPCG(3, uint64(len(envs))))
		g := NewGroup()
		type given struct {
			c   *ToolCall
			doc string
		}
		var all []given
		latest, ids := map[string]*ToolCall{}, map[string]bool{}
		for _, p := range batches(rng, nearlyOrdered(rng, envs), 4) {
			g.Apply(p...)
			for _, sc := range g.Changes().Sessions {
				for _, c := range sc.ToolCalls {
					if c.CallDetail == nil {
						t.Fatalf("%s: call %s handed out without its CallDetail", name, c.ToolUseID)
					}
					all = append(all, given{c, string(mustJSON(t, c))})
					latest[sc.Session.SessionID+"\x00"+c.ToolUseID] = c
				}
				ids[sc.Session.SessionID] = true
			}
		}
		for _, gv := range all {
			if doc := string(mustJSON(t, gv.c)); doc != gv.doc {
				t.Fatalf("%s: call %s changed after it was handed out:\n%s", name, gv.c.ToolUseID, firstDiff([]byte(doc), []byte(gv.doc)))
			}
		}
		if !noDetail.empty() {
			t.Fatalf("%s: the calls' shared empty CallDetail was changed: %+v", name, noDetail)
		}
		held := 0
		for id := range ids {
			for _, c := range g.ToolCalls(id) {
				if latest[id+"\x00"+c.ToolUseID] != c {
					t.Fatalf("%s: session %s holds call %s apart from the version it handed out last", name, id, c.ToolUseID)
				}
				held++
			}
		}
		if held == 0 {
			t.Fatalf("%s: no calls", name)
		}
	}
}

// TestCallDetailEmpty holds CallDetail.empty to every field: a field it
// does not read would give a call that sets only that field the shared
// empty detail, and lose it.
func TestCallDetailEmpty(t *testing.T) {
	if !new(CallDetail).empty() {
		t.Fatal("a zero CallDetail is not empty")
	}
	v := reflect.ValueOf(new(CallDetail)).Elem()
	for i := range v.NumField() {
		d := new(CallDetail)
		f := reflect.ValueOf(d).Elem().Field(i)
		f = reflect.NewAt(f.Type(), f.Addr().UnsafePointer()).Elem() // movedFrom too
		switch f.Kind() {
		case reflect.String:
			f.SetString("x")
		case reflect.Pointer:
			f.Set(reflect.New(f.Type().Elem()))
		case reflect.Slice:
			f.Set(reflect.MakeSlice(f.Type(), 0, 0))
		default:
			t.Fatalf("field %s: a %s, which the test does not set", v.Type().Field(i).Name, f.Kind())
		}
		if d.empty() {
			t.Errorf("a CallDetail with only %s set is empty", v.Type().Field(i).Name)
		}
	}
}

// TestCallMovedFrom: a call read first from its PostToolUse, then from a
// rollout's record of its start, then from the hook's PreToolUse, starts at
// the hook's and names the two starts it had before, in whichever batches
// its events come; a store keyed by start that deletes those holds it once.
func TestCallMovedFrom(t *testing.T) {
	input := map[string]any{"command": "make"}
	envs := stream(t, sessionStart("startup"), prompt("go"),
		post("Bash", "toolu_1", input, map[string]any{"stdout": "ok"}),
		pre("Bash", "toolu_1", input),
		pre("Bash", "toolu_1", input),
		pre("Bash", "toolu_2", input))
	envs[3].Kind = event.KindRollout
	c := callOf(t, only(t, Build(envs)), "toolu_1")
	if want := []time.Time{at(2), at(3)}; !c.StartedAt.Equal(at(4)) || !slices.EqualFunc(c.MovedFrom(), want, time.Time.Equal) {
		t.Fatalf("started %v, moved from %v; want %v and %v", c.StartedAt, c.MovedFrom(), at(4), want)
	}
	if got := callOf(t, only(t, Build(envs)), "toolu_2").MovedFrom(); got != nil {
		t.Errorf("a call that started at its PreToolUse moved from %v", got)
	}
	rng := rand.New(rand.NewPCG(5, 7))
	for i := range 20 {
		checkGroup(t, fmt.Sprintf("batches %d", i), envs, batches(rng, envs, 1+rng.IntN(3)))
	}
}

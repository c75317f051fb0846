package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/store"
)

// derivedTests are the cases of the derived state (store.Derived).
var derivedTests = []struct {
	name string
	fn   func(t *testing.T, s store.Store)
}{
	{"DerivedRoundTrip", testDerivedRoundTrip},
	{"DerivedReplace", testDerivedReplace},
	{"DerivedSummaries", testDerivedSummaries},
	{"DerivedGroup", testDerivedGroup},
	{"AgentSession", testAgentSession},
	{"StaleSessions", testStaleSessions},
	{"DerivedClosed", testDerivedClosed},
}

func put(tb testing.TB, s store.Store, ds ...store.Derived) {
	tb.Helper()
	if err := s.PutDerived(ctx, ds); err != nil {
		tb.Fatalf("PutDerived: %v", err)
	}
}

func derivedOf(tb testing.TB, s store.Store, id string) store.Derived {
	tb.Helper()
	d, err := s.Derived(ctx, id)
	if err != nil {
		tb.Fatalf("Derived(%q): %v", id, err)
	}
	return d
}

// checkDerived fails unless got is want as read back (JSON compared by
// value, times by instant).
func checkDerived(tb testing.TB, got, want store.Derived) {
	tb.Helper()
	for _, p := range []struct {
		name string
		a, b []byte
	}{{"summary", got.Summary, want.Summary}, {"agents", got.Agents, want.Agents}, {"tool_calls", got.ToolCalls, want.ToolCalls}} {
		if (len(p.a) == 0) != (len(p.b) == 0) || len(p.a) > 0 && !sameJSON(p.a, p.b) {
			tb.Errorf("session %s: %s %s, want %s", want.SessionID, p.name, p.a, p.b)
		}
	}
	if !got.FirstEventAt.Equal(want.FirstEventAt) || !got.LastEventAt.Equal(want.LastEventAt) {
		tb.Errorf("session %s: span %v…%v, want %v…%v", want.SessionID, got.FirstEventAt, got.LastEventAt, want.FirstEventAt, want.LastEventAt)
	}
	g, w := got, want
	g.Summary, g.Agents, g.ToolCalls, w.Summary, w.Agents, w.ToolCalls = nil, nil, nil, nil, nil, nil
	g.FirstEventAt, g.LastEventAt, w.FirstEventAt, w.LastEventAt = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	slices.Sort(w.AgentIDs)
	if len(w.AgentIDs) == 0 {
		w.AgentIDs = nil
	}
	if !reflect.DeepEqual(g, w) {
		tb.Errorf("derived state read back differs\n got %+v\nwant %+v", g, w)
	}
}

// derivedFixture is a session's derived state with JSON documents that
// hold the characters a naive encoder breaks.
func derivedFixture(id, key string, seq int64, firstMS, lastMS int, agents ...string) store.Derived {
	summary, _ := json.Marshal(map[string]any{"session_id": id, "title": "fix \"it\" — ünïcode \u2028 <b>", "counts": map[string]int{"events": int(seq)}})
	list := make([]map[string]any, 0, len(agents))
	for _, a := range agents {
		list = append(list, map[string]any{"agent_id": a})
	}
	ag, _ := json.Marshal(list)
	return store.Derived{
		SessionID: id, GroupKey: key, Seq: seq, FirstEventAt: At(firstMS), LastEventAt: At(lastMS),
		Summary: summary, Agents: ag, ToolCalls: json.RawMessage(`[{"tool_use_id":"toolu_1","input":{"command":"echo \u0000"}}]`),
		AgentIDs: agents,
	}
}

func testDerivedRoundTrip(t *testing.T, s store.Store) {
	if _, err := s.Derived(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Derived of an unknown session: %v, want ErrNotFound", err)
	}
	put(t, s) // nothing to store is not an error
	a := derivedFixture("s-a", "host\x00user\x00-proj", 7, 0, 900, "a2", "a1")
	b := derivedFixture("s-b", "host\x00user\x00-proj", 3, 100, 200)
	alias := store.Derived{SessionID: "s-throwaway", GroupKey: "host\x00user\x00-proj", Seq: 1, FirstEventAt: At(50), LastEventAt: At(50), AliasOf: "s-a"}
	// Derived state does not need the session's events to be stored.
	put(t, s, a, b, alias)
	checkDerived(t, derivedOf(t, s, "s-a"), a)
	checkDerived(t, derivedOf(t, s, "s-b"), b)
	checkDerived(t, derivedOf(t, s, "s-throwaway"), alias)
}

func testDerivedReplace(t *testing.T, s store.Store) {
	key := "k"
	put(t, s, derivedFixture("s1", key, 5, 0, 10, "a1", "a2"))
	next := derivedFixture("s1", key, 9, 0, 20, "a2", "a3")
	next.Summary = json.RawMessage(`{"session_id":"s1","title":"second"}`)
	put(t, s, next)
	checkDerived(t, derivedOf(t, s, "s1"), next)
	// An agent the new state no longer lists does not resolve to it.
	if _, err := s.AgentSession(ctx, "a1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("AgentSession of a dropped agent: %v", err)
	}
	// Emptied documents read back empty.
	empty := store.Derived{SessionID: "s1", GroupKey: key, Seq: 10, FirstEventAt: At(0), LastEventAt: At(30)}
	put(t, s, empty)
	checkDerived(t, derivedOf(t, s, "s1"), empty)
}

func testDerivedSummaries(t *testing.T, s store.Store) {
	var ds []store.Derived
	var ids []string
	for i := range 1200 { // more than one query's worth of ids
		id := fmt.Sprintf("s%04d", i)
		ids = append(ids, id)
		if i%3 != 0 {
			ds = append(ds, derivedFixture(id, "k", int64(i), i, i+1, "a"+id))
		}
	}
	put(t, s, ds...)
	got, err := s.DerivedSummaries(ctx, append(ids, "unknown"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(ds) {
		t.Fatalf("%d summaries, want %d", len(got), len(ds))
	}
	for _, want := range ds {
		g, ok := got[want.SessionID]
		if !ok {
			t.Fatalf("no summary of %s", want.SessionID)
		}
		want.Agents, want.ToolCalls, want.AgentIDs = nil, nil, nil
		checkDerived(t, g, want)
	}
	if got, err := s.DerivedSummaries(ctx, nil); err != nil || len(got) != 0 {
		t.Fatalf("DerivedSummaries(nil) = %v, %v", got, err)
	}
}

func testDerivedGroup(t *testing.T, s store.Store) {
	// Spans in ms: a [0,100] b [50,60] c [200,300] d [400,500]; e in
	// another group.
	put(t, s,
		derivedFixture("a", "g", 1, 0, 100),
		derivedFixture("b", "g", 2, 50, 60),
		derivedFixture("c", "g", 3, 200, 300),
		derivedFixture("d", "g", 4, 400, 500),
		derivedFixture("e", "other", 5, 0, 1000),
	)
	f := func(from, to, limit int, want ...string) {
		t.Helper()
		got, err := s.DerivedGroup(ctx, "g", At(from), At(to), limit)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, d := range got {
			ids = append(ids, d.SessionID)
			if d.GroupKey != "g" || len(d.Summary) != 0 || len(d.Agents) != 0 || d.Seq == 0 || d.LastEventAt.IsZero() {
				t.Errorf("group member %+v", d)
			}
		}
		if !slices.Equal(ids, want) {
			t.Errorf("DerivedGroup(%d…%d, limit %d) = %v, want %v", from, to, limit, ids, want)
		}
	}
	f(0, 1000, 0, "d", "c", "a", "b")
	f(60, 60, 0, "a", "b")   // touching a span's end counts
	f(101, 199, 0)           // a gap
	f(300, 400, 0, "d", "c") // both ends touch
	f(0, 1000, 2, "d", "c")
	f(-5000, -1, 0)
	if got, err := s.DerivedGroup(ctx, "none", At(0), At(1000), 0); err != nil || len(got) != 0 {
		t.Fatalf("unknown group: %v, %v", got, err)
	}
}

func testAgentSession(t *testing.T, s store.Store) {
	put(t, s, derivedFixture("s2", "k", 1, 0, 1, "a1", "shared"), derivedFixture("s1", "k", 1, 0, 1, "shared"))
	f := func(agent, want string) {
		t.Helper()
		got, err := s.AgentSession(ctx, agent)
		if want == "" {
			if !errors.Is(err, store.ErrNotFound) {
				t.Errorf("AgentSession(%q) = %q, %v; want ErrNotFound", agent, got, err)
			}
			return
		}
		if err != nil || got != want {
			t.Errorf("AgentSession(%q) = %q, %v; want %q", agent, got, err, want)
		}
	}
	f("a1", "s2")
	f("shared", "s1") // hostile input can repeat an id: the least session wins
	f("", "")
	f("nope", "")
}

func testStaleSessions(t *testing.T, s store.Store) {
	stale := func(after string, limit int) []string {
		t.Helper()
		got, err := s.StaleSessions(ctx, after, limit)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, sess := range got {
			ids = append(ids, sess.ID)
			if sess.LastSeq == 0 || sess.EventCount == 0 {
				t.Errorf("stale session read back without its summary: %+v", sess)
			}
		}
		return ids
	}
	if got := stale("", 0); len(got) != 0 {
		t.Fatalf("stale sessions of an empty store: %v", got)
	}
	var events []store.Event
	for i, id := range []string{"s3", "s1", "s2", "s4"} {
		events = append(events, ev(t, i, "session_id", id, "hook_event_name", "Stop"))
	}
	insert(t, s, events)
	f := func(after string, limit int, want ...string) {
		t.Helper()
		if got := stale(after, limit); !slices.Equal(got, want) {
			t.Errorf("StaleSessions(%q, %d) = %v, want %v", after, limit, got, want)
		}
	}
	f("", 0, "s1", "s2", "s3", "s4")
	f("", 2, "s1", "s2")
	f("s2", 2, "s3", "s4")
	session := func(id string) store.Session {
		t.Helper()
		sess, err := s.Session(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return sess
	}
	fresh := func(id string, seq int64) store.Derived {
		return store.Derived{SessionID: id, GroupKey: "k", Seq: seq, FirstEventAt: At(0), LastEventAt: At(1)}
	}
	put(t, s, fresh("s1", session("s1").LastSeq), fresh("s3", session("s3").LastSeq-1), fresh("s4", session("s4").LastSeq+5))
	f("", 0, "s2", "s3")
	// A new event makes a fresh session stale again.
	insert(t, s, []store.Event{ev(t, 10, "session_id", "s1", "hook_event_name", "SessionEnd", "reason", "other")})
	f("", 0, "s1", "s2", "s3")
	put(t, s, fresh("s1", session("s1").LastSeq), fresh("s2", session("s2").LastSeq), fresh("s3", session("s3").LastSeq))
	f("", 0)
}

func testDerivedClosed(t *testing.T, s store.Store) {
	put(t, s, derivedFixture("s1", "k", 1, 0, 1, "a1"))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.PutDerived(ctx, []store.Derived{derivedFixture("s2", "k", 1, 0, 1)}); err == nil {
		t.Error("PutDerived after Close succeeded")
	}
	if _, err := s.Derived(ctx, "s1"); err == nil {
		t.Error("Derived after Close succeeded")
	}
	if _, err := s.DerivedSummaries(ctx, []string{"s1"}); err == nil {
		t.Error("DerivedSummaries after Close succeeded")
	}
	if _, err := s.DerivedGroup(ctx, "k", At(0), At(1), 0); err == nil {
		t.Error("DerivedGroup after Close succeeded")
	}
	if _, err := s.AgentSession(ctx, "a1"); err == nil {
		t.Error("AgentSession after Close succeeded")
	}
	if _, err := s.StaleSessions(ctx, "", 0); err == nil {
		t.Error("StaleSessions after Close succeeded")
	}
}

// Package storetest is the conformance suite every store.Store backend runs:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store { return MustOpenDB(t) })
//	}
//
// It is two suites, one per half of the contract: RunEventLog pins down
// store.EventLog and RunModelStore store.ModelStore, with real payloads from
// the repository's corpus and synthetic ones for the corner cases.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/store"
)

// EventLog is what RunEventLog tests: the event log of a backend.
type EventLog interface {
	store.EventLog
	// Close releases the store; calls after Close fail, and closing twice
	// is harmless.
	Close() error
}

// Run runs both conformance suites. open must return a new, empty store
// and arrange for it to be closed when the test ends (t.Cleanup); closing it
// twice must be harmless.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	RunEventLog(t, func(t *testing.T) EventLog { return open(t) })
	RunModelStore(t, func(t *testing.T) ModelStore { return open(t) })
}

// RunEventLog runs the conformance suite of store.EventLog. open must return
// a new, empty store and arrange for it to be closed when the test ends
// (t.Cleanup).
func RunEventLog(t *testing.T, open func(t *testing.T) EventLog) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s EventLog)
	}{
		{"InsertCorpus", testInsertCorpus},
		{"InsertEmpty", testInsertEmpty},
		{"Idempotent", testIdempotent},
		{"IdempotentWithinBatch", testIdempotentWithinBatch},
		{"LargeBatch", testLargeBatch},
		{"ConcurrentInsert", testConcurrentInsert},
		{"EventPaging", testEventPaging},
		{"EventLimits", testEventLimits},
		{"InvalidCursor", testInvalidCursor},
		{"EventFilters", testEventFilters},
		{"AgentTypeNullVsEmpty", testAgentType},
		{"NoSessionID", testNoSessionID},
		{"HostileContent", testHostileContent},
		{"SessionsCorpus", testSessionsCorpus},
		{"SessionLatestFacts", testSessionLatestFacts},
		{"SessionsPaging", testSessionsPaging},
		{"SessionsWithoutProbes", testSessionsWithoutProbes},
		{"SessionNotFound", testSessionNotFound},
		{"LastSeq", testLastSeq},
		{"Close", testClose},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, open(t)) })
	}
}

var ctx = context.Background()

// P builds a payload object from alternating keys and values.
func P(kv ...any) []byte {
	m := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return b
}

// ev is a synthetic Claude Code event of session sid at At(ms).
func ev(tb testing.TB, ms int, kv ...any) store.Event {
	tb.Helper()
	return MustEvent(tb, Envelope(event.RuntimeClaudeCode, At(ms), P(kv...)))
}

func insert(tb testing.TB, s store.EventLog, events []store.Event) int {
	tb.Helper()
	n, err := s.Insert(ctx, events)
	if err != nil {
		tb.Fatalf("Insert: %v", err)
	}
	return n
}

// all reads every event matching f, following cursors with a small page.
func all(tb testing.TB, s store.EventLog, f store.EventFilter) []store.Event {
	tb.Helper()
	if f.Limit == 0 {
		f.Limit = 7
	}
	var out []store.Event
	for range 100000 {
		p, err := s.Events(ctx, f)
		if err != nil {
			tb.Fatalf("Events(%+v): %v", f, err)
		}
		if len(p.Events) > f.Limit {
			tb.Fatalf("Events returned %d events for limit %d", len(p.Events), f.Limit)
		}
		out = append(out, p.Events...)
		if p.Next == "" {
			return out
		}
		f.Cursor = p.Next
	}
	tb.Fatal("Events never returned an empty cursor")
	return nil
}

func ids(events []store.Event) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = e.ID
	}
	return out
}

func ptr(s string) *string { return &s }

// sameJSON reports whether a and b hold the same JSON value.
func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// checkSame fails unless got is want as read back from a store.
func checkSame(tb testing.TB, got, want store.Event) {
	tb.Helper()
	if !got.Time.Equal(want.Time) {
		tb.Errorf("event %s: time %v, want %v", want.ID, got.Time, want.Time)
	}
	if !sameJSON(got.Envelope, want.Envelope) {
		tb.Errorf("event %s: envelope\n got %s\nwant %s", want.ID, got.Envelope, want.Envelope)
	}
	g, w := got, want
	g.Time, w.Time = time.Time{}, time.Time{}
	g.Envelope, w.Envelope = nil, nil
	w.Facts, w.Decoded = store.SessionFacts{}, nil
	if !reflect.DeepEqual(g, w) {
		tb.Errorf("event read back differs\n got %+v\nwant %+v", g, w)
	}
}

func testInsertCorpus(t *testing.T, s EventLog) {
	events := CorpusEvents(t)
	if n := insert(t, s, events); n != len(events) {
		t.Fatalf("Insert stored %d of %d events", n, len(events))
	}
	for i := range events {
		if events[i].Seq <= 0 || (i > 0 && events[i].Seq <= events[i-1].Seq) {
			t.Fatalf("event %d: seq %d does not increase in slice order (previous %d)", i, events[i].Seq, events[max(i-1, 0)].Seq)
		}
	}
	got := all(t, s, store.EventFilter{})
	if len(got) != len(events) {
		t.Fatalf("read back %d events, want %d", len(got), len(events))
	}
	for i := range got {
		checkSame(t, got[i], events[i])
	}
	// Every field derived from a real payload matches what the payload says.
	corpus := Corpus(t)
	for i, e := range got {
		p, err := event.Decode(corpus[i].JSON)
		if err != nil {
			t.Fatal(err)
		}
		if e.SessionID != p.SessionID || e.Event != p.Name() || e.AgentID != p.AgentID || e.PromptID != p.PromptID {
			t.Errorf("%s: derived %q/%q/%q/%q", corpus[i].Label, e.SessionID, e.Event, e.AgentID, e.PromptID)
		}
		if !reflect.DeepEqual(e.AgentType, p.AgentType.Ptr()) {
			t.Errorf("%s: agent_type %v, want %v", corpus[i].Label, deref(e.AgentType), deref(p.AgentType.Ptr()))
		}
		if tc := p.Tool(); tc != nil && (e.ToolName != tc.ToolName || e.ToolUseID != tc.ToolUseID) {
			t.Errorf("%s: tool %q/%q, want %q/%q", corpus[i].Label, e.ToolName, e.ToolUseID, tc.ToolName, tc.ToolUseID)
		}
	}
}

func testInsertEmpty(t *testing.T, s EventLog) {
	if n := insert(t, s, nil); n != 0 {
		t.Fatalf("Insert(nil) = %d", n)
	}
	if n := insert(t, s, []store.Event{}); n != 0 {
		t.Fatalf("Insert([]) = %d", n)
	}
	if got := all(t, s, store.EventFilter{}); len(got) != 0 {
		t.Fatalf("empty store has %d events", len(got))
	}
}

func testIdempotent(t *testing.T, s EventLog) {
	events := CorpusEvents(t)[:20]
	insert(t, s, events)
	last, err := s.LastSeq(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The spool re-sends what it is unsure about, possibly out of order.
	replay := slices.Clone(events)
	slices.Reverse(replay)
	for i := range replay {
		replay[i].Seq = 0
	}
	if n := insert(t, s, replay); n != 0 {
		t.Fatalf("a replayed batch stored %d events", n)
	}
	for _, e := range replay {
		if e.Seq != 0 {
			t.Fatalf("a skipped duplicate got seq %d", e.Seq)
		}
	}
	// A batch mixing old and new ids stores only the new ones.
	mixed := append(slices.Clone(events[:5]), ev(t, 100, "session_id", "s-mixed", "hook_event_name", "Stop"))
	for i := range mixed {
		mixed[i].Seq = 0
	}
	if n := insert(t, s, mixed); n != 1 {
		t.Fatalf("mixed batch stored %d events, want 1", n)
	}
	if mixed[5].Seq <= last {
		t.Fatalf("new event seq %d, want > %d", mixed[5].Seq, last)
	}
	if got := all(t, s, store.EventFilter{}); len(got) != 21 {
		t.Fatalf("store holds %d events, want 21", len(got))
	}
	// New ids between stored ones: each new event gets the seq it is
	// stored with, in the order of the batch; the stored ones get none.
	var woven []store.Event
	for i := range 4 {
		woven = append(woven, events[10+i], ev(t, 200+i, "session_id", "s-woven", "hook_event_name", "Notification"))
	}
	woven = append(woven, events[15])
	for i := range woven {
		woven[i].Seq = 0
	}
	if n := insert(t, s, woven); n != 4 {
		t.Fatalf("woven batch stored %d events, want 4", n)
	}
	storedSeq := map[string]int64{}
	for _, e := range all(t, s, store.EventFilter{SessionID: "s-woven"}) {
		storedSeq[e.ID] = e.Seq
	}
	prev := mixed[5].Seq
	for i, e := range woven {
		switch {
		case i%2 == 0 && e.Seq != 0:
			t.Errorf("woven[%d], stored before, got seq %d", i, e.Seq)
		case i%2 == 1 && (e.Seq != storedSeq[e.ID] || e.Seq <= prev):
			t.Errorf("woven[%d]: seq %d, stored with %d, the one before %d", i, e.Seq, storedSeq[e.ID], prev)
		case i%2 == 1:
			prev = e.Seq
		}
	}
	sess, err := s.Session(ctx, events[0].SessionID)
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, e := range events {
		if e.SessionID == events[0].SessionID {
			want++
		}
	}
	if sess.EventCount != int64(want) {
		t.Fatalf("session counts %d events after replays, want %d", sess.EventCount, want)
	}
}

func testIdempotentWithinBatch(t *testing.T, s EventLog) {
	a := ev(t, 1, "session_id", "s1", "hook_event_name", "UserPromptSubmit", "prompt", "first")
	b := ev(t, 2, "session_id", "s1", "hook_event_name", "Stop")
	c := ev(t, 3, "session_id", "s1", "hook_event_name", "SessionEnd", "reason", "other")
	a2 := a
	a2.Envelope = json.RawMessage(strings.Replace(string(a.Envelope), "first", "second", 1))
	batch := []store.Event{a, b, a2, c, b}
	if n := insert(t, s, batch); n != 3 {
		t.Fatalf("batch with repeated ids stored %d events, want 3", n)
	}
	stored := []bool{true, true, false, true, false}
	for i, e := range batch {
		if (e.Seq != 0) != stored[i] {
			t.Errorf("batch[%d]: seq %d, stored=%v", i, e.Seq, stored[i])
		}
	}
	got := all(t, s, store.EventFilter{SessionID: "s1"})
	if !slices.Equal(ids(got), []string{a.ID, b.ID, c.ID}) {
		t.Fatalf("stored %v", ids(got))
	}
	if !strings.Contains(string(got[0].Envelope), "first") {
		t.Fatalf("the first occurrence must win, got %s", got[0].Envelope)
	}
	sess, err := s.Session(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if sess.EventCount != 3 {
		t.Fatalf("session counts %d events, want 3", sess.EventCount)
	}
}

func testLargeBatch(t *testing.T, s EventLog) {
	corpus := Corpus(t)
	var events []store.Event
	for i := range 2500 {
		p := corpus[i%len(corpus)]
		events = append(events, MustEvent(t, Envelope(p.Runtime, At(i), p.JSON)))
	}
	if n := insert(t, s, events); n != len(events) {
		t.Fatalf("stored %d of %d", n, len(events))
	}
	got := all(t, s, store.EventFilter{Limit: store.MaxLimit})
	if !slices.Equal(ids(got), ids(events)) {
		t.Fatal("a large batch was not stored whole, in order")
	}
}

func testConcurrentInsert(t *testing.T, s EventLog) {
	var events []store.Event
	for i := range 400 {
		events = append(events, ev(t, i, "session_id", fmt.Sprintf("s%d", i%3), "hook_event_name", "Notification"))
	}
	// Four writers with overlapping slices: every id must be stored once.
	var wg sync.WaitGroup
	var mu sync.Mutex
	total := 0
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			part := slices.Clone(events[w*50 : w*50+250])
			for i := 0; i < len(part); i += 25 {
				n, err := s.Insert(ctx, part[i:i+25])
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				total += n
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if total != 400 {
		t.Fatalf("concurrent inserts reported %d stored, want 400", total)
	}
	got := all(t, s, store.EventFilter{Limit: store.MaxLimit})
	if len(got) != 400 {
		t.Fatalf("store holds %d events, want 400", len(got))
	}
	var sum int64
	for i := range 3 {
		sess, err := s.Session(ctx, fmt.Sprintf("s%d", i))
		if err != nil {
			t.Fatal(err)
		}
		sum += sess.EventCount
	}
	if sum != 400 {
		t.Fatalf("sessions count %d events, want 400", sum)
	}
}

func testEventPaging(t *testing.T, s EventLog) {
	var events []store.Event
	for i := range 200 {
		events = append(events, ev(t, i, "session_id", "s1", "hook_event_name", "Notification"))
		if i%4 == 0 {
			events = append(events, ev(t, i, "session_id", "other", "hook_event_name", "Notification"))
		}
	}
	insert(t, s, events)
	f := func(limit int, wantPages ...int) {
		t.Helper()
		filter := store.EventFilter{SessionID: "s1", Limit: limit}
		var got []store.Event
		var pages []int
		for {
			p, err := s.Events(ctx, filter)
			if err != nil {
				t.Fatal(err)
			}
			pages = append(pages, len(p.Events))
			got = append(got, p.Events...)
			if p.Next == "" {
				break
			}
			filter.Cursor = p.Next
		}
		if !slices.Equal(pages, wantPages) {
			t.Errorf("limit %d: pages %v, want %v", limit, pages, wantPages)
		}
		var want []store.Event
		for _, e := range events {
			if e.SessionID == "s1" {
				want = append(want, e)
			}
		}
		if !slices.Equal(ids(got), ids(want)) {
			t.Errorf("limit %d: paging lost or reordered events", limit)
		}
	}
	f(100, 100, 100)
	f(0, 100, 100)
	f(150, 150, 50)
	f(300, 200)
	f(199, 199, 1)

	// EventCursor(seq) continues after seq, whatever made the seq.
	p, err := s.Events(ctx, store.EventFilter{SessionID: "s1", Cursor: store.EventCursor(events[10].Seq), Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Events) != 2 || p.Events[0].Seq <= events[10].Seq {
		t.Fatalf("EventCursor(%d) continued with %+v", events[10].Seq, p.Events)
	}
}

func testEventLimits(t *testing.T, s EventLog) {
	var events []store.Event
	for i := range store.MaxLimit + 10 {
		events = append(events, ev(t, i, "session_id", "s1", "hook_event_name", "Notification"))
	}
	insert(t, s, events)
	f := func(limit, want int) {
		t.Helper()
		p, err := s.Events(ctx, store.EventFilter{SessionID: "s1", Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Events) != want || p.Next == "" {
			t.Errorf("limit %d: %d events (next %q), want %d and a next cursor", limit, len(p.Events), p.Next, want)
		}
	}
	f(0, store.DefaultLimit)
	f(-5, store.DefaultLimit)
	f(1, 1)
	f(store.MaxLimit, store.MaxLimit)
	f(store.MaxLimit*10, store.MaxLimit)
}

func testInvalidCursor(t *testing.T, s EventLog) {
	insert(t, s, []store.Event{ev(t, 1, "session_id", "s1", "hook_event_name", "Stop")})
	f := func(cursor string) {
		t.Helper()
		if _, err := s.Events(ctx, store.EventFilter{Cursor: cursor}); !errors.Is(err, store.ErrInvalidCursor) {
			t.Errorf("Events(cursor %q): err %v, want ErrInvalidCursor", cursor, err)
		}
		if _, err := s.Sessions(ctx, store.SessionFilter{Cursor: cursor}); !errors.Is(err, store.ErrInvalidCursor) {
			t.Errorf("Sessions(cursor %q): err %v, want ErrInvalidCursor", cursor, err)
		}
	}
	f("garbage!")
	f("ZQ")  // "e" without a number
	f("e-1") // not base64 of anything sensible
	if _, err := s.Events(ctx, store.EventFilter{Cursor: store.SessionCursor(At(0), "s1")}); !errors.Is(err, store.ErrInvalidCursor) {
		t.Errorf("a session cursor was accepted by Events: %v", err)
	}
	if _, err := s.Sessions(ctx, store.SessionFilter{Cursor: store.EventCursor(1)}); !errors.Is(err, store.ErrInvalidCursor) {
		t.Errorf("an event cursor was accepted by Sessions: %v", err)
	}
}

func testEventFilters(t *testing.T, s EventLog) {
	const sid = "s-filters"
	events := []store.Event{
		ev(t, 0, "session_id", sid, "hook_event_name", "SessionStart", "source", "startup", "prompt_id", "p1"),
		ev(t, 1, "session_id", sid, "hook_event_name", "PreToolUse", "tool_name", "Bash", "tool_use_id", "t1", "tool_input", map[string]any{"command": "ls"}),
		ev(t, 2, "session_id", sid, "hook_event_name", "PostToolUse", "tool_name", "Bash", "tool_use_id", "t1"),
		ev(t, 3, "session_id", sid, "hook_event_name", "SubagentStart", "agent_id", "a1", "agent_type", "Explore"),
		ev(t, 4, "session_id", sid, "hook_event_name", "PreToolUse", "tool_name", "Read", "tool_use_id", "t2", "agent_id", "a1", "agent_type", "Explore"),
		ev(t, 5, "session_id", sid, "hook_event_name", "PreToolUse", "tool_name", "Bash", "tool_use_id", "t3", "agent_id", "a1", "agent_type", "Explore"),
		ev(t, 6, "session_id", sid, "hook_event_name", "SubagentStop", "agent_id", "a2", "agent_type", ""),
		// A main thread started with --agent has agent_type but no agent_id.
		ev(t, 7, "session_id", sid, "hook_event_name", "PreToolUse", "tool_name", "Read", "tool_use_id", "t4", "agent_type", "reviewer"),
		ev(t, 8, "session_id", "s-other", "hook_event_name", "PreToolUse", "tool_name", "Bash", "tool_use_id", "t5"),
	}
	insert(t, s, events)
	f := func(filter store.EventFilter, want ...int) {
		t.Helper()
		var wantIDs []string
		for _, i := range want {
			wantIDs = append(wantIDs, events[i].ID)
		}
		got := ids(all(t, s, filter))
		if !slices.Equal(got, wantIDs) {
			t.Errorf("filter %+v (agent %v): got events %v, want %v", filter, deref(filter.AgentID), indexes(events, got), want)
		}
	}
	f(store.EventFilter{SessionID: sid}, 0, 1, 2, 3, 4, 5, 6, 7)
	f(store.EventFilter{SessionID: sid, AgentID: ptr("")}, 0, 1, 2, 7)
	f(store.EventFilter{SessionID: sid, AgentID: ptr("a1")}, 3, 4, 5)
	f(store.EventFilter{SessionID: sid, AgentID: ptr("a2")}, 6)
	f(store.EventFilter{SessionID: sid, AgentID: ptr("nobody")})
	f(store.EventFilter{SessionID: sid, Event: "PreToolUse"}, 1, 4, 5, 7)
	f(store.EventFilter{SessionID: sid, Tool: "Bash"}, 1, 2, 5)
	f(store.EventFilter{SessionID: sid, Tool: "Bash", Event: "PreToolUse"}, 1, 5)
	f(store.EventFilter{SessionID: sid, Tool: "Read", AgentID: ptr("")}, 7)
	f(store.EventFilter{SessionID: sid, Tool: "Bash", AgentID: ptr("a1"), Event: "PreToolUse"}, 5)
	f(store.EventFilter{Tool: "Bash"}, 1, 2, 5, 8)
	f(store.EventFilter{Event: "NoSuchEvent"})
	f(store.EventFilter{SessionID: "nope"})
	f(store.EventFilter{SessionID: sid, Tool: "Bash", Limit: 1}, 1, 2, 5)
	f(store.EventFilter{SessionID: sid, ToolUseIDs: []string{"t1", "t3", "t5"}}, 1, 2, 5)
	f(store.EventFilter{ToolUseIDs: []string{"t5"}}, 8)
	f(store.EventFilter{SessionID: sid, ToolUseIDs: []string{}})
	f(store.EventFilter{SessionID: sid, PromptIDs: []string{"p1"}}, 0)
	f(store.EventFilter{SessionID: sid, PromptIDs: []string{}})
	f(store.EventFilter{SessionID: sid, IDs: []string{events[5].ID, events[1].ID, events[8].ID, "no-such-id"}}, 1, 5)
	f(store.EventFilter{IDs: []string{events[8].ID}}, 8)
	f(store.EventFilter{SessionID: sid, IDs: []string{}})
}

func deref(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}

func indexes(events []store.Event, got []string) []int {
	var out []int
	for _, id := range got {
		out = append(out, slices.IndexFunc(events, func(e store.Event) bool { return e.ID == id }))
	}
	return out
}

func testAgentType(t *testing.T, s EventLog) {
	events := []store.Event{
		ev(t, 0, "session_id", "s1", "hook_event_name", "Stop"),
		ev(t, 1, "session_id", "s1", "hook_event_name", "SubagentStop", "agent_id", "a1", "agent_type", ""),
		ev(t, 2, "session_id", "s1", "hook_event_name", "SubagentStop", "agent_id", "a2", "agent_type", "Explore"),
		ev(t, 3, "session_id", "s1", "hook_event_name", "SubagentStop", "agent_id", "a3", "agent_type", nil),
	}
	insert(t, s, events)
	got := all(t, s, store.EventFilter{SessionID: "s1"})
	want := []*string{nil, ptr(""), ptr("Explore"), nil}
	if len(got) != len(want) {
		t.Fatalf("got %d events", len(got))
	}
	for i := range want {
		if !reflect.DeepEqual(got[i].AgentType, want[i]) {
			t.Errorf("event %d: agent_type %v, want %v", i, deref(got[i].AgentType), deref(want[i]))
		}
		b, _ := json.Marshal(got[i])
		if want[i] == nil && !strings.Contains(string(b), `"agent_type":null`) ||
			want[i] != nil && !strings.Contains(string(b), `"agent_type":"`+*want[i]+`"`) {
			t.Errorf("event %d encodes agent_type wrongly: %s", i, b)
		}
	}
}

func testNoSessionID(t *testing.T, s EventLog) {
	e := ev(t, 0, "hook_event_name", "Notification", "message", "no session")
	insert(t, s, []store.Event{e})
	got := all(t, s, store.EventFilter{})
	if len(got) != 1 || got[0].SessionID != "" {
		t.Fatalf("an event without session id was not stored: %+v", got)
	}
	page, err := s.Sessions(ctx, store.SessionFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Sessions) != 0 {
		t.Fatalf("an event without session id made a session: %+v", page.Sessions)
	}
}

func testHostileContent(t *testing.T, s EventLog) {
	big := strings.Repeat("x", 1<<20)
	nested := strings.Repeat(`{"a":`, 100) + "1" + strings.Repeat("}", 100)
	payloads := [][]byte{
		[]byte(`{"session_id":"s1","hook_event_name":"PostToolUse","tool_name":"Read","tool_response":"` + big + `"}`),
		[]byte(`{"session_id":"s1","hook_event_name":"PostToolUse","tool_name":"Bash","tool_response":"bad ` + "\xff\xfe" + ` utf8, a NUL \u0000, <html> & 'quotes' \"x\" \ud83d\ude00 \ud800"}`),
		[]byte(`{"session_id":"s1","hook_event_name":"UserPromptSubmit","prompt":` + nested + `}`),
		[]byte(`{"session_id":"s1","hook_event_name":"PreToolUse","tool_name":"Bash'; DROP TABLE events; --","tool_use_id":"t\u0000"}`),
		[]byte(`{"session_id":"s1","hook_event_name":"Stop","unknown":{"deep":[1,2,{"x":null}]},"agent_type":42}`),
	}
	var events []store.Event
	for i, p := range payloads {
		events = append(events, MustEvent(t, Envelope(event.RuntimeClaudeCode, At(i), p)))
	}
	insert(t, s, events)
	got := all(t, s, store.EventFilter{SessionID: "s1"})
	if len(got) != len(events) {
		t.Fatalf("stored %d of %d hostile events", len(got), len(events))
	}
	for i := range got {
		if !json.Valid(got[i].Envelope) {
			t.Errorf("event %d: stored envelope is not valid JSON", i)
		}
		checkSame(t, got[i], events[i])
	}
	if got[3].ToolName != "Bash'; DROP TABLE events; --" {
		t.Errorf("tool name %q", got[3].ToolName)
	}
	if p := all(t, s, store.EventFilter{Tool: "Bash'; DROP TABLE events; --"}); len(p) != 1 {
		t.Errorf("filtering on a hostile tool name found %d events", len(p))
	}
}

// testSessionsCorpus checks the summaries of the corpus sessions against
// ones computed here, independently of any backend.
func testSessionsCorpus(t *testing.T, s EventLog) {
	events := CorpusEvents(t)
	insert(t, s, events)
	type agg struct {
		count       int64
		first, last time.Time
		lastSeq     int64
	}
	want := map[string]*agg{}
	for _, e := range events {
		if e.SessionID == "" {
			continue
		}
		a := want[e.SessionID]
		if a == nil {
			a = &agg{first: e.Time, last: e.Time}
			want[e.SessionID] = a
		}
		a.count++
		a.first = minTime(a.first, e.Time)
		a.last = maxTime(a.last, e.Time)
		a.lastSeq = max(a.lastSeq, e.Seq)
	}
	var got []store.Session
	filter := store.SessionFilter{Limit: 3}
	for {
		p, err := s.Sessions(ctx, filter)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, p.Sessions...)
		if p.Next == "" {
			break
		}
		filter.Cursor = p.Next
	}
	if len(got) != len(want) {
		t.Fatalf("%d sessions, want %d", len(got), len(want))
	}
	for i, sess := range got {
		a := want[sess.ID]
		if a == nil {
			t.Fatalf("unexpected session %q", sess.ID)
		}
		if sess.EventCount != a.count || !sess.FirstEventAt.Equal(a.first) || !sess.LastEventAt.Equal(a.last) || sess.LastSeq != a.lastSeq {
			t.Errorf("session %s: count %d first %v last %v lastSeq %d, want %d %v %v %d",
				sess.ID, sess.EventCount, sess.FirstEventAt, sess.LastEventAt, sess.LastSeq, a.count, a.first, a.last, a.lastSeq)
		}
		if i > 0 && sess.LastEventAt.After(got[i-1].LastEventAt) {
			t.Errorf("sessions not most recently active first at %d", i)
		}
		one, err := s.Session(ctx, sess.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !sameSession(one, sess) {
			t.Errorf("Session(%s) = %+v, listing says %+v", sess.ID, one, sess)
		}
	}

	// A session of the Claude Code capture, checked field by field.
	sess, err := s.Session(ctx, "0e2e0b5d-7136-4322-8086-c38ed16b10ad")
	if err != nil {
		t.Fatal(err)
	}
	if sess.Runtime != event.RuntimeClaudeCode || sess.CWD != "/home/dev/src/demo" ||
		!strings.HasSuffix(sess.TranscriptPath, "/0e2e0b5d-7136-4322-8086-c38ed16b10ad.jsonl") ||
		sess.Host != "devbox" || sess.User != "dev" {
		t.Errorf("claude session summary: %+v", sess)
	}
}

func sameSession(a, b store.Session) bool {
	if !a.FirstEventAt.Equal(b.FirstEventAt) || !a.LastEventAt.Equal(b.LastEventAt) {
		return false
	}
	a.FirstEventAt, a.LastEventAt = time.Time{}, time.Time{}
	b.FirstEventAt, b.LastEventAt = time.Time{}, time.Time{}
	return a == b
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func session(tb testing.TB, s store.EventLog, id string) store.Session {
	tb.Helper()
	sess, err := s.Session(ctx, id)
	if err != nil {
		tb.Fatalf("Session(%s): %v", id, err)
	}
	return sess
}

// testSessionLatestFacts: the directory and transcript a session's events
// name (its project) follow the latest event by time, whatever the order
// of the batches.
func testSessionLatestFacts(t *testing.T, s EventLog) {
	insert(t, s, []store.Event{
		ev(t, 10, "session_id", "s1", "hook_event_name", "SessionStart", "cwd", "/a", "model", "claude-opus"),
		ev(t, 11, "session_id", "s1", "hook_event_name", "UserPromptSubmit", "cwd", "/a", "permission_mode", "default"),
	})
	if sess := session(t, s, "s1"); sess.CWD != "/a" {
		t.Fatalf("facts: %+v", sess)
	}
	// Newer events move the facts on; a missing field changes nothing.
	insert(t, s, []store.Event{
		ev(t, 20, "session_id", "s1", "hook_event_name", "PreToolUse", "cwd", "/b"),
		ev(t, 21, "session_id", "s1", "hook_event_name", "Notification"),
	})
	if sess := session(t, s, "s1"); sess.CWD != "/b" {
		t.Fatalf("facts after newer events: %+v", sess)
	}
	// A late, older event does not roll them back, but fills what is empty.
	insert(t, s, []store.Event{
		ev(t, 5, "session_id", "s1", "hook_event_name", "PreToolUse", "cwd", "/old", "transcript_path", "/t.jsonl"),
	})
	sess := session(t, s, "s1")
	if sess.CWD != "/b" || sess.TranscriptPath != "/t.jsonl" {
		t.Fatalf("facts after a late event: %+v", sess)
	}
	if !sess.FirstEventAt.Equal(At(5)) || !sess.LastEventAt.Equal(At(21)) || sess.EventCount != 5 {
		t.Fatalf("bounds after a late event: %+v", sess)
	}
	// Within one batch the latest event by time wins, whatever the order.
	insert(t, s, []store.Event{
		ev(t, 40, "session_id", "s2", "hook_event_name", "PreToolUse", "cwd", "/new"),
		ev(t, 30, "session_id", "s2", "hook_event_name", "PreToolUse", "cwd", "/older"),
	})
	if got := session(t, s, "s2").CWD; got != "/new" {
		t.Fatalf("cwd %q, want /new", got)
	}
	// The statusLine payload names its directory its own way.
	status := P("session_id", "s3", "model", map[string]any{"id": "claude-sonnet", "display_name": "Sonnet"},
		"workspace", map[string]any{"current_dir": "/ws"}, "cost", map[string]any{"total_cost_usd": 0.5})
	env := Envelope(event.RuntimeClaudeCode, At(50), status)
	env.Kind = event.KindStatusLine
	se := MustEvent(t, env)
	if se.Event != event.StatusLine || se.Kind != event.KindStatusLine {
		t.Fatalf("statusLine event %q kind %q", se.Event, se.Kind)
	}
	insert(t, s, []store.Event{se})
	if sess := session(t, s, "s3"); sess.CWD != "/ws" {
		t.Fatalf("statusLine facts: %+v", sess)
	}
}

func testSessionsPaging(t *testing.T, s EventLog) {
	var events []store.Event
	for i := range 25 {
		runtime := event.RuntimeClaudeCode
		if i%5 == 0 {
			runtime = event.RuntimeCodex
		}
		p := P("session_id", fmt.Sprintf("s%02d", i), "hook_event_name", "SessionStart")
		// Sessions 20..24 share one last event time: the id breaks the tie.
		ms := i * 10
		if i >= 20 {
			ms = 1000
		}
		events = append(events, MustEvent(t, Envelope(runtime, At(ms), p)))
	}
	insert(t, s, events)
	f := func(filter store.SessionFilter, wantPages ...int) []string {
		t.Helper()
		var got []string
		var pages []int
		for {
			p, err := s.Sessions(ctx, filter)
			if err != nil {
				t.Fatal(err)
			}
			pages = append(pages, len(p.Sessions))
			for _, sess := range p.Sessions {
				got = append(got, sess.ID)
			}
			if p.Next == "" {
				break
			}
			filter.Cursor = p.Next
		}
		if !slices.Equal(pages, wantPages) {
			t.Errorf("filter %+v: pages %v, want %v", filter, pages, wantPages)
		}
		return got
	}
	got := f(store.SessionFilter{Limit: 10}, 10, 10, 5)
	want := []string{"s24", "s23", "s22", "s21", "s20"}
	for i := 19; i >= 0; i-- {
		want = append(want, fmt.Sprintf("s%02d", i))
	}
	if !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
	if got := f(store.SessionFilter{}, 25); len(got) != 25 {
		t.Errorf("default limit returned %d", len(got))
	}
	codex := f(store.SessionFilter{Runtime: event.RuntimeCodex, Limit: 2}, 2, 2, 1)
	if !slices.Equal(codex, []string{"s20", "s15", "s10", "s05", "s00"}) {
		t.Errorf("codex sessions %v", codex)
	}
	f(store.SessionFilter{Runtime: "nope"}, 0)

	// New activity moves a session to the top.
	insert(t, s, []store.Event{ev(t, 5000, "session_id", "s03", "hook_event_name", "Stop")})
	p, err := s.Sessions(ctx, store.SessionFilter{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Sessions) != 1 || p.Sessions[0].ID != "s03" {
		t.Errorf("most recently active session: %+v", p.Sessions)
	}
}

// testSessionsWithoutProbes: the list leaves out hookwatch's own probe
// sessions unless asked, and only those; a probe session is still found by
// its id.
func testSessionsWithoutProbes(t *testing.T, s EventLog) {
	ids := []string{event.ProbeSessionPrefix + "0194f1a2", "s1", "hookwatch-probe", "hookwatch-probe.", "Hookwatch-probe-x", "hookwatch-probe-", "s2"}
	var events []store.Event
	for i, id := range ids {
		events = append(events, ev(t, i*10, "session_id", id, "hook_event_name", "Notification"))
	}
	insert(t, s, events)
	list := func(f store.SessionFilter) []string {
		t.Helper()
		p, err := s.Sessions(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, sess := range p.Sessions {
			got = append(got, sess.ID)
		}
		slices.Sort(got)
		return got
	}
	if got, want := list(store.SessionFilter{}), []string{"Hookwatch-probe-x", "hookwatch-probe", "hookwatch-probe.", "s1", "s2"}; !slices.Equal(got, want) {
		t.Errorf("sessions %q, want %q", got, want)
	}
	if got := list(store.SessionFilter{Probes: true}); len(got) != len(ids) {
		t.Errorf("sessions with probes %q, want all %d", got, len(ids))
	}
	if _, err := s.Session(ctx, ids[0]); err != nil {
		t.Errorf("Session(%s): %v", ids[0], err)
	}
}

func testSessionNotFound(t *testing.T, s EventLog) {
	if _, err := s.Session(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Session(nope): %v, want ErrNotFound", err)
	}
	if _, err := s.Session(ctx, ""); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Session(\"\"): %v, want ErrNotFound", err)
	}
}

func testLastSeq(t *testing.T, s EventLog) {
	seq, err := s.LastSeq(ctx)
	if err != nil || seq != 0 {
		t.Fatalf("LastSeq of an empty store = %d, %v", seq, err)
	}
	events := CorpusEvents(t)[:10]
	insert(t, s, events)
	seq, err = s.LastSeq(ctx)
	if err != nil || seq != events[9].Seq {
		t.Fatalf("LastSeq = %d, %v; want %d", seq, err, events[9].Seq)
	}
}

func testClose(t *testing.T, s EventLog) {
	insert(t, s, CorpusEvents(t)[:3])
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := s.Insert(ctx, CorpusEvents(t)[3:4]); err == nil {
		t.Fatal("Insert after Close succeeded")
	}
	if _, err := s.Events(ctx, store.EventFilter{}); err == nil {
		t.Fatal("Events after Close succeeded")
	}
	_ = s.Close() // must not panic
}

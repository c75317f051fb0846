package collector_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/demo"
)

// TestEventCopies: the real run reported by its hooks (but for one call
// whose hook events were lost) and read from its transcripts: the events
// list marks every transcript record of a call's start or end, of a
// subagent's start or stop, or of a prompt, that a hook delivered too as a copy, and the
// hook's event as also read from the transcript; the records of the call
// only the transcript has are no copies. With copies=exclude the list
// holds each happening once — in pages of any size —, and as many tool
// events as the hooks sent plus the lost call's. The session's stream
// marks the copies too.
func TestEventCopies(t *testing.T) {
	hooks, imported, err := demo.Transcripts(runDir)
	if err != nil {
		t.Fatal(err)
	}
	kept, lost := demo.LoseCall(hooks)
	s := newServer(t, collector.Config{})
	s.post(t, kept, len(kept), 0)
	s.settle(t)
	s.post(t, imported, len(imported), 0)
	s.settle(t)

	all := s.listEvents(t, runSession, "limit=1000")
	if len(all) != len(kept)+len(imported) {
		t.Fatalf("%d events listed, want %d", len(all), len(kept)+len(imported))
	}
	copies, own, also := 0, 0, 0
	for _, e := range all {
		isTool := e.ToolUseID != "" && e.Event != event.PermissionRequest
		switch {
		case e.Kind == event.KindHook && e.Copy:
			t.Errorf("hook event %s %s marked a copy", e.Event, e.ID)
		case e.Kind == event.KindTranscript && e.ToolUseID == lost && isTool:
			own++
			if e.Copy {
				t.Errorf("%s of the call no hook reported marked a copy", e.Event)
			}
		case e.Kind == event.KindTranscript && (isTool || e.Event == event.SubagentStart || e.Event == event.SubagentStop || e.Event == event.UserPromptSubmit):
			copies++
			if !e.Copy {
				t.Errorf("transcript's %s %s %s not marked a copy", e.Event, e.ToolUseID, e.AgentID)
			}
		}
		if e.Kind == event.KindHook && slices.Equal(e.AlsoReadFrom, []string{event.KindTranscript}) {
			also++
		}
	}
	if copies == 0 || own == 0 || also == 0 {
		t.Fatalf("%d copies, %d records of the transcript's own call, %d hook events also read from it: want some of each", copies, own, also)
	}

	once := s.listEvents(t, runSession, "limit=1000&copies=exclude")
	if len(once) != len(all)-copies {
		t.Errorf("copies=exclude lists %d events, want %d", len(once), len(all)-copies)
	}
	small := s.listEvents(t, runSession, "limit=3&copies=exclude")
	if len(small) != len(once) {
		t.Errorf("copies=exclude in pages of 3 lists %d events, in one page %d", len(small), len(once))
	}
	for i := range min(len(small), len(once)) {
		if small[i].Seq != once[i].Seq || small[i].Copy {
			t.Fatalf("event %d: seq %d in pages of 3 (copy %v), %d in one page", i, small[i].Seq, small[i].Copy, once[i].Seq)
		}
	}
	// The session's stream marks the copies as the list does, and names
	// on each the hook's events it copies, with their also_read_from as
	// listed: every hook's event listed as also read from the transcript
	// is named by a copy, and no other.
	listed := map[int64]collector.EventView{}
	for _, e := range all {
		listed[e.Seq] = e
	}
	named := map[int64]bool{}
	stream := s.openStream(t, "?session_id="+runSession, "Last-Event-ID", "0")
	for _, want := range all {
		var e collector.EventView
		ev := stream.nextEvent()
		if err := json.Unmarshal([]byte(ev.Data), &e); err != nil {
			t.Fatalf("%v in %.200s", err, ev.Data)
		}
		if e.Seq != want.Seq || e.Copy != want.Copy {
			t.Fatalf("streamed seq %d copy %v, listed seq %d copy %v", e.Seq, e.Copy, want.Seq, want.Copy)
		}
		if e.Copy && len(e.CopyOf) == 0 {
			t.Errorf("streamed copy %d (%s %s %s) names no hook's event it copies", e.Seq, e.Event, e.ToolUseID, e.AgentID)
		}
		if !e.Copy && e.CopyOf != nil {
			t.Errorf("streamed event %d, no copy, names copy_of %v", e.Seq, e.CopyOf)
		}
		for _, c := range e.CopyOf {
			h := listed[c.Seq]
			if h.Kind != event.KindHook || h.Event != e.Event && h.ToolUseID == "" || c.Seq >= e.Seq {
				t.Errorf("copy %d (%s %s) names %d (%s %s %s) as the hook's event it copies", e.Seq, e.Event, e.ToolUseID, c.Seq, h.Kind, h.Event, h.ToolUseID)
			}
			if !slices.Equal(c.AlsoReadFrom, h.AlsoReadFrom) {
				t.Errorf("copy %d names %d also read from %v, listed %v", e.Seq, c.Seq, c.AlsoReadFrom, h.AlsoReadFrom)
			}
			named[c.Seq] = true
		}
	}
	for _, e := range all {
		if len(e.AlsoReadFrom) > 0 && !named[e.Seq] {
			t.Errorf("hook's event %d (%s %s) listed also read from %v, named by no streamed copy", e.Seq, e.Event, e.ToolUseID, e.AlsoReadFrom)
		}
	}
	if code, body := s.do(t, http.MethodGet, "/v1/sessions/"+runSession+"/events?copies=some", nil); code != http.StatusBadRequest {
		t.Errorf("copies=some: %d %s, want 400", code, body)
	}
}

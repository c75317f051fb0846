package collector_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/codex/rollout"
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
	s, all := hooksThenFiles(t, runSession, kept, imported)
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
	streamsCopiesOf(t, s, runSession, all)
	if code, body := s.do(t, http.MethodGet, "/v1/sessions/"+runSession+"/events?copies=some", nil); code != http.StatusBadRequest {
		t.Errorf("copies=some: %d %s, want 400", code, body)
	}
}

// streamsCopiesOf checks that the session's stream marks the copies as the
// list all does, and names on each the hook's events it copies, with their
// also_read_from as listed: every hook's event listed as also read from a
// file is named by a copy, and no other.
func streamsCopiesOf(t *testing.T, s *testServer, session string, all []collector.EventView) {
	t.Helper()
	listed := map[int64]collector.EventView{}
	for _, e := range all {
		listed[e.Seq] = e
	}
	named := map[int64]bool{}
	for _, e := range streamsCopies(t, s, session, all) {
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
}

// TestStreamCopiesLongAfter: a transcript read long after its hooks ran,
// more events stored between them than a stream looks back over for the
// hook's events a copy copies, still has each copy name them.
func TestStreamCopiesLongAfter(t *testing.T) {
	hooks, imported, err := demo.Transcripts(runDir)
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(t, collector.Config{})
	s.post(t, hooks, len(hooks), 0)
	between := demo.Big(demo.BigSpec{SessionID: "between", Start: time.Now().Add(-time.Hour), Events: collector.CopyLookback + 500, Agents: 2, Project: "elsewhere", Seed: 7})
	for part := range slices.Chunk(between, 1000) {
		s.post(t, part, len(part), 0)
	}
	s.post(t, imported, len(imported), 0)
	s.settle(t)
	all := s.listEvents(t, runSession, "limit=1000")
	if len(all) != len(hooks)+len(imported) {
		t.Fatalf("%d events listed, want %d", len(all), len(hooks)+len(imported))
	}
	streamsCopiesOf(t, s, runSession, all)
}

// TestEventCopiesIdless: a real Codex run whose hooks sent no tool_use_id
// (its payloads with the field taken out) and its rollout, which has the
// call ids: the model pairs each call's hook events with its rollout
// records by content, and the events list marks them as it marks a pair
// of the same id — each rollout record of a call's start or end a copy,
// each hook event also read from the rollout — whichever came first; with
// copies=exclude each call's start and end is listed once. The session's
// stream marks the copies too.
func TestEventCopiesIdless(t *testing.T) {
	for _, shift := range []time.Duration{0, -time.Minute, time.Minute} {
		t.Run(fmt.Sprint("hooks moved ", shift), func(t *testing.T) {
			hooks, imported := idlessCodexRun(t, shift)
			s, all := hooksThenFiles(t, codexSession, hooks, imported)
			copies, also, marked := 0, 0, 0
			for _, e := range all {
				if e.Copy {
					marked++ // the prompt's record too
				}
				tool := e.Event == event.PreToolUse || e.Event == event.PostToolUse || e.Event == event.PostToolUseFailure
				switch {
				case !tool:
				case e.Kind == event.KindRollout:
					if !e.Copy {
						t.Errorf("rollout's %s %s not marked a copy", e.Event, e.ToolUseID)
					}
					copies++
				case e.Copy:
					t.Errorf("hook's %s %s marked a copy", e.Event, e.ID)
				case !slices.Equal(e.AlsoReadFrom, []string{event.KindRollout}):
					t.Errorf("hook's %s %s also read from %v, want the rollout", e.Event, e.ID, e.AlsoReadFrom)
				default:
					also++
				}
			}
			// Three calls, each started and ended by both.
			if also != 6 || copies != 6 {
				t.Fatalf("%d hook events also read from the rollout, %d rollout copies: want 6 of each", also, copies)
			}
			// `codex exec` ended with its turn: its SessionEnd hook and
			// its rollout tell of the one end, the hook's event shown.
			var ends []string
			for _, e := range all {
				if e.Event == event.SessionEnd {
					ends = append(ends, fmt.Sprintf("%s copy=%v also=%v", e.Kind, e.Copy, e.AlsoReadFrom))
				}
			}
			if want := []string{"hook copy=false also=[rollout]", "rollout copy=true also=[]"}; !slices.Equal(ends, want) &&
				!slices.Equal(ends, []string{want[1], want[0]}) {
				t.Errorf("the session's ends %q, want %q", ends, want)
			}
			once := s.listEvents(t, codexSession, "limit=1000&copies=exclude")
			if len(once) != len(all)-marked {
				t.Errorf("copies=exclude lists %d events, want %d", len(once), len(all)-marked)
			}
			for _, e := range once {
				if e.Kind == event.KindRollout && (e.ToolUseID != "" || e.Event == event.SessionEnd) {
					t.Errorf("copies=exclude lists the rollout's %s %s", e.Event, e.ToolUseID)
				}
			}
			streamsCopiesOf(t, s, codexSession, all)
		})
	}
}

// TestStreamCopiesIdless: a session's stream, open while the rollout of
// the run TestEventCopiesIdless reads is posted after its id-less hooks,
// sends each rollout record of a call's start or end marked a copy,
// though the model matches it by content only once it has the record.
func TestStreamCopiesIdless(t *testing.T) {
	for _, shift := range []time.Duration{0, -time.Minute} {
		hooks, imported := idlessCodexRun(t, shift)
		s := newServer(t, collector.Config{})
		s.post(t, hooks, len(hooks), 0)
		s.settle(t)
		hookAt := map[int64]collector.EventView{} // the hook's events, by seq
		for _, v := range s.listEvents(t, codexSession, "limit=1000") {
			hookAt[v.Seq] = v
		}
		stream := s.openStream(t, "?session_id="+codexSession)
		s.post(t, imported, len(imported), 0)
		copies := 0
		for range imported {
			var e collector.EventView
			ev := stream.nextEvent()
			if err := json.Unmarshal([]byte(ev.Data), &e); err != nil {
				t.Fatalf("%v in %.200s", err, ev.Data)
			}
			if e.ToolUseID == "" || e.Event != event.PreToolUse && e.Event != event.PostToolUse {
				continue
			}
			copies++
			if !e.Copy {
				t.Errorf("hooks moved %v: streamed the rollout's %s %s not marked a copy", shift, e.Event, e.ToolUseID)
			}
			// It names the hook's event it copies, which carries no id,
			// and that event's files now.
			if len(e.CopyOf) != 1 {
				t.Errorf("hooks moved %v: the rollout's %s %s copies %+v, want the hook's event", shift, e.Event, e.ToolUseID, e.CopyOf)
				continue
			}
			hook, ok := hookAt[e.CopyOf[0].Seq]
			if !ok || hook.Event != e.Event || hook.ToolUseID != "" || !slices.Equal(e.CopyOf[0].AlsoReadFrom, []string{"rollout"}) {
				t.Errorf("hooks moved %v: the rollout's %s %s copies %+v: hook event %+v", shift, e.Event, e.ToolUseID, e.CopyOf, hook)
			}
		}
		if copies != 6 {
			t.Errorf("hooks moved %v: streamed %d rollout records of calls, want 6", shift, copies)
		}
	}
}

// hooksThenFiles returns a collector that took the hooks' events, then,
// once its model had them, the records read from the client's files, and
// had them too; and session's events it lists.
func hooksThenFiles(t *testing.T, session string, hooks, files []event.Envelope) (*testServer, []collector.EventView) {
	t.Helper()
	s := newServer(t, collector.Config{})
	s.post(t, hooks, len(hooks), 0)
	s.settle(t)
	s.post(t, files, len(files), 0)
	s.settle(t)
	return s, s.listEvents(t, session, "limit=1000")
}

// streamsCopies checks that the session's stream, from its first event,
// marks the copies as the list all does, and returns what it streamed.
func streamsCopies(t *testing.T, s *testServer, session string, all []collector.EventView) []collector.EventView {
	t.Helper()
	stream := s.openStream(t, "?session_id="+session, "Last-Event-ID", "0")
	var out []collector.EventView
	for _, want := range all {
		var e collector.EventView
		ev := stream.nextEvent()
		if err := json.Unmarshal([]byte(ev.Data), &e); err != nil {
			t.Fatalf("%v in %.200s", err, ev.Data)
		}
		if e.Seq != want.Seq || e.Copy != want.Copy {
			t.Fatalf("streamed seq %d copy %v, listed seq %d copy %v", e.Seq, e.Copy, want.Seq, want.Copy)
		}
		out = append(out, e)
	}
	return out
}

// codexSession is the session of the Codex 0.169 run idlessCodexRun reads.
const codexSession = "01a2132b-c636-7c31-93a8-aeaecf1768f7"

// idlessCodexRun returns a real run of Codex 0.169 captured twice: its
// hooks' payloads, received when they ran moved by shift, without their
// tool_use_id, and its rollout.
func idlessCodexRun(t *testing.T, shift time.Duration) (hooks, imported []event.Envelope) {
	t.Helper()
	raw, err := os.ReadFile("../attribution/testdata/codex-rollout/hooks.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range bytes.Split(bytes.TrimSpace(raw), []byte("\n")) {
		var line struct {
			T       float64                    `json:"t"`
			Payload map[string]json.RawMessage `json:"payload"`
		}
		if err := json.Unmarshal(l, &line); err != nil {
			t.Fatal(err)
		}
		delete(line.Payload, "tool_use_id")
		p, _ := json.Marshal(line.Payload)
		sec, frac := math.Modf(line.T)
		hooks = append(hooks, event.Envelope{ID: fmt.Sprintf("0190f000-0000-7000-8000-%012d", i), Runtime: event.RuntimeCodex,
			Kind: event.KindHook, ReceivedAt: time.Unix(int64(sec), int64(frac*1e9)).Add(shift).UTC(), Payload: p})
	}
	imported, _, err = rollout.Read("../codex/testdata/rollout-2026-11-25T14-46-05-"+codexSession+".jsonl", "", "")
	if err != nil {
		t.Fatal(err)
	}
	return hooks, imported
}

// TestEventCopiesCodexSubagent: a real Codex run that spawned a subagent,
// reported by its hooks and read from its two rollouts: every rollout
// record of what a hook reported too is a copy — the subagent's prompt
// (its parent's message, which has no prompt id: its turn names it) as
// the main agent's prompt and each call — and with copies=exclude each
// prompt is listed once. The session's stream marks the copies too.
func TestEventCopiesCodexSubagent(t *testing.T) {
	const session, sub = "01a23446-a8b8-7f03-83b6-760203bd13dd", "01a23446-ad70-7ca2-bafc-64796f33e252"
	raw, err := os.ReadFile("../attribution/testdata/codex-subagent/hooks.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var hooks, imported []event.Envelope
	for i, l := range bytes.Split(bytes.TrimSpace(raw), []byte("\n")) {
		var line struct {
			T       float64         `json:"t"`
			Payload json.RawMessage `json:"payload"`
		}
		if err := json.Unmarshal(l, &line); err != nil {
			t.Fatal(err)
		}
		sec, frac := math.Modf(line.T)
		hooks = append(hooks, event.Envelope{ID: fmt.Sprintf("0190f000-0000-7000-8000-%012d", i), Runtime: event.RuntimeCodex,
			Kind: event.KindHook, ReceivedAt: time.Unix(int64(sec), int64(frac*1e9)).UTC(), Payload: line.Payload})
	}
	for _, name := range []string{"2026-12-02T01-02-55-" + session, "2026-12-02T01-02-56-" + sub} {
		envs, _, err := rollout.Read("../attribution/testdata/codex-subagent/rollout-"+name+".jsonl", "", "")
		if err != nil {
			t.Fatal(err)
		}
		imported = append(imported, envs...)
	}
	s, all := hooksThenFiles(t, session, hooks, imported)
	prompts := map[string]int{} // listed once (copies=exclude), by agent
	for _, e := range all {
		if e.Event != event.UserPromptSubmit {
			continue
		}
		switch {
		case e.Kind == event.KindRollout && !e.Copy:
			t.Errorf("the rollout's prompt of agent %q not marked a copy", e.AgentID)
		case e.Kind == event.KindHook && !slices.Equal(e.AlsoReadFrom, []string{event.KindRollout}):
			t.Errorf("the hook's prompt of agent %q also read from %v", e.AgentID, e.AlsoReadFrom)
		}
	}
	for _, e := range s.listEvents(t, session, "limit=1000&copies=exclude") {
		if e.Event == event.UserPromptSubmit {
			prompts[e.AgentID]++
		}
	}
	if prompts[""] != 1 || prompts[sub] != 1 || len(prompts) != 2 {
		t.Errorf("copies=exclude lists prompts %v, want one of each agent", prompts)
	}
	// The subagent is named as Codex's screen names it, by the nickname
	// its spawn's response gave it, through the store to the API.
	var agents struct {
		Agents []attribution.Agent `json:"agents"`
	}
	s.getJSON(t, "/v1/sessions/"+session+"/agents", &agents)
	nicknames := map[string]string{}
	for _, a := range agents.Agents {
		nicknames[a.AgentID] = a.Nickname
	}
	if want := map[string]string{"": "", sub: "Maxwell"}; !maps.Equal(nicknames, want) {
		t.Errorf("agents' nicknames %v, want %v", nicknames, want)
	}
	streamsCopiesOf(t, s, session, all)
}

// TestEventCopiesCodexFork: a Codex fork (its real rollout) whose hooks
// reported its start (SessionStart(fork), in the shape of Codex 0.169's,
// and later a resume): the rollout's SessionStart, which names the parent
// as the hook's does, is a copy of the fork's start, the hook's
// SessionStart(fork) also read from the rollout, the resume neither; the
// session's stream marks the copy too.
func TestEventCopiesCodexFork(t *testing.T) {
	const fork, parent = "01a23316-3758-7a81-a9c2-a6bb4415263b", "01a23316-345b-74a0-a31e-017bc0d13103"
	path := "/home/dev/.codex/sessions/2026/12/01/rollout-2026-12-01T19-30-23-" + fork + ".jsonl"
	start := func(n int, at, source string) event.Envelope {
		p, _ := json.Marshal(map[string]any{"session_id": fork, "transcript_path": path, "cwd": "/home/dev/src/demo",
			"hook_event_name": "SessionStart", "model": "gpt-5.5", "permission_mode": "default", "source": source})
		tm, _ := time.Parse(time.RFC3339Nano, at)
		return event.Envelope{ID: fmt.Sprintf("0190f000-0000-7000-8000-%012d", n), Runtime: event.RuntimeCodex, Kind: event.KindHook, ReceivedAt: tm, Payload: p}
	}
	hooks := []event.Envelope{start(1, "2026-12-01T19:30:23.760Z", "fork"), start(2, "2026-12-01T19:40:00Z", "resume")}
	hooks[0].ForkOf = parent
	imported, _, err := rollout.Read("../codex/testdata/rollout-2026-12-01T19-30-23-"+fork+".jsonl", "", "")
	if err != nil {
		t.Fatal(err)
	}
	s, all := hooksThenFiles(t, fork, hooks, imported)
	starts := 0
	for _, e := range all {
		if e.Event != event.SessionStart {
			continue
		}
		starts++
		switch {
		case e.Kind == event.KindRollout && !e.Copy:
			t.Errorf("the rollout's SessionStart not marked a copy")
		case e.ID == hooks[0].ID && !slices.Equal(e.AlsoReadFrom, []string{event.KindRollout}):
			t.Errorf("the hook's SessionStart(fork) also read from %v", e.AlsoReadFrom)
		case e.ID == hooks[1].ID && (e.Copy || e.AlsoReadFrom != nil):
			t.Errorf("the resume's SessionStart: copy %v, also read from %v", e.Copy, e.AlsoReadFrom)
		}
	}
	if starts != 3 {
		t.Errorf("%d SessionStart listed, want the hooks' 2 and the rollout's", starts)
	}
	streamsCopiesOf(t, s, fork, all)
}

// TestEventCopiesClaudeFork: a real Claude Code 2.1.332 fork reported by
// its hooks (SessionStart(fork) under the fork's id) and read from its
// transcript, whose first record is read as that SessionStart: the
// transcript's is a copy of the hook's, the hook's also read from the
// transcript; the session's stream marks the copy too.
func TestEventCopiesClaudeFork(t *testing.T) {
	const fork = "ade817eb-d549-4f37-8dec-fccc9a21af82"
	hooks, imported, err := demo.Transcripts("../attribution/testdata/claude-fork-2.1.332")
	if err != nil {
		t.Fatal(err)
	}
	s, all := hooksThenFiles(t, fork, hooks, imported)
	starts := 0
	for _, e := range all {
		if e.Event != event.SessionStart {
			continue
		}
		starts++
		switch {
		case e.Kind == event.KindTranscript && !e.Copy:
			t.Errorf("the transcript's SessionStart not marked a copy")
		case e.Kind == event.KindHook && !slices.Equal(e.AlsoReadFrom, []string{event.KindTranscript}):
			t.Errorf("the hook's SessionStart(fork) also read from %v", e.AlsoReadFrom)
		}
	}
	if starts != 2 {
		t.Errorf("%d SessionStart listed, want the hook's and the transcript's", starts)
	}
	streamsCopiesOf(t, s, fork, all)
}

// TestEventCopiesAPIError: real Claude Code runs whose subagent's model
// request failed, reported by their hooks and read from their
// transcripts. The subagent's stop is its StopFailure, which the hook
// delivered and the importer reads from the client's record of the error:
// the transcript's is a copy, the hook's also read from the transcript.
// The main agent's StopFailures end its turns, which no file records:
// neither is a copy nor also read from one. The streams mark the same.
func TestEventCopiesAPIError(t *testing.T) {
	for version, session := range map[string]string{
		"2.1.197": "bed3416c-0acd-4526-923e-7120d8a3fa48",
		"2.1.332": "e9bd0901-d3e2-4195-a55d-6b582e801b39",
	} {
		t.Run(version, func(t *testing.T) {
			hooks, imported, err := demo.Transcripts("../attribution/testdata/claude-apierror-" + version)
			if err != nil {
				t.Fatal(err)
			}
			s, all := hooksThenFiles(t, session, hooks, imported)
			var sub, main int
			for _, e := range all {
				if e.Event != event.StopFailure {
					continue
				}
				also := slices.Equal(e.AlsoReadFrom, []string{event.KindTranscript})
				switch {
				case e.AgentID == "":
					main++
					if e.Copy || len(e.AlsoReadFrom) > 0 {
						t.Errorf("the main agent's StopFailure %s (%s): copy %v, also read from %v", e.ID, e.Kind, e.Copy, e.AlsoReadFrom)
					}
				case e.Kind == event.KindTranscript:
					sub++
					if !e.Copy {
						t.Errorf("the transcript's StopFailure of subagent %s not marked a copy", e.AgentID)
					}
				case e.Kind == event.KindHook:
					sub++
					if e.Copy || !also {
						t.Errorf("the hook's StopFailure of subagent %s: copy %v, also read from %v", e.AgentID, e.Copy, e.AlsoReadFrom)
					}
				}
			}
			if sub != 2 || main == 0 {
				t.Fatalf("%d StopFailures of the subagent listed (want the hook's and the transcript's), %d of the main agent (want some)", sub, main)
			}
			streamsCopiesOf(t, s, session, all)
		})
	}
}

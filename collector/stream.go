package collector

import (
	"bytes"
	"cmp"
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/store"
)

// hub wakes the SSE streams after each commit. It carries no events: every
// stream reads what is new from the store, from its own position. That one
// path serves live delivery, Last-Event-ID resumption and slow clients alike
// (a slow client simply reads a bigger page next time), and a stream can
// neither miss nor repeat an event.
type hub struct {
	mu sync.Mutex
	ch chan struct{} // closed and replaced by notify
}

func newHub() *hub { return &hub{ch: make(chan struct{})} }

// wait returns a channel closed by the next notify. Take it before reading
// the store, so that a commit between the read and the wait is not missed.
func (h *hub) wait() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ch
}

func (h *hub) notify() {
	h.mu.Lock()
	close(h.ch)
	h.ch = make(chan struct{})
	h.mu.Unlock()
}

// streamPage is the most events one store read sends before flushing.
const streamPage = 500

// streamHold is the longest a session's stream holds a record read from a
// client's file that the model has not yet taken, to send it marked a copy
// when the model matches it by content. The model takes it at its next
// round (modelCadence), unless it lags; held longer, the record would miss
// the second within which a live change reaches the page, so past this it
// goes unmarked (a reload marks it).
const streamHold = 750 * time.Millisecond

// copyHold is a stream's hold of a record the model has yet to take
// (streamHold); its zero value holds nothing.
type copyHold struct {
	since time.Time // when the record held first was, zero for none
}

// cut decides, of n views of which the first pending the model has taken
// (markSources), how many to send now: all when none waits for the model,
// or when the wait has lasted streamHold (the next record waits anew),
// else the first pending, and hold reports that the rest is held.
func (h *copyHold) cut(pending, n int, now time.Time) (send int, hold bool) {
	switch {
	case pending >= n:
		h.since = time.Time{}
		return n, false
	case h.since.IsZero():
		h.since = now
		return pending, true
	case now.Sub(h.since) < streamHold:
		return pending, true
	}
	h.since = time.Time{}
	return n, false
}

// handleStream is GET /v1/stream: Server-Sent Events, one per stored event,
// with data: its JSON (as in the events listing), and the model messages of
// stream_model.go, and the stall notices of stall.go; every id: is
// "<event seq>:<model seq>". Without
// Last-Event-ID the stream starts with what is stored after the request;
// with it, it first replays every event after that seq (and, given as
// "E:M", every model change after M); a seq past the last stored event
// starts the stream at the last one. The first block, sent on connecting
// with the ": connected" comment, carries the id of the starting position
// and no data, so that a client always has an id to resume from. The
// optional session_id parameter keeps one session's events and model.
// events=exclude (parseStreamEvents) sends no stored event, only the model
// messages and stall notices: their ids still carry the position of the
// last stored event at the time, so that the id resumes such a stream, or
// a full one, from then on rather than from the start of what it left out.
//
// An event whose envelope is larger than 64 KiB is sent without its
// payload: its envelope lacks "payload", and "payload_omitted" holds
// {"envelope_bytes": N, "url": "/v1/sessions/{id}/events?limit=1&cursor=…"},
// the listing that returns the whole event. A client that does not take
// what it is sent within StreamStall (30 s) is disconnected; it resumes
// with Last-Event-ID and loses nothing. See streambound.go.
func (s *Server) handleStream(w http.ResponseWriter, r *http.Request) {
	users := visibleUsers(r)
	sendEvents, err := parseStreamEvents(r.URL.Query())
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if id := r.URL.Query().Get("session_id"); id != "" {
		if err := s.mayRead(r.Context(), id); err != nil {
			s.storeError(w, r, err)
			return
		}
	}
	var pos streamPos
	resumeModel := false
	resume := strings.TrimSpace(r.Header.Get("Last-Event-ID"))
	if resume != "" {
		if pos, resumeModel, err = parseStreamPos(resume); err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
	}
	last, err := s.store.LastSeq(r.Context())
	if err != nil {
		s.storeError(w, r, err)
		return
	}
	if resume == "" || pos.event > last {
		// A position past the last stored event is of no event of this
		// log (the client's id is of a database since replaced): kept, the
		// stream would pass over every event until the log reached it.
		pos.event = last
	}
	if !resumeModel {
		pos.model = s.modeler.currentVersion()
	}
	cursor := pos.event
	stallSeq := s.stalls.latest() // stalls found before are in the signals API
	filter := store.EventFilter{SessionID: r.URL.Query().Get("session_id"), Users: users, Limit: streamPage}

	s.metrics.sseClients.Inc()
	defer s.metrics.sseClients.Dec()

	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // tell nginx not to buffer the stream
	w.WriteHeader(http.StatusOK)
	// retry: asks EventSource clients to reconnect after 2 s. id: is the
	// position the stream starts from: a client that receives nothing
	// before the connection drops (an idle session, a collector
	// restarted) resumes from it, rather than from whatever is stored
	// when it comes back, and misses nothing in between.
	if _, err := w.Write([]byte("retry: 2000\nid: " + pos.String() + "\n: connected\n\n")); err != nil {
		return
	}
	if rc.Flush() != nil {
		return
	}

	heartbeat := time.NewTicker(s.cfg.Heartbeat)
	defer heartbeat.Stop()
	var buf bytes.Buffer
	var held copyHold
	for {
		wake := s.hub.wait()
		holding := false
		if !sendEvents {
			// Read after wake is taken, as the events would be: an
			// event stored after this read wakes the stream again.
			if cursor, err = s.store.LastSeq(r.Context()); err != nil {
				if r.Context().Err() == nil {
					s.log.Warn("stream cannot read the last seq", "err", err)
				}
				return
			}
		}
		// Drain everything stored after cursor, at most streamQueueBytes
		// at a time (see streambound.go).
		for sendEvents {
			filter.Cursor = store.EventCursor(cursor)
			if !s.streamReads.acquire(r.Context(), s.done) {
				return
			}
			page, err := s.store.Events(r.Context(), filter)
			if err != nil {
				s.streamReads.release()
				if r.Context().Err() == nil {
					s.log.Warn("stream cannot read events", "err", err)
				}
				return
			}
			more := page.Next != ""
			views := eventViews(page.Events)
			if filter.SessionID != "" {
				// A session's stream marks the records read from its
				// files as the list does: they come seconds after the
				// hook's events they copy, which the model has by then.
				// The hook's events came before their copies, unmarked.
				// A record the model has yet to match by content is
				// held until the model has it (it wakes the stream), for
				// at most streamHold.
				var pending int
				pending, err = s.markSources(r.Context(), filter.SessionID, views, func(v *EventView) bool { return event.IsEvidence(v.Kind) })
				if send, hold := held.cut(pending, len(views), time.Now()); hold {
					views, more, holding = views[:send], false, true
				}
				if err == nil {
					err = s.markCopied(r.Context(), filter.SessionID, views)
				}
				if err != nil {
					s.streamReads.release()
					if r.Context().Err() == nil {
						s.log.Warn("stream cannot read the model", "err", err)
					}
					return
				}
			}
			buf.Reset()
			for i := range views {
				writeSSE(&buf, &views[i], pos.model)
				cursor = views[i].Seq
				if buf.Len() >= streamQueueBytes {
					more = more || i < len(page.Events)-1
					break
				}
			}
			page = store.EventPage{} // not held while the client is slow
			s.streamReads.release()
			if buf.Len() == 0 {
				break
			}
			// A client that stops reading is disconnected; it resumes
			// with Last-Event-ID.
			rc.SetWriteDeadline(time.Now().Add(s.cfg.StreamStall))
			if _, err := w.Write(buf.Bytes()); err != nil {
				s.streamWriteFailed(err)
				return
			}
			if err := rc.Flush(); err != nil {
				s.streamWriteFailed(err)
				return
			}
			if !more {
				break
			}
		}
		pos.event = cursor
		err := s.streamModel(r.Context(), filter.SessionID, users, &pos, func(b []byte) error {
			rc.SetWriteDeadline(time.Now().Add(s.cfg.StreamStall))
			if _, err := w.Write(b); err != nil {
				return err
			}
			return rc.Flush()
		})
		if err != nil {
			if r.Context().Err() == nil {
				s.log.Warn("stream cannot send model changes", "err", err)
			}
			return
		}
		err = s.streamStalls(filter.SessionID, users, pos, &stallSeq, func(b []byte) error {
			rc.SetWriteDeadline(time.Now().Add(s.cfg.StreamStall))
			if _, err := w.Write(b); err != nil {
				return err
			}
			return rc.Flush()
		})
		if err != nil {
			return
		}
		var hold <-chan time.Time
		if holding {
			hold = time.After(streamHold - time.Since(held.since))
		}
		select {
		case <-wake:
		case <-hold:
		case <-heartbeat.C:
			rc.SetWriteDeadline(time.Now().Add(s.cfg.StreamStall))
			if _, err := w.Write([]byte(": ping\n\n")); err != nil {
				return
			}
			if rc.Flush() != nil {
				return
			}
		case <-r.Context().Done():
			return
		case <-s.done:
			return
		}
	}
}

// parseStreamEvents reads the stream's events parameter: include (the
// default) sends every stored event, exclude none. A client that follows
// only the model messages (the dashboard's list of sessions) is then spared
// the read, the encoding and the kilobytes of every event it would drop.
func parseStreamEvents(q url.Values) (bool, error) {
	return includes(q, "events", "sends the model messages and stall notices only")
}

// markCopied sets CopyOf on each copy among views (of session id): the
// stored hook's events of the same happening, each with what the list
// serves now as its AlsoReadFrom — and the copy's file, which the model
// may not have read yet when the stream sends the copy.
func (s *Server) markCopied(ctx context.Context, id string, views []EventView) error {
	isCopy := func(v *EventView) bool { return v.Copy }
	copies := map[happening][]int{} // the copies among views, by what they tell of
	for i := range views {
		if isCopy(&views[i]) {
			h := happeningOf(&views[i])
			copies[h] = append(copies[h], i)
		}
	}
	if len(copies) == 0 {
		return nil
	}
	var hooks []store.Event
	read := func(f store.EventFilter) error {
		f.SessionID, f.Limit = id, store.MaxLimit
		for {
			page, err := s.store.Events(ctx, f)
			if err != nil {
				return err
			}
			for _, e := range page.Events {
				if !event.IsEvidence(e.Kind) {
					hooks = append(hooks, e)
				}
			}
			if page.Next == "" {
				return nil
			}
			f.Cursor = page.Next
		}
	}
	// The hook's events of what a copy tells of were, as a rule, stored
	// shortly before it: a client's file is read after its hooks ran. They
	// are looked for among the copyLookback events stored before the first
	// copy, a range of the session's index, and in the whole log only for
	// what that leaves without one (a transcript imported long after its
	// hooks): the index does not hold the calls' ids, and a lookup over the
	// whole of a session of 100,000 events read each of its rows, ~130 ms
	// at each flush of a stream that sent a copy.
	ids := idsOf(views, isCopy)
	first := views[slices.IndexFunc(views, func(v EventView) bool { return v.Copy })]
	if err := readEach(read, ids, store.EventCursor(max(0, first.Seq-copyLookback))); err != nil {
		return err
	}
	idless, err := s.idlessHooks(ctx, id, ids.without(hooks, nil).calls, read)
	if err != nil {
		return err
	}
	if rest := ids.without(hooks, idless); !rest.empty() {
		if err := readEach(read, rest, ""); err != nil {
			return err
		}
		slices.SortFunc(hooks, func(a, b store.Event) int { return cmp.Compare(a.Seq, b.Seq) })
		hooks = slices.CompactFunc(hooks, func(a, b store.Event) bool { return a.Seq == b.Seq })
	}
	_, err = s.eachSources(ctx, id, eventViews(hooks), nil, func(hook *EventView, src attribution.Sources) {
		for _, i := range copies[copiedHappening(hook, idless)] {
			also := (src | attribution.SourceOf(views[i].Kind)).Also(hook.Kind)
			views[i].CopyOf = append(views[i].CopyOf, CopiedEvent{Seq: hook.Seq, AlsoReadFrom: also.Names()})
		}
	})
	return err
}

// copyLookback is how many events before a stream's first copy markCopied
// looks for the hook's events it copies before it reads the whole log.
const copyLookback = 10_000

// copiedHappening is what a hook's event tells of, for markCopied: its
// happening (happeningOf), or, for a call's event without a tool_use_id,
// the call idless names by its envelope id (idlessHooks).
func copiedHappening(v *EventView, idless map[string]string) happening {
	h := happeningOf(v)
	if t := attribution.TellsOf(v.Event); h.of == 0 && t.Call() && idless[v.ID] != "" {
		h = happening{of: 'c', id: idless[v.ID], end: t == attribution.ToldCallEnd}
	}
	return h
}

// readEach reads with read the hook's events of the calls, prompts,
// agents, session end and fork's start of ids, from cursor on (of a
// subagent's prompt, every prompt of its agent; of the fork's start, every
// SessionStart).
func readEach(read func(store.EventFilter) error, ids happeningIDs, cursor string) error {
	mainAgent := ""
	filters := []store.EventFilter{}
	for ids := range slices.Chunk(ids.calls, store.MaxFilterIDs) {
		filters = append(filters, store.EventFilter{ToolUseIDs: ids})
	}
	for ids := range slices.Chunk(ids.prompts, store.MaxFilterIDs) {
		filters = append(filters, store.EventFilter{PromptIDs: ids, AgentID: &mainAgent, Event: event.UserPromptSubmit})
	}
	// A subagent's prompt is named by its turn, which no column holds:
	// its agent's prompts are read, few (its parent's messages).
	var subs []string
	for _, h := range ids.subPrompts {
		if !slices.Contains(subs, h.agent) {
			subs = append(subs, h.agent)
		}
	}
	for _, a := range subs {
		filters = append(filters, store.EventFilter{AgentID: &a, Event: event.UserPromptSubmit})
	}
	if ids.end {
		filters = append(filters, store.EventFilter{AgentID: &mainAgent, Event: event.SessionEnd})
	}
	if ids.fork {
		filters = append(filters, store.EventFilter{AgentID: &mainAgent, Event: event.SessionStart})
	}
	for _, a := range ids.agents {
		filters = append(filters,
			store.EventFilter{AgentID: &a, Event: event.SubagentStart},
			store.EventFilter{AgentID: &a, Event: event.SubagentStop},
			store.EventFilter{AgentID: &a, Event: event.StopFailure})
	}
	for _, f := range filters {
		f.Cursor = cursor
		if err := read(f); err != nil {
			return err
		}
	}
	return nil
}

// idlessHooks reads, for markCopied, the hook's events without a
// tool_use_id of the calls untold, which copies tell of and no hook's
// event read by id does: the model matched them to the file's record by
// content, and the session's summary names their envelope ids
// (Session.MatchedCalls). read appends the events of a filter to what
// markCopied read. It returns the call id the file reported each such
// event's call under, by envelope id.
func (s *Server) idlessHooks(ctx context.Context, id string, untold []string, read func(store.EventFilter) error) (map[string]string, error) {
	if len(untold) == 0 {
		return nil, nil
	}
	ms, err := s.store.SessionModels(ctx, []string{id})
	if err != nil {
		return nil, err
	}
	sess := decodeSummary(ms[id].Summary)
	if sess == nil {
		return nil, nil
	}
	wanted := map[string]bool{}
	for _, c := range untold {
		wanted[c] = true
	}
	callOf := map[string]string{}
	var eventIDs []string
	for _, m := range sess.MatchedCalls {
		if wanted[m.CallID] {
			for _, e := range m.EventIDs {
				callOf[e] = m.CallID
				eventIDs = append(eventIDs, e)
			}
		}
	}
	for ids := range slices.Chunk(eventIDs, store.MaxFilterIDs) {
		if err := read(store.EventFilter{IDs: ids}); err != nil {
			return nil, err
		}
	}
	return callOf, nil
}

// writeSSE appends one event in the text/event-stream format. The JSON of an
// event holds no raw newline (encoding/json escapes them in strings and the
// envelope is stored compact), but a data: line must not contain one
// whatever happens, so any is split into continuation lines.
func writeSSE(buf *bytes.Buffer, e *EventView, modelSeq int64) {
	b, err := streamJSON(e)
	if err != nil {
		return
	}
	buf.WriteString("id: ")
	buf.WriteString(streamPos{event: e.Seq, model: modelSeq}.String())
	buf.WriteString("\ndata: ")
	for {
		i := bytes.IndexAny(b, "\r\n")
		if i < 0 {
			break
		}
		buf.Write(b[:i])
		buf.WriteString("\ndata: ")
		b = b[i+1:]
	}
	buf.Write(b)
	buf.WriteString("\n\n")
}

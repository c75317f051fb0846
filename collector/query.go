package collector

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/store"
)

// SessionsResponse is the body of GET /v1/sessions.
type SessionsResponse struct {
	Sessions []SessionView `json:"sessions"`
	// NextCursor continues the listing; "" on the last page.
	NextCursor string `json:"next_cursor"`
}

// EventsResponse is the body of GET /v1/sessions/{id}/events.
type EventsResponse struct {
	Events     []EventView `json:"events"`
	NextCursor string      `json:"next_cursor"`
}

// EventView is a stored event as the API and the stream serve it: its
// stored fields, and what the session model says of the event that a view
// needs, so that no view decides it again.
type EventView struct {
	storedEvent // its fields inline, as the store reads them
	// TaskNotification marks a UserPromptSubmit whose prompt the client
	// submitted itself to report a background task's end
	// (attribution.IsTaskNotification): no prompt of the user's.
	TaskNotification bool `json:"task_notification,omitempty"`
	// Copy marks an event read from a client's file (kind transcript or
	// rollout) that tells of a happening a hook delivered too — a call's
	// start or end, a subagent's start or stop, a prompt, the session's
	// end, its start as a fork —, which the model counts as the hook's event
	// (attribution.Sources.Copy). The stream of one session marks it too.
	Copy bool `json:"copy,omitempty"`
	// AlsoReadFrom names, on a hook's event, the files that recorded its
	// happening too ("transcript", "rollout"), whose events are marked
	// Copy (attribution.Sources.Also). Events of the list only: the
	// stream sends a hook's event before its copies are read, and tells
	// of them in CopyOf.
	AlsoReadFrom []string `json:"also_read_from,omitempty"`
	// CopyOf names, on a copy the stream of one session sends, the hook's
	// events it copies (already sent), each with its AlsoReadFrom as the
	// list now serves it, this copy's file included: what a view that
	// shows the hook's event updates. Not in the list, whose hook's
	// events carry their AlsoReadFrom.
	CopyOf []CopiedEvent `json:"copy_of,omitempty"`
	// turnID is, on a subagent's UserPromptSubmit, its turn, which names
	// its prompt (no prompt id does: attribution.PromptSources).
	turnID string
	// fork marks a SessionStart with source fork, the start of a fork
	// (attribution.Session.ForkSources).
	fork bool
}

// CopiedEvent is a hook's event a streamed copy copies (EventView.CopyOf).
type CopiedEvent struct {
	Seq          int64    `json:"seq"`
	AlsoReadFrom []string `json:"also_read_from"`
}

// storedEvent is store.Event under a name of its own, so that EventView's
// promoted fields keep their names (Event is the hook event's).
type storedEvent = store.Event

// Stored returns the event as the store holds it.
func (v EventView) Stored() store.Event { return v.storedEvent }

// eventView returns e as the API serves it. Only the payload of a
// UserPromptSubmit (for its prompt and a subagent's turn) or a
// SessionStart (for its source) is read: as admission decoded it when the
// event was just committed (the stream), else decoded from the stored
// envelope. One that cannot be decoded is served unmarked.
func eventView(e store.Event) EventView {
	v := EventView{storedEvent: e}
	if e.Event != event.UserPromptSubmit && e.Event != event.SessionStart {
		return v
	}
	p := e.Payload
	if p == nil {
		env, err := store.EnvelopeOf(&e)
		if err != nil {
			return v
		}
		if p, err = event.Decode(env.Payload); err != nil {
			return v
		}
	}
	if in, ok := p.Event.(*event.UserPromptSubmitInput); ok {
		v.TaskNotification = attribution.IsTaskNotification(in.Prompt)
	}
	if e.AgentID != "" {
		v.turnID = p.TurnID
	}
	if in, ok := p.Event.(*event.SessionStartInput); ok {
		v.fork = attribution.StartsFork(in)
	}
	return v
}

// eventViews returns events as the API serves them, never nil.
func eventViews(events []store.Event) []EventView {
	out := make([]EventView, len(events))
	for i, e := range events {
		out[i] = eventView(e)
	}
	return out
}

// takes answers 400 to a request whose query cannot be read, names a
// parameter other than params, or names one of them more than once, and
// passes every other request to h. Ignored, such a parameter would make
// the answer one to a question not asked: a filter the endpoint does not
// have (status= on events), a second value dropped (status=ok&status=error)
// or a value lost to a bad escape (status=%zz) would list more, or other,
// than the caller meant.
func takes(h http.HandlerFunc, params ...string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, err := url.ParseQuery(r.URL.RawQuery)
		if err != nil {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("cannot read the query: %v: escape each value (url-encode it) and separate parameters with &", err))
			return
		}
		for _, name := range slices.Sorted(maps.Keys(q)) {
			if !slices.Contains(params, name) {
				if len(params) == 0 {
					writeError(w, http.StatusBadRequest, fmt.Sprintf("%s takes no parameters, got %q", r.URL.Path, name))
				} else {
					writeError(w, http.StatusBadRequest, fmt.Sprintf("%s takes no parameter %q: it takes %s", r.URL.Path, name, strings.Join(params, ", ")))
				}
				return
			}
			if len(q[name]) > 1 {
				writeError(w, http.StatusBadRequest, fmt.Sprintf("%s is given %d times: give it once, with one value", name, len(q[name])))
				return
			}
		}
		h(w, r)
	})
}

// parseLimit reads the limit parameter: absent is the store's default, too
// large is clamped by the store, anything not a positive integer is an error.
func parseLimit(q url.Values) (int, error) {
	v := q.Get("limit")
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(v, "-") {
		// Larger than an int: as large as any, served as the largest.
		return store.MaxLimit, nil
	}
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("limit must be a positive integer, got %q", v)
	}
	return n, nil
}

// storeError answers a failed store call: a bad cursor is the client's
// fault, a missing object a 404, anything else the server's.
func (s *Server) storeError(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, store.ErrInvalidCursor):
		writeError(w, http.StatusBadRequest, "invalid cursor: pass back next_cursor unchanged")
	case errors.Is(err, store.ErrNotFound):
		writeError(w, http.StatusNotFound, "session not found")
	case errors.Is(err, ErrForbidden):
		writeError(w, http.StatusForbidden, "this session is another user's")
	case r.Context().Err() != nil:
		// The client is gone; nothing to answer.
	default:
		s.log.Error("store query failed", "path", r.URL.Path, "err", err)
		writeError(w, http.StatusInternalServerError, "cannot query the store")
	}
}

func (s *Server) handleSessions(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit, err := parseLimit(q)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	page, err := s.store.Sessions(r.Context(), store.SessionFilter{
		Runtime: q.Get("runtime"),
		Project: q.Get("project"),
		Users:   visibleUsers(r),
		Cursor:  q.Get("cursor"),
		Limit:   limit,
	})
	if err != nil {
		s.storeError(w, r, err)
		return
	}
	rows, err := s.listedModels(r.Context(), page.Sessions)
	if err != nil {
		s.storeError(w, r, err)
		return
	}
	// SessionsResponse, written by hand (appendSessionsPage).
	body, err := appendSessionsPage(make([]byte, 0, pageSize(rows)), rows, page.Next)
	if err != nil {
		writeBody(w, http.StatusInternalServerError, []byte(encodeFailed))
		return
	}
	writeBody(w, http.StatusOK, body)
}

func (s *Server) handleSessionEvents(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit, err := parseLimit(q)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	sid, agent, err := s.virtualEvents(r.Context(), r.PathValue("id"))
	if err != nil {
		s.storeError(w, r, err)
		return
	}
	if err := s.mayRead(r.Context(), sid); err != nil {
		s.storeError(w, r, err)
		return
	}
	f := store.EventFilter{
		SessionID: sid,
		AgentID:   agent,
		Users:     visibleUsers(r),
		Event:     q.Get("event"),
		Tool:      q.Get("tool"),
		Cursor:    q.Get("cursor"),
		Limit:     limit,
	}
	// agent_id= (present, empty) is the main agent; absent is every agent.
	if q.Has("agent_id") {
		a := q.Get("agent_id")
		if f.AgentID != nil && *f.AgentID != a {
			a = "\x00" // a virtual session's events are its agent's only
		}
		f.AgentID = &a
	}
	withCopies, err := parseCopies(q)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	views, next, err := s.eventPage(r.Context(), f, withCopies)
	if err != nil {
		s.storeError(w, r, err)
		return
	}
	if len(views) == 0 && f.Cursor == "" && next == "" {
		// An empty first page: tell an unknown session from a quiet filter.
		if _, err := s.store.Session(r.Context(), f.SessionID); err != nil {
			s.storeError(w, r, err)
			return
		}
	}
	writeJSON(w, http.StatusOK, EventsResponse{Events: views, NextCursor: next})
}

// parseCopies reads the copies parameter: include (the default) lists
// every event, exclude leaves out those marked Copy.
func parseCopies(q url.Values) (bool, error) { return includes(q, "copies", "") }

// includes reads the parameter name, include (the default) or exclude,
// as whether what it names is included; any other value is an error that
// says so, and what exclude leaves, when exclusion says.
func includes(q url.Values, name, exclusion string) (bool, error) {
	switch v := q.Get(name); v {
	case "", "include":
		return true, nil
	case "exclude":
		return false, nil
	default:
		if exclusion != "" {
			exclusion = " (exclude " + exclusion + ")"
		}
		return false, fmt.Errorf("%s must be include or exclude%s, got %q", name, exclusion, v)
	}
}

// eventPage returns a page of the events f selects, marked with what the
// session's stored model says of who reported them (markSources), and
// the cursor of the next. Without copies, the events marked Copy are left
// out and more of the log is read to fill the page, up to a few store
// pages: a page may then hold fewer events than the limit with a cursor
// to go on.
func (s *Server) eventPage(ctx context.Context, f store.EventFilter, copies bool) ([]EventView, string, error) {
	limit := store.ClampLimit(f.Limit)
	out := []EventView{}
	for i := 1; ; i++ {
		// Asked for what the page lacks, a store page never overfills it.
		f.Limit = limit - len(out)
		page, err := s.store.Events(ctx, f)
		if err != nil {
			return nil, "", err
		}
		views := eventViews(page.Events)
		if _, err := s.markSources(ctx, f.SessionID, views, nil); err != nil {
			return nil, "", err
		}
		for _, v := range views {
			if copies || !v.Copy {
				out = append(out, v)
			}
		}
		if copies || page.Next == "" || len(out) == limit || i == maxCopyPages {
			return out, page.Next, nil
		}
		f.Cursor = page.Next
	}
}

// maxCopyPages bounds the store pages one request reads to fill a page
// without copies.
const maxCopyPages = 8

// markSources marks each of views with what the stored model of session
// id says of who reported its happening — its calls, its agents, its
// prompts (Session.SharedPrompts), its end
// (Session.EndSources), its start as a fork (Session.ForkSources) —:
// Copy on a client's
// file's record of what a hook delivered too, AlsoReadFrom on the hook's
// event (attribution.Sources). A tool event's call is its tool_use_id's,
// or, for the events of a call the model matched by content (hook events
// without an id, the file's records of a call stored under the hook's
// synthetic id), the one Session.CallOf names. The rows are read only
// when views hold events they speak of; a session without a stored model
// leaves every event unmarked.
//
// It returns the index of the first of views that may be marked once the
// model has it (len(views) when none): a record read from a client's
// file of a call the model does not know, after the last event the model
// was computed from — a copy the model has yet to match by content.
func (s *Server) markSources(ctx context.Context, id string, views []EventView, which func(*EventView) bool) (pending int, err error) {
	return s.eachSources(ctx, id, views, which, func(v *EventView, src attribution.Sources) {
		v.Copy = src.Copy(v.Kind)
		v.AlsoReadFrom = src.Also(v.Kind).Names()
	})
}

// happening is what an event tells of that the model keeps the Sources
// of: a call's start or end, an agent's start or stop, a prompt (the main
// agent's by its prompt id; a subagent's by its agent and turn), the
// session's end, its start as a fork. The zero value is none.
type happening struct {
	of    byte // 'c' a call, 'a' an agent, 'p' a prompt, 'e' the session's end, 'f' its start as a fork
	id    string
	agent string // a subagent's prompt's agent; its id is the turn's
	end   bool
}

// isCallEvent reports whether an event of this name tells of a call's
// start or end (attribution.TellsOf).
func isCallEvent(name string) bool { return attribution.TellsOf(name).Call() }

// happeningOf returns what v tells of, as the model's SourcesOf read it
// (attribution.TellsOf). A call's event without a tool_use_id tells of
// none: only the model knows its call (Session.CallOf).
func happeningOf(v *EventView) happening {
	switch t := attribution.TellsOf(v.Event); {
	case t.Call():
		if v.ToolUseID != "" {
			return happening{of: 'c', id: v.ToolUseID, end: t == attribution.ToldCallEnd}
		}
	case t == attribution.ToldAgentStart || t == attribution.ToldAgentStop:
		if v.AgentID != "" { // the main agent's StopFailure ends a turn
			return happening{of: 'a', id: v.AgentID, end: t == attribution.ToldAgentStop}
		}
	case t == attribution.ToldPrompt:
		if agent, id, ok := attribution.PromptNamed(v.AgentID, v.PromptID, v.turnID); ok {
			return happening{of: 'p', id: id, agent: agent}
		}
	case t == attribution.ToldSessionEnd:
		if v.AgentID == "" {
			return happening{of: 'e'}
		}
	case v.Event == event.SessionStart && v.fork:
		return happening{of: 'f'}
	}
	return happening{}
}

// happeningIDs are the ids of the calls, agents and prompts events tell
// of (happeningOf), each once, and whether they tell of the session's end
// and of its start as a fork: prompts are the main agent's, subPrompts
// the subagents'.
type happeningIDs struct {
	calls, agents, prompts []string
	subPrompts             []happening
	end, fork              bool
}

// empty reports whether ids hold none.
func (ids happeningIDs) empty() bool {
	return len(ids.calls) == 0 && len(ids.agents) == 0 && len(ids.prompts) == 0 && len(ids.subPrompts) == 0 && !ids.end && !ids.fork
}

// without returns the ids of ids that none of events tells of; idless
// names, by envelope id, the call an event without a tool_use_id tells of
// (copiedHappening).
func (ids happeningIDs) without(events []store.Event, idless map[string]string) happeningIDs {
	told := map[happening]bool{}
	for _, e := range events {
		// What an event tells of is in its columns, but a subagent's
		// prompt's turn and a SessionStart's source: only then is its
		// view, which decodes their envelope, needed.
		v := EventView{storedEvent: e}
		if e.AgentID != "" && e.Event == event.UserPromptSubmit || e.Event == event.SessionStart {
			v = eventView(e)
		}
		h := copiedHappening(&v, idless)
		h.end = false
		told[h] = true
	}
	var out happeningIDs
	keep := func(of byte, in []string) []string {
		var kept []string
		for _, id := range in {
			if !told[happening{of: of, id: id}] {
				kept = append(kept, id)
			}
		}
		return kept
	}
	out.calls, out.agents, out.prompts = keep('c', ids.calls), keep('a', ids.agents), keep('p', ids.prompts)
	for _, h := range ids.subPrompts {
		if !told[h] {
			out.subPrompts = append(out.subPrompts, h)
		}
	}
	out.end = ids.end && !told[happening{of: 'e'}]
	out.fork = ids.fork && !told[happening{of: 'f'}]
	return out
}

// idsOf returns what views (those which keeps, all if nil) tell of.
func idsOf(views []EventView, which func(*EventView) bool) happeningIDs {
	var ids happeningIDs
	seen := map[happening]bool{} // by kind and id only
	for i := range views {
		if which != nil && !which(&views[i]) {
			continue
		}
		h := happeningOf(&views[i])
		h.end = false
		if h.of == 0 || seen[h] {
			continue
		}
		seen[h] = true
		switch h.of {
		case 'c':
			ids.calls = append(ids.calls, h.id)
		case 'a':
			ids.agents = append(ids.agents, h.id)
		case 'p':
			if h.agent != "" {
				ids.subPrompts = append(ids.subPrompts, h)
			} else {
				ids.prompts = append(ids.prompts, h.id)
			}
		case 'e':
			ids.end = true
		case 'f':
			ids.fork = true
		}
	}
	return ids
}

// eachSources calls fn with each of views (those which keeps, all if nil)
// and what the stored model of session id says reported its happening
// (see markSources), and the index markSources returns.
func (s *Server) eachSources(ctx context.Context, id string, views []EventView, which func(*EventView) bool, fn func(*EventView, attribution.Sources)) (pending int, err error) {
	// Only the calls and agents the views speak of are read: a page costs
	// its own rows, not the session's.
	ids := idsOf(views, which)
	callIDs, agentIDs, needSummary := ids.calls, ids.agents, len(ids.prompts) > 0 || len(ids.subPrompts) > 0 || ids.end || ids.fork
	calls := map[string]*attribution.ToolCall{}
	eachCall := func(ids []string) error {
		if len(ids) == 0 {
			return nil
		}
		return s.modeler.stored.eachCallOf(ctx, id, ids, func(c *attribution.ToolCall) error {
			calls[c.ToolUseID] = c
			return nil
		})
	}
	if err := eachCall(callIDs); err != nil {
		return 0, err
	}
	// A tool event whose call is not its id's may be one of a call
	// matched by content: the session's summary names it.
	callOf := make([]string, len(views)) // the model's id of each tool event's call
	matched := false
	for i := range views {
		if v := &views[i]; (which == nil || which(v)) && isCallEvent(v.Event) {
			callOf[i] = v.ToolUseID
			matched = matched || calls[v.ToolUseID] == nil
		}
	}
	var sess *attribution.Session
	var derived int64 // the last event the model was computed from
	if needSummary || matched {
		ms, err := s.store.SessionModels(ctx, []string{id})
		if err != nil {
			return 0, err
		}
		sess, derived = decodeSummary(ms[id].Summary), ms[id].Seq
	}
	if matched && sess != nil {
		var more []string
		for i := range views {
			if v := &views[i]; callOf[i] == v.ToolUseID && calls[callOf[i]] == nil && isCallEvent(v.Event) && (which == nil || which(v)) {
				if c := sess.CallOf(v.ID, v.ToolUseID); c != "" {
					callOf[i] = c
					more = append(more, c)
				}
			}
		}
		slices.Sort(more)
		if err := eachCall(slices.Compact(more)); err != nil {
			return 0, err
		}
	}
	agents := map[string]*attribution.Agent{}
	if len(agentIDs) > 0 {
		err := s.modeler.stored.eachAgentOf(ctx, id, agentIDs, func(a *attribution.Agent) error {
			agents[a.AgentID] = a
			return nil
		})
		if err != nil {
			return 0, err
		}
	}
	pending = len(views)
	for i := range views {
		v := &views[i]
		if which != nil && !which(v) {
			continue
		}
		var src attribution.Sources
		switch h := happeningOf(v); {
		case callOf[i] != "":
			if c := calls[callOf[i]]; c != nil {
				src = c.SourcesOf(v.Event)
			} else if event.IsEvidence(v.Kind) && v.Seq > derived {
				pending = min(pending, i)
			}
		case h.of == 'p':
			if sess != nil {
				src = sess.PromptSourcesOf(v.AgentID, v.PromptID, v.turnID)
			}
		case h.of == 'e':
			if sess != nil {
				src = sess.EndSources
			}
		case h.of == 'f':
			if sess != nil {
				src = sess.ForkSources
			}
		case h.of == 'a':
			if a := agents[h.id]; a != nil {
				src = a.SourcesOf(v.Event)
			}
		}
		fn(v, src)
	}
	return pending, nil
}

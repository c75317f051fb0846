package collector

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

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
}

// storedEvent is store.Event under a name of its own, so that EventView's
// promoted fields keep their names (Event is the hook event's).
type storedEvent = store.Event

// Stored returns the event as the store holds it.
func (v EventView) Stored() store.Event { return v.storedEvent }

// eventView returns e as the API serves it. Only a UserPromptSubmit's
// payload is read, for its prompt: as admission decoded it when the event
// was just committed (the stream), else decoded from the stored envelope.
// One that cannot be decoded is served unmarked.
func eventView(e store.Event) EventView {
	v := EventView{storedEvent: e}
	if e.Event != event.UserPromptSubmit {
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

// parseLimit reads the limit parameter: absent is the store's default, too
// large is clamped by the store, anything not a positive integer is an error.
func parseLimit(q url.Values) (int, error) {
	v := q.Get("limit")
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
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
		Users:   visibleUsers(r),
		Cursor:  q.Get("cursor"),
		Limit:   limit,
	})
	if err != nil {
		s.storeError(w, r, err)
		return
	}
	views, err := s.sessionViews(r.Context(), page.Sessions)
	if err != nil {
		s.storeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, SessionsResponse{Sessions: views, NextCursor: page.Next})
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
	page, err := s.store.Events(r.Context(), f)
	if err != nil {
		s.storeError(w, r, err)
		return
	}
	if len(page.Events) == 0 && f.Cursor == "" {
		// An empty first page: tell an unknown session from a quiet filter.
		if _, err := s.store.Session(r.Context(), f.SessionID); err != nil {
			s.storeError(w, r, err)
			return
		}
	}
	writeJSON(w, http.StatusOK, EventsResponse{Events: eventViews(page.Events), NextCursor: page.Next})
}

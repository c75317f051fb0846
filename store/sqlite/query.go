package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/store"
)

const sessionColumns = `id, runtime, host_name, user_name, cwd, transcript_path, first_event_at, last_event_at,
	event_count, last_seq`

func scanSession(sc interface{ Scan(...any) error }) (store.Session, error) {
	var s store.Session
	var first, last int64
	err := sc.Scan(&s.ID, &s.Runtime, &s.Host, &s.User, &s.CWD, &s.TranscriptPath, &first, &last, &s.EventCount, &s.LastSeq)
	if err != nil {
		return s, err
	}
	s.FirstEventAt, s.LastEventAt = fromNanos(first), fromNanos(last)
	return s, nil
}

func fromNanos(ns int64) time.Time { return time.Unix(0, ns).UTC() }

// Session implements store.Store.
func (db *DB) Session(ctx context.Context, id string) (store.Session, error) {
	r, err := db.readerFor()
	if err != nil {
		return store.Session{}, err
	}
	s, err := scanSession(r.QueryRowContext(ctx, `SELECT `+sessionColumns+` FROM sessions WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Session{}, fmt.Errorf("session %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return store.Session{}, fmt.Errorf("cannot read session %q: %w", id, err)
	}
	return s, nil
}

// Sessions implements store.Store.
func (db *DB) Sessions(ctx context.Context, f store.SessionFilter) (store.SessionPage, error) {
	r, err := db.readerFor()
	if err != nil {
		return store.SessionPage{}, err
	}
	after, afterID, ok, err := store.ParseSessionCursor(f.Cursor)
	if err != nil {
		return store.SessionPage{}, err
	}
	limit := store.ClampLimit(f.Limit)
	var where []string
	var args []any
	if f.Runtime != "" {
		where = append(where, "runtime = ?")
		args = append(args, f.Runtime)
	}
	if !f.Probes {
		// A range, not LIKE: '_' would be a wildcard and LIKE ignores case.
		where = append(where, "NOT (id >= ? AND id < ?)")
		args = append(args, event.ProbeSessionPrefix, probeSessionEnd)
	}
	if ok {
		where = append(where, "(last_event_at, id) < (?, ?)")
		args = append(args, after.UnixNano(), afterID)
	}
	q := `SELECT ` + sessionColumns + ` FROM sessions`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY last_event_at DESC, id DESC LIMIT ?"
	args = append(args, limit+1)
	rows, err := r.QueryContext(ctx, q, args...)
	if err != nil {
		return store.SessionPage{}, fmt.Errorf("cannot list sessions: %w", err)
	}
	defer rows.Close()
	var page store.SessionPage
	for rows.Next() {
		s, err := scanSession(rows)
		if err != nil {
			return store.SessionPage{}, fmt.Errorf("cannot list sessions: %w", err)
		}
		page.Sessions = append(page.Sessions, s)
	}
	if err := rows.Err(); err != nil {
		return store.SessionPage{}, fmt.Errorf("cannot list sessions: %w", err)
	}
	if len(page.Sessions) > limit {
		page.Sessions = page.Sessions[:limit]
		last := page.Sessions[limit-1]
		page.Next = store.SessionCursor(last.LastEventAt, last.ID)
	}
	return page, nil
}

// probeSessionEnd is the least string greater than every id that starts
// with event.ProbeSessionPrefix.
var probeSessionEnd = event.ProbeSessionPrefix[:len(event.ProbeSessionPrefix)-1] + string(event.ProbeSessionPrefix[len(event.ProbeSessionPrefix)-1]+1)

// Events implements store.Store.
func (db *DB) Events(ctx context.Context, f store.EventFilter) (store.EventPage, error) {
	r, err := db.readerFor()
	if err != nil {
		return store.EventPage{}, err
	}
	after, err := store.ParseEventCursor(f.Cursor)
	if err != nil {
		return store.EventPage{}, err
	}
	limit := store.ClampLimit(f.Limit)
	where := []string{"seq > ?"}
	args := []any{after}
	if f.SessionID != "" {
		where = append(where, "session_id = ?")
		args = append(args, f.SessionID)
	}
	if f.AgentID != nil {
		where = append(where, "agent_id = ?")
		args = append(args, *f.AgentID)
	}
	if f.Event != "" {
		where = append(where, "event = ?")
		args = append(args, f.Event)
	}
	if f.Tool != "" {
		where = append(where, "tool_name = ?")
		args = append(args, f.Tool)
	}
	q := `SELECT seq, id, session_id, runtime, kind, event, agent_id, agent_type, tool_name, tool_use_id, prompt_id, time, envelope
		FROM events WHERE ` + strings.Join(where, " AND ") + ` ORDER BY seq LIMIT ?`
	args = append(args, limit+1)
	rows, err := r.QueryContext(ctx, q, args...)
	if err != nil {
		return store.EventPage{}, fmt.Errorf("cannot list events: %w", err)
	}
	defer rows.Close()
	var page store.EventPage
	page.Events = make([]store.Event, 0, min(limit+1, 64))
	for rows.Next() {
		var e store.Event
		var agentType sql.NullString
		var t int64
		var env []byte
		if err := rows.Scan(&e.Seq, &e.ID, &e.SessionID, &e.Runtime, &e.Kind, &e.Event, &e.AgentID, &agentType,
			&e.ToolName, &e.ToolUseID, &e.PromptID, &t, &env); err != nil {
			return store.EventPage{}, fmt.Errorf("cannot list events: %w", err)
		}
		if agentType.Valid {
			e.AgentType = &agentType.String
		}
		e.Time = fromNanos(t)
		e.Envelope = env
		page.Events = append(page.Events, e)
	}
	if err := rows.Err(); err != nil {
		return store.EventPage{}, fmt.Errorf("cannot list events: %w", err)
	}
	if len(page.Events) > limit {
		page.Events = page.Events[:limit]
		page.Next = store.EventCursor(page.Events[limit-1].Seq)
	}
	return page, nil
}

// LastSeq implements store.Store.
func (db *DB) LastSeq(ctx context.Context) (int64, error) {
	r, err := db.readerFor()
	if err != nil {
		return 0, err
	}
	var seq int64
	if err := r.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) FROM events`).Scan(&seq); err != nil {
		return 0, fmt.Errorf("cannot read the last seq: %w", err)
	}
	return seq, nil
}

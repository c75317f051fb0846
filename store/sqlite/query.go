package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/internal/sqlq"
)

func scanSession(sc interface{ Scan(...any) error }) (store.Session, error) {
	var s store.Session
	var first, last int64
	err := sc.Scan(&s.ID, &s.Runtime, &s.Host, &s.User, &s.CWD, &s.TranscriptPath, &first, &last, &s.EventCount, &s.LastSeq)
	if err != nil {
		return s, err
	}
	s.FirstEventAt, s.LastEventAt = sqlq.EventTime(first), sqlq.EventTime(last)
	return s, nil
}

// Session implements store.Store.
func (db *DB) Session(ctx context.Context, id string) (store.Session, error) {
	r, err := db.readerFor()
	if err != nil {
		return store.Session{}, err
	}
	s, err := scanSession(r.QueryRowContext(ctx, `SELECT `+sqlq.SessionColumns+` FROM sessions WHERE id = ?`, id))
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
	q, err := sqlq.Sessions(f)
	if err != nil {
		return store.SessionPage{}, err
	}
	var rows []store.Session
	err = queryRows(ctx, r, q.SQL, q.Args, func(sc *sql.Rows) error {
		s, err := scanSession(sc)
		rows = append(rows, s)
		return err
	})
	if err != nil {
		return store.SessionPage{}, fmt.Errorf("cannot list sessions: %w", err)
	}
	return sqlq.SessionsPage(q, rows), nil
}

// Events implements store.Store.
func (db *DB) Events(ctx context.Context, f store.EventFilter) (store.EventPage, error) {
	r, err := db.readerFor()
	if err != nil {
		return store.EventPage{}, err
	}
	q, err := sqlq.Events(f)
	if err != nil {
		return store.EventPage{}, err
	}
	events := make([]store.Event, 0, min(q.Limit+1, 64))
	err = queryRows(ctx, r, q.SQL, q.Args, func(rows *sql.Rows) error {
		var e store.Event
		var agentType sql.NullString
		var t int64
		var env []byte
		if err := rows.Scan(&e.Seq, &e.ID, &e.SessionID, &e.Runtime, &e.Kind, &e.Event, &e.AgentID, &agentType,
			&e.ToolName, &e.ToolUseID, &e.PromptID, &t, &env); err != nil {
			return err
		}
		if agentType.Valid {
			e.AgentType = &agentType.String
		}
		e.Time = sqlq.EventTime(t)
		e.Envelope = env
		events = append(events, e)
		return nil
	})
	if err != nil {
		return store.EventPage{}, fmt.Errorf("cannot list events: %w", err)
	}
	return sqlq.EventsPage(q, events), nil
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

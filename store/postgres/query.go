package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/internal/sqlq"
)

func scanSession(rows pgx.Row) (store.Session, error) {
	var s store.Session
	var first, last int64
	err := rows.Scan(str{&s.ID}, str{&s.Runtime}, str{&s.Host}, str{&s.User}, str{&s.CWD}, str{&s.TranscriptPath},
		&first, &last, &s.EventCount, &s.LastSeq)
	s.FirstEventAt, s.LastEventAt = sqlq.EventTime(first), sqlq.EventTime(last)
	return s, err
}

// Session implements store.EventLog.
func (db *DB) Session(ctx context.Context, id string) (store.Session, error) {
	p, err := db.open()
	if err != nil {
		return store.Session{}, err
	}
	s, err := scanSession(p.QueryRow(ctx, `SELECT `+sqlq.SessionColumns+` FROM sessions WHERE id = $1`, []byte(id)))
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Session{}, fmt.Errorf("session %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return store.Session{}, fmt.Errorf("cannot read session %q: %w", id, err)
	}
	return s, nil
}

// Sessions implements store.EventLog.
func (db *DB) Sessions(ctx context.Context, f store.SessionFilter) (store.SessionPage, error) {
	p, err := db.open()
	if err != nil {
		return store.SessionPage{}, err
	}
	q, err := sqlq.Sessions(f)
	if err != nil {
		return store.SessionPage{}, err
	}
	var out []store.Session
	err = queryRows(ctx, p, q.SQL, q.Args, func(rows pgx.Rows) error {
		s, err := scanSession(rows)
		out = append(out, s)
		return err
	})
	if err != nil {
		return store.SessionPage{}, fmt.Errorf("cannot list sessions: %w", err)
	}
	return sqlq.SessionsPage(q, out), nil
}

// Events implements store.EventLog.
func (db *DB) Events(ctx context.Context, f store.EventFilter) (store.EventPage, error) {
	p, err := db.open()
	if err != nil {
		return store.EventPage{}, err
	}
	q, err := sqlq.Events(f)
	if err != nil {
		return store.EventPage{}, err
	}
	events := make([]store.Event, 0, min(q.Limit+1, 64))
	err = queryRows(ctx, p, q.SQL, q.Args, func(rows pgx.Rows) error {
		var e store.Event
		var t int64
		if err := rows.Scan(&e.Seq, str{&e.ID}, str{&e.SessionID}, str{&e.Runtime}, str{&e.Kind}, str{&e.Event},
			str{&e.AgentID}, nullStr{&e.AgentType}, str{&e.ToolName}, str{&e.ToolUseID}, str{&e.PromptID}, &t, &e.Envelope); err != nil {
			return err
		}
		e.Time = sqlq.EventTime(t)
		events = append(events, e)
		return nil
	})
	if err != nil {
		return store.EventPage{}, fmt.Errorf("cannot list events: %w", err)
	}
	return sqlq.EventsPage(q, events), nil
}

// LastSeq implements store.EventLog.
func (db *DB) LastSeq(ctx context.Context) (int64, error) {
	p, err := db.open()
	if err != nil {
		return 0, err
	}
	var seq int64
	if err := p.QueryRow(ctx, `SELECT coalesce(max(seq), 0) FROM events`).Scan(&seq); err != nil {
		return 0, fmt.Errorf("cannot read the last seq: %w", err)
	}
	return seq, nil
}

package postgres

import (
	"context"

	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/internal/sqlq"
)

func scanSession(rows sqlq.Row) (store.Session, error) {
	var s store.Session
	var first, last int64
	err := rows.Scan(str{&s.ID}, str{&s.Runtime}, str{&s.Host}, str{&s.User}, str{&s.CWD}, str{&s.TranscriptPath},
		&first, &last, &s.EventCount, &s.LastSeq)
	s.FirstEventAt, s.LastEventAt = sqlq.EventTime(first), sqlq.EventTime(last)
	return s, err
}

// Session implements store.EventLog.
func (db *DB) Session(ctx context.Context, id string) (store.Session, error) {
	rows, err := db.rows()
	if err != nil {
		return store.Session{}, err
	}
	return sqlq.ReadSession(ctx, rows, id, scanSession)
}

// Sessions implements store.EventLog.
func (db *DB) Sessions(ctx context.Context, f store.SessionFilter) (store.SessionPage, error) {
	rows, err := db.rows()
	if err != nil {
		return store.SessionPage{}, err
	}
	return sqlq.ReadSessions(ctx, rows, f, scanSession)
}

func scanEvent(rows sqlq.Row) (store.Event, error) {
	var e store.Event
	var t int64
	err := rows.Scan(&e.Seq, str{&e.ID}, str{&e.SessionID}, str{&e.Runtime}, str{&e.Kind}, str{&e.Event},
		str{&e.AgentID}, nullStr{&e.AgentType}, str{&e.ToolName}, str{&e.ToolUseID}, str{&e.PromptID}, &t, &e.Envelope)
	e.Time = sqlq.EventTime(t)
	return e, err
}

// Events implements store.EventLog.
func (db *DB) Events(ctx context.Context, f store.EventFilter) (store.EventPage, error) {
	rows, err := db.rows()
	if err != nil {
		return store.EventPage{}, err
	}
	return sqlq.ReadEvents(ctx, rows, f, scanEvent)
}

// LastSeq implements store.EventLog.
func (db *DB) LastSeq(ctx context.Context) (int64, error) {
	rows, err := db.rows()
	if err != nil {
		return 0, err
	}
	return sqlq.ReadLastSeq(ctx, rows)
}

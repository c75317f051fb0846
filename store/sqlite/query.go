package sqlite

import (
	"database/sql"

	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/internal/sqlq"
)

func scanSession(sc sqlq.Row) (store.Session, error) {
	var s store.Session
	var first, last int64
	err := sc.Scan(&s.ID, &s.Runtime, &s.Host, &s.User, &s.CWD, &s.TranscriptPath, &first, &last, &s.EventCount, &s.LastSeq)
	if err != nil {
		return s, err
	}
	s.FirstEventAt, s.LastEventAt = sqlq.EventTime(first), sqlq.EventTime(last)
	return s, nil
}

func scanEvent(rows sqlq.Row) (store.Event, error) {
	var e store.Event
	var agentType sql.NullString
	var t int64
	var env []byte
	if err := rows.Scan(&e.Seq, &e.ID, &e.SessionID, &e.Runtime, &e.Kind, &e.Event, &e.AgentID, &agentType,
		&e.ToolName, &e.ToolUseID, &e.PromptID, &t, &env); err != nil {
		return e, err
	}
	if agentType.Valid {
		e.AgentType = &agentType.String
	}
	e.Time = sqlq.EventTime(t)
	e.Envelope = env
	return e, nil
}

package postgres

import (
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

func scanEvent(rows sqlq.Row) (store.Event, error) {
	var e store.Event
	var t int64
	err := rows.Scan(&e.Seq, str{&e.ID}, str{&e.SessionID}, str{&e.Runtime}, str{&e.Kind}, str{&e.Event},
		str{&e.AgentID}, nullStr{&e.AgentType}, str{&e.ToolName}, str{&e.ToolUseID}, str{&e.PromptID}, &t, &e.Envelope)
	e.Time = sqlq.EventTime(t)
	return e, err
}

package sqlq

import (
	"context"
	"fmt"
	"time"

	"github.com/hookwatch/hookwatch/store"
)

// The reads of the store's contracts, run through a backend's Rows: the
// query, what an error or a missing row means and the page cut from the
// rows are decided here; a backend opens its database and scans a row's
// columns into the store's types (its drivers read them differently).

// Row is one row of a query's result, as either backend's driver gives it.
type Row interface{ Scan(dest ...any) error }

// Rows is how a backend runs a query: it calls each with every row of q's
// result, in order, and returns the first error, each's included.
type Rows func(ctx context.Context, q string, args []any, each func(Row) error) error

// Each calls each with every row of a driver's result, in order, and
// returns the first error, the result's own included: the loop of a
// backend's Rows, which closes the result itself.
func Each(rows interface {
	Row
	Next() bool
	Err() error
}, each func(Row) error) error {
	for rows.Next() {
		if err := each(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// all returns every row of q, each read by scan; size is a capacity hint.
func all[T any](ctx context.Context, rows Rows, q string, args []any, size int, scan func(Row) (T, error)) ([]T, error) {
	var out []T
	if size > 0 {
		out = make([]T, 0, size)
	}
	err := rows(ctx, q, args, func(r Row) error {
		v, err := scan(r)
		out = append(out, v)
		return err
	})
	return out, err
}

// one returns the first row of q read by scan, and whether there was one.
func one[T any](ctx context.Context, rows Rows, q string, args []any, scan func(Row) (T, error)) (v T, found bool, err error) {
	err = rows(ctx, q, args, func(r Row) error {
		if found {
			return nil
		}
		found = true
		v, err = scan(r)
		return err
	})
	return v, found, err
}

// pageSize is the capacity a page's rows start with: the page and the row
// that tells whether there is a next one, at most 64.
func pageSize(q Query) int { return min(q.Limit+1, 64) }

// ReadSession is store.EventLog.Session.
func ReadSession(ctx context.Context, rows Rows, id string, scan func(Row) (store.Session, error)) (store.Session, error) {
	s, found, err := one(ctx, rows, `SELECT `+SessionColumns+` FROM sessions WHERE id = ?`, []any{id}, scan)
	switch {
	case err != nil:
		return store.Session{}, fmt.Errorf("cannot read session %q: %w", id, err)
	case !found:
		return store.Session{}, fmt.Errorf("session %q: %w", id, store.ErrNotFound)
	}
	return s, nil
}

// ReadSessions is store.EventLog.Sessions.
func ReadSessions(ctx context.Context, rows Rows, f store.SessionFilter, scan func(Row) (store.Session, error)) (store.SessionPage, error) {
	q, err := Sessions(f)
	if err != nil {
		return store.SessionPage{}, err
	}
	out, err := all(ctx, rows, q.SQL, q.Args, 0, scan)
	if err != nil {
		return store.SessionPage{}, fmt.Errorf("cannot list sessions: %w", err)
	}
	return SessionsPage(q, out), nil
}

// ReadEvents is store.EventLog.Events.
func ReadEvents(ctx context.Context, rows Rows, f store.EventFilter, scan func(Row) (store.Event, error)) (store.EventPage, error) {
	q, err := Events(f)
	if err != nil {
		return store.EventPage{}, err
	}
	out, err := all(ctx, rows, q.SQL, q.Args, pageSize(q), scan)
	if err != nil {
		return store.EventPage{}, fmt.Errorf("cannot list events: %w", err)
	}
	return EventsPage(q, out), nil
}

// ReadLastSeq is store.EventLog.LastSeq.
func ReadLastSeq(ctx context.Context, rows Rows) (int64, error) {
	seq, _, err := one(ctx, rows, `SELECT coalesce(max(seq), 0) FROM events`, nil, func(r Row) (n int64, err error) {
		return n, r.Scan(&n)
	})
	if err != nil {
		return 0, fmt.Errorf("cannot read the last seq: %w", err)
	}
	return seq, nil
}

// ReadChangedSessionModels is store.ModelStore.ChangedSessionModels.
func ReadChangedSessionModels(ctx context.Context, rows Rows, f store.SessionModelFilter, scan func(Row) (store.SessionModel, error)) (store.SessionModelPage, error) {
	q, err := ChangedSessionModels(f)
	if err != nil {
		return store.SessionModelPage{}, err
	}
	out, err := all(ctx, rows, q.SQL, q.Args, 0, scan)
	if err != nil {
		return store.SessionModelPage{}, fmt.Errorf("cannot list changed session models: %w", err)
	}
	return ChangedSessionModelsPage(q, out), nil
}

// ReadGroupSessions is store.ModelStore.GroupSessions; scan reads the
// columns of GroupSessions' query, and the group's key is set on each row.
func ReadGroupSessions(ctx context.Context, rows Rows, key string, from, to time.Time, limit int, scan func(Row) (store.SessionModel, error)) ([]store.SessionModel, error) {
	q := GroupSessions(key, from, to, limit)
	out, err := all(ctx, rows, q.SQL, q.Args, 0, scan)
	if err != nil {
		return nil, fmt.Errorf("cannot list the sessions of a group: %w", err)
	}
	for i := range out {
		out[i].GroupKey = key
	}
	return out, nil
}

// ReadStaleModels is store.ModelStore.StaleModels.
func ReadStaleModels(ctx context.Context, rows Rows, after string, limit int, scan func(Row) (store.Session, error)) ([]store.Session, error) {
	q := StaleModels(after, limit)
	out, err := all(ctx, rows, q.SQL, q.Args, 0, scan)
	if err != nil {
		return nil, fmt.Errorf("cannot list sessions with a stale model: %w", err)
	}
	return out, nil
}

// ReadSubagentSession is store.ModelStore.SubagentSession; scan reads the
// session id of a row.
func ReadSubagentSession(ctx context.Context, rows Rows, agentID string, scan func(Row) (string, error)) (string, error) {
	q, err := SubagentSession(agentID)
	if err != nil {
		return "", err
	}
	id, found, err := one(ctx, rows, q.SQL, q.Args, scan)
	switch {
	case err != nil:
		return "", fmt.Errorf("cannot find the session of agent %q: %w", agentID, err)
	case !found:
		return "", fmt.Errorf("agent %q: %w", agentID, store.ErrNotFound)
	}
	return id, nil
}

// ReadAgents is store.ModelStore.Agents.
func ReadAgents(ctx context.Context, rows Rows, f store.AgentFilter, scan func(Row) (store.AgentRow, error)) (store.AgentPage, error) {
	q, err := Agents(f)
	if err != nil || q.None {
		return store.AgentPage{}, err
	}
	out, err := all(ctx, rows, q.SQL, q.Args, 0, scan)
	if err != nil {
		return store.AgentPage{}, fmt.Errorf("cannot list agents: %w", err)
	}
	return AgentsPage(f, q, out), nil
}

// ReadToolCalls is store.ModelStore.ToolCalls, reading the rows from from
// (see ToolCalls).
func ReadToolCalls(ctx context.Context, rows Rows, f store.ToolCallFilter, from string, scan func(Row) (store.ToolCallRow, error)) (store.ToolCallPage, error) {
	q, err := ToolCalls(f, from)
	if err != nil || q.None {
		return store.ToolCallPage{}, err
	}
	out, err := all(ctx, rows, q.SQL, q.Args, pageSize(q), scan)
	if err != nil {
		return store.ToolCallPage{}, fmt.Errorf("cannot list tool calls: %w", err)
	}
	return ToolCallsPage(f, q, out), nil
}

// ReadTokenByHash is store.TokenStore.TokenByHash.
func ReadTokenByHash(ctx context.Context, rows Rows, hash string, scan func(Row) (store.Token, error)) (store.Token, error) {
	t, found, err := one(ctx, rows, TokenByHash, []any{hash}, scan)
	switch {
	case err != nil:
		return store.Token{}, fmt.Errorf("cannot read a token: %w", err)
	case !found:
		return store.Token{}, fmt.Errorf("token: %w", store.ErrNotFound)
	}
	return t, nil
}

// ReadTokens is store.TokenStore.Tokens.
func ReadTokens(ctx context.Context, rows Rows, scan func(Row) (store.Token, error)) ([]store.Token, error) {
	out, err := all(ctx, rows, Tokens, nil, 0, scan)
	if err != nil {
		return nil, fmt.Errorf("cannot list tokens: %w", err)
	}
	return out, nil
}

// ReadTeamUsers is store.TokenStore.TeamUsers; scan reads a user's name.
// A team without users has an empty list, not a nil one.
func ReadTeamUsers(ctx context.Context, rows Rows, team string, scan func(Row) (string, error)) ([]string, error) {
	users, err := all(ctx, rows, TeamUsers, []any{team}, 0, scan)
	if err != nil {
		return nil, fmt.Errorf("cannot list the users of team %q: %w", team, err)
	}
	if users == nil {
		users = []string{}
	}
	return users, nil
}

package sqlq

import (
	"context"
	"fmt"
	"time"

	"github.com/hookwatch/hookwatch/store"
)

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

// Backend is what a backend gives its Reads: how it runs a read, and how
// its driver scans each kind of row into the store's types.
type Backend struct {
	// Rows returns how to run a query on the database, or the error a
	// read of a closed store returns.
	Rows func() (Rows, error)

	Session      func(Row) (store.Session, error)
	Event        func(Row) (store.Event, error)
	ModelSession func(Row) (store.SessionModel, error)
	// GroupSession reads the columns of GroupSessions' query.
	GroupSession func(Row) (store.SessionModel, error)
	Agent        func(Row) (store.AgentRow, error)
	ToolCall     func(Row) (store.ToolCallRow, error)
	Token        func(Row) (store.Token, error)
	OTLPDebt     func(Row) (store.OTLPDebt, error)
	// String reads a row of one text column: a session id, a user's name.
	String func(Row) (string, error)

	// ToolCallsFrom is the table a listing of tool calls reads (see
	// ToolCalls), for a backend that names an index for some listings;
	// nil reads model_tool_calls.
	ToolCallsFrom func(store.ToolCallFilter) string
}

// Reads are the reads of the store's contracts — store.EventLog's,
// store.ModelStore's and store.TokenStore's — for a backend that embeds
// them: the backend gives its Backend; the queries, what an error or a
// missing row means and the page cut from the rows are decided here.
type Reads struct{ b Backend }

// NewReads returns the Reads of a backend.
func NewReads(b Backend) Reads { return Reads{b} }

// Session implements store.EventLog.
func (r Reads) Session(ctx context.Context, id string) (store.Session, error) {
	rows, err := r.b.Rows()
	if err != nil {
		return store.Session{}, err
	}
	s, found, err := one(ctx, rows, `SELECT `+SessionColumns+` FROM sessions WHERE id = ?`, []any{id}, r.b.Session)
	switch {
	case err != nil:
		return store.Session{}, fmt.Errorf("cannot read session %q: %w", id, err)
	case !found:
		return store.Session{}, fmt.Errorf("session %q: %w", id, store.ErrNotFound)
	}
	return s, nil
}

// Sessions implements store.EventLog.
func (r Reads) Sessions(ctx context.Context, f store.SessionFilter) (store.SessionPage, error) {
	rows, err := r.b.Rows()
	if err != nil {
		return store.SessionPage{}, err
	}
	q, err := Sessions(f)
	if err != nil {
		return store.SessionPage{}, err
	}
	out, err := all(ctx, rows, q.SQL, q.Args, 0, r.b.Session)
	if err != nil {
		return store.SessionPage{}, fmt.Errorf("cannot list sessions: %w", err)
	}
	return SessionsPage(q, out), nil
}

// Events implements store.EventLog.
func (r Reads) Events(ctx context.Context, f store.EventFilter) (store.EventPage, error) {
	rows, err := r.b.Rows()
	if err != nil {
		return store.EventPage{}, err
	}
	q, err := Events(f)
	if err != nil {
		return store.EventPage{}, err
	}
	out, err := all(ctx, rows, q.SQL, q.Args, pageSize(q), r.b.Event)
	if err != nil {
		return store.EventPage{}, fmt.Errorf("cannot list events: %w", err)
	}
	return EventsPage(q, out), nil
}

// LastSeq implements store.EventLog.
func (r Reads) LastSeq(ctx context.Context) (int64, error) {
	rows, err := r.b.Rows()
	if err != nil {
		return 0, err
	}
	seq, _, err := one(ctx, rows, `SELECT coalesce(max(seq), 0) FROM events`, nil, func(r Row) (n int64, err error) {
		return n, r.Scan(&n)
	})
	if err != nil {
		return 0, fmt.Errorf("cannot read the last seq: %w", err)
	}
	return seq, nil
}

// ChangedSessionModels implements store.ModelStore.
func (r Reads) ChangedSessionModels(ctx context.Context, f store.SessionModelFilter) (store.SessionModelPage, error) {
	rows, err := r.b.Rows()
	if err != nil {
		return store.SessionModelPage{}, err
	}
	q, err := ChangedSessionModels(f)
	if err != nil {
		return store.SessionModelPage{}, err
	}
	out, err := all(ctx, rows, q.SQL, q.Args, 0, r.b.ModelSession)
	if err != nil {
		return store.SessionModelPage{}, fmt.Errorf("cannot list changed session models: %w", err)
	}
	return ChangedSessionModelsPage(q, out), nil
}

// GroupSessions implements store.ModelStore; the group's key is set on
// each row.
func (r Reads) GroupSessions(ctx context.Context, key string, from, to time.Time, limit int) ([]store.SessionModel, error) {
	rows, err := r.b.Rows()
	if err != nil {
		return nil, err
	}
	q := GroupSessions(key, from, to, limit)
	out, err := all(ctx, rows, q.SQL, q.Args, 0, r.b.GroupSession)
	if err != nil {
		return nil, fmt.Errorf("cannot list the sessions of a group: %w", err)
	}
	for i := range out {
		out[i].GroupKey = key
	}
	return out, nil
}

// StaleModels implements store.ModelStore.
func (r Reads) StaleModels(ctx context.Context, version int, after string, limit int) ([]store.Session, error) {
	rows, err := r.b.Rows()
	if err != nil {
		return nil, err
	}
	q := StaleModels(version, after, limit)
	out, err := all(ctx, rows, q.SQL, q.Args, 0, r.b.Session)
	if err != nil {
		return nil, fmt.Errorf("cannot list sessions with a stale model: %w", err)
	}
	return out, nil
}

// SubagentSession implements store.ModelStore.
func (r Reads) SubagentSession(ctx context.Context, agentID string) (string, error) {
	rows, err := r.b.Rows()
	if err != nil {
		return "", err
	}
	q, err := SubagentSession(agentID)
	if err != nil {
		return "", err
	}
	id, found, err := one(ctx, rows, q.SQL, q.Args, r.b.String)
	switch {
	case err != nil:
		return "", fmt.Errorf("cannot find the session of agent %q: %w", agentID, err)
	case !found:
		return "", fmt.Errorf("agent %q: %w", agentID, store.ErrNotFound)
	}
	return id, nil
}

// Agents implements store.ModelStore.
func (r Reads) Agents(ctx context.Context, f store.AgentFilter) (store.AgentPage, error) {
	rows, err := r.b.Rows()
	if err != nil {
		return store.AgentPage{}, err
	}
	q, err := Agents(f)
	if err != nil || q.None {
		return store.AgentPage{}, err
	}
	out, err := all(ctx, rows, q.SQL, q.Args, 0, r.b.Agent)
	if err != nil {
		return store.AgentPage{}, fmt.Errorf("cannot list agents: %w", err)
	}
	return AgentsPage(f, q, out), nil
}

// ToolCalls implements store.ModelStore, reading the rows from the
// backend's ToolCallsFrom.
func (r Reads) ToolCalls(ctx context.Context, f store.ToolCallFilter) (store.ToolCallPage, error) {
	rows, err := r.b.Rows()
	if err != nil {
		return store.ToolCallPage{}, err
	}
	from := "model_tool_calls"
	if r.b.ToolCallsFrom != nil {
		from = r.b.ToolCallsFrom(f)
	}
	q, err := ToolCalls(f, from)
	if err != nil || q.None {
		return store.ToolCallPage{}, err
	}
	out, err := all(ctx, rows, q.SQL, q.Args, pageSize(q), r.b.ToolCall)
	if err != nil {
		return store.ToolCallPage{}, fmt.Errorf("cannot list tool calls: %w", err)
	}
	return ToolCallsPage(f, q, out), nil
}

// TokenByHash implements store.TokenStore.
func (r Reads) TokenByHash(ctx context.Context, hash string) (store.Token, error) {
	rows, err := r.b.Rows()
	if err != nil {
		return store.Token{}, err
	}
	t, found, err := one(ctx, rows, TokenByHash, []any{hash}, r.b.Token)
	switch {
	case err != nil:
		return store.Token{}, fmt.Errorf("cannot read a token: %w", err)
	case !found:
		return store.Token{}, fmt.Errorf("token: %w", store.ErrNotFound)
	case !t.RevokedAt.IsZero():
		return t, fmt.Errorf("token: %w (%w)", store.ErrNotFound, store.ErrRevoked)
	}
	return t, nil
}

// Tokens implements store.TokenStore.
func (r Reads) Tokens(ctx context.Context) ([]store.Token, error) {
	rows, err := r.b.Rows()
	if err != nil {
		return nil, err
	}
	out, err := all(ctx, rows, Tokens, nil, 0, r.b.Token)
	if err != nil {
		return nil, fmt.Errorf("cannot list tokens: %w", err)
	}
	return out, nil
}

// TeamUsers implements store.TokenStore. A team without users has an empty
// list, not a nil one.
func (r Reads) TeamUsers(ctx context.Context, team string) ([]string, error) {
	rows, err := r.b.Rows()
	if err != nil {
		return nil, err
	}
	users, err := all(ctx, rows, TeamUsers, []any{team}, 0, r.b.String)
	if err != nil {
		return nil, fmt.Errorf("cannot list the users of team %q: %w", team, err)
	}
	if users == nil {
		users = []string{}
	}
	return users, nil
}

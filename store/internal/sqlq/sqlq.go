// Package sqlq is what the SQL backends (store/sqlite, store/postgres),
// whose schemas have the same tables and columns, share of the store's
// contracts: the SQL of the listings (their filters, orders and cursors),
// the reads of the contracts that run it (Reads, which each backend embeds:
// what an error, a missing row or a page means), and the rules of a write
// that are not SQL (Insert's seqs, the rows a call's move deletes). A
// backend opens its database, runs queries and scans a row's columns into
// the store's types (its Backend).
//
// Queries use ? placeholders, SQLite's; store/postgres numbers them. Times
// are stored as Unix nanoseconds (Nanos). Boolean arguments compare with
// boolean expressions (whether an agent id is empty), which SQLite
// evaluates to 0 and 1.
package sqlq

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/store"
)

// Query is one SELECT and its arguments.
type Query struct {
	SQL  string
	Args []any
	// Limit is the page size: the query asks for one row more, which
	// tells whether a next page exists.
	Limit int
	// None is set when the filter matches no row: nothing need run.
	None bool
}

// Nanos stores a time as Unix nanoseconds; the zero time is 0. A time
// before 1678 or after 2262, which Unix nanoseconds cannot hold, is the
// least or the greatest they can: UnixNano's wrapped value would turn a
// filter around (since the year 3000 matching every row).
func Nanos(t time.Time) int64 {
	switch {
	case t.IsZero():
		return 0
	case t.Before(minNanos):
		return math.MinInt64
	case t.After(maxNanos):
		return math.MaxInt64
	}
	return t.UnixNano()
}

// minNanos and maxNanos are the times Unix nanoseconds hold at the least
// and the most.
var minNanos, maxNanos = time.Unix(0, math.MinInt64), time.Unix(0, math.MaxInt64)

// Time reads back what Nanos stored.
func Time(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}

// Insert runs insert, a backend's insert of events, under the Seq
// contract of store.EventLog.Insert: every event's Seq is 0 before it runs,
// insert sets the Seq of the events it stores, and when it fails every Seq
// is 0 again, since nothing was stored. An empty batch stores nothing and
// does not run insert.
func Insert(events []store.Event, insert func() (int, error)) (int, error) {
	clearSeqs(events)
	if len(events) == 0 {
		return 0, nil
	}
	n, err := insert()
	if err != nil {
		clearSeqs(events)
		return 0, fmt.Errorf("cannot insert %d events: %w", len(events), err)
	}
	return n, nil
}

func clearSeqs(events []store.Event) {
	for i := range events {
		events[i].Seq = 0
	}
}

// EachMove calls fn with the key of every row the MovedFrom of calls name
// for deletion (store.ModelBatch.ToolCalls): each start a call names but its
// own. It stops at fn's first error and returns it.
func EachMove(calls []store.ToolCallRow, fn func(session string, from time.Time, id string) error) error {
	for i := range calls {
		c := &calls[i]
		for _, from := range c.MovedFrom {
			if from.Equal(c.StartedAt) {
				continue
			}
			if err := fn(c.SessionID, from, c.ToolUseID); err != nil {
				return err
			}
		}
	}
	return nil
}

// LastOfKey returns rows with each key once, its last row, in the order of
// those last rows: a batch of model rows that gives a key twice stores its
// last row, and an upsert of several rows may not meet a key twice.
func LastOfKey[R any, K comparable](rows []R, key func(R) K) []R {
	last := make(map[K]int, len(rows))
	for i, r := range rows {
		last[key(r)] = i
	}
	if len(last) == len(rows) {
		return rows
	}
	out := make([]R, 0, len(last))
	for i, r := range rows {
		if last[key(r)] == i {
			out = append(out, r)
		}
	}
	return out
}

// EventTime reads back an event time (an event's, a session's first and
// last), stored as its UnixNano: never the zero time, unlike Nanos.
func EventTime(ns int64) time.Time { return time.Unix(0, ns).UTC() }

// EventColumns are the columns of an event row, in store.Event's order.
const EventColumns = `seq, id, session_id, runtime, kind, event, agent_id, agent_type, tool_name, tool_use_id, prompt_id, time, envelope`

// Events is the query of store.EventLog.Events.
func Events(f store.EventFilter) (Query, error) {
	after, err := store.ParseEventCursor(f.Cursor)
	if err != nil {
		return Query{}, err
	}
	var w Where
	w.Add("seq > ?", after)
	if f.SessionID != "" {
		w.Add("session_id = ?", f.SessionID)
	}
	if f.AgentID != nil {
		w.Add("agent_id = ?", *f.AgentID)
	}
	if f.Event != "" {
		w.Add("event = ?", f.Event)
	}
	if f.Tool != "" {
		w.Add("tool_name = ?", f.Tool)
	}
	if err := w.InIDs("tool_use_id", f.ToolUseIDs); err != nil {
		return Query{}, err
	}
	if err := w.InIDs("prompt_id", f.PromptIDs); err != nil {
		return Query{}, err
	}
	if err := w.InIDs("id", f.IDs); err != nil {
		return Query{}, err
	}
	if err := w.OfUsers("session_id", f.Users); err != nil {
		return Query{}, err
	}
	limit := store.ClampLimit(f.Limit)
	return Query{SQL: `SELECT ` + EventColumns + ` FROM events` + w.String() + ` ORDER BY seq LIMIT ?`,
		Args: append(w.Args, limit+1), Limit: limit}, nil
}

// EventsPage cuts the rows of an Events query to a page.
func EventsPage(q Query, rows []store.Event) store.EventPage {
	page := store.EventPage{Events: rows}
	if len(rows) > q.Limit {
		page.Events = rows[:q.Limit]
		page.Next = store.EventCursor(rows[q.Limit-1].Seq)
	}
	return page
}

// SessionColumns are the columns of a session summary row.
const SessionColumns = `id, runtime, host_name, user_name, cwd, transcript_path, first_event_at, last_event_at,
	event_count, last_seq`

// probeSessionEnd is the least string greater than every id that starts
// with event.ProbeSessionPrefix.
var probeSessionEnd = event.ProbeSessionPrefix[:len(event.ProbeSessionPrefix)-1] + string(event.ProbeSessionPrefix[len(event.ProbeSessionPrefix)-1]+1)

// Sessions is the query of store.EventLog.Sessions.
func Sessions(f store.SessionFilter) (Query, error) {
	after, afterID, ok, err := store.ParseSessionCursor(f.Cursor)
	if err != nil {
		return Query{}, err
	}
	var w Where
	if f.Runtime != "" {
		w.Add("runtime = ?", f.Runtime)
	}
	if f.Project != "" {
		w.Add("id IN (SELECT session_id FROM model_sessions WHERE project = ?)", f.Project)
	}
	if !f.Probes {
		// A range, not LIKE: '_' would be a wildcard and LIKE ignores case.
		w.Add("NOT (id >= ? AND id < ?)", event.ProbeSessionPrefix, probeSessionEnd)
	}
	if f.Users != nil {
		if err := w.InUsers("user_name", f.Users); err != nil {
			return Query{}, err
		}
	}
	if ok {
		w.Add("(last_event_at, id) < (?, ?)", after.UnixNano(), afterID)
	}
	limit := store.ClampLimit(f.Limit)
	return Query{SQL: `SELECT ` + SessionColumns + ` FROM sessions` + w.String() +
		` ORDER BY last_event_at DESC, id DESC LIMIT ?`, Args: append(w.Args, limit+1), Limit: limit}, nil
}

// SessionsPage cuts the rows of a Sessions query to a page.
func SessionsPage(q Query, rows []store.Session) store.SessionPage {
	page := store.SessionPage{Sessions: rows}
	if len(rows) > q.Limit {
		page.Sessions = rows[:q.Limit]
		last := rows[q.Limit-1]
		page.Next = store.SessionCursor(last.LastEventAt, last.ID)
	}
	return page
}

// StaleModels is the query of store.ModelStore.StaleModels.
func StaleModels(version int, after string, limit int) Query {
	return Query{SQL: `SELECT ` + SessionColumns + ` FROM sessions
		WHERE id > ? AND NOT EXISTS (SELECT 1 FROM model_sessions m WHERE m.session_id = sessions.id AND m.seq >= sessions.last_seq AND m.version >= ?)
		ORDER BY id LIMIT ?`, Args: []any{after, version, store.ClampLimit(limit)}}
}

// ModelSessionColumns are the columns of a session model row.
const ModelSessionColumns = `session_id, group_key, seq, version, updated_seq, first_event_at, last_event_at, alias_of, project, summary`

// ChangedSessionModels is the query of store.ModelStore.ChangedSessionModels.
func ChangedSessionModels(f store.SessionModelFilter) (Query, error) {
	c, ok, err := store.ParseModelCursor(store.ModelsByChange, f.Cursor)
	if err != nil {
		return Query{}, err
	}
	var w Where
	w.Add("updated_seq > ?", max(f.UpdatedAfter, 0))
	if ok {
		w.Add("(updated_seq, session_id) > (?, ?)", c.Key, c.SessionID)
	}
	if err := w.OfUsers("session_id", f.Users); err != nil {
		return Query{}, err
	}
	limit := store.ClampLimit(f.Limit)
	return Query{SQL: `SELECT ` + ModelSessionColumns + ` FROM model_sessions` + w.String() +
		` ORDER BY updated_seq, session_id LIMIT ?`, Args: append(w.Args, limit+1), Limit: limit}, nil
}

// ChangedSessionModelsPage cuts the rows of a ChangedSessionModels query to
// a page.
func ChangedSessionModelsPage(q Query, rows []store.SessionModel) store.SessionModelPage {
	page := store.SessionModelPage{Sessions: rows}
	if len(rows) > q.Limit {
		page.Sessions = rows[:q.Limit]
		last := rows[q.Limit-1]
		page.Next = store.ModelCursor{Key: last.UpdatedSeq, SessionID: last.SessionID}.Encode(store.ModelsByChange)
	}
	return page
}

// GroupSessions is the query of store.ModelStore.GroupSessions: the
// columns session_id, seq, updated_seq, first_event_at, last_event_at,
// alias_of.
func GroupSessions(key string, from, to time.Time, limit int) Query {
	return Query{SQL: `SELECT session_id, seq, updated_seq, first_event_at, last_event_at, alias_of FROM model_sessions
		WHERE group_key = ? AND last_event_at >= ? AND first_event_at <= ?
		ORDER BY last_event_at DESC, session_id DESC LIMIT ?`,
		Args: []any{key, Nanos(from), Nanos(to), store.ClampLimit(limit)}}
}

// AgentColumns are the columns of an agent row, in store.AgentRow's order.
const AgentColumns = `session_id, agent_id, parent_agent_id, depth, started_at, updated_seq, doc`

// SubagentSession is the query of store.ModelStore.SubagentSession: the
// session that holds agentID, the least by id when several do (hostile
// input can repeat an agent id in other sessions). The main
// agent ("") has no session of its own: an error wrapping store.ErrNotFound.
func SubagentSession(agentID string) (Query, error) {
	if agentID == "" {
		return Query{}, fmt.Errorf("the main agent has no session of its own: %w", store.ErrNotFound)
	}
	return Query{SQL: `SELECT session_id FROM model_agents WHERE agent_id = ? ORDER BY session_id LIMIT 1`, Args: []any{agentID}}, nil
}

// Agents is the query of store.ModelStore.Agents.
func Agents(f store.AgentFilter) (Query, error) {
	l, err := startListing(rowFilter{f.SessionID, f.AgentIDs, f.UpdatedAfter, f.Order, f.Cursor, f.Limit},
		store.AgentsByStart, store.AgentsByChange)
	if err != nil || l.none {
		return Query{None: l.none}, err
	}
	c, w := l.cursor, &l.where
	// The main agent sorts first: agent_id <> '' is false for it, true for
	// the others (the expression of the index model_agents_start).
	var order string
	switch {
	case f.Order == store.ByChange:
		order = "updated_seq, session_id, agent_id"
		if l.resume {
			w.Add("(updated_seq, session_id, agent_id) > (?, ?, ?)", c.Key, c.SessionID, c.ID)
		}
	case f.SessionID != "":
		order = "agent_id <> '', started_at, agent_id"
		if l.resume {
			w.Add("(agent_id <> '', started_at, agent_id) > (?, ?, ?)", !c.Main, c.Key, c.ID)
		}
	default:
		order = "session_id, agent_id <> '', started_at, agent_id"
		if l.resume {
			w.Add("(session_id, agent_id <> '', started_at, agent_id) > (?, ?, ?, ?)", c.SessionID, !c.Main, c.Key, c.ID)
		}
	}
	return Query{SQL: `SELECT ` + AgentColumns + ` FROM model_agents` + w.String() + ` ORDER BY ` + order + ` LIMIT ?`,
		Args: append(w.Args, l.limit+1), Limit: l.limit}, nil
}

// AgentsPage cuts the rows of an Agents query with filter f to a page.
func AgentsPage(f store.AgentFilter, q Query, rows []store.AgentRow) store.AgentPage {
	page := store.AgentPage{Agents: rows}
	if len(rows) > q.Limit {
		page.Agents = rows[:q.Limit]
		last := rows[q.Limit-1]
		c, kind := store.ModelCursor{Key: Nanos(last.StartedAt), Main: last.AgentID == "", SessionID: last.SessionID, ID: last.AgentID}, byte(store.AgentsByStart)
		if f.Order == store.ByChange {
			c, kind = store.ModelCursor{Key: last.UpdatedSeq, SessionID: last.SessionID, ID: last.AgentID}, store.AgentsByChange
		}
		page.Next = c.Encode(kind)
	}
	return page
}

// ToolCallColumns are the columns of a tool call row, in
// store.ToolCallRow's order.
const ToolCallColumns = `session_id, tool_use_id, agent_id, tool_name, status, subtype, effect, started_at, updated_seq, doc`

// ToolCalls is the query of store.ModelStore.ToolCalls, reading the rows
// from from: the table model_tool_calls, with or without a backend's hint
// of the index to read it by.
func ToolCalls(f store.ToolCallFilter, from string) (Query, error) {
	l, err := startListing(rowFilter{f.SessionID, f.AgentIDs, f.UpdatedAfter, f.Order, f.Cursor, f.Limit},
		store.CallsByStart, store.CallsByChange)
	if err != nil || l.none {
		return Query{None: l.none}, err
	}
	c, w := l.cursor, &l.where
	if len(f.ToolUseIDs) > store.MaxFilterIDs {
		return Query{}, fmt.Errorf("%d tool use ids in a filter, more than %d", len(f.ToolUseIDs), store.MaxFilterIDs)
	}
	if f.ToolUseIDs != nil {
		if len(f.ToolUseIDs) == 0 {
			return Query{None: true}, nil
		}
		w.In("tool_use_id", f.ToolUseIDs)
	}
	if f.Tool != "" {
		w.Add("tool_name = ?", f.Tool)
	}
	if f.Status != "" {
		w.Add("status = ?", f.Status)
	}
	if f.Subtype != "" {
		w.Add("subtype = ?", f.Subtype)
	}
	if f.Effect != "" {
		w.Add("effect = ?", f.Effect)
	}
	if !f.Since.IsZero() {
		w.Add("started_at >= ?", Nanos(f.Since))
	}
	// Within one session the cursor leaves session_id out, so that the
	// index on (session_id, started_at, …) seeks straight to it.
	var order string
	switch {
	case f.Order == store.ByChange:
		order = "updated_seq, session_id, tool_use_id"
		if l.resume {
			w.Add("(updated_seq, session_id, tool_use_id) > (?, ?, ?)", c.Key, c.SessionID, c.ID)
		}
	case f.SessionID != "":
		order = "started_at, tool_use_id"
		if l.resume {
			w.Add("(started_at, tool_use_id) > (?, ?)", c.Key, c.ID)
		}
	default:
		order = "session_id, started_at, tool_use_id"
		if l.resume {
			w.Add("(session_id, started_at, tool_use_id) > (?, ?, ?)", c.SessionID, c.Key, c.ID)
		}
	}
	return Query{SQL: `SELECT ` + ToolCallColumns + ` FROM ` + from + w.String() + ` ORDER BY ` + order + ` LIMIT ?`,
		Args: append(w.Args, l.limit+1), Limit: l.limit}, nil
}

// ToolCallsPage cuts the rows of a ToolCalls query with filter f to a page.
func ToolCallsPage(f store.ToolCallFilter, q Query, rows []store.ToolCallRow) store.ToolCallPage {
	page := store.ToolCallPage{ToolCalls: rows}
	if len(rows) > q.Limit {
		page.ToolCalls = rows[:q.Limit]
		last := rows[q.Limit-1]
		c, kind := store.ModelCursor{Key: Nanos(last.StartedAt), SessionID: last.SessionID, ID: last.ToolUseID}, byte(store.CallsByStart)
		if f.Order == store.ByChange {
			c.Key, kind = last.UpdatedSeq, store.CallsByChange
		}
		page.Next = c.Encode(kind)
	}
	return page
}

// rowFilter is what the filters of agents and tool calls share.
type rowFilter struct {
	session      string
	agentIDs     []string
	updatedAfter int64
	order        store.ModelOrder
	cursor       string
	limit        int
}

// rowListing is a listing of agents or tool calls under way: the position
// to resume after and the conditions of a rowFilter.
type rowListing struct {
	cursor store.ModelCursor
	resume bool // cursor is set
	limit  int
	where  Where
	// none is set when the filter matches no row.
	none bool
}

// startListing checks f and turns it into conditions; byStart and byChange
// are the cursor kinds of the listing.
func startListing(f rowFilter, byStart, byChange byte) (rowListing, error) {
	var q rowListing
	var kind byte
	switch f.order {
	case store.ByStart:
		kind = byStart
	case store.ByChange:
		kind = byChange
	default:
		return q, fmt.Errorf("unknown order %d", f.order)
	}
	var err error
	if q.cursor, q.resume, err = store.ParseModelCursor(kind, f.cursor); err != nil {
		return q, err
	}
	if q.resume && f.session != "" && q.cursor.SessionID != f.session {
		return q, store.ErrInvalidCursor
	}
	if len(f.agentIDs) > store.MaxFilterIDs {
		return q, fmt.Errorf("%d agent ids in a filter, more than %d", len(f.agentIDs), store.MaxFilterIDs)
	}
	q.none = f.agentIDs != nil && len(f.agentIDs) == 0
	q.limit = store.ClampLimit(f.limit)
	if f.session != "" {
		q.where.Add("session_id = ?", f.session)
	}
	if f.agentIDs != nil && !q.none {
		q.where.In("agent_id", f.agentIDs)
	}
	if f.updatedAfter > 0 {
		q.where.Add("updated_seq > ?", f.updatedAfter)
	}
	return q, nil
}

// Where builds the WHERE clause of a query.
type Where struct {
	conds []string
	Args  []any
}

// Add adds a condition and its arguments.
func (w *Where) Add(cond string, args ...any) {
	w.conds = append(w.conds, cond)
	w.Args = append(w.Args, args...)
}

// In adds "column IN (…)" with one bound parameter per value, so that any
// string matches exactly.
func (w *Where) In(column string, values []string) {
	w.Add(column+" IN (?"+strings.Repeat(",?", len(values)-1)+")", Anys(values)...)
}

// InUsers adds "column IN (users…)" for a Users filter that is not nil:
// an empty one matches nothing.
func (w *Where) InUsers(column string, users []string) error {
	if users == nil {
		users = []string{}
	}
	return w.InIDs(column, users)
}

// InIDs adds "column IN (ids…)" for a filter of ids that is not nil: an
// empty one matches nothing.
func (w *Where) InIDs(column string, ids []string) error {
	switch {
	case ids == nil:
		return nil
	case len(ids) > store.MaxFilterIDs:
		return fmt.Errorf("%d values of %s: at most %d", len(ids), column, store.MaxFilterIDs)
	case len(ids) == 0:
		w.Add("1 = 0")
		return nil
	}
	w.In(column, ids)
	return nil
}

// OfUsers keeps, when users is not nil, only the rows whose session
// (column holds its id) is one of those users'.
func (w *Where) OfUsers(column string, users []string) error {
	if users == nil {
		return nil
	}
	var in Where
	if err := in.InUsers("user_name", users); err != nil {
		return err
	}
	w.Add(column+" IN (SELECT id FROM sessions"+in.String()+")", in.Args...)
	return nil
}

// String is the clause, "" without conditions.
func (w *Where) String() string {
	if len(w.conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(w.conds, " AND ")
}

// Anys converts strings to arguments.
func Anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// PruneCandidates selects the ids of up to limit sessions whose latest
// event is older than before, the least recently active first.
func PruneCandidates(before time.Time, limit int) Query {
	return Query{SQL: `SELECT id FROM sessions WHERE last_event_at < ? ORDER BY last_event_at, id LIMIT ?`,
		Args: []any{before.UnixNano(), store.ClampLimit(limit)}}
}

// Prunable counts what PruneCandidates and PruneDeletes would delete
// before that time, in every batch: the sessions, then their events (the
// summaries count them) and the events of no session.
func Prunable(before time.Time) Query {
	at := before.UnixNano()
	return Query{SQL: `SELECT (SELECT COUNT(*) FROM sessions WHERE last_event_at < ?),
		(SELECT COALESCE(SUM(event_count), 0) FROM sessions WHERE last_event_at < ?) +
		(SELECT COUNT(*) FROM events WHERE session_id = '' AND time < ?)`,
		Args: []any{at, at, at}}
}

// PruneDeletes are the statements that delete sessions ids (from
// PruneCandidates) whole, then up to limit events older than before that
// belong to no session; the first and the last count events.
func PruneDeletes(ids []string, before time.Time, limit int) []Query {
	var out []Query
	if len(ids) > 0 {
		in := " IN (?" + strings.Repeat(",?", len(ids)-1) + ")"
		args := Anys(ids)
		out = append(out,
			Query{SQL: `DELETE FROM events WHERE session_id` + in, Args: args},
			Query{SQL: `DELETE FROM sessions WHERE id` + in, Args: args},
			Query{SQL: `DELETE FROM model_sessions WHERE session_id` + in, Args: args},
			Query{SQL: `DELETE FROM model_agents WHERE session_id` + in, Args: args},
			Query{SQL: `DELETE FROM model_tool_calls WHERE session_id` + in, Args: args})
	}
	return append(out, Query{SQL: `DELETE FROM events WHERE seq IN
		(SELECT seq FROM events WHERE session_id = '' AND time < ? ORDER BY seq LIMIT ?)`,
		Args: []any{before.UnixNano(), store.ClampLimit(limit)}})
}

// MergeSession ends the upsert of a session summary: it merges a row of a
// store.SessionDelta (excluded) into the stored summary following the rules
// documented on SessionDelta. In an upsert every "sessions." column reads
// the row as it was before the update.
const MergeSession = `ON CONFLICT (id) DO UPDATE SET
	runtime   = CASE WHEN sessions.runtime   = '' THEN excluded.runtime   ELSE sessions.runtime   END,
	host_name = CASE WHEN sessions.host_name = '' THEN excluded.host_name ELSE sessions.host_name END,
	user_name = CASE WHEN sessions.user_name = '' THEN excluded.user_name ELSE sessions.user_name END,
	cwd = CASE WHEN excluded.cwd <> '' AND (sessions.cwd = '' OR excluded.last_event_at >= sessions.last_event_at)
		THEN excluded.cwd ELSE sessions.cwd END,
	transcript_path = CASE WHEN excluded.transcript_path <> '' AND (sessions.transcript_path = '' OR excluded.last_event_at >= sessions.last_event_at)
		THEN excluded.transcript_path ELSE sessions.transcript_path END,
	first_event_at = CASE WHEN excluded.first_event_at < sessions.first_event_at THEN excluded.first_event_at ELSE sessions.first_event_at END,
	last_event_at  = CASE WHEN excluded.last_event_at > sessions.last_event_at THEN excluded.last_event_at ELSE sessions.last_event_at END,
	event_count    = sessions.event_count + excluded.event_count,
	last_seq       = CASE WHEN excluded.last_seq > sessions.last_seq THEN excluded.last_seq ELSE sessions.last_seq END`

package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"time"

	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/internal/sqlq"
)

// The session model's rows (store.ModelStore) live in model_sessions,
// model_agents and model_tool_calls; see migrations/0003_model.sql.

// modelChunkRows is the number of agent or tool call rows per multi-row
// upsert: one statement per chunk instead of one per row.
const modelChunkRows = 100

const upsertModelSessionSQL = `INSERT INTO model_sessions
	(session_id, group_key, seq, version, updated_seq, first_event_at, last_event_at, alias_of, project, summary)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
	ON CONFLICT (session_id) DO UPDATE SET group_key = excluded.group_key, seq = excluded.seq,
		version = excluded.version, updated_seq = excluded.updated_seq, first_event_at = excluded.first_event_at,
		last_event_at = excluded.last_event_at, alias_of = excluded.alias_of, project = excluded.project,
		summary = excluded.summary`

// A row of the model mostly changes in a few columns (a call ends: its
// status, document and updated_seq), and SQLite rewrites the entry of every
// index that has a column the UPDATE sets, whether its value changed or not.
// So rows are written in two steps: an upsert that inserts new rows and
// updates only those columns of a stored row whose other columns are
// unchanged, then a full replace of the rows it left alone. On a call that
// ends this writes 3 of the table's 7 b-trees. Which rows the upsert left
// alone is asked only when its count of rows written says there are some
// (rare: a call's agent or tool, or an agent's parent, depth or start,
// changed): RETURNING every row written cost ~10 % of PutModel's CPU.

// rowTable describes how PutModel writes the rows of one table.
type rowTable struct {
	table string
	// columns are the columns written; the first two, the session and the
	// agent or tool use id, name a row within a statement (rowKey).
	columns []string
	// key are the columns of the table's key, the upsert's conflict
	// target.
	key []string
	// changing are the columns the first step updates; the others outside
	// key must be unchanged for it to update a row (compared with IS: they
	// may be NULL).
	changing []string
}

var (
	agentTable = rowTable{
		table:    "model_agents",
		columns:  []string{"session_id", "agent_id", "parent_agent_id", "depth", "started_at", "updated_seq", "doc"},
		key:      []string{"session_id", "agent_id"},
		changing: []string{"updated_seq", "doc"},
	}
	toolCallTable = rowTable{
		table:    "model_tool_calls",
		columns:  []string{"session_id", "tool_use_id", "agent_id", "tool_name", "status", "subtype", "effect", "started_at", "updated_seq", "doc"},
		key:      []string{"session_id", "started_at", "tool_use_id"},
		changing: []string{"status", "subtype", "effect", "updated_seq", "doc"},
	}
)

// upsertSQL is the first step for rows rows.
func (t rowTable) upsertSQL(rows int) string {
	var set, same []string
	for _, c := range t.columns {
		switch {
		case slices.Contains(t.key, c):
		case slices.Contains(t.changing, c):
			set = append(set, c+" = excluded."+c)
		default:
			same = append(same, c+" IS excluded."+c)
		}
	}
	return t.insertSQL(rows) + " DO UPDATE SET " + strings.Join(set, ", ") +
		" WHERE " + strings.Join(same, " AND ")
}

// returningSQL is upsertSQL returning the rowKey of each row it inserted
// or updated.
func (t rowTable) returningSQL(rows int) string {
	return t.upsertSQL(rows) + " RETURNING " + t.columns[0] + ", " + t.columns[1]
}

// replaceSQL is the second step, for one row.
func (t rowTable) replaceSQL() string {
	var set []string
	for _, c := range t.columns {
		if !slices.Contains(t.key, c) {
			set = append(set, c+" = excluded."+c)
		}
	}
	return t.insertSQL(1) + " DO UPDATE SET " + strings.Join(set, ", ")
}

func (t rowTable) insertSQL(rows int) string {
	row := "(?" + strings.Repeat(",?", len(t.columns)-1) + ")"
	return "INSERT INTO " + t.table + " (" + strings.Join(t.columns, ", ") + ") VALUES " +
		row + strings.Repeat(","+row, rows-1) + " ON CONFLICT (" + strings.Join(t.key, ", ") + ")"
}

const (
	resetAgentsSQL    = `DELETE FROM model_agents WHERE session_id = ?`
	resetToolCallsSQL = `DELETE FROM model_tool_calls WHERE session_id = ?`
	// deleteMovedCallSQL deletes the row a call had at its former start
	// (store.ToolCallRow.MovedFrom).
	deleteMovedCallSQL = `DELETE FROM model_tool_calls WHERE session_id = ? AND started_at = ? AND tool_use_id = ?`
)

// rowStmts are the prepared statements of one rowTable.
type rowStmts struct {
	table          rowTable
	chunk, replace wstmt // upsertSQL(modelChunkRows), replaceSQL()
	// pow2[k] is upsertSQL(1<<k). A round's rows past its last chunk are
	// written in pieces of those sizes, at most modelPow2Sizes statements,
	// rather than one statement per row: each statement run costs more
	// than a row.
	pow2 [modelPow2Sizes]wstmt
}

// modelPow2Sizes covers every part shorter than modelChunkRows.
const modelPow2Sizes = 7 // 1 … 64 rows

// sized returns the statement for a part of n rows, the chunk or the
// largest power of two not above n, and the number of rows it writes.
func (r *rowStmts) sized(n int) (wstmt, int) {
	if n >= modelChunkRows {
		return r.chunk, modelChunkRows
	}
	k := bits.Len(uint(n)) - 1
	return r.pow2[k], 1 << k
}

func (r *rowStmts) all() []*wstmt {
	out := []*wstmt{&r.chunk, &r.replace}
	for k := range r.pow2 {
		out = append(out, &r.pow2[k])
	}
	return out
}

func (t rowTable) queries() []string {
	out := []string{t.upsertSQL(modelChunkRows), t.replaceSQL()}
	for k := range modelPow2Sizes {
		out = append(out, t.upsertSQL(1<<k))
	}
	return out
}

// modelStmts are the writer's prepared statements of PutModel, made on
// first use: a batch pays no parsing.
type modelStmts struct {
	session, resetAgents, resetCalls, deleteMoved wstmt
	agents, calls                                 rowStmts
}

func (s *modelStmts) all() []*wstmt {
	out := []*wstmt{&s.session, &s.resetAgents, &s.resetCalls, &s.deleteMoved}
	return append(append(out, s.agents.all()...), s.calls.all()...)
}

func (s *modelStmts) close() {
	for _, st := range s.all() {
		if *st != nil {
			(*st).Close()
		}
	}
	*s = modelStmts{}
}

func (db *DB) prepareModel(tx *wtx) error {
	if db.model.session != nil {
		return nil
	}
	s := modelStmts{agents: rowStmts{table: agentTable}, calls: rowStmts{table: toolCallTable}}
	queries := []string{upsertModelSessionSQL, resetAgentsSQL, resetToolCallsSQL, deleteMovedCallSQL}
	queries = append(append(queries, agentTable.queries()...), toolCallTable.queries()...)
	for i, dst := range s.all() {
		st, err := tx.prepare(queries[i])
		if err != nil {
			s.close()
			return err
		}
		*dst = st
	}
	db.model = s
	return nil
}

// PutModel implements store.ModelStore, in one transaction on the writer
// connection.
func (db *DB) PutModel(ctx context.Context, b store.ModelBatch) error {
	if b.Empty() {
		return nil
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return ErrClosed
	}
	if err := db.putModel(ctx, b); err != nil {
		return fmt.Errorf("cannot store the model (%d sessions, %d agents, %d tool calls): %w",
			len(b.Sessions), len(b.Agents), len(b.ToolCalls), err)
	}
	db.committed()
	return nil
}

func (db *DB) putModel(ctx context.Context, b store.ModelBatch) error {
	return db.w.tx(ctx, func(tx *wtx) error { return db.putModelIn(tx, b) })
}

// putModelIn writes b in tx.
func (db *DB) putModelIn(tx *wtx, b store.ModelBatch) error {
	if err := db.prepareModel(tx); err != nil {
		return err
	}
	for _, id := range b.Reset {
		if _, err := tx.exec(db.model.resetAgents, id); err != nil {
			return fmt.Errorf("cannot reset session %q: %w", id, err)
		}
		if _, err := tx.exec(db.model.resetCalls, id); err != nil {
			return fmt.Errorf("cannot reset session %q: %w", id, err)
		}
	}
	for _, m := range b.Sessions {
		if _, err := tx.exec(db.model.session, m.SessionID, m.GroupKey, m.Seq, m.Version, m.UpdatedSeq,
			nanos(m.FirstEventAt), nanos(m.LastEventAt), m.AliasOf, m.Project, nullJSON(m.Summary)); err != nil {
			return fmt.Errorf("session %q: %w", m.SessionID, err)
		}
	}
	err := sqlq.EachMove(b.ToolCalls, func(session string, from time.Time, id string) error {
		if _, err := tx.exec(db.model.deleteMoved, session, nanos(from), id); err != nil {
			return fmt.Errorf("cannot move tool call %q of session %q: %w", id, session, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	var session, agent, tool, status, subtype, effect boxed[string]
	var version boxed[int64]
	err = putRows(tx, &db.model.agents, b.Agents,
		func(a store.AgentRow) rowKey { return rowKey{a.SessionID, a.AgentID} },
		func(args []any, a store.AgentRow) []any {
			var parent any // NULL for the main agent
			if a.ParentAgentID != nil {
				parent = *a.ParentAgentID
			}
			return append(args, session.of(a.SessionID), a.AgentID, parent, a.Depth, nanos(a.StartedAt), version.of(a.UpdatedSeq), nullJSON(a.Doc))
		})
	if err != nil {
		return fmt.Errorf("cannot store agents: %w", err)
	}
	err = putRows(tx, &db.model.calls, b.ToolCalls,
		func(c store.ToolCallRow) rowKey { return rowKey{c.SessionID, c.ToolUseID} },
		func(args []any, c store.ToolCallRow) []any {
			return append(args, session.of(c.SessionID), c.ToolUseID, agent.of(c.AgentID), tool.of(c.ToolName),
				status.of(c.Status), subtype.of(c.Subtype), effect.of(c.Effect), nanos(c.StartedAt), version.of(c.UpdatedSeq), nullJSON(c.Doc))
		})
	if err != nil {
		return fmt.Errorf("cannot store tool calls: %w", err)
	}
	return nil
}

// boxed is a column's latest value as a statement argument. A statement
// takes its arguments as any, and a string put in one is an allocation of
// its own: the columns whose value repeats from row to row (the session, the
// agent, the tool, the status, the round's version) are boxed once per run
// of equal values instead of once per row.
type boxed[T comparable] struct {
	last T
	v    any
}

func (b *boxed[T]) of(x T) any {
	if b.v == nil || x != b.last {
		b.last, b.v = x, x
	}
	return b.v
}

// rowKey names an agent or tool call row among those PutModel is given:
// the session and the agent or tool use id.
type rowKey struct{ session, id string }

// putRows writes rows in the two steps described at rowTable: chunks of
// modelChunkRows rows, then the rest in pieces of powers of two, then the replace of the
// rows the first step left alone. A key given twice is written once, with
// its last row, so that no statement meets a key twice.
func putRows[R any](tx *wtx, st *rowStmts, rows []R, key func(R) rowKey, bind func([]any, R) []any) error {
	if len(rows) == 0 {
		return nil
	}
	rows = sqlq.LastOfKey(rows, key)
	var alone []R // rows the first step left alone
	args := tx.argBuf()
	defer func() { tx.keepArgs(args) }()
	for todo := rows; len(todo) > 0; {
		stmt, n := st.sized(len(todo))
		piece := todo[:n]
		todo = todo[n:]
		args = args[:0]
		for _, r := range piece {
			args = bind(args, r)
		}
		res, err := tx.exec(stmt, args...)
		if err != nil {
			return err
		}
		wrote, err := res.RowsAffected()
		if err != nil {
			return err
		}
		if wrote == int64(n) {
			continue
		}
		// The piece again, returning what it writes: the rows it wrote
		// the first time (rewritten with the same values) and not the
		// others, whose columns outside changing still differ.
		written, err := returning(tx, st.table.returningSQL(n), args)
		if err != nil {
			return err
		}
		for _, r := range piece {
			if !written[key(r)] {
				alone = append(alone, r)
			}
		}
	}
	for _, r := range alone {
		args = bind(args[:0], r)
		if _, err := tx.exec(st.replace, args...); err != nil {
			return err
		}
	}
	return nil
}

// returning runs q, an upsert RETURNING the keys of the rows it wrote, and
// returns those keys.
func returning(tx *wtx, q string, args []any) (map[rowKey]bool, error) {
	written := map[rowKey]bool{}
	err := tx.query(q, args, func(row []driver.Value) (err error) {
		var k rowKey
		if k.session, err = stringOf(row[0]); err != nil {
			return err
		}
		if k.id, err = stringOf(row[1]); err != nil {
			return err
		}
		written[k] = true
		return nil
	})
	return written, err
}

var nanos, timeOf = sqlq.Nanos, sqlq.Time

func scanModelSession(sc sqlq.Row) (store.SessionModel, error) {
	var m store.SessionModel
	var first, last int64
	var summary sql.NullString
	if err := sc.Scan(&m.SessionID, &m.GroupKey, &m.Seq, &m.Version, &m.UpdatedSeq, &first, &last, &m.AliasOf, &m.Project, &summary); err != nil {
		return m, err
	}
	m.FirstEventAt, m.LastEventAt, m.Summary = timeOf(first), timeOf(last), rawJSON(summary)
	return m, nil
}

// scanGroupSession reads a row of sqlq.GroupSessions.
func scanGroupSession(rows sqlq.Row) (store.SessionModel, error) {
	var m store.SessionModel
	var first, last int64
	err := rows.Scan(&m.SessionID, &m.Seq, &m.UpdatedSeq, &first, &last, &m.AliasOf)
	m.FirstEventAt, m.LastEventAt = timeOf(first), timeOf(last)
	return m, err
}

func scanAgent(rows sqlq.Row) (store.AgentRow, error) {
	var a store.AgentRow
	var parent, doc sql.NullString
	var started int64
	err := rows.Scan(&a.SessionID, &a.AgentID, &parent, &a.Depth, &started, &a.UpdatedSeq, &doc)
	if parent.Valid {
		a.ParentAgentID = &parent.String
	}
	a.StartedAt, a.Doc = timeOf(started), rawJSON(doc)
	return a, err
}

func scanToolCall(rows sqlq.Row) (store.ToolCallRow, error) {
	var t store.ToolCallRow
	var doc sql.NullString
	var started int64
	err := rows.Scan(&t.SessionID, &t.ToolUseID, &t.AgentID, &t.ToolName, &t.Status, &t.Subtype, &t.Effect, &started, &t.UpdatedSeq, &doc)
	t.StartedAt, t.Doc = timeOf(started), rawJSON(doc)
	return t, err
}

// scanString reads a row of one text column.
func scanString(rows sqlq.Row) (s string, err error) { return s, rows.Scan(&s) }

// SessionModels implements store.ModelStore.
func (db *DB) SessionModels(ctx context.Context, ids []string) (map[string]store.SessionModel, error) {
	rows, err := db.rows()
	if err != nil {
		return nil, err
	}
	out := make(map[string]store.SessionModel, len(ids))
	for start := 0; start < len(ids); start += summaryChunk {
		part := ids[start:min(start+summaryChunk, len(ids))]
		q := `SELECT ` + sqlq.ModelSessionColumns + ` FROM model_sessions WHERE session_id IN (?` +
			strings.Repeat(",?", len(part)-1) + `)`
		err := rows(ctx, q, sqlq.Anys(part), func(row sqlq.Row) error {
			m, err := scanModelSession(row)
			out[m.SessionID] = m
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("cannot read session models: %w", err)
		}
	}
	return out, nil
}

// toolCallsFrom is the table a listing of tool calls reads, with the index
// to read it by where SQLite's planner would choose badly. A listing of
// several agents' calls (a subtree's) in start order, without a tool or
// status filter, which have indexes of their own, finds them inside the
// index by start, which holds the agent beside the order. The planner does
// not weigh that, and would read them by the key's index, which has the
// same order and no agent: a row of the table for every call passed over.
// So for the calls of a session picked by their ids, which no index leads
// with: the index by start holds the id, so only the rows picked are read.
// Other listings read no column the key's index lacks and keep its
// narrower entries.
func toolCallsFrom(f store.ToolCallFilter) string {
	if f.Order == store.ByStart && (len(f.AgentIDs) > 1 || f.ToolUseIDs != nil) && f.Tool == "" && f.Status == "" {
		return "model_tool_calls INDEXED BY model_tool_calls_start"
	}
	return "model_tool_calls"
}

// rows is the reader's sqlq.Rows, or ErrClosed.
func (db *DB) rows() (sqlq.Rows, error) {
	r, err := db.readerFor()
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, q string, args []any, each func(sqlq.Row) error) error {
		rows, err := r.QueryContext(ctx, q, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		return sqlq.Each(rows, each)
	}, nil
}

// nullJSON stores an empty document as NULL; b is bound without a copy
// (boundText).
func nullJSON(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return boundText(b)
}

// rawJSON reads back what nullJSON stored.
func rawJSON(s sql.NullString) []byte {
	if !s.Valid || s.String == "" {
		return nil
	}
	return []byte(s.String)
}

// summaryChunk is the most ids one SessionModels query binds.
const summaryChunk = 500

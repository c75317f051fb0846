package postgres

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/internal/sqlq"
)

// The session model's rows (store.ModelStore) live in model_sessions,
// model_agents and model_tool_calls. PutModel writes each table with one
// upsert of unnest(arrays), whatever the number of rows.

const (
	upsertModelSessionsSQL = `
INSERT INTO model_sessions (session_id, group_key, seq, version, updated_seq, first_event_at, last_event_at, alias_of, project, summary)
SELECT * FROM unnest($1::bytea[], $2::bytea[], $3::bigint[], $4::integer[], $5::bigint[], $6::bigint[], $7::bigint[], $8::bytea[], $9::bytea[], $10::bytea[])
ON CONFLICT (session_id) DO UPDATE SET group_key = excluded.group_key, seq = excluded.seq,
	version = excluded.version, updated_seq = excluded.updated_seq, first_event_at = excluded.first_event_at,
	last_event_at = excluded.last_event_at, alias_of = excluded.alias_of, project = excluded.project,
	summary = excluded.summary`

	upsertAgentsSQL = `
INSERT INTO model_agents (session_id, agent_id, parent_agent_id, depth, started_at, updated_seq, doc)
SELECT * FROM unnest($1::bytea[], $2::bytea[], $3::bytea[], $4::integer[], $5::bigint[], $6::bigint[], $7::bytea[])
ON CONFLICT (session_id, agent_id) DO UPDATE SET parent_agent_id = excluded.parent_agent_id, depth = excluded.depth,
	started_at = excluded.started_at, updated_seq = excluded.updated_seq, doc = excluded.doc`

	upsertToolCallsSQL = `
INSERT INTO model_tool_calls (session_id, tool_use_id, agent_id, tool_name, status, subtype, effect, started_at, updated_seq, doc)
SELECT * FROM unnest($1::bytea[], $2::bytea[], $3::bytea[], $4::bytea[], $5::bytea[], $6::bytea[], $7::bytea[], $8::bigint[], $9::bigint[], $10::bytea[])
ON CONFLICT (session_id, started_at, tool_use_id) DO UPDATE SET agent_id = excluded.agent_id, tool_name = excluded.tool_name,
	status = excluded.status, subtype = excluded.subtype, effect = excluded.effect,
	updated_seq = excluded.updated_seq, doc = excluded.doc`

	// deleteMovedCallsSQL deletes the rows calls had at their former
	// starts (store.ToolCallRow.MovedFrom).
	deleteMovedCallsSQL = `
DELETE FROM model_tool_calls c USING unnest($1::bytea[], $2::bigint[], $3::bytea[]) AS m(session_id, started_at, tool_use_id)
WHERE c.session_id = m.session_id AND c.started_at = m.started_at AND c.tool_use_id = m.tool_use_id`
)

// PutModel implements store.ModelStore, in one transaction.
func (db *DB) PutModel(ctx context.Context, b store.ModelBatch) error {
	if b.Empty() {
		return nil
	}
	p, err := db.open()
	if err != nil {
		return err
	}
	var version int64
	for _, m := range b.Sessions {
		version = max(version, m.UpdatedSeq)
	}
	err = pgx.BeginFunc(ctx, p, func(tx pgx.Tx) error {
		if err := putModel(ctx, tx, b); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, notifyChannel, strconv.FormatInt(version, 10))
		return err
	})
	if err != nil {
		return fmt.Errorf("cannot store the model (%d sessions, %d agents, %d tool calls): %w",
			len(b.Sessions), len(b.Agents), len(b.ToolCalls), err)
	}
	return nil
}

func putModel(ctx context.Context, tx pgx.Tx, b store.ModelBatch) error {
	if len(b.Reset) > 0 {
		ids := bytesOf(b.Reset)
		if _, err := tx.Exec(ctx, `DELETE FROM model_agents WHERE session_id = ANY($1::bytea[])`, ids); err != nil {
			return fmt.Errorf("cannot reset %d sessions: %w", len(ids), err)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM model_tool_calls WHERE session_id = ANY($1::bytea[])`, ids); err != nil {
			return fmt.Errorf("cannot reset %d sessions: %w", len(ids), err)
		}
	}
	if sessions := sqlq.LastOfKey(b.Sessions, func(m store.SessionModel) [2]string { return [2]string{m.SessionID} }); len(sessions) > 0 {
		var c columns
		for _, m := range sessions {
			c.bytes(0, m.SessionID).bytes(1, m.GroupKey).int(2, m.Seq).int32(3, int32(m.Version)).int(4, m.UpdatedSeq).
				int(5, sqlq.Nanos(m.FirstEventAt)).int(6, sqlq.Nanos(m.LastEventAt)).bytes(7, m.AliasOf).bytes(8, m.Project).
				raw(9, nullDoc(m.Summary))
		}
		if _, err := tx.Exec(ctx, upsertModelSessionsSQL, c.args(10)...); err != nil {
			return fmt.Errorf("cannot store %d session models: %w", len(sessions), err)
		}
	}
	if agents := sqlq.LastOfKey(b.Agents, func(a store.AgentRow) [2]string { return [2]string{a.SessionID, a.AgentID} }); len(agents) > 0 {
		var c columns
		for _, a := range agents {
			var parent []byte // NULL for the main agent
			if a.ParentAgentID != nil {
				parent = []byte(*a.ParentAgentID)
			}
			c.bytes(0, a.SessionID).bytes(1, a.AgentID).raw(2, parent).int32(3, int32(a.Depth)).
				int(4, sqlq.Nanos(a.StartedAt)).int(5, a.UpdatedSeq).raw(6, nullDoc(a.Doc))
		}
		if _, err := tx.Exec(ctx, upsertAgentsSQL, c.args(7)...); err != nil {
			return fmt.Errorf("cannot store %d agents: %w", len(agents), err)
		}
	}
	var moved columns
	sqlq.EachMove(b.ToolCalls, func(session string, from time.Time, id string) error {
		moved.bytes(0, session).int(1, sqlq.Nanos(from)).bytes(2, id)
		return nil
	})
	if moved.cols != nil {
		if _, err := tx.Exec(ctx, deleteMovedCallsSQL, moved.args(3)...); err != nil {
			return fmt.Errorf("cannot move tool calls: %w", err)
		}
	}
	if calls := sqlq.LastOfKey(b.ToolCalls, func(t store.ToolCallRow) [2]string { return [2]string{t.SessionID, t.ToolUseID} }); len(calls) > 0 {
		var c columns
		for _, t := range calls {
			c.bytes(0, t.SessionID).bytes(1, t.ToolUseID).bytes(2, t.AgentID).bytes(3, t.ToolName).bytes(4, t.Status).
				bytes(5, t.Subtype).bytes(6, t.Effect).int(7, sqlq.Nanos(t.StartedAt)).int(8, t.UpdatedSeq).raw(9, nullDoc(t.Doc))
		}
		if _, err := tx.Exec(ctx, upsertToolCallsSQL, c.args(10)...); err != nil {
			return fmt.Errorf("cannot store %d tool calls: %w", len(calls), err)
		}
	}
	return nil
}

// columns gathers the arrays an unnest upsert binds, column by column.
type columns struct {
	cols map[int]any
}

func (c *columns) at(i int, empty any) any {
	if c.cols == nil {
		c.cols = map[int]any{}
	}
	if _, ok := c.cols[i]; !ok {
		c.cols[i] = empty
	}
	return c.cols[i]
}

func (c *columns) raw(i int, v []byte) *columns {
	c.cols[i] = append(c.at(i, [][]byte(nil)).([][]byte), v)
	return c
}

func (c *columns) bytes(i int, s string) *columns { return c.raw(i, []byte(s)) }

func (c *columns) int(i int, v int64) *columns {
	c.cols[i] = append(c.at(i, []int64(nil)).([]int64), v)
	return c
}

func (c *columns) int32(i int, v int32) *columns {
	c.cols[i] = append(c.at(i, []int32(nil)).([]int32), v)
	return c
}

func (c *columns) args(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = c.cols[i]
	}
	return out
}

func bytesOf(ss []string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

func scanModelSession(rows sqlq.Row) (store.SessionModel, error) {
	var m store.SessionModel
	var first, last int64
	err := rows.Scan(str{&m.SessionID}, str{&m.GroupKey}, &m.Seq, &m.Version, &m.UpdatedSeq, &first, &last, str{&m.AliasOf}, str{&m.Project}, doc{&m.Summary})
	m.FirstEventAt, m.LastEventAt = sqlq.Time(first), sqlq.Time(last)
	return m, err
}

// SessionModels implements store.ModelStore.
func (db *DB) SessionModels(ctx context.Context, ids []string) (map[string]store.SessionModel, error) {
	rows, err := db.rows()
	if err != nil {
		return nil, err
	}
	out := make(map[string]store.SessionModel, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	err = rows(ctx, `SELECT `+sqlq.ModelSessionColumns+` FROM model_sessions WHERE session_id = ANY(?::bytea[])`, []any{bytesOf(ids)}, func(row sqlq.Row) error {
		m, err := scanModelSession(row)
		out[m.SessionID] = m
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("cannot read session models: %w", err)
	}
	return out, nil
}

// scanGroupSession reads a row of sqlq.GroupSessions.
func scanGroupSession(rows sqlq.Row) (store.SessionModel, error) {
	var m store.SessionModel
	var first, last int64
	err := rows.Scan(str{&m.SessionID}, &m.Seq, &m.UpdatedSeq, &first, &last, str{&m.AliasOf})
	m.FirstEventAt, m.LastEventAt = sqlq.Time(first), sqlq.Time(last)
	return m, err
}

// scanString reads a row of one bytea column.
func scanString(rows sqlq.Row) (s string, err error) { return s, rows.Scan(str{&s}) }

func scanAgent(rows sqlq.Row) (store.AgentRow, error) {
	var a store.AgentRow
	var started int64
	var depth int32
	err := rows.Scan(str{&a.SessionID}, str{&a.AgentID}, nullStr{&a.ParentAgentID}, &depth, &started, &a.UpdatedSeq, doc{&a.Doc})
	a.Depth, a.StartedAt = int(depth), sqlq.Time(started)
	return a, err
}

func scanToolCall(rows sqlq.Row) (store.ToolCallRow, error) {
	var t store.ToolCallRow
	var started int64
	err := rows.Scan(str{&t.SessionID}, str{&t.ToolUseID}, str{&t.AgentID}, str{&t.ToolName}, str{&t.Status},
		str{&t.Subtype}, str{&t.Effect}, &started, &t.UpdatedSeq, doc{&t.Doc})
	t.StartedAt = sqlq.Time(started)
	return t, err
}

package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hookwatch/hookwatch/store"
)

// PutDerived implements store.Store. It writes on the writer connection, in
// one transaction, so a reader sees every session of a derivation updated
// together or none.
func (db *DB) PutDerived(ctx context.Context, ds []store.Derived) error {
	if len(ds) == 0 {
		return nil
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return ErrClosed
	}
	if err := db.putDerived(ctx, ds); err != nil {
		return fmt.Errorf("cannot store the derived state of %d sessions: %w", len(ds), err)
	}
	db.committed()
	return nil
}

func (db *DB) putDerived(ctx context.Context, ds []store.Derived) error {
	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("cannot begin: %w", err)
	}
	defer tx.Rollback() // a no-op after Commit
	put, err := tx.PrepareContext(ctx, `INSERT OR REPLACE INTO derived
		(session_id, group_key, seq, first_event_at, last_event_at, alias_of, summary, agents, tool_calls)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer put.Close()
	del, err := tx.PrepareContext(ctx, `DELETE FROM derived_agents WHERE session_id = ?`)
	if err != nil {
		return err
	}
	defer del.Close()
	add, err := tx.PrepareContext(ctx, `INSERT OR IGNORE INTO derived_agents (agent_id, session_id) VALUES (?, ?)`)
	if err != nil {
		return err
	}
	defer add.Close()
	for _, d := range ds {
		if _, err := put.ExecContext(ctx, d.SessionID, d.GroupKey, d.Seq, d.FirstEventAt.UnixNano(), d.LastEventAt.UnixNano(),
			d.AliasOf, nullJSON(d.Summary), nullJSON(d.Agents), nullJSON(d.ToolCalls)); err != nil {
			return fmt.Errorf("session %q: %w", d.SessionID, err)
		}
		if _, err := del.ExecContext(ctx, d.SessionID); err != nil {
			return fmt.Errorf("session %q: %w", d.SessionID, err)
		}
		for _, a := range d.AgentIDs {
			if _, err := add.ExecContext(ctx, a, d.SessionID); err != nil {
				return fmt.Errorf("session %q, agent %q: %w", d.SessionID, a, err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("cannot commit: %w", err)
	}
	return nil
}

// nullJSON stores an empty document as NULL.
func nullJSON(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return string(b)
}

// rawJSON reads back what nullJSON stored.
func rawJSON(s sql.NullString) []byte {
	if !s.Valid || s.String == "" {
		return nil
	}
	return []byte(s.String)
}

// Derived implements store.Store.
func (db *DB) Derived(ctx context.Context, sessionID string) (store.Derived, error) {
	r, err := db.readerFor()
	if err != nil {
		return store.Derived{}, err
	}
	d := store.Derived{SessionID: sessionID}
	var first, last int64
	var summary, agents, calls sql.NullString
	err = r.QueryRowContext(ctx, `SELECT group_key, seq, first_event_at, last_event_at, alias_of, summary, agents, tool_calls
		FROM derived WHERE session_id = ?`, sessionID).
		Scan(&d.GroupKey, &d.Seq, &first, &last, &d.AliasOf, &summary, &agents, &calls)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Derived{}, fmt.Errorf("derived state of session %q: %w", sessionID, store.ErrNotFound)
	}
	if err != nil {
		return store.Derived{}, fmt.Errorf("cannot read the derived state of session %q: %w", sessionID, err)
	}
	d.FirstEventAt, d.LastEventAt = fromNanos(first), fromNanos(last)
	d.Summary, d.Agents, d.ToolCalls = rawJSON(summary), rawJSON(agents), rawJSON(calls)
	rows, err := r.QueryContext(ctx, `SELECT agent_id FROM derived_agents WHERE session_id = ? ORDER BY agent_id`, sessionID)
	if err != nil {
		return store.Derived{}, fmt.Errorf("cannot read the agents of session %q: %w", sessionID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var a string
		if err := rows.Scan(&a); err != nil {
			return store.Derived{}, fmt.Errorf("cannot read the agents of session %q: %w", sessionID, err)
		}
		d.AgentIDs = append(d.AgentIDs, a)
	}
	if err := rows.Err(); err != nil {
		return store.Derived{}, fmt.Errorf("cannot read the agents of session %q: %w", sessionID, err)
	}
	return d, nil
}

// summaryChunk is the most ids one DerivedSummaries query binds.
const summaryChunk = 500

// DerivedSummaries implements store.Store.
func (db *DB) DerivedSummaries(ctx context.Context, ids []string) (map[string]store.Derived, error) {
	r, err := db.readerFor()
	if err != nil {
		return nil, err
	}
	out := make(map[string]store.Derived, len(ids))
	for start := 0; start < len(ids); start += summaryChunk {
		part := ids[start:min(start+summaryChunk, len(ids))]
		args := make([]any, len(part))
		for i, id := range part {
			args[i] = id
		}
		q := `SELECT session_id, group_key, seq, first_event_at, last_event_at, alias_of, summary FROM derived
			WHERE session_id IN (?` + strings.Repeat(",?", len(part)-1) + `)`
		if err := func() error {
			rows, err := r.QueryContext(ctx, q, args...)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var d store.Derived
				var first, last int64
				var summary sql.NullString
				if err := rows.Scan(&d.SessionID, &d.GroupKey, &d.Seq, &first, &last, &d.AliasOf, &summary); err != nil {
					return err
				}
				d.FirstEventAt, d.LastEventAt = fromNanos(first), fromNanos(last)
				d.Summary = rawJSON(summary)
				out[d.SessionID] = d
			}
			return rows.Err()
		}(); err != nil {
			return nil, fmt.Errorf("cannot read derived summaries: %w", err)
		}
	}
	return out, nil
}

// DerivedGroup implements store.Store.
func (db *DB) DerivedGroup(ctx context.Context, key string, from, to time.Time, limit int) ([]store.Derived, error) {
	r, err := db.readerFor()
	if err != nil {
		return nil, err
	}
	rows, err := r.QueryContext(ctx, `SELECT session_id, seq, first_event_at, last_event_at, alias_of FROM derived
		WHERE group_key = ? AND last_event_at >= ? AND first_event_at <= ?
		ORDER BY last_event_at DESC, session_id DESC LIMIT ?`,
		key, from.UnixNano(), to.UnixNano(), store.ClampLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("cannot list the derived sessions of a group: %w", err)
	}
	defer rows.Close()
	var out []store.Derived
	for rows.Next() {
		d := store.Derived{GroupKey: key}
		var first, last int64
		if err := rows.Scan(&d.SessionID, &d.Seq, &first, &last, &d.AliasOf); err != nil {
			return nil, fmt.Errorf("cannot list the derived sessions of a group: %w", err)
		}
		d.FirstEventAt, d.LastEventAt = fromNanos(first), fromNanos(last)
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("cannot list the derived sessions of a group: %w", err)
	}
	return out, nil
}

// AgentSession implements store.Store.
func (db *DB) AgentSession(ctx context.Context, agentID string) (string, error) {
	r, err := db.readerFor()
	if err != nil {
		return "", err
	}
	var id string
	err = r.QueryRowContext(ctx, `SELECT session_id FROM derived_agents WHERE agent_id = ? ORDER BY session_id LIMIT 1`, agentID).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("agent %q: %w", agentID, store.ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("cannot find the session of agent %q: %w", agentID, err)
	}
	return id, nil
}

// StaleSessions implements store.Store.
func (db *DB) StaleSessions(ctx context.Context, after string, limit int) ([]store.Session, error) {
	r, err := db.readerFor()
	if err != nil {
		return nil, err
	}
	rows, err := r.QueryContext(ctx, `SELECT `+sessionColumns+` FROM sessions
		WHERE id > ? AND NOT EXISTS (SELECT 1 FROM derived d WHERE d.session_id = sessions.id AND d.seq >= sessions.last_seq)
		ORDER BY id LIMIT ?`, after, store.ClampLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("cannot list stale sessions: %w", err)
	}
	defer rows.Close()
	var out []store.Session
	for rows.Next() {
		s, err := scanSession(rows)
		if err != nil {
			return nil, fmt.Errorf("cannot list stale sessions: %w", err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("cannot list stale sessions: %w", err)
	}
	return out, nil
}

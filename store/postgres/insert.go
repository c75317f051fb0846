package postgres

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/internal/sqlq"
)

// A batch goes in one INSERT … SELECT FROM unnest(arrays): one statement
// and one round trip whatever its size, the columns sent in binary
// (encoded by insertArgs, binarray.go), the statement prepared once per
// connection. COPY
// cannot skip stored ids by itself: it needs a staging table and a second
// statement, and BenchmarkInsertWay measured it slower at 100 events a
// batch (3.2–3.7k against 5.3–7.1k events/s on a loaded 2-core machine) and
// no faster at 1,000.

const insertEventsSQL = `
INSERT INTO events (id, session_id, runtime, kind, event, agent_id, agent_type, tool_name, tool_use_id, prompt_id, time, envelope)
SELECT id, session_id, runtime, kind, event, agent_id, agent_type, tool_name, tool_use_id, prompt_id, t, envelope
FROM unnest($1::bytea[], $2::bytea[], $3::bytea[], $4::bytea[], $5::bytea[], $6::bytea[], $7::bytea[], $8::bytea[],
	$9::bytea[], $10::bytea[], $11::bigint[], $12::bytea[])
	WITH ORDINALITY AS u(id, session_id, runtime, kind, event, agent_id, agent_type, tool_name, tool_use_id, prompt_id, t, envelope, ord)
ORDER BY ord
ON CONFLICT (id) DO NOTHING
RETURNING seq, id`

// upsertSessionsSQL merges store.SessionDelta rows into the sessions'
// summaries (sqlq.MergeSession).
const upsertSessionsSQL = `
INSERT INTO sessions (id, runtime, host_name, user_name, cwd, transcript_path, first_event_at, last_event_at,
	event_count, last_seq)
SELECT * FROM unnest($1::bytea[], $2::bytea[], $3::bytea[], $4::bytea[], $5::bytea[], $6::bytea[],
	$7::bigint[], $8::bigint[], $9::bigint[], $10::bigint[])
` + sqlq.MergeSession

// Insert implements store.EventLog, in one transaction that first takes the
// database's insert lock (lockInsert) until it commits: seqs are handed out
// and committed in one order across every collector on the database, and an
// id two collectors receive at once is stored by the first only.
func (db *DB) Insert(ctx context.Context, events []store.Event) (int, error) {
	return db.InsertOwned(ctx, "", events)
}

// InsertOwned implements store.OwnedInserter: the owners are read after
// the insert lock is taken, so no other collector's batch commits between
// the check and the insert. user "" checks nothing (Insert).
func (db *DB) InsertOwned(ctx context.Context, user string, events []store.Event) (int, error) {
	return sqlq.Insert(events, func() (int, error) {
		db.mu.Lock()
		defer db.mu.Unlock()
		if db.closed {
			return 0, ErrClosed
		}
		return db.insert(ctx, user, events)
	})
}

func (db *DB) insert(ctx context.Context, user string, events []store.Event) (int, error) {
	// Repeats within the batch are dropped here: the first occurrence wins.
	pos := make(map[string]int, len(events))
	keep := make([]int, 0, len(events))
	for i := range events {
		if _, dup := pos[events[i].ID]; !dup {
			pos[events[i].ID] = i
			keep = append(keep, i)
		}
	}
	params := db.insertArgs(events, keep)
	var sessions [][]byte // for checkOwners
	if user != "" {
		for _, i := range keep {
			sessions = append(sessions, []byte(events[i].SessionID))
		}
	}
	inserted := 0
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, lockInsert); err != nil {
			return fmt.Errorf("cannot take the insert lock: %w", err)
		}
		if user != "" {
			if err := checkOwners(ctx, tx, user, sessions); err != nil {
				return err
			}
		}
		sd, err := tx.Prepare(ctx, "hookwatch_insert_events", insertEventsSQL) // once per connection
		if err != nil {
			return err
		}
		rr := tx.Conn().PgConn().ExecPrepared(ctx, sd.Name, params, insertFormats[:], insertFormats[:2])
		for rr.NextRow() {
			v := rr.Values()
			if len(v) != 2 || len(v[0]) != 8 {
				rr.Close()
				return errors.New("unexpected row from the insert")
			}
			i, ok := pos[string(v[1])]
			if !ok {
				rr.Close()
				return errors.New("the insert returned an id it was not given")
			}
			events[i].Seq = int64(binary.BigEndian.Uint64(v[0]))
			inserted++
		}
		if _, err := rr.Close(); err != nil {
			return err
		}
		if inserted == 0 {
			return nil
		}
		if _, err := tx.Exec(ctx, `SELECT pg_notify($1, '')`, notifyChannel); err != nil {
			return err
		}
		deltas := store.Summarize(events)
		if len(deltas) == 0 {
			return nil
		}
		s := make([][][]byte, 6)
		n := make([][]int64, 4)
		for _, d := range deltas {
			for j, v := range []string{d.ID, d.Runtime, d.Host, d.User, d.CWD, d.TranscriptPath} {
				s[j] = append(s[j], []byte(v))
			}
			for j, v := range []int64{sqlq.Nanos(d.FirstEventAt), sqlq.Nanos(d.LastEventAt), d.Count, d.LastSeq} {
				n[j] = append(n[j], v)
			}
		}
		if _, err := tx.Exec(ctx, upsertSessionsSQL, s[0], s[1], s[2], s[3], s[4], s[5], n[0], n[1], n[2], n[3]); err != nil {
			return fmt.Errorf("cannot update %d sessions: %w", len(deltas), err)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return inserted, nil
}

// insertFormats are the formats of insertEventsSQL's parameters and
// results: binary.
var insertFormats = [12]int16{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}

// insertText are the text columns of insertEventsSQL, by position.
var insertText = [...]func(*store.Event) string{
	0: func(e *store.Event) string { return e.ID },
	1: func(e *store.Event) string { return e.SessionID },
	2: func(e *store.Event) string { return e.Runtime },
	3: func(e *store.Event) string { return e.Kind },
	4: func(e *store.Event) string { return e.Event },
	5: func(e *store.Event) string { return e.AgentID },
	7: func(e *store.Event) string { return e.ToolName },
	8: func(e *store.Event) string { return e.ToolUseID },
	9: func(e *store.Event) string { return e.PromptID },
}

// maxInsertBuf bounds the room the DB keeps for the next insert's
// parameters: after a burst of large batches it goes, not the memory.
const maxInsertBuf = 64 << 20

// insertArgs encodes the parameters of insertEventsSQL for events[keep]
// into the DB's buffer (callers hold db.mu): valid until the next insert.
func (db *DB) insertArgs(events []store.Event, keep []int) [][]byte {
	if cap(db.insertBuf) > maxInsertBuf {
		db.insertBuf = nil
	}
	w := arrayWriter{buf: db.insertBuf[:0]}
	var at [12][2]int
	for col := range at {
		switch col {
		case 6: // NULL when absent, "" when empty
			w.begin(byteaOID)
			for _, i := range keep {
				if t := events[i].AgentType; t != nil {
					w.str(*t)
				} else {
					w.null()
				}
			}
		case 10:
			w.begin(int8OID)
			for _, i := range keep {
				w.int8(sqlq.Nanos(events[i].Time))
			}
		case 11:
			w.begin(byteaOID)
			for _, i := range keep {
				w.bytes(events[i].Envelope)
			}
		default:
			w.begin(byteaOID)
			text := insertText[col]
			for _, i := range keep {
				w.str(text(&events[i]))
			}
		}
		at[col] = w.end()
	}
	db.insertBuf = w.buf
	params := make([][]byte, len(at))
	for i, a := range at {
		params[i] = w.buf[a[0]:a[1]]
	}
	return params
}

// checkOwners refuses (store.ErrNotOwner) a batch of sessions (ids, with
// repeats) one of which another user recorded, reading the owners in tx.
func checkOwners(ctx context.Context, tx pgx.Tx, user string, sessions [][]byte) error {
	rows, err := tx.Query(ctx, `SELECT id, user_name FROM sessions WHERE id = ANY($1::bytea[])`, sessions)
	if err != nil {
		return fmt.Errorf("cannot read the sessions' owners: %w", err)
	}
	owners := map[string]string{}
	for rows.Next() {
		var id, owner string
		if err := rows.Scan(str{&id}, str{&owner}); err != nil {
			rows.Close()
			return err
		}
		owners[id] = owner
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("cannot read the sessions' owners: %w", err)
	}
	return store.CheckOwners(user, owners)
}

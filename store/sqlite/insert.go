package sqlite

import (
	"context"
	"database/sql/driver"
	"fmt"
	"math/bits"
	"strings"
	"unsafe"

	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/internal/sqlq"
)

// chunkRows is the number of rows per multi-row INSERT. 12 parameters per row
// keeps a full chunk (2,400 parameters) far below SQLite's limit of 32,766,
// and measured on this machine larger statements are no faster.
const chunkRows = 200

// insertStmts are the writer's prepared statements, made on first use.
type insertStmts struct {
	chunk   wstmt // chunkRows rows
	session wstmt
	// pow2[k] inserts 1<<k rows. A batch's last part is written in pieces
	// of those sizes rather than by a statement of its own size: compiling
	// a statement of dozens of rows cost more than the rows (a collector
	// fed small batches commits one every few milliseconds).
	pow2 [pow2Sizes]wstmt
}

// pow2Sizes covers every part shorter than chunkRows.
const pow2Sizes = 8 // 1 … 128 rows

func (s *insertStmts) all() []*wstmt {
	out := []*wstmt{&s.chunk, &s.session}
	for k := range s.pow2 {
		out = append(out, &s.pow2[k])
	}
	return out
}

// sized returns the prepared statement for a part of n rows, the chunk or
// the largest power of two not above n, and the number of rows it inserts.
func (s *insertStmts) sized(n int) (wstmt, int) {
	if n >= chunkRows {
		return s.chunk, chunkRows
	}
	k := bits.Len(uint(n)) - 1
	return s.pow2[k], 1 << k
}

// prepareSized prepares the statements sized picks for a batch of n rows
// that are not prepared yet.
func (db *DB) prepareSized(tx *wtx, n int) error {
	for n %= chunkRows; n > 0; {
		k := bits.Len(uint(n)) - 1
		if db.stmts.pow2[k] == nil {
			st, err := tx.prepare(insertSQL(1 << k))
			if err != nil {
				return fmt.Errorf("cannot prepare the insert of %d rows: %w", 1<<k, err)
			}
			db.stmts.pow2[k] = st
		}
		n -= 1 << k
	}
	return nil
}

func insertSQL(rows int) string {
	var b strings.Builder
	b.WriteString(`INSERT OR IGNORE INTO events (id, session_id, runtime, kind, event, agent_id, agent_type, tool_name, tool_use_id, prompt_id, time, envelope) VALUES `)
	for i := range rows {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("(?,?,?,?,?,?,?,?,?,?,?,?)")
	}
	// OR IGNORE skips an id stored earlier. The id is the only constraint
	// a row can break (every NOT NULL column is bound a value), and with OR
	// IGNORE nothing can abort the statement half-way, so SQLite keeps no
	// statement journal for it: with ON CONFLICT (id) DO NOTHING it copied
	// every page the statement changed, ~4 % of the insert's CPU. Which
	// rows were stored, and their seq, is read from the statement's counts
	// (see seqs), not with RETURNING, which cost a fifth of the insert: a
	// table of the returned rows built in SQLite, then each row read back.
	return b.String()
}

// seqs sets the Seq of the events part (indexes into events) that the
// statement just run stored, and returns how many it stored. stored and
// last are the statement's changes() and last_insert_rowid(). seq is
// AUTOINCREMENT, so the statement gave its rows seqs above every seq
// stored before, in the order of its rows: when it stored every row, they
// are the stored-1 seqs before last, and last. Otherwise (a batch sent
// again, in part: rare) the ids of part are read back, and the stored ones
// are the stored rows with the highest seqs; a row ignored may have used a
// seq without keeping it, so they need not follow each other.
func seqs(tx *wtx, events []store.Event, part []int, stored, last int64) (int, error) {
	if stored == int64(len(part)) {
		for k, i := range part {
			events[i].Seq = last - stored + 1 + int64(k)
		}
		return len(part), nil
	}
	if stored == 0 {
		return 0, nil
	}
	ids := make([]any, len(part))
	at := make(map[string]int, len(part))
	for k, i := range part {
		ids[k] = events[i].ID
		at[events[i].ID] = i
	}
	n := 0
	err := tx.query(`SELECT seq, id FROM events WHERE id IN (?`+
		strings.Repeat(",?", len(part)-1)+`) ORDER BY seq DESC LIMIT ?`, append(ids, stored), func(row []driver.Value) error {
		seq, err := int64Of(row[0])
		if err != nil {
			return err
		}
		id, err := stringOf(row[1])
		if err != nil {
			return err
		}
		events[at[id]].Seq = seq
		n++
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("cannot read the seqs of a batch: %w", err)
	}
	if n != int(stored) {
		return 0, fmt.Errorf("cannot read the seqs of a batch: %d stored, %d found", stored, n)
	}
	return n, nil
}

// upsertSessionSQL merges a store.SessionDelta into the session's summary
// (sqlq.MergeSession).
const upsertSessionSQL = `
INSERT INTO sessions (id, runtime, host_name, user_name, cwd, transcript_path, first_event_at, last_event_at,
	event_count, last_seq)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
` + sqlq.MergeSession

// Insert implements store.Store. Everything happens in one IMMEDIATE
// transaction on the writer connection: the events in chunks of multi-row
// INSERTs, then one upsert per session touched.
func (db *DB) Insert(ctx context.Context, events []store.Event) (int, error) {
	return db.InsertOwned(ctx, "", events)
}

// InsertOwned implements store.OwnedInserter: the owners are read in the
// inserting transaction, which the writer connection runs alone. user ""
// checks nothing (Insert).
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
	// Repeats within the batch are dropped here, so that the statement only
	// meets ids stored by earlier batches; the first occurrence wins.
	seen := make(map[string]struct{}, len(events))
	todo := make([]int, 0, len(events))
	for i := range events {
		if _, dup := seen[events[i].ID]; !dup {
			seen[events[i].ID] = struct{}{}
			todo = append(todo, i)
		}
	}

	var inserted int
	err := db.w.tx(ctx, func(tx *wtx) (err error) {
		inserted, err = db.insertIn(tx, user, events, todo)
		return err
	})
	if err != nil {
		return 0, err
	}
	db.committed()
	return inserted, nil
}

// insertIn stores the events todo (indexes into events) in tx.
func (db *DB) insertIn(tx *wtx, user string, events []store.Event, todo []int) (int, error) {
	if err := db.prepare(tx); err != nil {
		return 0, err
	}
	if err := db.prepareSized(tx, len(todo)); err != nil {
		return 0, err
	}
	if user != "" {
		if err := checkOwners(tx, user, events); err != nil {
			return 0, err
		}
	}
	args := tx.argBuf()
	defer func() { tx.keepArgs(args) }()
	// A batch is mostly runs of one session's events: the columns that
	// repeat from row to row are boxed once per run (boxed).
	var session, runtime, kind, hook, agent, subagent, tool, prompt boxed[string]
	inserted := 0
	for rest := todo; len(rest) > 0; {
		stmt, n := db.stmts.sized(len(rest))
		part := rest[:n]
		rest = rest[n:]
		args = args[:0]
		for _, i := range part {
			e := &events[i]
			var agentType any // NULL when absent
			if e.AgentType != nil {
				agentType = subagent.of(*e.AgentType)
			}
			args = append(args, e.ID, session.of(e.SessionID), runtime.of(e.Runtime), kind.of(e.Kind), hook.of(e.Event),
				agent.of(e.AgentID), agentType, tool.of(e.ToolName), e.ToolUseID, prompt.of(e.PromptID), sqlq.Nanos(e.Time),
				boundText(e.Envelope))
		}
		res, err := tx.exec(stmt, args...)
		if err != nil {
			return 0, err
		}
		stored, err := res.RowsAffected()
		if err != nil {
			return 0, err
		}
		last, err := res.LastInsertId()
		if err != nil {
			return 0, err
		}
		got, err := seqs(tx, events, part, stored, last)
		if err != nil {
			return 0, err
		}
		inserted += got
	}

	if inserted > 0 {
		for _, d := range store.Summarize(events) {
			if _, err := tx.exec(db.stmts.session, d.ID, d.Runtime, d.Host, d.User, d.CWD, d.TranscriptPath,
				sqlq.Nanos(d.FirstEventAt), sqlq.Nanos(d.LastEventAt), d.Count, d.LastSeq); err != nil {
				return 0, fmt.Errorf("cannot update session %q: %w", d.ID, err)
			}
		}
	}
	return inserted, nil
}

// checkOwners refuses (store.ErrNotOwner) events of a session another user
// recorded, reading the owners in tx.
func checkOwners(tx *wtx, user string, events []store.Event) error {
	owners := map[string]string{}
	for i := range events {
		id := events[i].SessionID
		if _, ok := owners[id]; ok {
			continue
		}
		owner := user // a session not stored yet: this batch starts it
		err := tx.query(`SELECT user_name FROM sessions WHERE id = ?`, []any{id}, func(row []driver.Value) (err error) {
			owner, err = stringOf(row[0])
			return err
		})
		if err != nil {
			return fmt.Errorf("cannot read the owner of session %q: %w", id, err)
		}
		owners[id] = owner
	}
	return store.CheckOwners(user, owners)
}

func (db *DB) prepare(tx *wtx) error {
	if db.stmts.chunk != nil {
		return nil
	}
	chunk, err := tx.prepare(insertSQL(chunkRows))
	if err != nil {
		return fmt.Errorf("cannot prepare the insert: %w", err)
	}
	session, err := tx.prepare(upsertSessionSQL)
	if err != nil {
		chunk.Close()
		return fmt.Errorf("cannot prepare the session upsert: %w", err)
	}
	db.stmts = insertStmts{chunk: chunk, session: session}
	return nil
}

// boundText returns b as a string without copying it, for a parameter of a
// statement: the driver copies bound text into SQLite's memory as it binds
// (modernc.org/sqlite: libc.CString), so b need only stay unchanged until
// the statement has run, which the caller of Insert or PutModel guarantees
// by handing the batch over for the call. An envelope or a document is
// most of a row's bytes: a copy of each cost an allocation the size of the
// batch, which the garbage collector then paid for again.
func boundText(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}

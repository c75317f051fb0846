package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The two ways of inserting a batch of events that BenchmarkInsertWay
// compares, events only: the unnest statement Insert runs, and COPY into a
// staging table followed by the INSERT … SELECT that skips stored ids.

// InsertUnnestForTest runs Insert's statement on rows (the columns of
// insertEventsSQL, in order) in a transaction.
func (db *DB) InsertUnnestForTest(ctx context.Context, cols [][][]byte, times []int64) (int, error) {
	n := 0
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, insertEventsSQL, cols[0], cols[1], cols[2], cols[3], cols[4], cols[5], cols[6],
			cols[7], cols[8], cols[9], times, cols[10])
		n = int(tag.RowsAffected())
		return err
	})
	return n, err
}

// InsertCopyForTest inserts the same rows through COPY and a staging table.
func (db *DB) InsertCopyForTest(ctx context.Context, cols [][][]byte, times []int64) (int, error) {
	n := 0
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `CREATE TEMP TABLE IF NOT EXISTS stage (ord int, id bytea, session_id bytea, runtime bytea,
			kind bytea, event bytea, agent_id bytea, agent_type bytea, tool_name bytea, tool_use_id bytea, prompt_id bytea,
			time bigint, envelope bytea) ON COMMIT DELETE ROWS`); err != nil {
			return err
		}
		rows := make([][]any, len(times))
		for i := range rows {
			rows[i] = []any{int32(i), cols[0][i], cols[1][i], cols[2][i], cols[3][i], cols[4][i], cols[5][i], cols[6][i],
				cols[7][i], cols[8][i], cols[9][i], times[i], cols[10][i]}
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"stage"}, []string{"ord", "id", "session_id", "runtime", "kind", "event",
			"agent_id", "agent_type", "tool_name", "tool_use_id", "prompt_id", "time", "envelope"}, pgx.CopyFromRows(rows)); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `INSERT INTO events (id, session_id, runtime, kind, event, agent_id, agent_type, tool_name,
			tool_use_id, prompt_id, time, envelope)
			SELECT id, session_id, runtime, kind, event, agent_id, agent_type, tool_name, tool_use_id, prompt_id, time, envelope
			FROM stage ORDER BY ord ON CONFLICT (id) DO NOTHING`)
		n = int(tag.RowsAffected())
		return err
	})
	return n, err
}

// MigrateForTest brings the database at url to the migrations up to
// version: the database a hookwatch of that schema left.
func MigrateForTest(ctx context.Context, url string, version int) error {
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return err
	}
	defer pool.Close()
	_, _, err = migrateUpTo(ctx, pool, version)
	return err
}

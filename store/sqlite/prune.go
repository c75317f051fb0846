package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/internal/sqlq"
)

var (
	_ store.Retention = (*DB)(nil)
	_ store.Sizer     = (*DB)(nil)
)

// PruneSessions implements store.Retention, in one transaction on the
// writer connection.
func (db *DB) PruneSessions(ctx context.Context, before time.Time, limit int) (sessions, events int, err error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return 0, 0, ErrClosed
	}
	tx, err := db.w.conn.BeginTx(ctx, nil)
	if err != nil {
		return 0, 0, fmt.Errorf("cannot begin: %w", err)
	}
	defer tx.Rollback() // a no-op after Commit
	var ids []string
	q := sqlq.PruneCandidates(before, limit)
	rows, err := tx.QueryContext(ctx, q.SQL, q.Args...)
	if err != nil {
		return 0, 0, fmt.Errorf("cannot list the sessions to prune: %w", err)
	}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, 0, fmt.Errorf("cannot list the sessions to prune: %w", err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	dels := sqlq.PruneDeletes(ids, before, limit)
	for i, d := range dels {
		res, err := tx.ExecContext(ctx, d.SQL, d.Args...)
		if err != nil {
			return 0, 0, fmt.Errorf("cannot prune: %w", err)
		}
		if i == 0 || i == len(dels)-1 {
			n, _ := res.RowsAffected()
			events += int(n)
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, 0, fmt.Errorf("cannot commit the pruning: %w", err)
	}
	db.committed()
	return len(ids), events, nil
}

// Prunable implements store.Retention, on a reader: it holds no lock.
func (db *DB) Prunable(ctx context.Context, before time.Time) (sessions, events int, err error) {
	r, err := db.readerFor()
	if err != nil {
		return 0, 0, err
	}
	q := sqlq.Prunable(before)
	if err := r.QueryRowContext(ctx, q.SQL, q.Args...).Scan(&sessions, &events); err != nil {
		return 0, 0, fmt.Errorf("cannot count what would be pruned: %w", err)
	}
	return sessions, events, nil
}

// UsedBytes implements store.Sizer: the pages in use, not those on the
// free list, which SQLite reuses before it grows the file.
func (db *DB) UsedBytes(ctx context.Context) (int64, error) {
	r, err := db.readerFor()
	if err != nil {
		return 0, err
	}
	var pages, free, size int64
	for q, dst := range map[string]*int64{"PRAGMA page_count": &pages, "PRAGMA freelist_count": &free, "PRAGMA page_size": &size} {
		if err := r.QueryRowContext(ctx, q).Scan(dst); err != nil && err != sql.ErrNoRows {
			return 0, fmt.Errorf("cannot read the database size: %w", err)
		}
	}
	return (pages - free) * size, nil
}

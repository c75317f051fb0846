package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/internal/sqlq"
)

var _ store.Retention = (*DB)(nil)

// PostgreSQL is no store.Sizer: the space deleted rows free is reused
// after autovacuum but stays in the tables' files, so no cheap figure tells
// when a size cap is met. Its operator sizes it; hookwatch prunes by age.

// Prunable implements store.Retention.
func (db *DB) Prunable(ctx context.Context, before time.Time) (sessions, events int, err error) {
	p, err := db.open()
	if err != nil {
		return 0, 0, err
	}
	q := sqlq.Prunable(before)
	sql, args := bind(q.SQL, q.Args)
	if err := p.QueryRow(ctx, sql, args...).Scan(&sessions, &events); err != nil {
		return 0, 0, fmt.Errorf("cannot count what would be pruned: %w", err)
	}
	return sessions, events, nil
}

// PruneSessions implements store.Retention, in one transaction.
func (db *DB) PruneSessions(ctx context.Context, before time.Time, limit int) (sessions, events int, err error) {
	p, err := db.open()
	if err != nil {
		return 0, 0, err
	}
	err = pgx.BeginFunc(ctx, p, func(tx pgx.Tx) error {
		q := sqlq.PruneCandidates(before, limit)
		sql, args := bind(q.SQL, q.Args)
		rows, err := tx.Query(ctx, sql, args...)
		if err != nil {
			return err
		}
		var ids []string
		for rows.Next() {
			var id string
			if err := rows.Scan(str{&id}); err != nil {
				rows.Close()
				return err
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		dels := sqlq.PruneDeletes(ids, before, limit)
		for i, d := range dels {
			sql, args := bind(d.SQL, d.Args)
			tag, err := tx.Exec(ctx, sql, args...)
			if err != nil {
				return err
			}
			if i == 0 || i == len(dels)-1 {
				events += int(tag.RowsAffected())
			}
		}
		sessions = len(ids)
		return nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("cannot prune: %w", err)
	}
	return sessions, events, nil
}

package sqlite

import (
	"context"
	"time"

	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/internal/sqlq"
)

var _ store.TokenStore = (*DB)(nil)

func scanToken(r sqlq.Row) (store.Token, error) {
	var t store.Token
	var created, revoked int64
	err := r.Scan(&t.ID, &t.User, &t.Team, &t.Role, &t.Hash, &created, &revoked)
	t.CreatedAt = sqlq.Time(created)
	if revoked != 0 {
		t.RevokedAt = sqlq.Time(revoked)
	}
	return t, err
}

// CreateToken implements store.TokenStore.
func (db *DB) CreateToken(ctx context.Context, t store.Token) error {
	return sqlq.CreateToken(ctx, db.exec, t)
}

// RevokeToken implements store.TokenStore.
func (db *DB) RevokeToken(ctx context.Context, id string, at time.Time) error {
	return sqlq.RevokeToken(ctx, db.exec, id, at)
}

// exec runs a statement outside the writer's transactions, on its
// connection (sqlq.Exec).
func (db *DB) exec(ctx context.Context, q string, args ...any) (int64, error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return 0, ErrClosed
	}
	res, err := db.w.conn.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

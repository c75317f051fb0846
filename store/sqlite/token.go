package sqlite

import (
	"context"
	"fmt"
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
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return ErrClosed
	}
	res, err := db.w.conn.ExecContext(ctx, sqlq.CreateToken, t.ID, t.User, t.Team, t.Role, t.Hash, sqlq.Nanos(t.CreatedAt))
	if err != nil {
		return fmt.Errorf("cannot create token %q: %w", t.ID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("token %q: %w", t.ID, store.ErrExists)
	}
	return nil
}

// RevokeToken implements store.TokenStore.
func (db *DB) RevokeToken(ctx context.Context, id string, at time.Time) error {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return ErrClosed
	}
	res, err := db.w.conn.ExecContext(ctx, sqlq.RevokeToken, sqlq.Nanos(at), id)
	if err != nil {
		return fmt.Errorf("cannot revoke token %q: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n > 0 {
		return nil
	}
	var found int
	if err := db.w.conn.QueryRowContext(ctx, sqlq.RevokeTokenExists, id).Scan(&found); err != nil {
		return fmt.Errorf("cannot revoke token %q: %w", id, err)
	}
	if found == 0 {
		return fmt.Errorf("token %q: %w", id, store.ErrNotFound)
	}
	return nil
}

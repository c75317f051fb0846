package postgres

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
	err := r.Scan(str{&t.ID}, str{&t.User}, str{&t.Team}, str{&t.Role}, str{&t.Hash}, &created, &revoked)
	t.CreatedAt = sqlq.Time(created)
	if revoked != 0 {
		t.RevokedAt = sqlq.Time(revoked)
	}
	return t, err
}

// CreateToken implements store.TokenStore.
func (db *DB) CreateToken(ctx context.Context, t store.Token) error {
	p, err := db.open()
	if err != nil {
		return err
	}
	q, args := bind(sqlq.CreateToken, []any{t.ID, t.User, t.Team, t.Role, t.Hash, sqlq.Nanos(t.CreatedAt)})
	tag, err := p.Exec(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("cannot create token %q: %w", t.ID, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("token %q: %w", t.ID, store.ErrExists)
	}
	return nil
}

// RevokeToken implements store.TokenStore.
func (db *DB) RevokeToken(ctx context.Context, id string, at time.Time) error {
	p, err := db.open()
	if err != nil {
		return err
	}
	q, args := bind(sqlq.RevokeToken, []any{sqlq.Nanos(at), id})
	tag, err := p.Exec(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("cannot revoke token %q: %w", id, err)
	}
	if tag.RowsAffected() > 0 {
		return nil
	}
	var found int64
	q, args = bind(sqlq.RevokeTokenExists, []any{id})
	if err := p.QueryRow(ctx, q, args...).Scan(&found); err != nil {
		return fmt.Errorf("cannot revoke token %q: %w", id, err)
	}
	if found == 0 {
		return fmt.Errorf("token %q: %w", id, store.ErrNotFound)
	}
	return nil
}

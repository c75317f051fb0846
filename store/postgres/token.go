package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/internal/sqlq"
)

var _ store.TokenStore = (*DB)(nil)

func scanToken(r pgx.Row) (store.Token, error) {
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

// TokenByHash implements store.TokenStore.
func (db *DB) TokenByHash(ctx context.Context, hash string) (store.Token, error) {
	p, err := db.open()
	if err != nil {
		return store.Token{}, err
	}
	q, args := bind(sqlq.TokenByHash, []any{hash})
	t, err := scanToken(p.QueryRow(ctx, q, args...))
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Token{}, fmt.Errorf("token: %w", store.ErrNotFound)
	}
	if err != nil {
		return store.Token{}, fmt.Errorf("cannot read a token: %w", err)
	}
	return t, nil
}

// Tokens implements store.TokenStore.
func (db *DB) Tokens(ctx context.Context) ([]store.Token, error) {
	p, err := db.open()
	if err != nil {
		return nil, err
	}
	var out []store.Token
	err = queryRows(ctx, p, sqlq.Tokens, nil, func(rows pgx.Rows) error {
		t, err := scanToken(rows)
		out = append(out, t)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("cannot list tokens: %w", err)
	}
	return out, nil
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

// TeamUsers implements store.TokenStore.
func (db *DB) TeamUsers(ctx context.Context, team string) ([]string, error) {
	p, err := db.open()
	if err != nil {
		return nil, err
	}
	users := []string{}
	err = queryRows(ctx, p, sqlq.TeamUsers, []any{team}, func(rows pgx.Rows) error {
		var u string
		err := rows.Scan(str{&u})
		users = append(users, u)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("cannot list the users of team %q: %w", team, err)
	}
	return users, nil
}

package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/internal/sqlq"
)

var _ store.TokenStore = (*DB)(nil)

type rowScanner interface{ Scan(dest ...any) error }

func scanToken(r rowScanner) (store.Token, error) {
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

// TokenByHash implements store.TokenStore.
func (db *DB) TokenByHash(ctx context.Context, hash string) (store.Token, error) {
	r, err := db.readerFor()
	if err != nil {
		return store.Token{}, err
	}
	t, err := scanToken(r.QueryRowContext(ctx, sqlq.TokenByHash, hash))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Token{}, fmt.Errorf("token: %w", store.ErrNotFound)
	}
	if err != nil {
		return store.Token{}, fmt.Errorf("cannot read a token: %w", err)
	}
	return t, nil
}

// Tokens implements store.TokenStore.
func (db *DB) Tokens(ctx context.Context) ([]store.Token, error) {
	r, err := db.readerFor()
	if err != nil {
		return nil, err
	}
	var out []store.Token
	err = queryRows(ctx, r, sqlq.Tokens, nil, func(rows *sql.Rows) error {
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

// TeamUsers implements store.TokenStore.
func (db *DB) TeamUsers(ctx context.Context, team string) ([]string, error) {
	r, err := db.readerFor()
	if err != nil {
		return nil, err
	}
	users := []string{}
	err = queryRows(ctx, r, sqlq.TeamUsers, []any{team}, func(rows *sql.Rows) error {
		var u string
		err := rows.Scan(&u)
		users = append(users, u)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("cannot list the users of team %q: %w", team, err)
	}
	return users, nil
}

package sqlq

import (
	"context"
	"fmt"
	"time"

	"github.com/hookwatch/hookwatch/store"
)

// The queries and writes of store.TokenStore. Times are Unix nanoseconds;
// revoked_at is 0 for a valid token.

// TokenColumns are the columns of a token row, in store.Token's order.
const TokenColumns = `id, user_name, team, role, hash, created_at, revoked_at`

const (
	// TokenByHash selects the token of a hash, revoked or not.
	TokenByHash = `SELECT ` + TokenColumns + ` FROM tokens WHERE hash = ?`
	// Tokens selects every token.
	Tokens = `SELECT ` + TokenColumns + ` FROM tokens ORDER BY created_at, id`
	// TeamUsers selects the users of a team.
	TeamUsers = `SELECT DISTINCT user_name FROM tokens WHERE team = ? ORDER BY user_name`

	// createToken inserts a token unless its id or hash is stored.
	createToken = `INSERT INTO tokens (` + TokenColumns + `) VALUES (?, ?, ?, ?, ?, ?, 0) ON CONFLICT DO NOTHING`
	// revokeToken revokes the token of an id; one revoked already keeps
	// its time. Both backends count the row the WHERE matched as changed,
	// revoked before or not, so no changed row means no such token.
	revokeToken = `UPDATE tokens SET revoked_at = CASE WHEN revoked_at = 0 THEN ? ELSE revoked_at END WHERE id = ?`
)

// Exec runs one statement that writes, on a backend's database, and
// returns how many rows it changed.
type Exec func(ctx context.Context, query string, args ...any) (changed int64, err error)

// CreateToken implements store.TokenStore on a backend's exec.
func CreateToken(ctx context.Context, exec Exec, t store.Token) error {
	n, err := exec(ctx, createToken, t.ID, t.User, t.Team, t.Role, t.Hash, Nanos(t.CreatedAt))
	if err != nil {
		return fmt.Errorf("cannot create token %q: %w", t.ID, err)
	}
	if n == 0 {
		return fmt.Errorf("token %q: %w", t.ID, store.ErrExists)
	}
	return nil
}

// RevokeToken implements store.TokenStore on a backend's exec.
func RevokeToken(ctx context.Context, exec Exec, id string, at time.Time) error {
	n, err := exec(ctx, revokeToken, Nanos(at), id)
	if err != nil {
		return fmt.Errorf("cannot revoke token %q: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("token %q: %w", id, store.ErrNotFound)
	}
	return nil
}

package sqlq

// The queries of store.TokenStore. Times are Unix nanoseconds; revoked_at
// is 0 for a valid token.

// TokenColumns are the columns of a token row, in store.Token's order.
const TokenColumns = `id, user_name, team, role, hash, created_at, revoked_at`

const (
	// CreateToken inserts a token unless its id or hash is stored: a
	// statement that changed no row means store.ErrExists.
	CreateToken = `INSERT INTO tokens (` + TokenColumns + `) VALUES (?, ?, ?, ?, ?, ?, 0) ON CONFLICT DO NOTHING`
	// TokenByHash selects the valid token of a hash.
	TokenByHash = `SELECT ` + TokenColumns + ` FROM tokens WHERE hash = ? AND revoked_at = 0`
	// Tokens selects every token.
	Tokens = `SELECT ` + TokenColumns + ` FROM tokens ORDER BY created_at, id`
	// RevokeToken revokes a valid token; RevokeTokenExists tells an
	// unknown id from a token revoked already.
	RevokeToken       = `UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at = 0`
	RevokeTokenExists = `SELECT count(*) FROM tokens WHERE id = ?`
	// TeamUsers selects the users of a team.
	TeamUsers = `SELECT DISTINCT user_name FROM tokens WHERE team = ? ORDER BY user_name`
)

package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// Roles of a token: what its holder may read. Every role may send events,
// which are recorded as the token's user.
const (
	// RoleUser sees the sessions its user recorded.
	RoleUser = "user"
	// RoleTeam sees the sessions of every user of its team.
	RoleTeam = "team"
	// RoleAdmin sees everything, the metrics included.
	RoleAdmin = "admin"
)

// ValidRole reports whether role is one of RoleUser, RoleTeam, RoleAdmin.
func ValidRole(role string) bool {
	return role == RoleUser || role == RoleTeam || role == RoleAdmin
}

// ErrExists is returned by CreateToken for an ID or a hash already stored.
var ErrExists = errors.New("already exists")

// Token is an access token as the store keeps it: never its secret, only
// the SHA-256 of it (Hash), which is safe to keep because the secret is a
// high-entropy random string, not a password.
type Token struct {
	// ID names the token in listings and in `hookwatch token revoke`; it is
	// public, unlike the secret.
	ID string `json:"id"`
	// User is who the token's holder is: the events sent with it are
	// recorded as this user's, whatever they claim.
	User string `json:"user"`
	// Team is the team User belongs to, "" for none; a RoleTeam token sees
	// the sessions of every user that has a token of its team.
	Team string `json:"team,omitempty"`
	Role string `json:"role"`
	// Hash is the lowercase hex SHA-256 of the secret.
	Hash      string    `json:"-"`
	CreatedAt time.Time `json:"created_at"`
	// RevokedAt is zero while the token is valid.
	RevokedAt time.Time `json:"revoked_at,omitzero"`
}

// ErrRevoked is wrapped, beside ErrNotFound, by TokenStore.TokenByHash's
// error for a token that was revoked.
var ErrRevoked = errors.New("revoked")

// TokenStore keeps access tokens. Implementations are safe for concurrent
// use; store/storetest.RunTokenStore pins the contract down.
type TokenStore interface {
	// CreateToken stores t. It returns an error wrapping ErrExists when a
	// token with its ID or its Hash is stored already, revoked or not.
	CreateToken(ctx context.Context, t Token) error

	// TokenByHash returns the token whose Hash is hash and which is not
	// revoked, or ErrNotFound. For a revoked one it returns the token
	// (RevokedAt says when) and an error wrapping both ErrNotFound and
	// ErrRevoked: not found among the valid ones, which is all most
	// callers ask, and revoked, for a refusal that says so.
	TokenByHash(ctx context.Context, hash string) (Token, error)

	// Tokens returns every token, revoked ones included, by CreatedAt then
	// ID.
	Tokens(ctx context.Context) ([]Token, error)

	// RevokeToken revokes the token id at the time at; a token revoked
	// already keeps its first time. It returns ErrNotFound for an unknown
	// id.
	RevokeToken(ctx context.Context, id string, at time.Time) error

	// TeamUsers returns, sorted, the distinct users of the tokens of team,
	// revoked ones included: what a user recorded while in the team stays
	// the team's.
	TeamUsers(ctx context.Context, team string) ([]string, error)
}

// ErrNotOwner is returned (wrapped) by OwnedInserter.InsertOwned when a
// session of the batch belongs to another user.
var ErrNotOwner = errors.New("the session belongs to another user")

// OwnedInserter is an EventLog that inserts a user's batch only into that
// user's sessions, checking the owners in the transaction that inserts:
// of two users' first batches for one new session id, however close, one
// is stored and starts the session, the other is refused whole. Both
// backends implement it; storetest.RunOwnedInsert pins the contract down.
type OwnedInserter interface {
	// InsertOwned is Insert for events sent by user (not ""): when a
	// session of events is stored already with another Session.User, it
	// stores nothing and returns an error wrapping ErrNotOwner.
	InsertOwned(ctx context.Context, user string, events []Event) (int, error)
}

// CheckOwners returns an error wrapping ErrNotOwner when a session of
// owners (session id → its stored Session.User) is not user's. Backends
// call it with the owners they read in the inserting transaction.
func CheckOwners(user string, owners map[string]string) error {
	for id, u := range owners {
		if u != user {
			return fmt.Errorf("session %q: %w", id, ErrNotOwner)
		}
	}
	return nil
}

// TokenPrefix starts every token secret, so that a secret scanner (and a
// person) can tell one in a file or a log.
const TokenPrefix = "hwt_"

// HashToken returns the Hash of a token whose secret is secret.
func HashToken(secret string) string {
	h := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(h[:])
}

// NewToken makes a token for user: a random ID, and a secret of 256 random
// bits that it returns apart, since the store keeps only its hash.
func NewToken(user, team, role string, now time.Time) (t Token, secret string) {
	id := make([]byte, 6)
	key := make([]byte, 32)
	rand.Read(id) // never fails (crypto/rand)
	rand.Read(key)
	secret = TokenPrefix + hex.EncodeToString(key)
	return Token{ID: hex.EncodeToString(id), User: user, Team: team, Role: role, Hash: HashToken(secret), CreatedAt: now.UTC()}, secret
}

-- Access tokens (store.TokenStore): the SHA-256 of each secret, never the
-- secret. revoked_at is 0 while the token is valid.
CREATE TABLE tokens (
	id         TEXT    PRIMARY KEY,
	user_name  TEXT    NOT NULL,
	team       TEXT    NOT NULL DEFAULT '',
	role       TEXT    NOT NULL,
	hash       TEXT    NOT NULL UNIQUE,
	created_at INTEGER NOT NULL,
	revoked_at INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX tokens_team ON tokens (team, user_name);

-- A user's sessions, most recent first: the session list of a user's token.
CREATE INDEX sessions_user_recent ON sessions (user_name, last_event_at, id);

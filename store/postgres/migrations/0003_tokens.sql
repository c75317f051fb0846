-- Access tokens (store.TokenStore), as store/sqlite's 0007_tokens.sql.
CREATE TABLE tokens (
	id         bytea  PRIMARY KEY,
	user_name  bytea  NOT NULL,
	team       bytea  NOT NULL DEFAULT '',
	role       bytea  NOT NULL,
	hash       bytea  NOT NULL UNIQUE,
	created_at bigint NOT NULL,
	revoked_at bigint NOT NULL DEFAULT 0
);
CREATE INDEX tokens_team ON tokens (team, user_name);

CREATE INDEX sessions_user_recent ON sessions (user_name, last_event_at, id);

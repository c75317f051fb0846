-- What the collector derives from a session's events (agents, tool calls,
-- lineage), kept beside them and rebuilt when they change. seq is the
-- largest event seq the derivation saw: the row is stale while it is below
-- sessions.last_seq. The JSON documents are opaque to the store.
CREATE TABLE derived (
	session_id     TEXT    PRIMARY KEY,
	group_key      TEXT    NOT NULL,
	seq            INTEGER NOT NULL,
	first_event_at INTEGER NOT NULL, -- Unix nanoseconds
	last_event_at  INTEGER NOT NULL,
	alias_of       TEXT    NOT NULL DEFAULT '',
	summary        TEXT,
	agents         TEXT,
	tool_calls     TEXT
);

-- The sessions of a group active around a time, most recent first.
CREATE INDEX derived_group ON derived (group_key, last_event_at);

-- Which session a subagent belongs to, for the virtual session
-- sub--<agent_id>.
CREATE TABLE derived_agents (
	agent_id   TEXT NOT NULL,
	session_id TEXT NOT NULL,
	PRIMARY KEY (agent_id, session_id)
) WITHOUT ROWID;

CREATE INDEX derived_agents_session ON derived_agents (session_id);

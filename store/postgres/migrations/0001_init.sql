-- The schema of store/sqlite's migrations up to 0005, in PostgreSQL's terms.
--
-- Every string is bytea, not text: payloads are hostile, and text refuses
-- NUL and invalid UTF-8, which a payload may carry in an id or a tool name
-- once decoded. bytea also orders byte by byte whatever the database's
-- collation, which is the order the store contract (and SQLite) pins down.
-- Times are Unix nanoseconds, as in SQLite.

-- Events are append-only: seq is the ingest order and the cursor of every
-- listing and of the live stream. Inserts take an advisory lock for the
-- length of their transaction (store/postgres/insert.go), so events commit
-- in seq order even from several collectors: a reader that has seen seq n
-- never later meets a smaller seq.
CREATE TABLE events (
	seq         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	id          bytea  NOT NULL,
	session_id  bytea  NOT NULL,
	runtime     bytea  NOT NULL,
	kind        bytea  NOT NULL,
	event       bytea  NOT NULL,
	agent_id    bytea  NOT NULL,
	agent_type  bytea,           -- NULL: absent; '': the compaction agent
	tool_name   bytea  NOT NULL,
	tool_use_id bytea  NOT NULL,
	prompt_id   bytea  NOT NULL,
	time        bigint NOT NULL, -- received_at
	envelope    bytea  NOT NULL
);

-- Idempotent ingest: one row per envelope id, whichever collector got it.
CREATE UNIQUE INDEX events_id ON events (id);
-- A session's timeline in seq order, the filter columns riding along.
CREATE INDEX events_session ON events (session_id, seq) INCLUDE (agent_id, event, tool_name);

-- One summary row per session, maintained by every insert.
CREATE TABLE sessions (
	id              bytea  PRIMARY KEY,
	runtime         bytea  NOT NULL DEFAULT '',
	host_name       bytea  NOT NULL DEFAULT '',
	user_name       bytea  NOT NULL DEFAULT '',
	cwd             bytea  NOT NULL DEFAULT '',
	transcript_path bytea  NOT NULL DEFAULT '',
	first_event_at  bigint NOT NULL,
	last_event_at   bigint NOT NULL,
	event_count     bigint NOT NULL DEFAULT 0,
	last_seq        bigint NOT NULL DEFAULT 0
);

CREATE INDEX sessions_recent ON sessions (last_event_at, id);
CREATE INDEX sessions_runtime_recent ON sessions (runtime, last_event_at, id);

-- The session model as rows (see store/sqlite/migrations/0003_model.sql):
-- the doc and summary columns are JSON documents the store never reads.
CREATE TABLE model_sessions (
	session_id     bytea  PRIMARY KEY,
	group_key      bytea  NOT NULL,
	seq            bigint NOT NULL, -- largest event seq the model saw
	updated_seq    bigint NOT NULL,
	first_event_at bigint NOT NULL,
	last_event_at  bigint NOT NULL,
	alias_of       bytea  NOT NULL DEFAULT '',
	summary        bytea
);

CREATE INDEX model_sessions_group ON model_sessions (group_key, last_event_at);
CREATE INDEX model_sessions_changed ON model_sessions (updated_seq, session_id);

CREATE TABLE model_agents (
	session_id      bytea   NOT NULL,
	agent_id        bytea   NOT NULL, -- '': the main agent
	parent_agent_id bytea,            -- NULL for the main agent
	depth           integer NOT NULL,
	started_at      bigint  NOT NULL,
	updated_seq     bigint  NOT NULL,
	doc             bytea,
	PRIMARY KEY (session_id, agent_id)
);

-- A session's agents, the main agent first, then in start order.
CREATE INDEX model_agents_start ON model_agents (session_id, (agent_id <> ''), started_at, agent_id);
-- Which session a subagent belongs to (the virtual session sub--<agent_id>).
CREATE INDEX model_agents_agent ON model_agents (agent_id, session_id);

CREATE TABLE model_tool_calls (
	session_id  bytea  NOT NULL,
	tool_use_id bytea  NOT NULL,
	agent_id    bytea  NOT NULL,
	tool_name   bytea  NOT NULL,
	status      bytea  NOT NULL,
	started_at  bigint NOT NULL,
	updated_seq bigint NOT NULL,
	doc         bytea,
	PRIMARY KEY (session_id, tool_use_id)
);

CREATE INDEX model_tool_calls_start ON model_tool_calls (session_id, started_at, tool_use_id) INCLUDE (agent_id, tool_name);
CREATE INDEX model_tool_calls_agent ON model_tool_calls (session_id, agent_id, started_at, tool_use_id);
CREATE INDEX model_tool_calls_tool ON model_tool_calls (session_id, tool_name, started_at, tool_use_id);
CREATE INDEX model_tool_calls_status ON model_tool_calls (session_id, status, started_at, tool_use_id);
CREATE INDEX model_tool_calls_session_changed ON model_tool_calls (session_id, updated_seq, tool_use_id);

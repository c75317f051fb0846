-- The session model as rows, written by the package that computes it and
-- paged here: one row per session, per agent and per tool call. The doc
-- columns are JSON documents the store never reads; the columns beside them
-- are what the listings filter and order on. updated_seq is the model
-- position of a row's latest change, increasing with every write of the
-- model: the live stream resumes on it. Times are Unix nanoseconds.
CREATE TABLE model_sessions (
	session_id     TEXT    PRIMARY KEY,
	group_key      TEXT    NOT NULL,
	seq            INTEGER NOT NULL, -- largest event seq the model saw
	updated_seq    INTEGER NOT NULL,
	first_event_at INTEGER NOT NULL,
	last_event_at  INTEGER NOT NULL,
	alias_of       TEXT    NOT NULL DEFAULT '',
	summary        TEXT
);

-- The sessions of a lineage group active around a time, most recent first.
CREATE INDEX model_sessions_group ON model_sessions (group_key, last_event_at);
CREATE INDEX model_sessions_changed ON model_sessions (updated_seq, session_id);

CREATE TABLE model_agents (
	session_id      TEXT    NOT NULL,
	agent_id        TEXT    NOT NULL, -- '': the main agent
	parent_agent_id TEXT,             -- NULL for the main agent
	depth           INTEGER NOT NULL,
	started_at      INTEGER NOT NULL,
	updated_seq     INTEGER NOT NULL,
	doc             TEXT,
	PRIMARY KEY (session_id, agent_id)
);

-- A session's agents, the main agent first, then in start order.
CREATE INDEX model_agents_start ON model_agents (session_id, agent_id <> '', started_at, agent_id);
-- Which session a subagent belongs to (the virtual session sub--<agent_id>).
CREATE INDEX model_agents_agent ON model_agents (agent_id, session_id);
-- Agents changed after a seq are read per session (a session's stream),
-- through model_agents_start: a session has few agents. Every index costs
-- each write, and updated_seq changes on every write.

CREATE TABLE model_tool_calls (
	session_id  TEXT    NOT NULL,
	tool_use_id TEXT    NOT NULL,
	agent_id    TEXT    NOT NULL,
	tool_name   TEXT    NOT NULL,
	status      TEXT    NOT NULL,
	started_at  INTEGER NOT NULL,
	updated_seq INTEGER NOT NULL,
	doc         TEXT,
	PRIMARY KEY (session_id, tool_use_id)
);

-- A session's calls in start order. The agent and tool columns ride along so
-- that a combination of filters is decided inside the index; the narrower
-- indexes below serve a filter that keeps few of a large session's calls.
-- status stays out: it changes when a call ends, and every index holding a
-- column the writer updates is rewritten (see store/sqlite/model.go).
CREATE INDEX model_tool_calls_start ON model_tool_calls (session_id, started_at, tool_use_id, agent_id, tool_name);
CREATE INDEX model_tool_calls_agent ON model_tool_calls (session_id, agent_id, started_at, tool_use_id);
CREATE INDEX model_tool_calls_tool ON model_tool_calls (session_id, tool_name, started_at, tool_use_id);
CREATE INDEX model_tool_calls_status ON model_tool_calls (session_id, status, started_at, tool_use_id);
-- Calls changed after a seq, of one session (a session's stream). Of
-- every session at once (no SessionID) they are found by a scan: the live
-- stream of the session list reads sessions, not calls, and an index here
-- would cost every write.
CREATE INDEX model_tool_calls_session_changed ON model_tool_calls (session_id, updated_seq, tool_use_id);

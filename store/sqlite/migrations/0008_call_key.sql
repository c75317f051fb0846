-- A tool call's row is keyed by its session, start and tool use id
-- (store.ToolCallRow.StartedAt), no longer by its session and tool use id:
-- the real clients' ids are random, and a key by them wrote a page of the
-- key's index for each new call, more of them the larger the session. A key
-- that grows with time writes a round's new calls at its end, together.
-- Every stored row keeps its start, so the rows move over as they are.
CREATE TABLE model_tool_calls_by_start (
	session_id  TEXT    NOT NULL,
	tool_use_id TEXT    NOT NULL,
	agent_id    TEXT    NOT NULL,
	tool_name   TEXT    NOT NULL,
	status      TEXT    NOT NULL,
	started_at  INTEGER NOT NULL,
	updated_seq INTEGER NOT NULL,
	doc         TEXT,
	subtype     TEXT    NOT NULL DEFAULT '',
	effect      TEXT    NOT NULL DEFAULT '',
	PRIMARY KEY (session_id, started_at, tool_use_id)
);
INSERT INTO model_tool_calls_by_start
	(session_id, tool_use_id, agent_id, tool_name, status, started_at, updated_seq, doc, subtype, effect)
	SELECT session_id, tool_use_id, agent_id, tool_name, status, started_at, updated_seq, doc, subtype, effect
	FROM model_tool_calls;
DROP TABLE model_tool_calls;
ALTER TABLE model_tool_calls_by_start RENAME TO model_tool_calls;

-- The indexes of 0003_model.sql. The key's index lists a session's calls in
-- start order too, but the index by start keeps its agent and tool beside
-- it: a listing of several agents' calls (a subtree) or of one agent's
-- calls of one tool decides which calls match inside the index rather than
-- reading each call's row.
CREATE INDEX model_tool_calls_start ON model_tool_calls (session_id, started_at, tool_use_id, agent_id, tool_name);
CREATE INDEX model_tool_calls_agent ON model_tool_calls (session_id, agent_id, started_at, tool_use_id);
CREATE INDEX model_tool_calls_tool ON model_tool_calls (session_id, tool_name, started_at, tool_use_id);
CREATE INDEX model_tool_calls_status ON model_tool_calls (session_id, status, started_at, tool_use_id);
CREATE INDEX model_tool_calls_session_changed ON model_tool_calls (session_id, updated_seq, tool_use_id);

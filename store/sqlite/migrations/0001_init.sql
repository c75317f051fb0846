-- Events are append-only: seq is the ingest order and the cursor of every
-- listing and of the live stream. AUTOINCREMENT keeps a seq from ever being
-- reused, even after the newest rows are deleted by a future retention job,
-- so a client's Last-Event-ID never skips a new event.
CREATE TABLE events (
	seq         INTEGER PRIMARY KEY AUTOINCREMENT,
	id          TEXT    NOT NULL,
	session_id  TEXT    NOT NULL,
	runtime     TEXT    NOT NULL,
	kind        TEXT    NOT NULL,
	event       TEXT    NOT NULL,
	agent_id    TEXT    NOT NULL,
	agent_type  TEXT,             -- NULL: absent; '': the compaction agent
	tool_name   TEXT    NOT NULL,
	tool_use_id TEXT    NOT NULL,
	prompt_id   TEXT    NOT NULL,
	time        INTEGER NOT NULL, -- received_at, Unix nanoseconds
	envelope    TEXT    NOT NULL
);

-- Idempotent ingest: one row per envelope id.
CREATE UNIQUE INDEX events_id ON events (id);
-- A session's timeline in seq order. The filter columns ride along so that
-- an agent, event or tool filter is decided inside the index, and only the
-- rows that match are read; one wider index costs ingest far less than one
-- index per filter.
CREATE INDEX events_session ON events (session_id, seq, agent_id, event, tool_name);

-- One summary row per session, maintained by every insert.
CREATE TABLE sessions (
	id              TEXT    PRIMARY KEY,
	runtime         TEXT    NOT NULL DEFAULT '',
	host_name       TEXT    NOT NULL DEFAULT '',
	user_name       TEXT    NOT NULL DEFAULT '',
	cwd             TEXT    NOT NULL DEFAULT '',
	transcript_path TEXT    NOT NULL DEFAULT '',
	model           TEXT    NOT NULL DEFAULT '',
	permission_mode TEXT    NOT NULL DEFAULT '',
	title           TEXT    NOT NULL DEFAULT '',
	source          TEXT    NOT NULL DEFAULT '',
	first_event_at  INTEGER NOT NULL,
	last_event_at   INTEGER NOT NULL,
	started_at      INTEGER,          -- latest SessionStart
	ended_at        INTEGER,          -- latest SessionEnd
	end_reason      TEXT    NOT NULL DEFAULT '',
	event_count     INTEGER NOT NULL DEFAULT 0,
	last_seq        INTEGER NOT NULL DEFAULT 0
);

CREATE INDEX sessions_recent ON sessions (last_event_at, id);
CREATE INDEX sessions_runtime_recent ON sessions (runtime, last_event_at, id);

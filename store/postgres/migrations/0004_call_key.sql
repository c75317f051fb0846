-- A tool call's row is keyed by its session, start and tool use id
-- (store.ToolCallRow.StartedAt), as store/sqlite's 0008_call_key.sql: the
-- real clients' ids are random, and a key by them wrote a page of the key's
-- index for each new call. The key's index, with the agent and the tool
-- beside it, is the index model_tool_calls_start was, which goes.
ALTER TABLE model_tool_calls DROP CONSTRAINT model_tool_calls_pkey;
ALTER TABLE model_tool_calls ADD PRIMARY KEY (session_id, started_at, tool_use_id) INCLUDE (agent_id, tool_name);
DROP INDEX model_tool_calls_start;

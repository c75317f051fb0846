-- The session list filters by project (store.SessionFilter.Project): the
-- project the model names is a column of each session's model row, and
-- indexed. Every stored model is made older than its events, so that the
-- collector derives each again when it starts (StaleModels), which fills
-- the column; until then those sessions are in no project.
ALTER TABLE model_sessions ADD COLUMN project TEXT NOT NULL DEFAULT '';
CREATE INDEX model_sessions_project ON model_sessions (project, session_id);
UPDATE model_sessions SET seq = 0;

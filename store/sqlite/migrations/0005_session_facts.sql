-- What a session is (title, model, permission mode, start source, end) is
-- the session model's, computed whatever the order events arrive in; the
-- event log keeps only where a session's events come from and how many.
ALTER TABLE sessions DROP COLUMN model;
ALTER TABLE sessions DROP COLUMN permission_mode;
ALTER TABLE sessions DROP COLUMN title;
ALTER TABLE sessions DROP COLUMN source;
ALTER TABLE sessions DROP COLUMN started_at;
ALTER TABLE sessions DROP COLUMN ended_at;
ALTER TABLE sessions DROP COLUMN end_reason;

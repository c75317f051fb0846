-- The model gained what a session's calls came to per tool (its summary's
-- tools) and which calls failed (a call's failed): every stored model is
-- made older than its events, so that the collector derives each again
-- from the event log when it starts (StaleModels), as after a crash. Until
-- then the old models are served as they are.
UPDATE model_sessions SET seq = 0;

-- Each session's model names the version of the derivation that computed
-- it (attribution.ModelVersion): the collector derives again, when it
-- starts, every model of an older version (StaleModels), as after a crash,
-- with no migration for each change to what is derived. The models stored
-- before are of version 0, older than any: among them those whose
-- subagents' virtual session ids do not name the session yet.
ALTER TABLE model_sessions ADD COLUMN version integer NOT NULL DEFAULT 0;

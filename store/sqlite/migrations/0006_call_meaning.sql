-- A tool call's meaning (package classify): its subtype (run_test,
-- modify_file …) and effect (read_only … destructive), beside its doc so
-- that a session's calls can be listed by them. Calls stored before this
-- migration read '' until their session's model is written again.
ALTER TABLE model_tool_calls ADD COLUMN subtype TEXT NOT NULL DEFAULT '';
ALTER TABLE model_tool_calls ADD COLUMN effect TEXT NOT NULL DEFAULT '';

-- The model records what reported each call's start and end, each agent's
-- start and stop and each prompt (hooks, transcripts, rollouts), which the
-- events list reads to tell a copy: every stored model is made older than
-- its events, so that the collector derives each again from the event log
-- when it starts (StaleModels), as after a crash. Until then the old
-- models are served as they are, and their events unmarked.
UPDATE model_sessions SET seq = 0;

-- The analysis of shell commands changed what a call means (its effect,
-- subtype and files: what cannot be known counts as the worst, awk's and
-- sed's programs are read, …): every stored model is made older than its
-- events, so that the collector derives each again from the event log when
-- it starts (StaleModels), as after a crash. Until then the old models are
-- served as they are.
UPDATE model_sessions SET seq = 0;

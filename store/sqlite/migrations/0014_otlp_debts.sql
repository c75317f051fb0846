-- The sessions whose spans collectors owe the OTLP receiver
-- (store.OTLPDebtStore): a record per session and exporter that owes it,
-- so that whichever collector exports sends what another owed. Times are
-- Unix nanoseconds; touched is when the record was last written.
CREATE TABLE otlp_debts (
	session_id TEXT    NOT NULL,
	owner      TEXT    NOT NULL,
	since      INTEGER NOT NULL,
	touched    INTEGER NOT NULL,
	PRIMARY KEY (session_id, owner)
);
CREATE INDEX otlp_debts_since ON otlp_debts (since, session_id, owner);

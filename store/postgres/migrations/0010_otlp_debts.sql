-- The sessions whose spans collectors owe the OTLP receiver
-- (store.OTLPDebtStore), as store/sqlite's 0014_otlp_debts.sql.
CREATE TABLE otlp_debts (
	session_id bytea  NOT NULL,
	owner      bytea  NOT NULL,
	since      bigint NOT NULL,
	touched    bigint NOT NULL,
	PRIMARY KEY (session_id, owner)
);
CREATE INDEX otlp_debts_since ON otlp_debts (since, session_id, owner);

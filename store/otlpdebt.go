package store

import (
	"context"
	"time"
)

// OTLPDebt is one collector's record of a session whose spans it owes the
// OTLP receiver: spans queued and not delivered yet, or not delivered at
// all (export/otlp). Only the session is kept, not its spans: they are made
// again from the model's rows when they are sent.
type OTLPDebt struct {
	SessionID string
	// Owner names the exporter that recorded it (each process a name of
	// its own): an exporter takes its own records off as their spans are
	// delivered, whatever the others record of the same session.
	Owner string
	// Since is when the spans were first owed; Touched when the record
	// was last written, which PaidOTLP compares to take off only a record
	// unchanged since it was read.
	Since, Touched time.Time
}

// OTLPDebtStore keeps the sessions whose spans collectors owe the OTLP
// receiver where every collector on the database reads them: on a team
// server, what the collector that stopped owed, the others send. Both
// backends implement it; storetest.RunOTLPDebts pins the contract down.
// Times are kept to the nanosecond.
type OTLPDebtStore interface {
	// OweOTLP records sessions (id → since when owed) as owner's, touched
	// at at. A session owner recorded already keeps the earlier Since.
	OweOTLP(ctx context.Context, owner string, sessions map[string]time.Time, at time.Time) error

	// ClearOTLP takes owner's records of sessions ids off; ids it has no
	// record of are no error.
	ClearOTLP(ctx context.Context, owner string, ids []string) error

	// PaidOTLP takes off each of debts (as OTLPDebts returned them) that
	// is still as it was read: a record written again since (the same
	// Owner and SessionID, another Touched) stays, as its owner owes spans
	// the sending that paid the others may not have carried.
	PaidOTLP(ctx context.Context, debts []OTLPDebt) error

	// OTLPDebts returns up to limit records, every owner's, the longest
	// owed first (Since, then SessionID, then Owner).
	OTLPDebts(ctx context.Context, limit int) ([]OTLPDebt, error)
}

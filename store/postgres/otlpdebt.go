package postgres

import (
	"context"
	"time"

	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/internal/sqlq"
)

var _ store.OTLPDebtStore = (*DB)(nil)

func scanOTLPDebt(r sqlq.Row) (store.OTLPDebt, error) {
	var d store.OTLPDebt
	var since, touched int64
	err := r.Scan(str{&d.SessionID}, str{&d.Owner}, &since, &touched)
	d.Since, d.Touched = sqlq.Time(since), sqlq.Time(touched)
	return d, err
}

// OweOTLP implements store.OTLPDebtStore.
func (db *DB) OweOTLP(ctx context.Context, owner string, sessions map[string]time.Time, at time.Time) error {
	return sqlq.OweOTLP(ctx, db.exec, owner, sessions, at)
}

// ClearOTLP implements store.OTLPDebtStore.
func (db *DB) ClearOTLP(ctx context.Context, owner string, ids []string) error {
	return sqlq.ClearOTLP(ctx, db.exec, owner, ids)
}

// PaidOTLP implements store.OTLPDebtStore.
func (db *DB) PaidOTLP(ctx context.Context, debts []store.OTLPDebt) error {
	return sqlq.PaidOTLP(ctx, db.exec, debts)
}

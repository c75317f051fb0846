package sqlq

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/hookwatch/hookwatch/store"
)

// The queries and writes of store.OTLPDebtStore, on the table otlp_debts.
// Times are Unix nanoseconds.

// OTLPDebtColumns are the columns of a debt, in store.OTLPDebt's order.
const OTLPDebtColumns = `session_id, owner, since, touched`

// otlpDebtChunk is the most records one statement writes.
const otlpDebtChunk = 200

// OweOTLP implements store.OTLPDebtStore on a backend's exec.
func OweOTLP(ctx context.Context, exec Exec, owner string, sessions map[string]time.Time, at time.Time) error {
	ids := slices.Sorted(maps.Keys(sessions)) // one order: two writers lock rows alike
	for c := range slices.Chunk(ids, otlpDebtChunk) {
		args := make([]any, 0, 4*len(c))
		for _, id := range c {
			args = append(args, id, owner, Nanos(sessions[id]), Nanos(at))
		}
		q := `INSERT INTO otlp_debts (` + OTLPDebtColumns + `) VALUES ` + placeholders(len(c), 4) +
			` ON CONFLICT (session_id, owner) DO UPDATE SET touched = excluded.touched,` +
			` since = CASE WHEN excluded.since < otlp_debts.since THEN excluded.since ELSE otlp_debts.since END`
		if _, err := exec(ctx, q, args...); err != nil {
			return fmt.Errorf("cannot record the sessions owed to the OTLP receiver: %w", err)
		}
	}
	return nil
}

// ClearOTLP implements store.OTLPDebtStore on a backend's exec.
func ClearOTLP(ctx context.Context, exec Exec, owner string, ids []string) error {
	for c := range slices.Chunk(ids, otlpDebtChunk) {
		args := make([]any, 0, 1+len(c))
		args = append(args, owner)
		for _, id := range c {
			args = append(args, id)
		}
		q := `DELETE FROM otlp_debts WHERE owner = ? AND session_id IN (` + strings.TrimSuffix(strings.Repeat("?, ", len(c)), ", ") + `)`
		if _, err := exec(ctx, q, args...); err != nil {
			return fmt.Errorf("cannot take sessions off those owed to the OTLP receiver: %w", err)
		}
	}
	return nil
}

// PaidOTLP implements store.OTLPDebtStore on a backend's exec.
func PaidOTLP(ctx context.Context, exec Exec, debts []store.OTLPDebt) error {
	for c := range slices.Chunk(debts, otlpDebtChunk) {
		args := make([]any, 0, 3*len(c))
		conds := make([]string, 0, len(c))
		for _, d := range c {
			args = append(args, d.SessionID, d.Owner, Nanos(d.Touched))
			conds = append(conds, `(session_id = ? AND owner = ? AND touched = ?)`)
		}
		q := `DELETE FROM otlp_debts WHERE ` + strings.Join(conds, ` OR `)
		if _, err := exec(ctx, q, args...); err != nil {
			return fmt.Errorf("cannot take sessions paid off those owed to the OTLP receiver: %w", err)
		}
	}
	return nil
}

// placeholders returns n groups of k placeholders: (?, ?), (?, ?).
func placeholders(n, k int) string {
	group := "(" + strings.TrimSuffix(strings.Repeat("?, ", k), ", ") + ")"
	return strings.TrimSuffix(strings.Repeat(group+", ", n), ", ")
}

// OTLPDebts implements store.OTLPDebtStore.
func (r Reads) OTLPDebts(ctx context.Context, limit int) ([]store.OTLPDebt, error) {
	rows, err := r.b.Rows()
	if err != nil {
		return nil, err
	}
	out, err := all(ctx, rows, `SELECT `+OTLPDebtColumns+` FROM otlp_debts ORDER BY since, session_id, owner LIMIT ?`,
		[]any{max(limit, 0)}, 0, r.b.OTLPDebt)
	if err != nil {
		return nil, fmt.Errorf("cannot read the sessions owed to the OTLP receiver: %w", err)
	}
	return out, nil
}

package postgres

import (
	"context"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookwatch/hookwatch/store"
)

var _ store.Shared = (*DB)(nil)

// Several collectors on one database (store.Shared):
//
//   - Each insert and each model write sends a notification on the channel
//     notifyChannel as it commits (pg_notify in the transaction: delivered
//     at commit, once per transaction). Watch listens on a connection of
//     its own; a notification carries nothing a reader needs but the model
//     position: every reader reads what is new from its own cursor, so a
//     lost notification (a reconnect) costs a delay, never an event.
//   - The model lease is a session-level advisory lock (lockModel) held on a
//     connection of its own: PostgreSQL releases it when that connection
//     ends, however its collector ended (SIGKILL included). The others wait
//     for it in pg_advisory_lock, each on a connection of its own, so that
//     PostgreSQL hands it to one of them as soon as it is released rather
//     than at their next try.

const notifyChannel = "hookwatch"

// lockModel is the advisory lock of the model lease (see lockMigrate).
const lockModel int64 = 0x686f6f6b77_0003

// leaseRetry is how long a collector waits before it waits for the lease
// again after an error (its connection broke), and how often the holder
// checks its connection.
const leaseRetry = time.Second

// Watch implements store.Shared.
func (db *DB) Watch(ctx context.Context, changed func(modelSeq int64)) {
	for ctx.Err() == nil {
		db.watch(ctx, changed)
		select {
		case <-ctx.Done():
		case <-time.After(leaseRetry):
		}
	}
}

// watch listens until its connection fails or ctx ends.
func (db *DB) watch(ctx context.Context, changed func(int64)) {
	conn, err := db.dedicated(ctx)
	if err != nil {
		return
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+notifyChannel); err != nil {
		return
	}
	changed(0)
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return
		}
		seq, _ := strconv.ParseInt(n.Payload, 10, 64)
		changed(seq)
	}
}

// dedicated opens a connection outside the pool, for a session that lasts
// (LISTEN, the lease): the pool may close its connections at any time.
func (db *DB) dedicated(ctx context.Context) (*pgx.Conn, error) {
	p, err := db.open()
	if err != nil {
		return nil, err
	}
	return pgx.ConnectConfig(ctx, p.Config().ConnConfig.Copy())
}

// Lead implements store.Shared. It waits in pg_advisory_lock: PostgreSQL
// grants the lock to a waiter as soon as the holder's connection ends, so
// a takeover after a crash takes as long as PostgreSQL takes to see that
// connection closed (at once for a process killed on a live host).
func (db *DB) Lead(ctx context.Context, waiting func()) (<-chan struct{}, error) {
	for {
		conn, err := db.dedicated(ctx)
		took := false
		if err == nil && waiting != nil {
			// Tried first without waiting, to tell whether another holds
			// it: the wait below is for when one does.
			if err = conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, lockModel).Scan(&took); err == nil && !took {
				waiting()
				waiting = nil
			}
		}
		if err == nil {
			if !took {
				// ctx ending interrupts the wait: pgx closes the
				// connection, and with it the request for the lock.
				_, err = conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, lockModel)
			}
			if err == nil {
				lost := make(chan struct{})
				go db.hold(ctx, conn, lost)
				return lost, nil
			}
			conn.Close(context.Background())
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(leaseRetry):
		}
	}
}

// hold keeps the lease's connection alive until ctx ends or it fails, then
// closes it, which releases the lease, and closes lost.
func (db *DB) hold(ctx context.Context, conn *pgx.Conn, lost chan struct{}) {
	defer close(lost)
	defer conn.Close(context.Background())
	t := time.NewTicker(leaseRetry)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			pctx, cancel := context.WithTimeout(ctx, 5*leaseRetry)
			err := conn.Ping(pctx)
			cancel()
			if err != nil {
				return
			}
		}
	}
}

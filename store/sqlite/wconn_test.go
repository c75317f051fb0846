package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/sqlite"
)

// The writer's transactions run on the driver's connection and statements
// (wconn.go): these tests hold it to what database/sql.Tx guaranteed.

// poison makes the writer's statements fail on a row of table matching
// when (a trigger that aborts them), until the returned function is called.
func poison(t *testing.T, db *sqlite.DB, table, when string) (cure func()) {
	t.Helper()
	if err := db.ExecForTest(`CREATE TRIGGER poison BEFORE INSERT ON ` + table + ` WHEN ` + when +
		` BEGIN SELECT RAISE(ABORT, 'poisoned'); END`); err != nil {
		t.Fatal(err)
	}
	return func() {
		t.Helper()
		if err := db.ExecForTest(`DROP TRIGGER poison`); err != nil {
			t.Fatal(err)
		}
	}
}

// TestInsertFailsWhole: an Insert whose statement fails half-way through
// its transaction (in its second chunk of events, or in the sessions'
// upsert after every event) stores nothing, and the writer is usable
// afterwards: the same batch is then stored whole.
func TestInsertFailsWhole(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct{ name, table, when string }{
		{"second chunk", "events", "NEW.id = '%s'"},
		{"sessions", "sessions", "NEW.id = 'bench-1'"},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := sqlite.MustOpenDB(t)
			// 300 events: a chunk of 200 rows, then pieces of 64, 32, 4.
			events := benchEventsT(t, 300, 3)
			when := c.when
			if strings.Contains(when, "%s") {
				when = fmt.Sprintf(when, events[250].ID)
			}
			cure := poison(t, db, c.table, when)
			if _, err := db.Insert(ctx, events); err == nil || !strings.Contains(err.Error(), "poisoned") {
				t.Fatalf("Insert of a poisoned batch: %v", err)
			}
			for i := range events {
				if events[i].Seq != 0 {
					t.Fatalf("event %d has seq %d after a failed Insert", i, events[i].Seq)
				}
			}
			if seq, err := db.LastSeq(ctx); err != nil || seq != 0 {
				t.Fatalf("LastSeq after a failed Insert = %d, %v", seq, err)
			}
			if p, err := db.Sessions(ctx, store.SessionFilter{}); err != nil || len(p.Sessions) != 0 {
				t.Fatalf("sessions after a failed Insert: %+v, %v", p.Sessions, err)
			}
			cure()
			n, err := db.Insert(ctx, events)
			if err != nil || n != len(events) {
				t.Fatalf("Insert after a failed one stored %d of %d: %v", n, len(events), err)
			}
			if seq, err := db.LastSeq(ctx); err != nil || seq != int64(len(events)) {
				t.Fatalf("LastSeq = %d, %v; want %d", seq, err, len(events))
			}
			p, err := db.Sessions(ctx, store.SessionFilter{})
			if err != nil || len(p.Sessions) != 3 {
				t.Fatalf("sessions: %+v, %v", p.Sessions, err)
			}
		})
	}
}

// TestPutModelFailsWhole: a PutModel whose statement fails half-way (in
// the second chunk of tool calls, after the sessions and agents) stores
// nothing of its batch, and the writer is usable afterwards.
func TestPutModelFailsWhole(t *testing.T) {
	ctx := context.Background()
	db := sqlite.MustOpenDB(t)
	var b store.ModelBatch
	b.Sessions = []store.SessionModel{{SessionID: "bench", GroupKey: "k", Seq: 1, UpdatedSeq: 1,
		FirstEventAt: time.Unix(1, 0), LastEventAt: time.Unix(2, 0)}}
	b.Agents = []store.AgentRow{{SessionID: "bench", AgentID: "", StartedAt: time.Unix(1, 0), UpdatedSeq: 1, Doc: []byte(`{}`)}}
	for i := range 250 {
		b.ToolCalls = append(b.ToolCalls, benchCall("bench", i, "running", 1))
	}
	cure := poison(t, db, "model_tool_calls", fmt.Sprintf("NEW.tool_use_id = '%s'", b.ToolCalls[180].ToolUseID))
	if err := db.PutModel(ctx, b); err == nil || !strings.Contains(err.Error(), "poisoned") {
		t.Fatalf("PutModel of a poisoned batch: %v", err)
	}
	if m, err := db.SessionModels(ctx, []string{"bench"}); err != nil || len(m) != 0 {
		t.Fatalf("session models after a failed PutModel: %+v, %v", m, err)
	}
	if p, err := db.ToolCalls(ctx, store.ToolCallFilter{SessionID: "bench"}); err != nil || len(p.ToolCalls) != 0 {
		t.Fatalf("%d tool calls after a failed PutModel: %v", len(p.ToolCalls), err)
	}
	if p, err := db.Agents(ctx, store.AgentFilter{SessionID: "bench"}); err != nil || len(p.Agents) != 0 {
		t.Fatalf("%d agents after a failed PutModel: %v", len(p.Agents), err)
	}
	cure()
	if err := db.PutModel(ctx, b); err != nil {
		t.Fatal(err)
	}
	if m, err := db.SessionModels(ctx, []string{"bench"}); err != nil || len(m) != 1 {
		t.Fatalf("session models: %+v, %v", m, err)
	}
	calls := 0
	for f := (store.ToolCallFilter{SessionID: "bench", Limit: store.MaxLimit}); ; {
		p, err := db.ToolCalls(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		calls += len(p.ToolCalls)
		if f.Cursor = p.Next; f.Cursor == "" {
			break
		}
	}
	if calls != len(b.ToolCalls) {
		t.Fatalf("%d tool calls stored, want %d", calls, len(b.ToolCalls))
	}
}

// TestWriteContextEnded: a write with a context that ended stores nothing
// and leaves the writer usable.
func TestWriteContextEnded(t *testing.T) {
	db := sqlite.MustOpenDB(t)
	events := benchEventsT(t, 10, 1)
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := db.Insert(ended, events); !errors.Is(err, context.Canceled) {
		t.Fatalf("Insert with a context that ended: %v", err)
	}
	if err := db.PutModel(ended, store.ModelBatch{ToolCalls: []store.ToolCallRow{benchCall("bench", 1, "running", 1)}}); !errors.Is(err, context.Canceled) {
		t.Fatalf("PutModel with a context that ended: %v", err)
	}
	ctx := context.Background()
	if n, err := db.Insert(ctx, events); err != nil || n != len(events) {
		t.Fatalf("Insert stored %d of %d: %v", n, len(events), err)
	}
	// A context that can end and does not (the driver watches it).
	live, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := db.PutModel(live, store.ModelBatch{ToolCalls: []store.ToolCallRow{benchCall("bench", 1, "running", 1)}}); err != nil {
		t.Fatal(err)
	}
}

// TestInsertWaitsForLock: the writer's BEGIN IMMEDIATE waits (busy_timeout)
// while another connection, here another process's, holds the write lock,
// rather than failing with SQLITE_BUSY.
func TestInsertWaitsForLock(t *testing.T) {
	db := sqlite.MustOpenDB(t)
	other, err := sql.Open("sqlite", db.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := db.Insert(context.Background(), benchEventsT(t, 10, 1))
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("Insert returned while another connection held the write lock: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	if _, err := conn.ExecContext(context.Background(), "COMMIT"); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Insert after the lock was released: %v", err)
	}
}

// TestCloseAfterWrites: Close finalizes every statement the writer
// prepared, so that SQLite closes the database and removes its WAL, and
// every write after it fails with ErrClosed.
func TestCloseAfterWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hookwatch.db")
	db, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	events := benchEventsT(t, 300, 3)
	if _, err := db.Insert(ctx, events); err != nil {
		t.Fatal(err)
	}
	if err := db.PutModel(ctx, store.ModelBatch{ToolCalls: []store.ToolCallRow{benchCall("bench", 1, "running", 1)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + "-wal"); err != nil {
		t.Fatalf("no WAL while open: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + "-wal"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the WAL is left after Close: %v", err)
	}
	if _, err := db.Insert(ctx, events[:1]); !errors.Is(err, sqlite.ErrClosed) {
		t.Fatalf("Insert after Close: %v", err)
	}
	if err := db.PutModel(ctx, store.ModelBatch{ToolCalls: []store.ToolCallRow{benchCall("bench", 2, "running", 1)}}); !errors.Is(err, sqlite.ErrClosed) {
		t.Fatalf("PutModel after Close: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// TestWritesStartNoGoroutine: a write with a context that cannot end starts
// no goroutine (database/sql's Tx started one per transaction to watch its
// context, and the driver starts one per statement for a context that can
// end): on two cores each was a hand-off between threads per transaction.
func TestWritesStartNoGoroutine(t *testing.T) {
	db := sqlite.MustOpenDB(t)
	ctx := context.WithoutCancel(context.Background()) // as the collector's writer and model
	events := benchEventsT(t, 100, 2)
	put := func(i int) {
		t.Helper()
		if _, err := db.Insert(ctx, events[i%50:i%50+1]); err != nil {
			t.Fatal(err)
		}
		if err := db.PutModel(ctx, store.ModelBatch{ToolCalls: []store.ToolCallRow{benchCall("bench", i, "running", int64(i))}}); err != nil {
			t.Fatal(err)
		}
	}
	put(0) // prepares the statements
	sample := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	created := func() uint64 {
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			t.Skip("the runtime does not count the goroutines it creates")
		}
		return sample[0].Value.Uint64()
	}
	before := created()
	const writes = 50
	for i := 1; i <= writes; i++ {
		put(i)
	}
	// A few may be the runtime's or the test's own (a collection's workers).
	n := created() - before
	t.Logf("%d goroutines created by %d inserts and %d model writes", n, writes, writes)
	if n >= writes/5 {
		t.Fatalf("%d goroutines created by %d inserts and %d model writes", n, writes, writes)
	}
}

package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/sqlite"
	"github.com/hookwatch/hookwatch/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return sqlite.MustOpenDB(t) })
}

func TestRetention(t *testing.T) {
	storetest.RunRetention(t, func(t *testing.T) storetest.RetentionStore { return sqlite.MustOpenDB(t) })
}

func TestReopenKeepsData(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub dir", "hook?watch#1.db")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	db, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	events := storetest.CorpusEvents(t)
	if _, err := db.Insert(context.Background(), events); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the database is not at the path given: %v", err)
	}
	db, err = sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	seq, err := db.LastSeq(context.Background())
	if err != nil || seq != events[len(events)-1].Seq {
		t.Fatalf("LastSeq after reopen = %d, %v", seq, err)
	}
	// A replay after a restart is still recognised.
	if n, err := db.Insert(context.Background(), events); err != nil || n != 0 {
		t.Fatalf("replay after reopen stored %d, %v", n, err)
	}
	v, err := db.SchemaVersion(context.Background())
	if err != nil || v < 1 {
		t.Fatalf("SchemaVersion = %d, %v", v, err)
	}
}

func TestRefusesNewerSchema(t *testing.T) {
	db := sqlite.MustOpenDB(t)
	path := db.Path()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// Pretend a newer hookwatch migrated the file.
	raw, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := raw.ExecForTest(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (9999, 'future.sql', 'now')`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	_, err = sqlite.Open(path)
	if err == nil || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("Open of a newer schema: %v", err)
	}
}

func TestOpenErrors(t *testing.T) {
	f := func(path string) {
		t.Helper()
		if db, err := sqlite.Open(path); err == nil {
			db.Close()
			t.Errorf("Open(%q) succeeded", path)
		}
	}
	f("")
	f(filepath.Join(t.TempDir(), "missing-dir", "x.db"))
	f(t.TempDir()) // a directory
}

func TestWALModeAndPermissions(t *testing.T) {
	db := sqlite.MustOpenDB(t)
	if _, err := db.Insert(context.Background(), storetest.CorpusEvents(t)[:1]); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{db.Path(), db.Path() + "-wal"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatalf("no %s: %v", p, err)
		}
		if fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s is readable by others: %v", p, fi.Mode())
		}
	}
}

func TestTokenStore(t *testing.T) {
	storetest.RunTokenStore(t, func(t *testing.T) storetest.TokenStore { return sqlite.MustOpenDB(t) })
}

// TestCallKeyMigration opens a file of the schema before tool calls were
// keyed by their start (version 7): its calls read back as they were, in
// start order, and a call then moves its start as the contract says.
func TestCallKeyMigration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hookwatch.db")
	if err := sqlite.MigrateForTest(path, 7); err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite", path) // the rows version 7 kept
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range []struct{ id, status string }{{"toolu_b", "ok"}, {"toolu_a", "running"}, {"toolu_c", "error"}} {
		_, err := raw.Exec(`INSERT INTO model_tool_calls (session_id, tool_use_id, agent_id, tool_name, status, started_at, updated_seq, doc, subtype, effect)
			VALUES ('s1', ?, 'a1', 'Bash', ?, ?, ?, ?, 'run_test', 'execute_check')`,
			c.id, c.status, storetest.At(30-10*i).UnixNano(), i+1, `{"id":"`+c.id+`"}`)
		if err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()

	db, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if v, err := db.SchemaVersion(context.Background()); err != nil || v < 8 {
		t.Fatalf("schema version %d, %v after Open", v, err)
	}
	page, err := db.ToolCalls(context.Background(), store.ToolCallFilter{SessionID: "s1", Subtype: "run_test"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range page.ToolCalls {
		got = append(got, fmt.Sprintf("%s %s %d %d %s", c.ToolUseID, c.Status, c.StartedAt.Sub(storetest.At(0)).Milliseconds(), c.UpdatedSeq, c.Doc))
	}
	want := []string{`toolu_c error 10 3 {"id":"toolu_c"}`, `toolu_a running 20 2 {"id":"toolu_a"}`, `toolu_b ok 30 1 {"id":"toolu_b"}`}
	if !slices.Equal(got, want) {
		t.Fatalf("calls after the migration:\n%q\nwant\n%q", got, want)
	}

	moved := store.ToolCallRow{SessionID: "s1", ToolUseID: "toolu_a", AgentID: "a1", ToolName: "Bash", Status: "ok",
		StartedAt: storetest.At(40), MovedFrom: []time.Time{storetest.At(20)}, UpdatedSeq: 4}
	if err := db.PutModel(context.Background(), store.ModelBatch{ToolCalls: []store.ToolCallRow{moved}}); err != nil {
		t.Fatal(err)
	}
	page, err = db.ToolCalls(context.Background(), store.ToolCallFilter{SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	got = got[:0]
	for _, c := range page.ToolCalls {
		got = append(got, c.ToolUseID)
	}
	if want := []string{"toolu_c", "toolu_b", "toolu_a"}; !slices.Equal(got, want) {
		t.Errorf("calls after a move: %v, want %v", got, want)
	}
}

package sqlite_test

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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

	// A file of something else (a --db mistyped for a notes file) is
	// said to be no database, and is left as it was.
	notes := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(notes, []byte("hello\nworld\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := sqlite.Open(notes)
	if err == nil || !strings.Contains(err.Error(), notes+" is not a SQLite database") {
		t.Errorf("Open of a text file: %v", err)
	}
	if b, _ := os.ReadFile(notes); string(b) != "hello\nworld\n" {
		t.Errorf("the text file changed: %q", b)
	}
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

func TestOTLPDebts(t *testing.T) {
	storetest.RunOTLPDebts(t, func(t *testing.T) store.OTLPDebtStore { return sqlite.MustOpenDB(t) })
}

// TestCallKeyMigration opens a file of the schema before tool calls were
// keyed by their start (version 7) that holds storetest.PreKeyCalls.
func TestCallKeyMigration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hookwatch.db")
	if err := sqlite.MigrateForTest(path, 7); err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range storetest.PreKeyCalls {
		_, err := raw.Exec(`INSERT INTO model_tool_calls (session_id, tool_use_id, agent_id, tool_name, status, started_at, updated_seq, doc, subtype, effect)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			c.SessionID, c.ToolUseID, c.AgentID, c.ToolName, c.Status, c.StartedAt.UnixNano(), c.UpdatedSeq, string(c.Doc), c.Subtype, c.Effect)
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
	storetest.CheckMigratedCalls(t, db)
}

// TestMigratedReported: Open says which schema it found and which it
// left, and how long the migrations took, for serve to log; a new database
// and one already current report nothing done.
func TestMigratedReported(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hookwatch.db")
	if err := sqlite.MigrateForTest(path, 7); err != nil {
		t.Fatal(err)
	}
	db, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	latest, err := db.SchemaVersion(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var m store.Migrated = db
	if from, to, took := m.Migrated(); from != 7 || to != latest || took <= 0 {
		t.Errorf("an upgrade from 7: Migrated() = %d, %d, %v; want 7, %d, > 0", from, to, took, latest)
	}
	db.Close()
	db, err = sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if from, to, _ := db.Migrated(); from != latest || to != latest {
		t.Errorf("a current database: Migrated() = %d, %d; want %d, %d", from, to, latest, latest)
	}
	db.Close()
	if from, to, _ := sqlite.MustOpenDB(t).Migrated(); from != 0 || to != latest {
		t.Errorf("a new database: Migrated() = %d, %d; want 0, %d", from, to, latest)
	}
}

// TestModelVersionMigration: the models stored before they named their
// version are of version 0, stale for any collector, which derives them
// again at its start.
func TestModelVersionMigration(t *testing.T) {
	db := sqlite.MustOpenDB(t)
	path := db.Path()
	ids := storetest.SeedCurrentModels(t, db)
	// Take the migration back, and those after it, as a file of the schema
	// before it.
	for _, q := range []string{
		`DROP TABLE otlp_debts`, `DELETE FROM schema_migrations WHERE name = '0014_otlp_debts.sql'`,
		`DROP INDEX model_sessions_project`, `ALTER TABLE model_sessions DROP COLUMN project`,
		`DELETE FROM schema_migrations WHERE name = '0013_session_project.sql'`,
		`ALTER TABLE model_sessions DROP COLUMN version`, `DELETE FROM schema_migrations WHERE name = '0012_model_version.sql'`,
	} {
		if err := db.ExecForTest(q); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	storetest.CheckAllStale(t, again, ids)
}

// TestOpenRefusesFIFO: a FIFO named as the database is refused at once;
// opening it would wait for a writer forever.
func TestOpenRefusesFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fifo.db")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	done := make(chan error, 1)
	go func() {
		db, err := sqlite.Open(path)
		if err == nil {
			db.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file (a named pipe)") {
			t.Fatalf("Open of a FIFO: %v, want an error saying it is not a regular file but a named pipe", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Open of a FIFO blocks")
	}
}

// TestOpenRefusesForeignDatabase: a SQLite database of another program
// (a wrong --db) is left as it is, not given hookwatch's tables.
func TestOpenRefusesForeignDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "places.sqlite")
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`CREATE TABLE bookmarks (id INTEGER PRIMARY KEY, url TEXT); INSERT INTO bookmarks (url) VALUES ('https://example.com')`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sqlite.Open(path)
	if err == nil {
		db.Close()
		t.Fatal("Open of another program's database succeeded")
	}
	if !strings.Contains(err.Error(), "not a hookwatch database") {
		t.Errorf("Open of another program's database: %v, want it to say it is not a hookwatch database", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("Open changed another program's database")
	}
}

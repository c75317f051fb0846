package sqlite

import (
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookwatch/hookwatch/internal/lockfile"
)

// TestClaim: one open DB of a file claims it at a time, the claim names
// its process, and it ends with Close.
func TestClaim(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hookwatch.db")
	a, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := a.Claim(); err != nil {
		t.Fatalf("first claim: %v", err)
	}
	if err := a.Claim(); err != nil {
		t.Fatalf("a claim claimed again: %v", err)
	}
	var ce *ClaimedError
	if err := b.Claim(); !errors.As(err, &ce) || ce.PID != os.Getpid() || ce.Path != a.Path() {
		t.Fatalf("second claim: %v, want a ClaimedError of pid %d", err, os.Getpid())
	}
	// Claiming is not opening: a DB that does not claim works beside it.
	if _, err := b.Insert(t.Context(), nil); err != nil {
		t.Fatalf("insert beside the claim: %v", err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Claim(); err != nil {
		t.Fatalf("claim after the claimant closed: %v", err)
	}
}

// TestOpenLeavesAnOlderCollectorsDatabase: a database of an older schema
// that a collector serves is not migrated under it (its writes would fail
// from then on): Open says so and changes nothing; once the collector is
// gone, Open brings the schema up to date.
func TestOpenLeavesAnOlderCollectorsDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hookwatch.db")
	if err := MigrateForTest(path, 7); err != nil {
		t.Fatal(err)
	}
	// The older collector's claim: a lock on <db>.collector naming it.
	held, err := lockfile.Take(path+claimSuffix, []byte("4242\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(path)
	var oe *OlderCollectorError
	if !errors.As(err, &oe) || oe.PID != 4242 || oe.Schema != 7 || !strings.Contains(err.Error(), "hookwatch stop") {
		t.Fatalf("Open under an older collector: %v", err)
	}
	if v := schemaOf(t, path); v != 7 {
		t.Fatalf("schema %d after the refusal, want 7", v)
	}
	held.Release() // the collector exits
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if v, err := db.SchemaVersion(t.Context()); err != nil || v <= 7 {
		t.Fatalf("schema %d, %v after the collector left", v, err)
	}
}

// schemaOf reads the schema version of the database at path.
func schemaOf(t *testing.T, path string) int {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v int
	if err := db.QueryRow(`SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

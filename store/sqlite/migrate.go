package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/hookwatch/hookwatch/store/migration"
)

// migrationFS holds the schema migrations (see package migration).
//
//go:embed migrations/*.sql
var migrationFS embed.FS

// migrate applies, each in its own transaction, the migrations the database
// has not seen, and refuses a database made by a newer hookwatch.
func (db *DB) migrate(ctx context.Context) error {
	start := time.Now()
	from, to, err := migrateUpTo(ctx, db.writer, db.path, math.MaxInt)
	db.migratedFrom, db.migratedTo, db.migrateTook = from, to, time.Since(start)
	return err
}

// Migrated implements store.Migrated.
func (db *DB) Migrated() (from, to int, took time.Duration) {
	return db.migratedFrom, db.migratedTo, db.migrateTook
}

// migrateUpTo is migrate on the database of w at path, leaving out the
// migrations after version upTo. It returns the schema version it found
// and the one it left.
func migrateUpTo(ctx context.Context, w *sql.DB, path string, upTo int) (from, to int, err error) {
	ms, err := migration.Read(migrationFS, "migrations")
	if err != nil {
		return 0, 0, fmt.Errorf("cannot read migrations: %w", err)
	}
	if _, err := w.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER PRIMARY KEY,
		name       TEXT    NOT NULL,
		applied_at TEXT    NOT NULL
	)`); err != nil {
		if notADatabase(err) {
			return 0, 0, fmt.Errorf("%s is not a SQLite database: name a database hookwatch made, or a file that does not exist yet", path)
		}
		return 0, 0, fmt.Errorf("cannot create schema_migrations in %s: %w", path, err)
	}
	var current int
	if err := w.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
		return 0, 0, fmt.Errorf("cannot read the schema version of %s: %w", path, err)
	}
	latest := ms[len(ms)-1].Version
	if current > latest {
		return 0, 0, fmt.Errorf("database %s has schema version %d, newer than this hookwatch knows (%d): upgrade hookwatch", path, current, latest)
	}
	if target := min(latest, upTo); current < target {
		// A collector serving the database writes it with the schema it
		// knows: changed under it, its writes fail from then on. So a
		// newer hookwatch (serve refused, export, prune, token) leaves it
		// as it is while an older collector holds it.
		if pid, held := claimHolder(path); held {
			return 0, 0, &OlderCollectorError{Path: path, PID: pid, Schema: current, Latest: target}
		}
	}
	for _, m := range ms {
		if m.Version <= current || m.Version > upTo {
			continue
		}
		tx, err := w.BeginTx(ctx, nil)
		if err != nil {
			return 0, 0, fmt.Errorf("cannot begin migration %s: %w", m.Name, err)
		}
		if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
			tx.Rollback()
			return 0, 0, fmt.Errorf("cannot apply migration %s: %w", m.Name, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
			m.Version, m.Name, time.Now().UTC().Format(time.RFC3339)); err != nil {
			tx.Rollback()
			return 0, 0, fmt.Errorf("cannot record migration %s: %w", m.Name, err)
		}
		if err := tx.Commit(); err != nil {
			return 0, 0, fmt.Errorf("cannot commit migration %s: %w", m.Name, err)
		}
	}
	return current, max(current, min(latest, upTo)), nil
}

// SchemaVersion returns the version of the latest migration applied.
func (db *DB) SchemaVersion(ctx context.Context) (int, error) {
	r, err := db.readerFor()
	if err != nil {
		return 0, err
	}
	var v int
	if err := r.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("cannot read the schema version: %w", err)
	}
	return v, nil
}

// OlderCollectorError is Open's error for a database whose schema is older
// than this hookwatch's while a collector (an older hookwatch) serves it:
// nothing was changed.
type OlderCollectorError struct {
	Path           string
	PID            int // the collector's process id; 0 when it did not say
	Schema, Latest int
}

func (e *OlderCollectorError) Error() string {
	who := "a collector"
	if e.PID > 0 {
		who = fmt.Sprintf("a collector (pid %d)", e.PID)
	}
	return fmt.Sprintf("%s of an older hookwatch serves %s (schema version %d; this hookwatch's is %d): nothing was changed; stop it with 'hookwatch stop' and start this one ('hookwatch serve'), then run this again", who, e.Path, e.Schema, e.Latest)
}

// notADatabase reports whether err is SQLite's SQLITE_NOTADB: the file
// opened holds something else (a text file, a database encrypted).
func notADatabase(err error) bool {
	var coded interface{ Code() int }
	return errors.As(err, &coded) && coded.Code()&0xff == 26 // primary code of SQLITE_NOTADB
}

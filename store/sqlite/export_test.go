package sqlite

import (
	"context"
	"database/sql"
)

// ExecForTest runs a statement on the writer connection.
func (db *DB) ExecForTest(q string) error {
	_, err := db.w.conn.ExecContext(context.Background(), q)
	return err
}

// HoldCheckpointsForTest stops the background checkpointer and the
// writer's automatic checkpoints, so that the WAL keeps every frame
// written from then on, and empties it first.
func (db *DB) HoldCheckpointsForTest() error {
	db.mu.Lock()
	defer db.mu.Unlock()
	close(db.stopCkpt)
	<-db.ckptDone
	// Close stops the checkpointer again: give it channels that let it.
	db.stopCkpt = make(chan struct{})
	db.ckptDone = make(chan struct{})
	close(db.ckptDone)
	for _, q := range []string{"PRAGMA wal_autocheckpoint = 0", "PRAGMA wal_checkpoint(TRUNCATE)"} {
		if _, err := db.w.conn.ExecContext(context.Background(), q); err != nil {
			return err
		}
	}
	return nil
}

// MigrateForTest makes the database at path (creating it) with the
// migrations up to version applied: the file a hookwatch of that schema
// left.
func MigrateForTest(path string, version int) error {
	w, err := sql.Open("sqlite", path)
	if err != nil {
		return err
	}
	defer w.Close()
	_, _, err = migrateUpTo(context.Background(), w, path, version)
	return err
}

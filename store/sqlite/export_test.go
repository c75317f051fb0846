package sqlite

import "context"

// ExecForTest runs a statement on the writer connection.
func (db *DB) ExecForTest(q string) error {
	_, err := db.writer.ExecContext(context.Background(), q)
	return err
}

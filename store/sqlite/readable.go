package sqlite

import (
	"context"
	"database/sql"
	"fmt"
)

// Readable reports whether the file at path reads as a SQLite database, as
// Open would read it first (its header and its schema), without changing
// anything: it opens the file immutable, so SQLite neither locks it nor
// makes the WAL's files. A file another process is writing reads as it was
// last checkpointed, which does not matter here: a damaged header or schema
// is damaged whatever the WAL holds. An empty file is a database not yet
// made.
func Readable(ctx context.Context, path string) error {
	db, err := sql.Open("sqlite", dsn(path, "mode=ro&immutable=1"))
	if err != nil {
		return err
	}
	defer db.Close()
	var n int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&n); err != nil {
		return fmt.Errorf("%s does not read as a SQLite database: %w", path, err)
	}
	return nil
}

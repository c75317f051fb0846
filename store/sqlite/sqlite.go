// Package sqlite is the SQLite implementation of store.Store, on the pure-Go
// modernc.org/sqlite driver (no cgo, so hookwatch stays one static binary).
//
// The database runs in WAL mode with exactly one writer connection, whose
// transactions take the write lock up front (BEGIN IMMEDIATE) so they never
// fail half-way on a lock upgrade, and a separate pool of read-only
// connections that WAL lets read while the writer writes. Inserts are batched
// into one transaction with multi-row prepared INSERTs. The writer's
// transactions run on the driver's connection and statements, not through
// database/sql's (wconn.go).
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/hookwatch/hookwatch/internal/lockfile"
	"github.com/hookwatch/hookwatch/internal/regfile"
	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/internal/sqlq"
	"github.com/hookwatch/hookwatch/store/sqlite/internal/walframes"
)

var _ store.Store = (*DB)(nil)

// ErrClosed is returned by every method of a closed DB.
var ErrClosed = errors.New("sqlite store is closed")

// DB is a SQLite store.Store. It is safe for concurrent use.
type DB struct {
	path   string
	writer *sql.DB // exactly one connection, w's
	w      *wconn
	reader *sql.DB // read-only connections

	// What Open's migrations did (Migrated).
	migratedFrom, migratedTo int
	migrateTook              time.Duration

	// mu serializes writers (the single connection would anyway, but the
	// prepared statements and the closed flag are shared state) and guards
	// Close against in-flight inserts.
	mu     sync.Mutex
	closed bool
	stmts  insertStmts
	model  modelStmts

	// The checkpointer copies the WAL into the database file on a
	// connection of its own, so that the writer's commits do not pay for
	// it (see checkpointLoop).
	ckpt     *sql.DB
	commits  chan struct{} // a commit happened; buffered 1
	stopCkpt chan struct{}
	ckptDone chan struct{}

	// Reads are the store's reads, run through rows and this driver's
	// scans (sqlq.Reads).
	sqlq.Reads

	claim *lockfile.Lock // the lock Claim holds, until Close
}

// Open opens (creating it if needed) the SQLite database at path and brings
// its schema up to date.
func Open(path string) (*DB, error) {
	if path == "" {
		return nil, errors.New("sqlite.Open: empty path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("sqlite.Open: cannot resolve %q: %w", path, err)
	}
	if err := checkOwnFile(abs); err != nil {
		return nil, fmt.Errorf("sqlite.Open: %w", err)
	}
	// The database holds prompts and commands: create it readable by its
	// owner only. SQLite gives the -wal and -shm files the same mode.
	if f, err := os.OpenFile(abs, os.O_RDONLY|os.O_CREATE, 0o600); err == nil {
		f.Close()
	}
	db := &DB{path: abs}
	db.Reads = sqlq.NewReads(sqlq.Backend{
		Rows: db.rows, Session: scanSession, Event: scanEvent, ModelSession: scanModelSession,
		GroupSession: scanGroupSession, Agent: scanAgent, ToolCall: scanToolCall, Token: scanToken, OTLPDebt: scanOTLPDebt,
		String: scanString, ToolCallsFrom: toolCallsFrom,
	})

	// busy_timeout covers the moments another process (a backup, the
	// sqlite3 shell) holds a lock; synchronous=NORMAL is durable against a
	// crash of the process in WAL mode and costs no fsync per commit.
	common := "_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_pragma=temp_store(memory)"
	// wal_autocheckpoint is a fallback: checkpoints normally run in the
	// background (checkpointLoop); the writer only checkpoints itself when
	// the WAL outgrows ~64 MiB because the background cannot keep up. The
	// writer, the one connection that appends to the WAL, writes each
	// commit's frames in one call (walframes) where SQLite makes two a
	// frame.
	if err := walframes.Register(); err != nil {
		return nil, fmt.Errorf("sqlite.Open: %w", err)
	}
	db.writer, err = sql.Open("sqlite", dsn(abs, "vfs="+walframes.Name+"&"+common+
		"&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=cache_size(-32768)"+
		"&_pragma=wal_autocheckpoint(16384)&_txlock=immediate"))
	if err != nil {
		return nil, fmt.Errorf("sqlite.Open: %w", err)
	}
	db.writer.SetMaxOpenConns(1)
	db.writer.SetMaxIdleConns(1)
	db.writer.SetConnMaxLifetime(0)
	db.writer.SetConnMaxIdleTime(0)

	// The writer connection creates the file and switches it to WAL before
	// any reader opens it.
	if err := db.migrate(context.Background()); err != nil {
		db.writer.Close()
		return nil, fmt.Errorf("sqlite.Open: %w", err)
	}
	if db.w, err = newWconn(context.Background(), db.writer); err != nil {
		db.writer.Close()
		return nil, fmt.Errorf("sqlite.Open: %w", err)
	}

	db.reader, err = sql.Open("sqlite", dsn(abs, common+"&_pragma=cache_size(-16384)&_query_only=1"))
	if err != nil {
		db.w.close()
		db.writer.Close()
		return nil, fmt.Errorf("sqlite.Open: %w", err)
	}
	n := max(4, runtime.NumCPU())
	db.reader.SetMaxOpenConns(n)
	db.reader.SetMaxIdleConns(n)
	if err := db.reader.Ping(); err != nil {
		db.w.close()
		db.writer.Close()
		db.reader.Close()
		return nil, fmt.Errorf("sqlite.Open: cannot open read connection: %w", err)
	}
	db.ckpt, err = sql.Open("sqlite", dsn(abs, common+"&_pragma=synchronous(NORMAL)"))
	if err != nil {
		db.w.close()
		db.writer.Close()
		db.reader.Close()
		return nil, fmt.Errorf("sqlite.Open: %w", err)
	}
	db.ckpt.SetMaxOpenConns(1)
	db.commits = make(chan struct{}, 1)
	db.stopCkpt = make(chan struct{})
	db.ckptDone = make(chan struct{})
	go db.checkpointLoop()
	return db, nil
}

// checkpointInterval is the least time between two background checkpoints.
// A checkpoint copies each page the WAL holds once, however many commits
// wrote it: the pages every commit touches (the right edge of the events
// and their indexes, the sessions' rows, the model's) are copied once a
// second rather than ten times. The WAL holds about a second of writes.
const checkpointInterval = time.Second

// checkpointLoop runs a PASSIVE checkpoint after commits, at most every
// checkpointInterval. PASSIVE never blocks the writer or the readers; once a
// checkpoint has copied the whole WAL, the writer's next transaction starts
// the WAL over from its beginning, so it stays small. On two cores this
// moves about a fifth of the write path off the single writer goroutine.
func (db *DB) checkpointLoop() {
	defer close(db.ckptDone)
	for {
		select {
		case <-db.stopCkpt:
			return
		case <-db.commits:
		}
		// An error is not fatal: the writer's autocheckpoint is the fallback.
		_, _ = db.ckpt.Exec("PRAGMA wal_checkpoint(PASSIVE)")
		select {
		case <-db.stopCkpt:
			return
		case <-time.After(checkpointInterval):
		}
	}
}

// committed wakes the checkpointer.
func (db *DB) committed() {
	select {
	case db.commits <- struct{}{}:
	default:
	}
}

// dsn builds a file: URI for path, escaped so that any file name works,
// with the driver parameters in query.
// checkOwnFile refuses, before anything opens it, a path that is not a
// regular file (opening a FIFO waits for a writer forever), and a SQLite
// database of another program: a wrong --db or HOOKWATCH_DB must not
// get hookwatch's tables, nor its journal switched to WAL. A file that
// is not there, an empty one, and one of hookwatch's (it has
// schema_migrations) pass; so does one that is not SQLite at all, which
// the migration then reports.
func checkOwnFile(path string) error {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case fi.IsDir():
		return fmt.Errorf("%s is a directory, not a database file", path)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s is not a regular file (%s)", path, regfile.TypeName(fi.Mode()))
	case fi.Size() == 0:
		return nil
	}
	ro, err := sql.Open("sqlite", dsn(path, "mode=ro&_pragma=busy_timeout(10000)"))
	if err != nil {
		return err
	}
	defer ro.Close()
	var tables, ours int
	if err := ro.QueryRow(`SELECT count(*), count(*) FILTER (WHERE name = 'schema_migrations') FROM sqlite_master WHERE type = 'table'`).Scan(&tables, &ours); err != nil {
		return nil // not SQLite, or unreadable: the migration says which
	}
	if tables > 0 && ours == 0 {
		return fmt.Errorf("%s is not a hookwatch database: it holds another program's tables and no schema_migrations; name hookwatch's database (--db or HOOKWATCH_DB), or a new file", path)
	}
	return nil
}

func dsn(path, query string) string {
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(path)}
	return u.String() + "?" + query
}

// Path returns the absolute path of the database file.
func (db *DB) Path() string { return db.path }

// Close closes the database. It waits for an insert in progress; later calls
// of any method return ErrClosed. Closing twice is harmless.
func (db *DB) Close() error {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return nil
	}
	db.closed = true
	close(db.stopCkpt)
	<-db.ckptDone
	errS := db.w.close(append(db.stmts.all(), db.model.all()...)...)
	// Closing the writer last lets SQLite checkpoint the WAL into the main
	// file and remove it when it is the last connection.
	errC := db.ckpt.Close()
	errR := db.reader.Close()
	errW := db.writer.Close()
	// The claim goes last: a successor claims once the WAL is checkpointed.
	errL := db.release()
	if err := errors.Join(errS, errC, errR, errW, errL); err != nil {
		return fmt.Errorf("cannot close %s: %w", db.path, err)
	}
	return nil
}

// readerFor returns the read pool, or ErrClosed.
func (db *DB) readerFor() (*sql.DB, error) {
	db.mu.Lock()
	closed := db.closed
	db.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	return db.reader, nil
}

// TB is the part of testing.TB that MustOpenDB needs. It is declared here so
// that the hookwatch binary does not link the testing package.
type TB interface {
	Helper()
	TempDir() string
	Cleanup(func())
	Fatalf(format string, args ...any)
}

// MustOpenDB opens a new database in a temporary directory of the test and
// closes it when the test ends. It fails the test when it cannot.
func MustOpenDB(tb TB) *DB {
	tb.Helper()
	db, err := Open(filepath.Join(tb.TempDir(), "hookwatch.db"))
	if err != nil {
		tb.Fatalf("MustOpenDB: %v", err)
	}
	tb.Cleanup(func() { _ = db.Close() })
	return db
}

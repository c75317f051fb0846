// Package postgres is the PostgreSQL implementation of store.Store, on
// github.com/jackc/pgx/v5 and its connection pool: the backend of a team
// server, where several collectors share one database.
//
// Its schema mirrors store/sqlite's (migrations/), with every string stored
// as bytea (see migrations/0001_init.sql), and its listings are the same
// queries (store/internal/sqlq). Inserts of events from every collector are
// serialized by a transaction-scoped advisory lock, so that seq order is
// commit order: the event stream, which follows seq, never skips an event
// that committed late (insert.go).
package postgres

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	neturl "net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/internal/sqlq"
	"github.com/hookwatch/hookwatch/store/migration"
)

var _ store.Store = (*DB)(nil)

// ErrClosed is returned by every method of a closed DB.
var ErrClosed = errors.New("postgres store is closed")

// IsURL reports whether dsn names a PostgreSQL database (postgres:// or
// postgresql://) rather than a SQLite file.
func IsURL(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// OtherURL reports whether dsn is a URL (scheme://…) that does not name a
// PostgreSQL database (IsURL), and returns its scheme: mysql://…,
// sqlite://…, Postgres://… in capitals. hookwatch takes any name that is
// not a PostgreSQL URL for a SQLite file's path, and one of these would
// become an empty database in a directory named after the scheme, so a
// reader of a database's name refuses it instead. Only the scheme is
// returned: the rest may hold a password.
func OtherURL(dsn string) (scheme string, ok bool) {
	scheme, _, ok = strings.Cut(dsn, "://")
	if !ok || IsURL(dsn) || !isScheme(scheme) {
		return "", false
	}
	return scheme, true
}

// KeywordString reports whether dsn is libpq's key=value connection string
// ("host=db port=5432 user=hw password=… dbname=hw"): one of its words
// starts with a keyword of libpq's connection parameters followed by =.
// hookwatch names PostgreSQL by a URL only, and takes anything else for a
// SQLite file's path: such a string would become a file named after it,
// password included, which a collector would serve as if it were the
// database meant, so a reader of a database's name refuses it instead,
// without repeating it.
func KeywordString(dsn string) bool {
	for i := 0; i < len(dsn); i++ {
		if i > 0 && dsn[i-1] != ' ' && dsn[i-1] != '\t' {
			continue // a keyword starts a word
		}
		for _, kw := range libpqKeywords {
			if rest, ok := strings.CutPrefix(dsn[i:], kw); ok && strings.HasPrefix(strings.TrimLeft(rest, " \t"), "=") {
				return true
			}
		}
	}
	return false
}

// libpqKeywords are the connection parameters a key=value string names
// its database by, one of which any such string holds.
var libpqKeywords = []string{"host", "hostaddr", "port", "dbname", "user", "password", "passfile", "service", "sslmode"}

// isScheme reports whether s is a URL scheme (RFC 3986: a letter, then
// letters, digits, +, - and .), which no path component holding a slash is.
func isScheme(s string) bool {
	for i, r := range s {
		letter := 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z'
		if !letter && (i == 0 || !('0' <= r && r <= '9' || r == '+' || r == '-' || r == '.')) {
			return false
		}
	}
	return s != ""
}

// Advisory lock keys of hookwatch in a database (pg_advisory_lock takes one
// bigint; these spell "hookwatch" and a purpose, well away from small
// numbers another application would pick).
const (
	lockMigrate int64 = 0x686f6f6b77_0001
	lockInsert  int64 = 0x686f6f6b77_0002
)

// DB is a PostgreSQL store.Store. It is safe for concurrent use, also by
// several processes on one database.
type DB struct {
	pool *pgxpool.Pool
	// What Open's migrations did (Migrated).
	migratedFrom, migratedTo int
	migrateTook              time.Duration
	// where names the database in errors: its host, port and name, never
	// the password.
	where string

	// mu serializes this process's inserts before they queue on the
	// database's advisory lock, and guards closed.
	mu     sync.Mutex
	closed bool
	// insertBuf is the room of the last insert's parameters, reused by
	// the next (insertArgs); guarded by mu.
	insertBuf []byte

	// Reads are the store's reads, run through rows and this driver's
	// scans (sqlq.Reads).
	sqlq.Reads
}

// Open connects to the database at url (a postgres:// URL or a libpq
// key=value string) and brings its schema up to date.
func Open(ctx context.Context, url string) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// The parse error may quote the URL, password included.
		if keys := badParameters(url); keys != "" {
			return nil, errors.New("postgres.Open: cannot parse the database URL: check the values of its parameters (" + keys + "), e.g. sslmode=disable, require or verify-full")
		}
		return nil, errors.New("postgres.Open: cannot parse the database URL" + encodeHint)
	}
	if ambiguous(url, cfg.ConnConfig) {
		return nil, errors.New("postgres.Open: the database URL reads two ways" + encodeHint)
	}
	if needsTLS(url, cfg.ConnConfig, os.Getenv) {
		// Parsed again rather than patched: sslmode sets up the TLS
		// configuration of every host and its fallbacks.
		if cfg, err = pgxpool.ParseConfig(withParameter(url, "sslmode", "require")); err != nil {
			return nil, errors.New("postgres.Open: cannot parse the database URL" + encodeHint)
		}
	}
	cfg.MaxConns = max(cfg.MaxConns, 8)
	cfg.ConnConfig.RuntimeParams["application_name"] = "hookwatch"
	db := &DB{where: cfg.ConnConfig.Host + ":" + strconv.Itoa(int(cfg.ConnConfig.Port)) + "/" + cfg.ConnConfig.Database}
	db.Reads = sqlq.NewReads(sqlq.Backend{
		Rows: db.rows, Session: scanSession, Event: scanEvent, ModelSession: scanModelSession,
		GroupSession: scanGroupSession, Agent: scanAgent, ToolCall: scanToolCall, Token: scanToken, OTLPDebt: scanOTLPDebt,
		String: scanString,
	})
	if db.pool, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
		return nil, fmt.Errorf("postgres.Open %s: %w", db.where, err)
	}
	if err := db.migrate(ctx); err != nil {
		db.pool.Close()
		if hint := connectHint(err, cfg.ConnConfig); hint != "" {
			return nil, fmt.Errorf("postgres.Open %s: %w\n%s", db.where, err, hint)
		}
		return nil, fmt.Errorf("postgres.Open %s: %w", db.where, err)
	}
	return db, nil
}

// needsTLS reports whether the database dsn names, parsed as cfg, is to be
// reached with sslmode=require though dsn does not say so: pgx's default
// (as libpq's) is prefer, which speaks clear text, password included, to a
// server that refuses TLS, and to anyone on the path who answers as one.
// That holds for a host beyond this machine only: a Unix socket or
// loopback never leaves it. An sslmode (or its alias ssl) in dsn, or
// PGSSLMODE in the environment, is the operator's choice and kept.
//
// require, not verify-full: most PostgreSQL servers present a certificate
// of their own making (Debian's postgresql enables TLS with the machine's
// self-signed snakeoil one), which no system root verifies. verify-full by
// default would refuse nearly every server, and the way out an operator
// takes first, sslmode=disable, would be clear text again; require
// encrypts against anyone who reads the network. An operator with a
// certificate authority of their own asks for verification with
// sslmode=verify-full&sslrootcert=FILE (docs/team-server.md).
func needsTLS(dsn string, cfg *pgx.ConnConfig, getenv func(string) string) bool {
	if getenv("PGSSLMODE") != "" || explicitSSLMode(dsn) {
		return false
	}
	if !localHost(cfg.Host) {
		return true
	}
	for _, fb := range cfg.Fallbacks {
		if !localHost(fb.Host) {
			return true
		}
	}
	return false
}

// explicitSSLMode reports whether dsn, a URL or a key=value string, sets
// sslmode or ssl.
func explicitSSLMode(dsn string) bool {
	if !IsURL(dsn) {
		return strings.Contains(dsn, "sslmode") // key=value: no other keyword holds the word
	}
	query, ok := urlQuery(dsn)
	for ok && query != "" {
		var pair string
		pair, query, _ = strings.Cut(query, "&")
		key, _, _ := strings.Cut(pair, "=")
		if k, err := neturl.PathUnescape(key); err != nil || k == "sslmode" || k == "ssl" {
			return true // a key that does not decode: pgx refused the URL already
		}
	}
	return false
}

// urlQuery returns the parameters of the URL dsn (after its ?), as pgx
// and libpq read them: after the user information, up to the end, a # and
// all (neither takes a fragment).
func urlQuery(dsn string) (string, bool) {
	_, rest, _ := strings.Cut(dsn, "://")
	if i := strings.IndexAny(rest, "@/"); i >= 0 && rest[i] == '@' {
		rest = rest[i+1:] // only a / ends the user information, as in pgx
	}
	_, query, ok := strings.Cut(rest, "?")
	return query, ok
}

// withParameter is dsn, a URL or a key=value string, with the parameter
// key=value added: first in a key=value string, where a last parameter
// without its value ("dbname=") would take the next one's words as its own.
func withParameter(dsn, key, value string) string {
	if !IsURL(dsn) {
		return key + "=" + value + " " + dsn
	}
	sep := "?"
	if query, ok := urlQuery(dsn); ok {
		sep = "&"
		if query == "" {
			sep = ""
		}
	}
	return dsn + sep + key + "=" + neturl.QueryEscape(value)
}

// localHost reports whether host, as pgx parsed it, is on this machine: a
// Unix socket's directory, localhost, or a loopback address.
func localHost(host string) bool {
	if strings.HasPrefix(host, "/") || strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// badParameters returns the names of the parameters of the URL raw (after
// its ?), sorted, when they are what pgx cannot parse: the URL without them
// parses. It is "" otherwise. The names only: a value may be a secret.
func badParameters(raw string) string {
	u, err := neturl.Parse(raw)
	if err != nil || u.RawQuery == "" {
		return ""
	}
	q := u.Query()
	u.RawQuery = ""
	if _, err := pgxpool.ParseConfig(u.String()); err != nil {
		return ""
	}
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(keys, ", ")
}

// encodeHint ends the errors of a URL that does not parse as meant: most
// often a password holding a character a URL reserves.
const encodeHint = ": if the user name or password holds @, /, #, :, ? or %, percent-encode it there (@ as %40, / as %2F, # as %23, : as %3A, ? as %3F, % as %25)"

// ambiguous reports whether the URL raw names another host, user or
// database for pgx than for net/url, which happens when the password holds
// an @ or a / that is not percent-encoded: pgx cuts the URL at the first
// of them, so that part of the password becomes the host or the database,
// shown in every error after (a host lookup that fails, the database
// named). Such a URL is refused before connecting, naming none of its
// parts. A URL net/url cannot read (several hosts) is left to pgx.
func ambiguous(raw string, cfg *pgx.ConnConfig) bool {
	if !IsURL(raw) {
		return false // a key=value string: no URL syntax to misread
	}
	u, err := neturl.Parse(raw)
	if err != nil {
		return false
	}
	return u.Host != "" && u.Hostname() != cfg.Host ||
		u.User != nil && u.User.Username() != cfg.User ||
		strings.TrimPrefix(u.Path, "/") != "" && strings.TrimPrefix(u.Path, "/") != cfg.Database
}

// connectHint says what to do about err, a failure to connect to the
// database cfg names or to make its schema, when it is one a team server's
// operator meets first: the database not made yet, a user or password
// PostgreSQL refuses, nothing listening where the URL points, a database
// its user does not own. It is "" for any other error. It names
// the host, port, user and database, never the password: pgx's own message
// says only that the server refused, not what to change.
func connectHint(err error, cfg *pgx.ConnConfig) string {
	where := cfg.Host + ":" + strconv.Itoa(int(cfg.Port))
	var pgErr *pgconn.PgError
	var dnsErr *net.DNSError
	switch {
	case errors.As(err, &pgErr) && pgErr.Code == "3D000": // invalid_catalog_name
		return fmt.Sprintf("The database %q does not exist on %s: make it (as PostgreSQL's superuser: createdb --owner %s %s; see docs/team-server.md), or fix its name in the URL (--db or HOOKWATCH_DB).",
			cfg.Database, where, cfg.User, cfg.Database)
	case errors.As(err, &pgErr) && (pgErr.Code == "28P01" || pgErr.Code == "28000"): // invalid_password, invalid_authorization_specification
		return fmt.Sprintf("PostgreSQL on %s refused the user %q: check the user and its password in the URL (--db or HOOKWATCH_DB), that the user exists (createuser --pwprompt %s), and that pg_hba.conf lets it connect from this host.",
			where, cfg.User, cfg.User)
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Sprintf("Nothing accepts connections on %s: start PostgreSQL there, or fix the host and port in the URL (--db or HOOKWATCH_DB).", where)
	case errors.As(err, &dnsErr):
		return fmt.Sprintf("The host %q does not resolve (%s): at boot, PostgreSQL's host may not be known yet, and hookwatch serve waits for it; else fix the host in the URL (--db or HOOKWATCH_DB).",
			dnsErr.Name, dnsReason(dnsErr))
	case tlsRefused(err):
		return fmt.Sprintf("PostgreSQL on %s does not accept TLS, which hookwatch requires of a database beyond this machine unless the URL says otherwise: the password would travel in clear. Turn TLS on in PostgreSQL (ssl = on in postgresql.conf, with its certificate), or add ?sslmode=disable to the URL (--db or HOOKWATCH_DB) to accept clear text knowingly.", where)
	case errors.As(err, &pgErr) && pgErr.Code == "42501": // insufficient_privilege: a database made without --owner
		return fmt.Sprintf("The user %q may not create hookwatch's tables in the database %q: make it the database's owner (as PostgreSQL's superuser: psql -c 'ALTER DATABASE %s OWNER TO %s'), as createdb --owner does (docs/team-server.md).",
			cfg.User, cfg.Database, cfg.Database, cfg.User)
	}
	return ""
}

// tlsRefused reports whether err says the server answered that it does
// not speak TLS, with sslmode require or stricter. pgconn has no error
// value for it: its message is the one thing to tell it by.
func tlsRefused(err error) bool {
	return strings.Contains(err.Error(), "server refused TLS connection")
}

// dnsReason is why a host did not resolve, without the resolver's address.
func dnsReason(err *net.DNSError) string {
	switch {
	case err.IsNotFound:
		return "no such host"
	case err.IsTimeout:
		return "the lookup timed out"
	}
	return err.Err
}

// Unreachable reports whether err, from Open, says PostgreSQL is not up
// where the URL points, rather than that it refuses the connection: nothing
// accepts connections there, the server is starting up, shutting down or
// recovering (57P03), or its host name does not resolve, which at boot is
// most often a database not up yet (a compose service, a DNS record made
// when its host starts) rather than a typo, which waiting only delays. A
// collector started beside its database (at boot, or by one compose file)
// waits on it (hookwatch serve); anything else, a wrong password or a
// missing database, will not mend by waiting.
func Unreachable(err error) bool {
	var pgErr *pgconn.PgError
	var dnsErr *net.DNSError
	return errors.Is(err, syscall.ECONNREFUSED) || errors.As(err, &pgErr) && pgErr.Code == "57P03" || // cannot_connect_now
		errors.As(err, &dnsErr)
}

// Where names the database: host, port and database name.
func (db *DB) Where() string { return db.where }

// Pool is the connection pool, for what the store contract does not cover
// (notifications between collectors).
func (db *DB) Pool() *pgxpool.Pool { return db.pool }

// Close closes the pool. It waits for an insert in progress; later calls of
// any method return ErrClosed. Closing twice is harmless.
func (db *DB) Close() error {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return nil
	}
	db.closed = true
	db.pool.Close()
	return nil
}

// open returns the pool, or ErrClosed.
func (db *DB) open() (*pgxpool.Pool, error) {
	db.mu.Lock()
	closed := db.closed
	db.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	return db.pool, nil
}

//go:embed migrations/*.sql
var migrationFS embed.FS

// migrate applies, each in its own transaction, the migrations the database
// has not seen, and refuses a database made by a newer hookwatch. Collectors
// starting together take turns on an advisory lock.
func (db *DB) migrate(ctx context.Context) error {
	start := time.Now()
	from, to, err := migrateUpTo(ctx, db.pool, math.MaxInt)
	db.migratedFrom, db.migratedTo, db.migrateTook = from, to, time.Since(start)
	return err
}

// Migrated implements store.Migrated.
func (db *DB) Migrated() (from, to int, took time.Duration) {
	return db.migratedFrom, db.migratedTo, db.migrateTook
}

// migrateUpTo is migrate on the database of pool, leaving out the
// migrations after version upTo. It returns the schema version it found
// and the one it left.
func migrateUpTo(ctx context.Context, pool *pgxpool.Pool, upTo int) (from, to int, err error) {
	ms, err := migration.Read(migrationFS, "migrations")
	if err != nil {
		return 0, 0, fmt.Errorf("cannot read migrations: %w", err)
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("cannot connect: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, lockMigrate); err != nil {
		return 0, 0, fmt.Errorf("cannot lock the schema: %w", err)
	}
	defer conn.Exec(context.Background(), `SELECT pg_advisory_unlock($1)`, lockMigrate)
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    integer PRIMARY KEY,
		name       text    NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now()
	)`); err != nil {
		return 0, 0, fmt.Errorf("cannot create schema_migrations: %w", err)
	}
	var current int
	if err := conn.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
		return 0, 0, fmt.Errorf("cannot read the schema version: %w", err)
	}
	latest := ms[len(ms)-1].Version
	if current > latest {
		return 0, 0, fmt.Errorf("the database has schema version %d, newer than this hookwatch knows (%d): upgrade hookwatch", current, latest)
	}
	for _, m := range ms {
		if m.Version <= current || m.Version > upTo {
			continue
		}
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, m.Version, m.Name)
			return err
		})
		if err != nil {
			return 0, 0, fmt.Errorf("cannot apply migration %s: %w", m.Name, err)
		}
	}
	return current, max(current, min(latest, upTo)), nil
}

// SchemaVersion returns the version of the latest migration applied.
func (db *DB) SchemaVersion(ctx context.Context) (int, error) {
	p, err := db.open()
	if err != nil {
		return 0, err
	}
	var v int
	if err := p.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("cannot read the schema version: %w", err)
	}
	return v, nil
}

// Strings are bytea in the database (see migrations/0001_init.sql). pgx
// sends a Go string as text, which bytea would parse for escapes, so every
// string argument goes as bytes and every string column is scanned as
// bytes.

// bind numbers the ? placeholders of a query of store/internal/sqlq ($1,
// $2, …; the queries hold no ? in literals) and turns string arguments into
// bytes.
func bind(q string, args []any) (string, []any) {
	var b strings.Builder
	b.Grow(len(q) + 16)
	n := 0
	for i := 0; i < len(q); i++ {
		if q[i] == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(q[i])
	}
	out := make([]any, len(args))
	for i, a := range args {
		if s, ok := a.(string); ok {
			a = []byte(s)
		}
		out[i] = a
	}
	return b.String(), out
}

// str scans a bytea column into a string; NULL is "".
type str struct{ p *string }

func (s str) ScanBytes(b []byte) error { *s.p = string(b); return nil }

// nullStr scans a nullable bytea column into a *string: nil for NULL.
type nullStr struct{ p **string }

func (s nullStr) ScanBytes(b []byte) error {
	if b == nil {
		*s.p = nil
		return nil
	}
	v := string(b)
	*s.p = &v
	return nil
}

// doc scans a JSON document column: nil for NULL or empty.
type doc struct{ p *json.RawMessage }

func (d doc) ScanBytes(b []byte) error {
	if len(b) == 0 {
		*d.p = nil
		return nil
	}
	*d.p = append([]byte(nil), b...)
	return nil
}

// nullDoc stores an empty document as NULL.
func nullDoc(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

// rows is the pool's sqlq.Rows, or ErrClosed: it runs a query of
// store/internal/sqlq, bound as bind says.
func (db *DB) rows() (sqlq.Rows, error) {
	p, err := db.open()
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, q string, args []any, each func(sqlq.Row) error) error {
		q, args = bind(q, args)
		rows, err := p.Query(ctx, q, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		return sqlq.Each(rows, each)
	}, nil
}

// TB is the part of testing.TB that MustOpenDB needs, declared here so that
// the hookwatch binary does not link the testing package.
type TB interface {
	Helper()
	Cleanup(func())
	Fatalf(format string, args ...any)
}

// MustOpenDB opens the database at url and closes it when the test ends. It
// fails the test when it cannot.
func MustOpenDB(tb TB, url string) *DB {
	tb.Helper()
	db, err := Open(context.Background(), url)
	if err != nil {
		tb.Fatalf("MustOpenDB: %v", err)
	}
	tb.Cleanup(func() { _ = db.Close() })
	return db
}

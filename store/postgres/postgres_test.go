package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookwatch/hookwatch/internal/freeport"
	"github.com/hookwatch/hookwatch/internal/pgtest"
	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/postgres"
	"github.com/hookwatch/hookwatch/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return postgres.MustOpenDB(t, pgtest.NewDatabase(t)) })
}

func TestRetention(t *testing.T) {
	storetest.RunRetention(t, func(t *testing.T) storetest.RetentionStore { return postgres.MustOpenDB(t, pgtest.NewDatabase(t)) })
}

func TestReopenKeepsData(t *testing.T) {
	url := pgtest.NewDatabase(t)
	db := postgres.MustOpenDB(t, url)
	events := storetest.CorpusEvents(t)
	if _, err := db.Insert(context.Background(), events); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db = postgres.MustOpenDB(t, url)
	seq, err := db.LastSeq(context.Background())
	if err != nil || seq != events[len(events)-1].Seq {
		t.Fatalf("LastSeq after reopen = %d, %v", seq, err)
	}
	// A replay after a restart, or through another collector, is still
	// recognised.
	if n, err := db.Insert(context.Background(), events); err != nil || n != 0 {
		t.Fatalf("replay after reopen stored %d, %v", n, err)
	}
	if v, err := db.SchemaVersion(context.Background()); err != nil || v < 1 {
		t.Fatalf("SchemaVersion = %d, %v", v, err)
	}
}

func TestTokenStore(t *testing.T) {
	storetest.RunTokenStore(t, func(t *testing.T) storetest.TokenStore { return postgres.MustOpenDB(t, pgtest.NewDatabase(t)) })
}

func TestOTLPDebts(t *testing.T) {
	storetest.RunOTLPDebts(t, func(t *testing.T) store.OTLPDebtStore { return postgres.MustOpenDB(t, pgtest.NewDatabase(t)) })
}

// TestLease: one collector at a time holds the model's lease; another
// waits for it and gets it once the holder's connection ends, whether it
// let go or its backend was terminated under it (a crashed process).
func TestLease(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a, b, c := postgres.MustOpenDB(t, url), postgres.MustOpenDB(t, url), postgres.MustOpenDB(t, url)
	ctxA, stopA := context.WithCancel(context.Background())
	defer stopA()
	// waiting is called only when another holds the lease: not for a.
	lostA, err := a.Lead(ctxA, func() { t.Error("a, the first, was told it waits for the lease") })
	if err != nil {
		t.Fatal(err)
	}
	type lease struct {
		lost <-chan struct{}
		err  error
	}
	var waited atomic.Int32
	wait := func(db *postgres.DB, ctx context.Context) chan lease {
		got := make(chan lease, 1)
		go func() {
			lost, err := db.Lead(ctx, func() { waited.Add(1) })
			got <- lease{lost, err}
		}()
		return got
	}
	ctxB, stopB := context.WithCancel(context.Background())
	defer stopB()
	gotB := wait(b, ctxB)
	select {
	case <-gotB:
		t.Fatal("b took the lease a holds")
	case <-time.After(300 * time.Millisecond):
	}
	stopA()
	<-lostA
	var lb lease
	select {
	case lb = <-gotB:
	case <-time.After(30 * time.Second):
		t.Fatal("b did not get the lease a let go")
	}
	if lb.err != nil {
		t.Fatal(lb.err)
	}
	if n := waited.Load(); n != 1 {
		t.Errorf("b, waiting for a's lease, was told so %d times, want once", n)
	}

	// The holder's backend ends under it, as when its process is killed:
	// the lease is lost there and the waiter gets it.
	ctxC, stopC := context.WithCancel(context.Background())
	defer stopC()
	gotC := wait(c, ctxC)
	if _, err := c.Pool().Exec(context.Background(), `SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid()`); err != nil {
		t.Fatal(err)
	}
	select {
	case <-lb.lost:
	case <-time.After(30 * time.Second):
		t.Fatal("b did not see its lease lost")
	}
	select {
	case lc := <-gotC:
		if lc.err != nil {
			t.Fatal(lc.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("c did not get the lease b lost")
	}

	// Waiting ends with its context.
	ctxD, stopD := context.WithCancel(context.Background())
	gotD := wait(postgres.MustOpenDB(t, url), ctxD)
	stopD()
	if ld := <-gotD; ld.err == nil {
		t.Fatal("Lead returned a lease after its context ended")
	}
}

// TestCallKeyMigration migrates a database of the schema before tool calls
// were keyed by their start (version 3) that holds storetest.PreKeyCalls.
func TestCallKeyMigration(t *testing.T) {
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	if err := postgres.MigrateForTest(ctx, url, 3); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range storetest.PreKeyCalls {
		_, err := conn.Exec(ctx, `INSERT INTO model_tool_calls (session_id, tool_use_id, agent_id, tool_name, status, started_at, updated_seq, doc, subtype, effect)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
			[]byte(c.SessionID), []byte(c.ToolUseID), []byte(c.AgentID), []byte(c.ToolName), []byte(c.Status),
			c.StartedAt.UnixNano(), c.UpdatedSeq, []byte(c.Doc), []byte(c.Subtype), []byte(c.Effect))
		if err != nil {
			t.Fatal(err)
		}
	}
	conn.Close(ctx)
	db := postgres.MustOpenDB(t, url)
	v, err := db.SchemaVersion(ctx)
	if err != nil || v < 4 {
		t.Fatalf("schema version %d, %v after Open", v, err)
	}
	// Open says what it did, for serve to log.
	var m store.Migrated = db
	if from, to, took := m.Migrated(); from != 3 || to != v || took <= 0 {
		t.Errorf("Migrated() = %d, %d, %v; want 3, %d, > 0", from, to, took, v)
	}
	storetest.CheckMigratedCalls(t, db)
}

// TestModelVersionMigration: the models stored before they named their
// version are of version 0, stale for any collector, which derives them
// again at its start.
func TestModelVersionMigration(t *testing.T) {
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	db := postgres.MustOpenDB(t, url)
	ids := storetest.SeedCurrentModels(t, db)
	db.Close()
	// Take the migration back, and those after it, as a database of the
	// schema before it.
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`DROP TABLE otlp_debts`, `DELETE FROM schema_migrations WHERE name = '0010_otlp_debts.sql'`,
		`ALTER TABLE model_sessions DROP COLUMN project`, `DELETE FROM schema_migrations WHERE name = '0009_session_project.sql'`,
		`ALTER TABLE model_sessions DROP COLUMN version`, `DELETE FROM schema_migrations WHERE name = '0008_model_version.sql'`,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	conn.Close(ctx)
	storetest.CheckAllStale(t, postgres.MustOpenDB(t, url), ids)
}

// TestOpenSaysWhatToDo: the failures an operator meets first when setting
// up a team server (docs/team-server.md) are answered with what to change,
// naming the database by host, port, user and name, and never the password.
func TestOpenSaysWhatToDo(t *testing.T) {
	s := pgtest.Shared(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedPort := l.Addr().(*net.TCPAddr).Port
	l.Close()
	const password = "pw-never-shown"
	f := func(url string, want ...string) {
		t.Helper()
		db, err := postgres.Open(context.Background(), url)
		if err == nil {
			db.Close()
			t.Fatalf("Open(%s): no error", url)
		}
		msg := err.Error()
		for _, w := range want {
			if !strings.Contains(msg, w) {
				t.Errorf("Open: %s\nwant it to say %q", msg, w)
			}
		}
		if strings.Contains(msg, password) {
			t.Errorf("Open: the error shows the password: %s", msg)
		}
	}
	f(fmt.Sprintf("postgres://postgres:%s@127.0.0.1:%d/hw_not_made?sslmode=disable", password, s.Port),
		`The database "hw_not_made" does not exist on 127.0.0.1:`, "createdb --owner postgres hw_not_made")
	f(fmt.Sprintf("postgres://nobody:%s@127.0.0.1:%d/postgres?sslmode=disable", password, s.Port),
		`refused the user "nobody"`, "createuser --pwprompt nobody", "pg_hba.conf")
	f(fmt.Sprintf("postgres://hw:%s@127.0.0.1:%d/hw?sslmode=disable&connect_timeout=5", password, closedPort),
		fmt.Sprintf("Nothing accepts connections on 127.0.0.1:%d: start PostgreSQL there", closedPort))

	// A database made without --owner: its user may connect but not make
	// the tables (PostgreSQL 15 and later).
	url := pgtest.NewDatabase(t)
	c, err := pgx.Connect(context.Background(), s.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	if _, err := c.Exec(context.Background(), "CREATE ROLE hw_guest LOGIN"); err != nil {
		t.Fatal(err)
	}
	v := c.PgConn().ParameterStatus("server_version")
	if major, _, _ := strings.Cut(v, "."); len(major) < 2 || major < "15" {
		t.Skipf("PostgreSQL %s lets every user create tables in public", v)
	}
	guest := strings.Replace(url, "postgres://postgres@", "postgres://hw_guest:"+password+"@", 1)
	db := url[strings.LastIndex(url, "/")+1 : strings.Index(url, "?")]
	f(guest, fmt.Sprintf(`The user "hw_guest" may not create hookwatch's tables in the database %q`, db),
		fmt.Sprintf("ALTER DATABASE %s OWNER TO hw_guest", db))
}

// TestOpenTLSByDefault: a URL without sslmode to a host beyond this machine
// requires TLS, so that the password never travels in clear to a server
// without it (pgx's default, prefer, falls back to clear text); such a
// server's refusal says how to accept clear text knowingly. An explicit
// sslmode is kept, and loopback keeps the default. The server is a real
// one without TLS, listening on this machine's own non-loopback address,
// which its pg_hba.conf (loopback only) refuses in clear text.
func TestOpenTLSByDefault(t *testing.T) {
	ip := nonLoopbackIPv4(t)
	ctx := context.Background()
	s, err := pgtest.Start(ctx, pgtest.Options{Settings: []string{"listen_addresses=*", "ssl=off"}})
	if errors.Is(err, pgtest.ErrNotInstalled) && os.Getenv("CI") == "" {
		t.Skip(err)
	} else if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	const password = "pw-never-shown"
	remote := fmt.Sprintf("postgres://postgres:%s@%s:%d/postgres", password, ip, s.Port)
	_, err = postgres.Open(ctx, remote+"?connect_timeout=5")
	if err == nil || !strings.Contains(err.Error(), "does not accept TLS") || !strings.Contains(err.Error(), "?sslmode=disable") ||
		strings.Contains(err.Error(), password) {
		t.Errorf("Open of a remote server without TLS, no sslmode: %v\nwant a refusal to connect in clear text, naming sslmode=disable", err)
	}
	// sslmode=disable, given: clear text, which pg_hba.conf refuses.
	_, err = postgres.Open(ctx, remote+"?sslmode=disable&connect_timeout=5")
	if err == nil || strings.Contains(err.Error(), "TLS") || !strings.Contains(err.Error(), "pg_hba.conf") {
		t.Errorf("Open with sslmode=disable: %v\nwant pg_hba.conf's refusal of a clear-text connection", err)
	}
	// Loopback, no sslmode: clear text, as before.
	local, err := s.CreateDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	db, err := postgres.Open(ctx, strings.TrimSuffix(local, "?sslmode=disable"))
	if err != nil {
		t.Fatalf("Open on loopback without sslmode: %v", err)
	}
	db.Close()
}

// nonLoopbackIPv4 is an IPv4 address of this machine beyond loopback; the
// test is skipped without one.
func nonLoopbackIPv4(t *testing.T) net.IP {
	ip, ok := freeport.HostIPv4()
	if !ok {
		t.Skip("no IPv4 address beyond loopback")
	}
	return ip
}

// TestOpenUnresolvableHost: a host name that does not resolve is what a
// database not up yet looks like at boot (its name not registered yet), so
// a collector waits for it (Unreachable), and the error says which host.
func TestOpenUnresolvableHost(t *testing.T) {
	_, err := postgres.Open(context.Background(), "postgres://hw:pw-never-shown@hookwatch-db.invalid:5432/hw?sslmode=disable&connect_timeout=5")
	if err == nil || !postgres.Unreachable(err) {
		t.Fatalf("Open of an unresolvable host: %v; Unreachable = %v, want true", err, postgres.Unreachable(err))
	}
	if msg := err.Error(); !strings.Contains(msg, `"hookwatch-db.invalid" does not resolve`) || strings.Contains(msg, "pw-never-shown") {
		t.Errorf("Open of an unresolvable host: %s\nwant it to name the host that does not resolve, without the password", msg)
	}
}

// Package pgtest runs a real PostgreSQL server for the tests and benchmarks
// that need one: a throwaway cluster in a temporary directory, listening on a
// free loopback port, made with the machine's own initdb and postgres.
//
// A test package shares one server among its tests, started by the first
// that asks for a database and stopped when the tests end:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
//
//	func TestSomething(t *testing.T) {
//		url := pgtest.NewDatabase(t) // a new, empty database
//		…
//	}
//
// Without PostgreSQL installed, NewDatabase skips the test with a message
// saying how to install it, except when CI is set: there it fails, so that CI
// cannot pass without running the tests. The bench command uses Start and
// Stop directly.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	neturl "net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookwatch/hookwatch/internal/freeport"
)

// Install says how to get PostgreSQL's server binaries.
const Install = "install PostgreSQL's server (Debian: apt-get install -y postgresql; its initdb and postgres are found in /usr/lib/postgresql/*/bin or on PATH)"

// ErrNotInstalled is returned by Start when no initdb and postgres binaries
// are found.
var ErrNotInstalled = errors.New("PostgreSQL is not installed: " + Install)

// Options describe a server.
type Options struct {
	// Durable keeps PostgreSQL's defaults for fsync and synchronous_commit;
	// tests turn both off, since the cluster is thrown away.
	Durable bool
	// Settings are further "name=value" server settings (postgres -c).
	Settings []string
}

// Server is a running PostgreSQL cluster.
type Server struct {
	// URL connects to the server's "postgres" database as its superuser.
	URL  string
	Port int

	dir    string // the cluster's parent directory: data/ and the log
	cmd    *exec.Cmd
	exited chan struct{}
	dbs    atomic.Int64
}

// Start makes a new cluster in a temporary directory and starts its server.
// As root, initdb and postgres refuse to run: they run as the user postgres,
// which owns the directory. Stop ends the server and removes the directory;
// the server also dies with the process that started it.
func Start(ctx context.Context, o Options) (*Server, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "hookwatch-pg-")
	if err != nil {
		return nil, fmt.Errorf("cannot make the cluster directory: %w", err)
	}
	cred, err := runAs(dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s := &Server{dir: dir, exited: make(chan struct{})}
	data := filepath.Join(dir, "data")
	initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres",
		"--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("cannot initdb: %w\n%s", err, out)
	}
	if s.Port, err = freeport.Port(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	args := []string{"-D", data, "-p", strconv.Itoa(s.Port),
		"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=", "-c", "max_connections=200"}
	if !o.Durable {
		args = append(args, "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	}
	for _, kv := range o.Settings {
		args = append(args, "-c", kv)
	}
	logf, err := os.Create(filepath.Join(dir, "postgres.log"))
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("cannot create the server log: %w", err)
	}
	defer logf.Close()
	s.cmd = exec.Command(filepath.Join(bin, "postgres"), args...)
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	s.cmd.SysProcAttr = serverAttr(cred)
	// The parent-death signal comes when the thread that started the
	// process ends, and the Go runtime ends a thread whenever a goroutine
	// that locked one returns: the server is started, and waited for, on a
	// thread of its own that lives as long as it does.
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := s.cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		s.cmd.Wait()
		close(s.exited)
	}()
	if err := <-started; err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("cannot start postgres: %w", err)
	}
	s.URL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", s.Port)
	if err := s.waitReady(ctx); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "postgres.log"))
		s.Stop()
		return nil, fmt.Errorf("%w\n%s", err, log)
	}
	return s, nil
}

// waitReady waits until the server accepts a connection, for at most 30 s.
func (s *Server) waitReady(ctx context.Context) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := pgx.Connect(ctx, s.URL)
		if err == nil {
			return c.Close(ctx)
		}
		select {
		case <-s.exited:
			return fmt.Errorf("postgres exited before accepting connections: %w", err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres does not accept connections after 30 s: %w", err)
		}
	}
}

// Pid is the process id of the server's postmaster, whose children are
// its backends (for the benchmarks' CPU accounting); 0 before it started.
func (s *Server) Pid() int {
	if s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// Stop shuts the server down (fast shutdown: sessions are ended, nothing
// waits for clients) and removes its directory.
func (s *Server) Stop() error {
	if s.cmd != nil && s.cmd.Process != nil {
		s.cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-s.exited:
		case <-time.After(10 * time.Second):
			s.cmd.Process.Kill()
			<-s.exited
		}
	}
	return os.RemoveAll(s.dir)
}

// CreateDatabase creates a new, empty database and returns its URL.
func (s *Server) CreateDatabase(ctx context.Context) (string, error) {
	c, err := pgx.Connect(ctx, s.URL)
	if err != nil {
		return "", fmt.Errorf("cannot connect to %s: %w", s.URL, err)
	}
	defer c.Close(ctx)
	name := fmt.Sprintf("hookwatch_%d", s.dbs.Add(1))
	if _, err := c.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", fmt.Errorf("cannot create database %s: %w", name, err)
	}
	return strings.Replace(s.URL, "/postgres?", "/"+name+"?", 1), nil
}

// binDir finds the directory of initdb and postgres: that of initdb on
// PATH (Debian links only the client programs there), else the newest
// /usr/lib/postgresql/*/bin.
func binDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			dirs = append([]string{filepath.Dir(real)}, dirs...)
		}
	}
	for _, d := range dirs {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	return "", ErrNotInstalled
}

func version(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

func isExec(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// runAs returns the credentials initdb and postgres run with, and gives
// them dir: nil (this process's) unless this process is root, which
// PostgreSQL refuses to run as; then the user postgres.
func runAs(dir string) (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("PostgreSQL refuses to run as root and there is no user postgres (%v): %s", err, Install)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(dir, uid, gid); err != nil {
		return nil, fmt.Errorf("cannot give %s to the user postgres: %w", dir, err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// The server of a test binary, started by the first test that asks for it
// and stopped by Main.
var (
	once     sync.Once
	shared   *Server
	startErr error
)

// Main runs the tests of a package and then stops the server the first
// test that needed one started (tests that need none start none); it returns
// the exit code for os.Exit.
func Main(m *testing.M) int {
	code := m.Run()
	Stop()
	return code
}

// Stop stops the package's server, if a test started it; a TestMain that
// does more than Main calls it after m.Run.
func Stop() {
	once.Do(func() { startErr = errors.New("pgtest: the tests have ended") })
	if shared != nil {
		shared.Stop()
	}
}

// NewDatabase returns the URL of a new, empty database on the package's
// server. Without a server it skips the test, saying how to install
// PostgreSQL, or fails it when the environment sets CI.
func NewDatabase(tb testing.TB) string {
	tb.Helper()
	s := Shared(tb)
	url, err := s.CreateDatabase(context.Background())
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	return url
}

// Shared returns the package's server, starting it on first use, skipping
// or failing the test as NewDatabase does when there is none. The package's
// TestMain must call Main, which stops it.
func Shared(tb testing.TB) *Server {
	tb.Helper()
	once.Do(func() { shared, startErr = Start(context.Background(), Options{}) })
	if shared != nil {
		return shared
	}
	if os.Getenv("CI") != "" || !errors.Is(startErr, ErrNotInstalled) {
		tb.Fatalf("pgtest: no PostgreSQL server: %v", startErr)
	}
	tb.Skipf("pgtest: %v", startErr)
	return nil
}

// CutDatabase makes the database of url (one of NewDatabase's) refuse
// connections and ends those it has, as a database gone down does for its
// clients, while its server goes on; restore lets it take connections
// again. The test's cleanup restores it too, if the test did not.
func CutDatabase(tb testing.TB, url string) (restore func()) {
	tb.Helper()
	admin, name := adminOf(tb, url)
	exec := func(sql string, args ...any) {
		tb.Helper()
		c, err := pgx.Connect(context.Background(), admin)
		if err != nil {
			tb.Fatalf("pgtest: cannot connect to the server of %s: %v", name, err)
		}
		defer c.Close(context.Background())
		if _, err := c.Exec(context.Background(), sql, args...); err != nil {
			tb.Fatalf("pgtest: %s: %v", sql, err)
		}
	}
	ident := pgx.Identifier{name}.Sanitize()
	exec(`ALTER DATABASE ` + ident + ` ALLOW_CONNECTIONS false`)
	exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1`, name)
	var once sync.Once
	restore = func() {
		tb.Helper()
		once.Do(func() { exec(`ALTER DATABASE ` + ident + ` ALLOW_CONNECTIONS true`) })
	}
	tb.Cleanup(restore)
	return restore
}

// adminOf returns the URL of the "postgres" database on the server of
// dbURL, as its superuser connects to it, and the name of dbURL's database.
func adminOf(tb testing.TB, dbURL string) (admin, name string) {
	tb.Helper()
	u, err := neturl.Parse(dbURL)
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	name = strings.TrimPrefix(u.Path, "/")
	if name == "" || name == "postgres" {
		tb.Fatalf("pgtest: %s names no database of NewDatabase's", dbURL)
	}
	u.Path = "/postgres"
	return u.String(), name
}

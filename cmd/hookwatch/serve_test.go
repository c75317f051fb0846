package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"database/sql"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/hooksock"
	"github.com/hookwatch/hookwatch/internal/otelcol"
	"github.com/hookwatch/hookwatch/internal/pgtest"
	"github.com/hookwatch/hookwatch/internal/syncbuf"
	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/postgres"
	"github.com/hookwatch/hookwatch/store/sqlite"
	"github.com/hookwatch/hookwatch/store/storetest"
)

// serveOutput is a stdout the test can read while serve writes it.
type serveOutput struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	line chan string
}

func (o *serveOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.buf.Write(p)
	if i := bytes.IndexByte(o.buf.Bytes(), '\n'); i >= 0 {
		select {
		case o.line <- o.buf.String()[:i]:
		default:
		}
	}
	return len(p), nil
}

// startServe runs `hookwatch serve args…` until ctx ends and returns the
// first line it printed and the channel of its result.
func startServe(t *testing.T, ctx context.Context, args ...string) (string, <-chan error) {
	t.Helper()
	out := &serveOutput{line: make(chan string, 1)}
	var stderr syncbuf.Buffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, append([]string{"serve"}, args...), nil, out, &stderr) }()
	select {
	case line := <-out.line:
		return line, done
	case err := <-done:
		t.Fatalf("serve exited: %v %s", err, stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatal("serve printed no address")
	}
	return "", nil
}

// servedURL is the URL of serve's first line, "hookwatch serve: listening
// on URL (database …)".
func servedURL(line string) string {
	url, _, _ := strings.Cut(strings.TrimPrefix(line, "hookwatch serve: listening on "), " ")
	return url
}

// freshHome points HOOKWATCH_HOME at a new directory, with no database or
// token from the environment, for the test, and returns it.
func freshHome(t *testing.T) string {
	home := filepath.Join(t.TempDir(), "home")
	t.Setenv("HOOKWATCH_HOME", home)
	t.Setenv("HOOKWATCH_DB", "")
	t.Setenv("HOOKWATCH_TOKEN", "")
	return home
}

func TestServeRunsAndShutsDown(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOOKWATCH_HOME", filepath.Join(dir, "home"))
	t.Setenv("HOOKWATCH_DB", "")
	t.Setenv("HOOKWATCH_TOKEN", "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	line, done := startServe(t, ctx, "--addr", "127.0.0.1:0", "--signal-failed-repeats", "7", "--signal-outlier-calls", "12", "--signal-stalled-after", "2m")
	const prefix = "hookwatch serve: listening on "
	if !strings.HasPrefix(line, prefix) {
		t.Fatalf("first line %q", line)
	}
	url, _, _ := strings.Cut(strings.TrimPrefix(line, prefix), " ")
	dbPath := filepath.Join(dir, "home", "hookwatch.db")
	if !strings.Contains(line, dbPath) {
		t.Errorf("the line does not name the default database %s: %q", dbPath, line)
	}
	if fi, err := os.Stat(filepath.Join(dir, "home")); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("HOOKWATCH_HOME not created 0700: %v %v", fi.Mode(), err)
	}

	res, err := http.Get(url + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(b), `"version":"`+version+`"`) {
		t.Fatalf("healthz: %d %s", res.StatusCode, b)
	}
	// Every route serve mounts answers: the dashboard, the http hooks.
	for _, c := range []struct {
		method, path, body string
		want               int
		contains           string
	}{
		{"GET", "/", "", 200, "<!doctype html>"},
		{"POST", "/v1/hooks/claude", `{"session_id":"s0","hook_event_name":"Notification","message":"hi"}`, 200, ""},
		// The signals' thresholds are the flags'.
		{"GET", "/v1/sessions/s0/signals", "", 200, `"thresholds":{"failed_repeats":7,"read_repeats":5,"thrash_switches":3,"outlier_factor":3,"outlier_siblings":2,"outlier_calls":12,"outlier_duration":"5m0s","stalled_after":"2m0s"}`},
	} {
		req, _ := http.NewRequest(c.method, url+c.path, strings.NewReader(c.body))
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != c.want || !strings.Contains(string(b), c.contains) {
			t.Errorf("%s %s: %d %.200s", c.method, c.path, res.StatusCode, b)
		}
	}

	// Attached to the home's spool, it answers the home's hooks on its
	// socket, naming the address hooks deliver to.
	sock := hooksock.Path(filepath.Join(dir, "home"))
	reply, err := hooksock.Ask(sock, hooksock.Request{Payload: []byte(`{"session_id":"s0","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`)}, time.Now().Add(5*time.Second))
	if err != nil || reply.Addr != strings.TrimPrefix(url, "http://") || reply.Code != 0 || reply.Stdout != nil {
		t.Errorf("hook socket answered %+v, %v; want no opinion from %s", reply, err, url)
	}

	env := event.Envelope{ID: event.NewID(time.Now()), Runtime: event.RuntimeClaudeCode, ReceivedAt: time.Now(),
		Payload: json.RawMessage(`{"session_id":"s1","hook_event_name":"Stop"}`)}
	body, _ := json.Marshal(map[string]any{"envelopes": []event.Envelope{env}})
	res, err = http.Post(url+"/v1/events", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("POST: %d", res.StatusCode)
	}

	cancel() // what SIGTERM does
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve after SIGTERM: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop")
	}
	if _, err := os.Lstat(sock); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the hook socket outlived serve: %v", err)
	}
	db, err := sqlite.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Session(context.Background(), "s1"); err != nil {
		t.Fatalf("the event is not in the database: %v", err)
	}
}

func TestServeRefuses(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOOKWATCH_HOME", dir)
	t.Setenv("HOOKWATCH_TOKEN", "")
	f := func(want string, args ...string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), append([]string{"serve"}, args...), nil, &stdout, &stderr)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("serve %v: %v, want an error with %q", args, err, want)
		}
		if stdout.Len() > 0 {
			t.Errorf("serve %v printed %q", args, stdout.String())
		}
	}
	f("refusing to listen on 0.0.0.0:0 without authentication", "--addr", "0.0.0.0:0")
	f("refusing to listen on :7421", "--addr", ":7421")
	f("--insecure-no-token", "--addr", "[::]:0")
	// The flags asked for what serve never does: a usage error, exit 2.
	if code := exitCode(run(context.Background(), []string{"serve", "--addr", "0.0.0.0:0"}, nil, io.Discard, io.Discard), io.Discard); code != 2 {
		t.Errorf("serve --addr 0.0.0.0:0 without a token: exit %d, want 2", code)
	}
	// Beyond loopback, an admin token one could guess is refused.
	t.Setenv("HOOKWATCH_TOKEN", "short")
	f("refusing to listen on 0.0.0.0:0 with a HOOKWATCH_TOKEN of 5 characters", "--addr", "0.0.0.0:0")
	t.Setenv("HOOKWATCH_TOKEN", "")
	f("unexpected argument", "extra")
	f("flag provided but not defined", "--nope")
	f("the --signal-* flags take a count from 1 to 1000", "--signal-read-repeats", "0")
	f("--watch-transcripts is auto, off or a directory", "--watch-transcripts", "")
	file := filepath.Join(dir, "a-file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	f("--codex-rollouts is auto, off or a directory, and "+file+" is not a directory", "--codex-rollouts", file)
	f("--watch-transcripts is auto, off or a directory, and "+file+" is not a directory", "--watch-transcripts", file)
	f("--signal-outlier-factor takes a number from 1 to 1000", "--signal-outlier-factor", "0.5")
	f("take a duration from 1s to 720h", "--signal-stalled-after", "10ms")
	// A database that cannot be reached stops serve once it waited for it
	// (dbWaitFor), and neither the error nor what it said while waiting
	// repeats the password of the URL.
	defer func(every, wait time.Duration) { dbWaitEvery, dbWaitFor = every, wait }(dbWaitEvery, dbWaitFor)
	dbWaitEvery, dbWaitFor = 20*time.Millisecond, 100*time.Millisecond
	t.Setenv("HOOKWATCH_DB", "postgresql://hw:s3cr3t@127.0.0.1:1/hw?connect_timeout=5")
	f("cannot open the database", "--addr", "127.0.0.1:0")
	var stderr bytes.Buffer
	if err := run(context.Background(), []string{"serve", "--addr", "127.0.0.1:0"}, nil, io.Discard, &stderr); err == nil ||
		strings.Contains(err.Error()+stderr.String(), "s3cr3t") || !strings.Contains(stderr.String(), "waiting for PostgreSQL") {
		t.Errorf("serve on an unreachable database: %v %s", err, stderr.String())
	}
	// So for a host name that does not resolve (yet, at boot), named.
	t.Setenv("HOOKWATCH_DB", "postgresql://hw:s3cr3t@hookwatch-db.invalid:5432/hw?connect_timeout=5")
	stderr.Reset()
	if err := run(context.Background(), []string{"serve", "--addr", "127.0.0.1:0"}, nil, io.Discard, &stderr); err == nil ||
		strings.Contains(err.Error()+stderr.String(), "s3cr3t") || !strings.Contains(stderr.String(), "waiting for PostgreSQL") ||
		!strings.Contains(stderr.String(), `"hookwatch-db.invalid" does not resolve`) {
		t.Errorf("serve on a database host that does not resolve: %v %s", err, stderr.String())
	}
}

// TestServeDBOtherURL: a --db or HOOKWATCH_DB URL of a database hookwatch
// does not speak is a usage error naming its scheme, not a SQLite file
// made in a directory called "mysql:" that the collector then serves (nor
// an empty result of export); the rest of the URL, which may hold a
// password, is not repeated. A path or a postgres:// URL is not a URL to
// refuse.
func TestServeDBOtherURL(t *testing.T) {
	freshHome(t)
	cwd := t.TempDir()
	t.Chdir(cwd)
	for _, args := range [][]string{
		{"serve", "--addr", "127.0.0.1:0", "--db", "mysql://hw:s3cr3t@127.0.0.1/hw"},
		{"serve", "--addr", "127.0.0.1:0", "--db", "sqlite:///var/lib/hw.db"},
		{"export", "--since", "1d", "--db", "mysql://hw:s3cr3t@127.0.0.1/hw"},
		{"prune", "--older-than", "1d", "--db", "Postgres://hw:s3cr3t@127.0.0.1/hw"},
	} {
		var stdout, stderr bytes.Buffer
		// A serve that starts after all ends here, and fails the test.
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		err := run(ctx, args, nil, &stdout, &stderr)
		cancel()
		scheme, _, _ := strings.Cut(args[len(args)-1], "://")
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), scheme+":// URL") || !strings.Contains(err.Error(), "postgres://") ||
			strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("%v: %v, want a usage error naming %s:// and not the password", args, err, scheme)
		}
		if stdout.Len() > 0 {
			t.Errorf("%v printed %q", args, stdout.String())
		}
	}
	if made, _ := os.ReadDir(cwd); len(made) > 0 {
		t.Errorf("the refused URLs made %v in the working directory", made)
	}
	for _, dsn := range []string{"", "hw.db", "./a://b.db", "/var/lib/hw.db", `C:\hw\hw.db`, "postgres://h/db", "postgresql://h/db"} {
		if err := checkDSN(dsn); err != nil {
			t.Errorf("checkDSN(%q): %v", dsn, err)
		}
	}
}

// TestServeDBKeywordString: a --db or HOOKWATCH_DB that is libpq's
// key=value connection string is a usage error that says to write a
// postgres:// URL, for every command that opens a database: taken for a
// SQLite path, it became a file named after the string, password
// included, which serve then served, printing that name.
func TestServeDBKeywordString(t *testing.T) {
	freshHome(t)
	cwd := t.TempDir()
	t.Chdir(cwd)
	const dsn = "host=127.0.0.1 port=1 user=hw password=s3cr3t dbname=hw"
	for _, args := range [][]string{
		{"serve", "--addr", "127.0.0.1:0", "--db", dsn},
		{"token", "create", "--user", "ann", "--db", dsn},
		{"export", "--since", "1d", "--db", dsn},
		{"prune", "--older-than", "1d", "--db", dsn},
	} {
		var stdout, stderr bytes.Buffer
		// A serve that starts after all ends here, and fails the test.
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		err := run(ctx, args, nil, &stdout, &stderr)
		cancel()
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "key=value") || !strings.Contains(err.Error(), "postgres://") ||
			strings.Contains(err.Error()+stderr.String(), "s3cr3t") {
			t.Errorf("%v: %v, want a usage error asking for a postgres:// URL and not the password", args[:2], err)
		}
		if stdout.Len() > 0 {
			t.Errorf("%v printed %q", args[:2], stdout.String())
		}
	}
	if made, _ := os.ReadDir(cwd); len(made) > 0 {
		t.Errorf("the refused strings made %v in the working directory", made)
	}
}

// TestServeHomeUnusable: a HOOKWATCH_HOME that is a file, or one under a
// file, or one serve cannot write in, stops serve before the database is
// opened, with an error naming the directory, the variable and the way out.
func TestServeHomeUnusable(t *testing.T) {
	freshHome(t)
	file := filepath.Join(t.TempDir(), "home")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := func(home string, want ...string) {
		t.Helper()
		t.Setenv("HOOKWATCH_HOME", home)
		var stdout bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		err := run(ctx, []string{"serve", "--addr", "127.0.0.1:0"}, nil, &stdout, io.Discard)
		for _, w := range append(want, home+" (HOOKWATCH_HOME)", "set HOOKWATCH_HOME to a directory you can write in") {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("serve with HOOKWATCH_HOME=%s: %v, want an error saying %q", home, err, w)
			}
		}
		if stdout.Len() > 0 {
			t.Errorf("serve with HOOKWATCH_HOME=%s printed %q", home, stdout.String())
		}
	}
	f(file, "is a file", "move it away")
	f(filepath.Join(file, "sub"), "cannot create the data directory")
	f(filepath.Join(file, "sub", "deeper"), "cannot create the data directory", "mkdir "+file+": not a directory")
	if os.Geteuid() != 0 { // root writes in any directory
		ro := t.TempDir()
		if err := os.Chmod(ro, 0o500); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(ro, 0o700) })
		f(ro, "cannot write in the data directory")
	}
}

// TestServeTranscriptsDir: auto follows Claude Code's projects directory,
// there or not yet (the collector looks until it appears), off nothing,
// anything else that directory.
func TestServeTranscriptsDir(t *testing.T) {
	config := t.TempDir()
	t.Setenv("CLAUDE_CONFIG_DIR", config)
	f := func(setting, want string) {
		t.Helper()
		if got, err := serveTranscriptsDir(setting); err != nil || got != want {
			t.Errorf("serveTranscriptsDir(%q) = %q, %v; want %q", setting, got, err, want)
		}
	}
	f("auto", filepath.Join(config, "projects")) // Claude Code has not run here yet
	if err := os.Mkdir(filepath.Join(config, "projects"), 0o700); err != nil {
		t.Fatal(err)
	}
	f("auto", filepath.Join(config, "projects"))
	f("off", "")
	f("/some/projects", "/some/projects")
}

// TestServeBadAddr: an address that is not HOST:PORT is a usage error that
// says so, not a refusal to listen without a token.
func TestServeBadAddr(t *testing.T) {
	freshHome(t)
	for addr, want := range map[string]string{
		"127.0.0.1":       "want HOST:PORT",
		"nonsense":        "want HOST:PORT",
		"127.0.0.1:http":  `the port "http"`,
		"127.0.0.1:70000": `the port "70000"`,
		"127.0.0.1:":      `the port ""`,
		"256.1.1.1:80":    `"256.1.1.1" is not an IP address`,
	} {
		err := run(context.Background(), []string{"serve", "--addr", addr}, nil, io.Discard, io.Discard)
		if err == nil || !errors.Is(err, errUsage) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "authentication") {
			t.Errorf("serve --addr %s: %v, want a usage error saying %s", addr, err, want)
		}
	}
	for _, addr := range []string{"127.0.0.1:0", ":7421", "localhost:7421", "[::1]:7421", "0.0.0.0:7421", "example.com:80"} {
		if err := checkListenAddr(addr); err != nil {
			t.Errorf("checkListenAddr(%s): %v", addr, err)
		}
	}
}

func TestServeIsLoopback(t *testing.T) {
	f := func(addr string, want bool) {
		t.Helper()
		if got := serveIsLoopback(addr); got != want {
			t.Errorf("serveIsLoopback(%q) = %v, want %v", addr, got, want)
		}
	}
	f("127.0.0.1:7421", true)
	f("127.1.2.3:80", true)
	f("localhost:7421", true)
	f("LOCALHOST:1", true)
	f("[::1]:7421", true)
	f(":7421", false)
	f("0.0.0.0:7421", false)
	f("[::]:7421", false)
	f("192.168.1.10:7421", false)
	f("example.com:7421", false)
	f("127.0.0.1", false) // not an address with a port
}

func TestServeListenAddr(t *testing.T) {
	f := func(asked, want string) {
		t.Helper()
		ln, err := net.Listen("tcp", asked)
		if err != nil {
			t.Skipf("cannot listen on %s here: %v", asked, err)
		}
		defer ln.Close()
		port := fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
		if got := listenAddr(asked, ln.Addr()); got != strings.ReplaceAll(want, "PORT", port) {
			t.Errorf("listenAddr(%q) = %q, want %q", asked, got, want)
		}
	}
	// The host asked for, not the [::] a dual-stack listener reports.
	f("0.0.0.0:0", "0.0.0.0:PORT")
	f("127.0.0.1:0", "127.0.0.1:PORT")
	f("localhost:0", "localhost:PORT")
	f(":0", "[::]:PORT")
}

func TestServeHelpNamesTheToken(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"serve", "--help"}, nil, &stdout, &stderr)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("serve --help: %v", err)
	}
	for _, want := range []string{"HOOKWATCH_TOKEN", "HOOKWATCH_HOME", "--addr", "hookwatch stop", "--watch-transcripts", "HOOKWATCH_WATCH_TRANSCRIPTS",
		"password here shows in ps"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("serve --help does not mention %s:\n%s", want, stdout.String())
		}
	}
}

// TestServePostgres runs serve on a real PostgreSQL database: what is posted
// is stored there and served back.
func TestServePostgres(t *testing.T) {
	dbURL := pgtest.NewDatabase(t)
	freshHome(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	line, done := startServe(t, ctx, "--addr", "127.0.0.1:0", "--db", dbURL)
	if !strings.Contains(line, "(database postgres 127.0.0.1:") {
		t.Errorf("the line does not name the PostgreSQL database: %q", line)
	}
	url := servedURL(line)

	env := event.Envelope{ID: event.NewID(time.Now()), Runtime: event.RuntimeClaudeCode, ReceivedAt: time.Now(),
		Payload: json.RawMessage(`{"session_id":"pg-1","hook_event_name":"Stop"}`)}
	body, _ := json.Marshal(map[string]any{"envelopes": []event.Envelope{env, env}})
	for range 2 { // a retry stores nothing twice
		res, err := http.Post(url+"/v1/events", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Fatalf("POST: %d", res.StatusCode)
		}
	}
	res, err := http.Get(url + "/v1/sessions/pg-1")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(b), `"event_count":1`) {
		t.Fatalf("GET /v1/sessions/pg-1: %d %s", res.StatusCode, b)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve after SIGTERM: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop")
	}
	db := postgres.MustOpenDB(t, dbURL)
	if s, err := db.Session(context.Background(), "pg-1"); err != nil || s.EventCount != 1 {
		t.Fatalf("the database holds %+v, %v", s, err)
	}
}

// testCert writes a self-signed certificate for 127.0.0.1 and its key into
// dir and returns their files and the certificate's DER.
func testCert(t *testing.T, dir string) (certFile, keyFile string, der []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "hookwatch test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err = x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600)

	return certFile, keyFile, der
}

// startServeTLS runs serve with a certificate testCert writes into dir and
// returns its https:// URL, the certificate's file and DER, and what serve
// returns once ctx ends.
func startServeTLS(t *testing.T, ctx context.Context, dir string) (url, certFile string, der []byte, done <-chan error) {
	t.Helper()
	certFile, keyFile, der := testCert(t, dir)
	line, done := startServe(t, ctx, "--addr", "127.0.0.1:0", "--tls-cert", certFile, "--tls-key", keyFile)
	url = servedURL(line)
	if !strings.HasPrefix(url, "https://") {
		t.Fatalf("serve with TLS announced %q", line)
	}
	return url, certFile, der, done
}

// TestServeTLS serves HTTPS with --tls-cert and --tls-key: a client that
// trusts the certificate gets answers, plain HTTP gets none.
func TestServeTLS(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOOKWATCH_HOME", filepath.Join(dir, "home"))
	t.Setenv("HOOKWATCH_DB", "")
	t.Setenv("HOOKWATCH_TOKEN", "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url, certFile, der, done := startServeTLS(t, ctx, dir)
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}, Timeout: 10 * time.Second}
	res, err := client.Get(url + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /healthz over TLS: %d", res.StatusCode)
	}
	plain := "http://" + strings.TrimPrefix(url, "https://")
	if res, err := http.Get(plain + "/healthz"); err == nil {
		res.Body.Close()
		if res.StatusCode == http.StatusOK {
			t.Fatal("plain HTTP got an answer from a TLS collector")
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}

	// One without the other is a usage error.
	if err := run(context.Background(), []string{"serve", "--tls-cert", certFile}, nil, io.Discard, io.Discard); err == nil {
		t.Error("--tls-cert without --tls-key was accepted")
	}
}

// TestServeAddressTaken: a second `hookwatch serve` on a taken address says
// why — the usual case being the collector a hook or `hookwatch demo`
// already started for this home — instead of a bare bind error.
func TestServeAddressTaken(t *testing.T) {
	freshHome(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	line, done := startServe(t, ctx, "--addr", "127.0.0.1:0")
	url := servedURL(line)
	addr := strings.TrimPrefix(url, "http://")

	f := func(addr string, want ...string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		err := run(ctx, []string{"serve", "--addr", addr}, nil, &stdout, &stderr)
		if err == nil {
			t.Fatalf("serve on taken %s: no error", addr)
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("serve on taken %s: %q does not say %q", addr, err, w)
			}
		}
	}
	f(addr, "a collector already runs for", "http://"+addr, "hookwatch stop")
	// That collector is a serve run in the foreground, as a user runs it in
	// another shell: the error must not say a hook started it.
	f(addr, "started by a hookwatch serve in another shell")

	// Another home's collector, whose address another program holds.
	t.Setenv("HOOKWATCH_HOME", filepath.Join(t.TempDir(), "other"))
	other, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	f(other.Addr().String(), "address already in use", "another program holds that address", "--addr")

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("the first serve: %v", err)
	}
}

// TestServeOneCollectorPerDatabase: a second collector on a SQLite file one
// already serves refuses to start, on any address, naming the first: two
// would each keep and write a model of the same sessions.
func TestServeOneCollectorPerDatabase(t *testing.T) {
	home := freshHome(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	line, done := startServe(t, ctx, "--addr", "127.0.0.1:0")
	url := servedURL(line)

	serveErr := func(args ...string) string {
		t.Helper()
		err := run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...), nil, io.Discard, io.Discard)
		if err == nil {
			t.Fatalf("a second serve %v started", args)
		}
		return err.Error()
	}
	// This home's collector: the second is told where it runs.
	if msg := serveErr(); !strings.Contains(msg, "a collector already runs for "+home) || !strings.Contains(msg, url) || !strings.Contains(msg, "hookwatch stop") {
		t.Errorf("second serve of the home: %q", msg)
	}
	// Another home, the same database: its process is named.
	t.Setenv("HOOKWATCH_HOME", filepath.Join(t.TempDir(), "other"))
	db := filepath.Join(home, "hookwatch.db")
	if msg := serveErr("--db", db); !strings.Contains(msg, "cannot serve "+db) || !strings.Contains(msg, fmt.Sprintf("(pid %d)", os.Getpid())) || !strings.Contains(msg, "--db") {
		t.Errorf("second serve of the database: %q", msg)
	}
	// Another database of the other home serves.
	_, done2 := startServe(t, ctx, "--addr", "127.0.0.1:0")
	cancel()
	for _, d := range []<-chan error{done, done2} {
		if err := <-d; err != nil {
			t.Fatalf("serve: %v", err)
		}
	}
}

// TestServeModelCacheBounds: a model cache of no memory, or more than the
// flag allows, is a usage error, not a collector that reloads every group.
func TestServeModelCacheBounds(t *testing.T) {
	for _, v := range []string{"0", "-5", "1048577", "lots"} {
		if err := run(context.Background(), []string{"serve", "--model-cache-mb", v}, nil, io.Discard, io.Discard); err == nil {
			t.Errorf("--model-cache-mb %s was accepted", v)
		}
	}
}

// TestServeEnvListed: the variables serve reads (serveEnv, which a service
// unit passes on) are those its --help names.
func TestServeEnvListed(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"serve", "--help"}, nil, &out, &out); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("serve --help: %v", err)
	}
	named := regexp.MustCompile(`HOOKWATCH_[A-Z_]+[A-Z]`).FindAllString(out.String(), -1)
	slices.Sort(named)
	named = slices.Compact(named)
	var ours []string
	for _, k := range serveEnv {
		if strings.HasPrefix(k, "HOOKWATCH_") {
			ours = append(ours, k)
		}
	}
	slices.Sort(ours)
	if !slices.Equal(named, ours) {
		t.Errorf("serve --help names %v\nserveEnv holds %v", named, ours)
	}
}

// TestServeFollowDir: auto and off are read in any case; a directory that
// is not there yet is taken (followed once it appears).
func TestServeFollowDir(t *testing.T) {
	auto := func() (string, error) { return "/auto", nil }
	for setting, want := range map[string]string{"off": "", "OFF": "", "Off": "", "auto": "/auto", "AUTO": "/auto", "/not/yet": "/not/yet"} {
		if got, err := serveFollowDir("--codex-rollouts", setting, auto); err != nil || got != want {
			t.Errorf("%q: %q, %v; want %q", setting, got, err, want)
		}
	}
}

// TestServeFlagsFromEnv: a flag of serveFlagsFromEnv takes its default from
// its variable, the command line overrides it, its usage names it, and a
// value the flag refuses is a usage error that names the variable.
func TestServeFlagsFromEnv(t *testing.T) {
	newSet := func() (*flag.FlagSet, *duration, *int) {
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var retain duration
		fs.Var(&retain, "retain", "delete old sessions")
		cache := fs.Int("model-cache-mb", 128, "memory")
		return fs, &retain, cache
	}
	env := map[string]string{"HOOKWATCH_RETAIN": "90d", "HOOKWATCH_MODEL_CACHE_MB": "512"}
	names := []string{"retain", "model-cache-mb"}

	fs, retain, cache := newSet()
	if err := flagsFromEnv(fs, names, func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	if time.Duration(*retain) != 90*24*time.Hour || *cache != 512 {
		t.Errorf("from the environment: --retain %v, --model-cache-mb %d; want 90d and 512", time.Duration(*retain), *cache)
	}
	if u := fs.Lookup("retain").Usage; !strings.HasSuffix(u, "(env HOOKWATCH_RETAIN)") {
		t.Errorf("--retain's usage %q does not name HOOKWATCH_RETAIN", u)
	}

	fs, retain, cache = newSet()
	if err := flagsFromEnv(fs, names, func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	if err := fs.Parse([]string{"--retain", "2w"}); err != nil {
		t.Fatal(err)
	}
	if time.Duration(*retain) != 14*24*time.Hour || *cache != 512 {
		t.Errorf("--retain 2w over HOOKWATCH_RETAIN=90d: --retain %v, --model-cache-mb %d; want 2w and 512", time.Duration(*retain), *cache)
	}

	fs, _, _ = newSet()
	err := flagsFromEnv(fs, names, func(k string) string { return map[string]string{"HOOKWATCH_MODEL_CACHE_MB": "lots"}[k] })
	if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), `HOOKWATCH_MODEL_CACHE_MB="lots"`) || !strings.Contains(err.Error(), "--model-cache-mb") {
		t.Errorf("a value the flag refuses: %v; want a usage error naming HOOKWATCH_MODEL_CACHE_MB and --model-cache-mb", err)
	}

	// serve itself: the variable's value is checked as the flag's.
	t.Setenv("HOOKWATCH_HOME", t.TempDir())
	t.Setenv("HOOKWATCH_SIGNAL_FAILED_REPEATS", "0")
	var out bytes.Buffer
	if err := run(context.Background(), []string{"serve", "--addr", "127.0.0.1:0"}, nil, &out, &out); !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "--signal-") {
		t.Errorf("serve with HOOKWATCH_SIGNAL_FAILED_REPEATS=0: %v; want the --signal-* flags' usage error", err)
	}
}

// TestServeWaitsForPostgres: serve started before its PostgreSQL server
// accepts connections says it waits, and starts once the server is there;
// a database that refuses it (one that does not exist) is an error at once.
func TestServeWaitsForPostgres(t *testing.T) {
	dbURL := pgtest.NewDatabase(t)
	freshHome(t)
	real := pgtest.Shared(t).Port
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close() // nothing listens there until the "server" comes up below
	url := strings.Replace(dbURL, fmt.Sprintf("127.0.0.1:%d", real), fmt.Sprintf("127.0.0.1:%d", port), 1)
	defer func(every, say time.Duration) { dbWaitEvery, dbWaitSay = every, say }(dbWaitEvery, dbWaitSay)
	dbWaitEvery, dbWaitSay = 50*time.Millisecond, time.Hour

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &serveOutput{line: make(chan string, 1)}
	var stderr syncbuf.Buffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--db", url}, nil, out, &stderr) }()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(stderr.String(), "waiting for PostgreSQL"); {
		select {
		case err := <-done:
			t.Fatalf("serve exited before PostgreSQL was up: %v\n%s", err, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not say it waits:\n%s", stderr.String())
		}
	}
	if strings.Count(stderr.String(), "waiting for PostgreSQL") != 1 {
		t.Errorf("serve said it waits more than once within dbWaitSay:\n%s", stderr.String())
	}
	// PostgreSQL comes up at the port: a proxy to the test's server.
	l, err = net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Skipf("the port was taken meanwhile: %v", err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				s, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", real))
				if err != nil {
					return
				}
				defer s.Close()
				go io.Copy(s, c)
				io.Copy(c, s)
			}()
		}
	}()
	select {
	case line := <-out.line:
		if !strings.Contains(line, fmt.Sprintf("(database postgres 127.0.0.1:%d/", port)) {
			t.Errorf("serve started with %q", line)
		}
	case err := <-done:
		t.Fatalf("serve exited: %v\n%s", err, stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("serve did not start once PostgreSQL was up:\n%s", stderr.String())
	}
	cancel()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("serve: %v", err)
	}

	// A database that is not there does not come by waiting.
	missing := strings.Replace(dbURL, "/hookwatch_", "/missing_", 1)
	var stderr2 bytes.Buffer
	err = run(context.Background(), []string{"serve", "--addr", "127.0.0.1:0", "--db", missing}, nil, io.Discard, &stderr2)
	if err == nil || !strings.Contains(err.Error(), "does not exist") || strings.Contains(stderr2.String(), "waiting") {
		t.Errorf("serve on a missing database: %v\n%s", err, stderr2.String())
	}
}

// TestServeChecksOTLPEndpoint: serve tells at start, in its log, whether
// the OTLP endpoint takes traces (a real OpenTelemetry Collector), rather
// than only when the first spans go out; a wrong path is named with what
// to check, and serve keeps running.
func TestServeChecksOTLPEndpoint(t *testing.T) {
	rcv, err := otelcol.Start(t.TempDir())
	if err != nil {
		otelcol.Missing(t, err)
	}
	defer rcv.Stop()
	f := func(endpoint string, want ...string) {
		t.Helper()
		freshHome(t)
		ctx, cancel := context.WithCancel(context.Background())
		out := &serveOutput{line: make(chan string, 1)}
		var stderr syncbuf.Buffer
		done := make(chan error, 1)
		go func() {
			done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--watch-transcripts", "off", "--codex-rollouts", "off", "--otlp-endpoint", endpoint}, nil, out, &stderr)
		}()
		defer func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("serve: %v", err)
			}
		}()
		deadline := time.Now().Add(10 * time.Second)
		for !strings.Contains(stderr.String(), want[0]) {
			if time.Now().After(deadline) {
				t.Fatalf("--otlp-endpoint %s: no %q in the log:\n%s", endpoint, want[0], stderr.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
		for _, w := range want[1:] {
			if !strings.Contains(stderr.String(), w) {
				t.Fatalf("--otlp-endpoint %s: no %q in the log:\n%s", endpoint, w, stderr.String())
			}
		}
	}
	f(rcv.Endpoint, `msg="pushing traces over OTLP/HTTP" endpoint=`+rcv.Endpoint+"/v1/traces")
	f(rcv.Endpoint+"/v1/trace", "the OTLP endpoint does not take traces", rcv.Endpoint+"/v1/trace answered 404", "check the endpoint's path")
}

// TestServeHelpBuiltInDefaults: serve --help shows the built-in defaults of
// the flags a variable of their own sets, and names the variable, whatever
// the shell exports; the variable still sets the flag.
func TestServeHelpBuiltInDefaults(t *testing.T) {
	freshHome(t)
	env := map[string]string{
		"HOOKWATCH_ADDR":              "127.0.0.1:9",
		"HOOKWATCH_CODEX_ROLLOUTS":    "off",
		"HOOKWATCH_WATCH_TRANSCRIPTS": "off",
		"HOOKWATCH_AUDIT_DIR":         "/nonexistent/audit",
	}
	for k, v := range env {
		t.Setenv(k, v)
	}
	out, _, _ := hw(t, "", "serve", "--help")
	for _, want := range []string{
		`listen address (env HOOKWATCH_ADDR) (default "127.0.0.1:7421")`,
		`(env HOOKWATCH_CODEX_ROLLOUTS) (default "auto")`,
		`(env HOOKWATCH_WATCH_TRANSCRIPTS) (default "auto")`,
		`(env HOOKWATCH_AUDIT_DIR)`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("serve --help with %v does not say %q:\n%s", env, want, out)
		}
	}
	for _, v := range env {
		if strings.Contains(out, `(default "`+v+`")`) {
			t.Errorf("serve --help shows %q, the shell's, as a default", v)
		}
	}
	// The variable sets the flag: HOOKWATCH_ADDR's address is refused.
	t.Setenv("HOOKWATCH_ADDR", "nonsense")
	if err := run(context.Background(), []string{"serve"}, nil, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), `"nonsense"`) {
		t.Errorf("serve with HOOKWATCH_ADDR=nonsense: %v; want the address refused", err)
	}
}

// TestServeSaysWhatAnUpgradeDid: serve started on a database an older
// hookwatch left says in its log that it brought the schema up to date,
// from which version to which and how long it took, and that it derives
// the stored sessions again in the background; the next start says
// neither.
func TestServeSaysWhatAnUpgradeDid(t *testing.T) {
	home := freshHome(t)
	path := filepath.Join(home, "hookwatch.db")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	db, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ev := storetest.MustEvent(t, storetest.Envelope(event.RuntimeClaudeCode, time.Now(), storetest.P("session_id", "s1", "hook_event_name", "Stop")))
	if _, err := db.Insert(context.Background(), []store.Event{ev}); err != nil {
		t.Fatal(err)
	}
	latest, err := db.SchemaVersion(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	// The file a hookwatch of the schema before 0013 left (and so before
	// 0014, the otlp_debts after it).
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`DROP TABLE otlp_debts`, `DELETE FROM schema_migrations WHERE name = '0014_otlp_debts.sql'`,
		`DROP INDEX model_sessions_project`, `ALTER TABLE model_sessions DROP COLUMN project`,
		`DELETE FROM schema_migrations WHERE name = '0013_session_project.sql'`} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()
	serve := func(upgraded bool) *syncbuf.Buffer {
		t.Helper()
		ctx, cancel := context.WithCancel(context.Background())
		out := &serveOutput{line: make(chan string, 1)}
		var stderr syncbuf.Buffer
		done := make(chan error, 1)
		go func() { done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0"}, nil, out, &stderr) }()
		select {
		case <-out.line:
		case err := <-done:
			t.Fatalf("serve exited: %v %s", err, stderr.String())
		case <-time.After(30 * time.Second):
			t.Fatal("serve printed no address")
		}
		deadline := time.Now().Add(10 * time.Second)
		for upgraded && len(stderr.Lines("derived the model of stored sessions again")) == 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		return &stderr
	}
	logs := serve(true)
	if got := logs.Lines("brought the database's schema up to date", fmt.Sprintf("from_version=%d", latest-2), fmt.Sprintf("to_version=%d", latest), "took="); len(got) != 1 {
		t.Errorf("no line says the schema was migrated:\n%s", logs.String())
	}
	if got := logs.Lines("deriving the model of stored sessions again", "sessions=1"); len(got) != 1 {
		t.Errorf("no line says the stored sessions are derived again:\n%s", logs.String())
	}
	if logs = serve(false); strings.Contains(logs.String(), "schema") || strings.Contains(logs.String(), "again") {
		t.Errorf("a start on a current database:\n%s", logs.String())
	}
}

// TestServeAlreadyRunsFromGoRun: run as a build of 'go run' (the README's
// first lines, before anything is installed), the second serve names the
// commands as the user runs them, since no hookwatch is on PATH yet.
func TestServeAlreadyRunsFromGoRun(t *testing.T) {
	home := freshHome(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	line, _ := startServe(t, ctx, "--addr", "127.0.0.1:0")
	t.Setenv("HOOKWATCH_URL", servedURL(line))
	old := executable
	t.Cleanup(func() { executable = old })
	for _, tmp := range goRunBuilds(t) {
		executable = func() (string, error) { return tmp, nil }
		err := run(ctx, []string{"serve", "--addr", "127.0.0.1:0"}, nil, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "a collector already runs for "+home) ||
			!strings.Contains(err.Error(), "go run ./cmd/hookwatch stop, then go run ./cmd/hookwatch serve") {
			t.Errorf("second serve from the go run build %s: %v", tmp, err)
		}
	}
	executable = func() (string, error) { return filepath.Join(t.TempDir(), "hookwatch"), nil }
	err := run(ctx, []string{"serve", "--addr", "127.0.0.1:0"}, nil, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "To run one in the foreground instead: hookwatch stop, then hookwatch serve") {
		t.Errorf("second serve from an installed binary: %v", err)
	}
}

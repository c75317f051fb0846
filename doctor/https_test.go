package doctor

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/hook"
	"github.com/hookwatch/hookwatch/install"
	"github.com/hookwatch/hookwatch/internal/lockfile"
	"github.com/hookwatch/hookwatch/spool"
	"github.com/hookwatch/hookwatch/store/sqlite"
)

// tlsFiles writes the certificate and key of a TLS test server into dir,
// for a collector to serve with (serve --tls-cert, --tls-key) and for the
// hooks' side to trust (HOOKWATCH_CA_FILE).
func tlsFiles(t *testing.T, dir string) (cert, key string) {
	t.Helper()
	ts := httptest.NewTLSServer(http.NotFoundHandler())
	ts.Close()
	keyDER, err := x509.MarshalPKCS8PrivateKey(ts.TLS.Certificates[0].PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return cert, key
}

// replacedProcess starts a copy of sleep and removes the copy: a process
// whose binary an upgrade replaced since it started.
func replacedProcess(t *testing.T) (pid int, exe string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("read from /proc")
	}
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep")
	}
	b, err := os.ReadFile(sleep)
	if err != nil {
		t.Fatal(err)
	}
	exe = filepath.Join(t.TempDir(), "hookwatch")
	if err := os.WriteFile(exe, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if err := os.Remove(exe); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid, exe
}

// TestHTTPSCollectorOfThisHome: a collector of this home serving TLS
// (serve --tls-cert) at the hooks' https:// URL drains the home's spool
// under its address alone: it is this home's, not another's, and the
// collector check says when the process draining the spool runs a
// replaced binary, as it does for an http:// URL.
func TestHTTPSCollectorOfThisHome(t *testing.T) {
	root := t.TempDir()
	certFile, keyFile := tlsFiles(t, root)
	hw := filepath.Join(root, "hw")
	c := startCollector(t, filepath.Join(root, "hw.db"), collector.Options{Home: hw, TLSCert: certFile, TLSKey: keyFile})
	addr, url := c.Addr().String(), c.URL()
	if url != "https://"+addr {
		t.Fatalf("a collector serving TLS gives its URL as %s", url)
	}
	env := map[string]string{"HOME": filepath.Join(root, "home"), "HOOKWATCH_HOME": hw, "HOOKWATCH_URL": url, "HOOKWATCH_CA_FILE": certFile}
	check := func() Check {
		t.Helper()
		r := Run(context.Background(), Options{Getenv: func(k string) string { return env[k] }, WorkDir: root, Self: filepath.Join(root, "hookwatch"), Version: "test", Timeout: 5 * time.Second})
		for _, c := range r.Checks {
			if c.Name == "collector" {
				return c
			}
		}
		t.Fatal("no collector check")
		return Check{}
	}
	if !hook.SpoolDelivers(hw, url) {
		t.Errorf("SpoolDelivers(%s): false, want the collector attached at %s", url, addr)
	}
	if got := check(); got.Status != OK || got.Message != url+" is up, version test" {
		t.Errorf("a TLS collector of this home: %s %q (fix %q), want it up", got.Status, got.Message, got.Fix)
	}
	// From another home it is another home's, and the fix that runs this
	// home's elsewhere serves TLS too, at an https:// URL.
	env["HOOKWATCH_HOME"] = filepath.Join(root, "other")
	if got := check(); got.Status != Warn || !strings.Contains(got.Message, "the collector of another HOOKWATCH_HOME") ||
		!strings.Contains(got.Fix, "hookwatch serve --addr 127.0.0.1:<port> --tls-cert <cert.pem> --tls-key <key.pem>, and unset HOOKWATCH_URL (in the profile Claude Code starts from too), then hookwatch install --url https://127.0.0.1:<port>") {
		t.Errorf("a TLS collector of another home: %s %q (fix %q)", got.Status, got.Message, got.Fix)
	}
	env["HOOKWATCH_HOME"] = hw

	// The same address drained by a process whose binary was replaced:
	// said so, at an https:// URL too.
	pid, _ := replacedProcess(t)
	c.Stop(context.Background()) // lets the spool's lock go
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"status":"ok","version":"test","db":"ok"}`))
	}))
	ts.Listener.Close()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen at %s again: %v", addr, err)
	}
	ts.Listener = ln
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	ts.TLS = &tls.Config{Certificates: []tls.Certificate{pair}}
	ts.StartTLS()
	defer ts.Close()
	if err := os.MkdirAll(filepath.Join(hw, "spool"), 0o700); err != nil {
		t.Fatal(err)
	}
	lock, err := lockfile.Take(filepath.Join(hw, "spool", "consumer.lock"), []byte(addr+"\n"+strconv.Itoa(pid)+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	if info, ok := spool.Consumer(filepath.Join(hw, "spool")); !ok || info.PID != pid {
		t.Fatalf("the spool's consumer: %+v %v, want pid %d", info, ok, pid)
	}
	if got := check(); got.Status != Warn || !strings.Contains(got.Message, "replaced since it started") || !strings.HasPrefix(got.Fix, "hookwatch stop") {
		t.Errorf("a TLS collector of a replaced binary: %s %q (fix %q), want it said", got.Status, got.Message, got.Fix)
	}
}

// TestHTTPSForwarderReplaced: the forwarder to an https:// team server
// that drains the spool, running a binary an upgrade replaced, is said to,
// with the fix that starts the new one.
func TestHTTPSForwarderReplaced(t *testing.T) {
	root := t.TempDir()
	ts, ca := healthyTLSCollector(t, root)
	hw := filepath.Join(root, "hw")
	env := map[string]string{"HOME": filepath.Join(root, "home"), "HOOKWATCH_HOME": hw, "HOOKWATCH_URL": ts.URL, "HOOKWATCH_CA_FILE": ca}
	forwarder := func() Check {
		t.Helper()
		r := Run(context.Background(), Options{Getenv: func(k string) string { return env[k] }, WorkDir: root, Self: filepath.Join(root, "hookwatch"), Version: "test", Timeout: 5 * time.Second})
		for _, c := range r.Checks {
			if c.Name == "forwarder" {
				return c
			}
		}
		t.Fatal("no forwarder check")
		return Check{}
	}
	pid, exe := replacedProcess(t)
	if err := os.MkdirAll(filepath.Join(hw, "spool"), 0o700); err != nil {
		t.Fatal(err)
	}
	lock, err := lockfile.Take(filepath.Join(hw, "spool", "consumer.lock"), []byte(hook.ForwarderAddr(ts.URL)+"\n"+strconv.Itoa(pid)+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	if got := forwarder(); got.Status != Warn || !strings.Contains(got.Message, "pid "+strconv.Itoa(pid)) || !strings.Contains(got.Message, "replaced since it started ("+exe+")") ||
		!strings.HasPrefix(got.Fix, "hookwatch stop") {
		t.Errorf("a forwarder of a replaced binary: %s %q (fix %q)", got.Status, got.Message, got.Fix)
	}
}

// TestTeamMachineLocalDatabase: on a developer's machine whose hooks send
// to a team server (its URL kept by install --url, its token installed),
// the laptop's own database is no collector's: neither the database check
// nor the disk check judges it, whether the hooks are command hooks, which
// read the token file, or http hooks, which send the HOOKWATCH_TOKEN the
// profile exports from it (as install tells) and so read it from there.
// The same damaged, oversized file of a machine with its own collector
// fails and warns.
func TestTeamMachineLocalDatabase(t *testing.T) {
	// Beyond the machine (TEST-NET-1: nothing answers), as a team
	// server is: the checks that ask it say so, these do not.
	const server, secret = "https://192.0.2.1:8443", "hwt_0123"
	for _, tc := range teamHookModes {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			hw, db, self := teamDeveloperHome(t, root, tc.mode, server)
			env := map[string]string{"HOME": filepath.Join(root, "home"), "HOOKWATCH_HOME": hw, "HOOKWATCH_AUTOSTART": "0"}
			checks := func() map[string]Check {
				t.Helper()
				r := Run(context.Background(), Options{Getenv: func(k string) string { return env[k] }, WorkDir: root, Self: self, HookBinary: self,
					Version: "test", Timeout: 200 * time.Millisecond, Database: db})
				m := map[string]Check{}
				for _, c := range r.Checks {
					m[c.Name] = c
				}
				return m
			}
			// This machine's collector: the file is judged.
			c := checks()
			if c["database"].Status != Fail || c["disk"].Status != Warn {
				t.Errorf("a machine of its own collector: database %s %q, disk %s %q; want a failure and a warning", c["database"].Status, c["database"].Message, c["disk"].Status, c["disk"].Message)
			}

			// A team server's developer machine.
			for name, content := range map[string]string{hook.URLFile: server + "\n", hook.TokenFile: secret + "\n"} {
				if err := os.WriteFile(filepath.Join(hw, name), []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if tc.export {
				env["HOOKWATCH_TOKEN"] = secret
			}
			c = checks()
			if d := c["database"]; d.Status != Info || !strings.Contains(d.Message, "not checked: the hooks send the events to the team server at "+server) {
				t.Errorf("database: %s %q, want it not checked, naming the team server", d.Status, d.Message)
			}
			if d := c["disk"]; d.Status != OK || len(d.Details) != 0 || d.Fix != "" {
				t.Errorf("disk: %s %q %q (fix %q), want the size said, no retention asked of a database no collector writes", d.Status, d.Message, d.Details, d.Fix)
			}
		})
	}
}

// startCollector starts the collector o describes (its home, its TLS
// files or token) on a free loopback port, version "test", storing in a
// new SQLite database at dbFile; it is stopped when the test ends, if it
// was not before.
func startCollector(t *testing.T, dbFile string, o collector.Options) *collector.Collector {
	t.Helper()
	db, err := sqlite.Open(dbFile)
	if err != nil {
		t.Fatal(err)
	}
	o.Store, o.Version, o.Addr = db, "test", "127.0.0.1:0"
	c, err := collector.Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Stop(context.Background()) })
	return c
}

// healthyTLSCollector serves, over TLS, a collector's healthy answer, and
// writes its certificate into root as the authority that signed it
// (ca.pem, as install --ca-file keeps one); it returns the server and that
// file.
func healthyTLSCollector(t *testing.T, root string) (*httptest.Server, string) {
	t.Helper()
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"status":"ok","version":"test","db":"ok"}`))
	}))
	t.Cleanup(ts.Close)
	ca := filepath.Join(root, "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	return ts, ca
}

// TestTunnelToTeamServer: a developer who reaches the team server through
// an SSH tunnel sends the hooks' events to a URL on this machine with the
// team server's token installed (hook.ForTeamServer). The laptop's own
// database is then no collector's, as on a machine that sends beyond
// itself: neither the database nor the disk check judges it, in either hook
// mode, the token read from the file or from HOOKWATCH_TOKEN exported from
// it. The collector answering at the tunnel is the server, not another
// home's; and whether it answers or not, no check asks for a 'hookwatch
// serve' here (a HOOKWATCH_ADDR of another address included), which would
// keep the events on the laptop. The same machine with the token file
// removed judges the damaged file, as a machine of its own collector does.
func TestTunnelToTeamServer(t *testing.T) {
	const secret = "hwt_0123456789abcdef"
	for _, tc := range teamHookModes {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			// The server's end of the tunnel: a collector of its own home
			// and database, requiring the token.
			srv := startCollector(t, filepath.Join(root, "server.db"), collector.Options{Config: collector.Config{Token: secret}, Home: filepath.Join(root, "server")})
			url := srv.URL()

			hw, db, self := teamDeveloperHome(t, root, tc.mode, url)
			for name, content := range map[string]string{hook.URLFile: url + "\n", hook.TokenFile: secret + "\n"} {
				if err := os.WriteFile(filepath.Join(hw, name), []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			env := map[string]string{"HOME": filepath.Join(root, "home"), "HOOKWATCH_HOME": hw, "HOOKWATCH_ADDR": "127.0.0.1:47421"}
			if tc.export {
				env["HOOKWATCH_TOKEN"] = secret
			}
			run := func() map[string]Check {
				t.Helper()
				r := Run(context.Background(), Options{Getenv: func(k string) string { return env[k] }, WorkDir: root, Self: self, HookBinary: self,
					Version: "test", Timeout: 2 * time.Second, Database: db, RoundTrip: tc.mode == install.ModeHTTP,
					CheckSettings: func(string, []string, func(string) string) []Refusal { return nil }})
				m := map[string]Check{}
				for _, c := range r.Checks {
					m[c.Name] = c
					if strings.Contains(c.Fix, "hookwatch serve") {
						t.Errorf("%s: %s %q, fixed with %q: a collector started here would not be the team server", c.Name, c.Status, c.Message, c.Fix)
					}
				}
				return m
			}
			judged := func(c map[string]Check) {
				t.Helper()
				if d := c["database"]; d.Status != Info || !strings.Contains(d.Message, "not checked: the hooks send the events to the team server at "+url) {
					t.Errorf("database: %s %q, want it not checked, naming the team server", d.Status, d.Message)
				}
				if d := c["disk"]; d.Status != OK || len(d.Details) != 0 || d.Fix != "" {
					t.Errorf("disk: %s %q %q (fix %q), want the size said, no retention asked of a database no collector writes", d.Status, d.Message, d.Details, d.Fix)
				}
				if d, ok := c["HOOKWATCH_ADDR"]; ok {
					t.Errorf("HOOKWATCH_ADDR: %s %q: no collector of this machine is started for a tunnel", d.Status, d.Message)
				}
				if d, ok := c["collector settings"]; ok {
					t.Errorf("collector settings: %s %q: no hook starts a collector at a tunnel", d.Status, d.Message)
				}
			}
			c := run()
			judged(c)
			if got := c["collector"]; got.Status != OK || got.Message != url+" is up, version test" {
				t.Errorf("the team server through the tunnel: %s %q (fix %q), want it up, not another home's", got.Status, got.Message, got.Fix)
			}
			if tc.mode == install.ModeHTTP && tc.export {
				if got := c["round trip (http)"]; got.Status != OK {
					t.Errorf("round trip (http): %s %q (fix %q), want the probe taken", got.Status, got.Message, got.Fix)
				}
			}

			// The tunnel closed: the server is unreachable, not a
			// collector for the next hook to start.
			srv.Stop(context.Background())
			c = run()
			judged(c)
			if got := c["collector"]; got.Status != Fail || !strings.Contains(got.Message, "the team server at "+url+" is not reachable") || !strings.Contains(got.Fix, "the tunnel to the server") {
				t.Errorf("the tunnel closed: %s %q (fix %q), want the team server unreachable", got.Status, got.Message, got.Fix)
			}

			// Without the team server's token this is a machine of its own
			// collector at that URL: its database is judged.
			if err := os.Remove(filepath.Join(hw, hook.TokenFile)); err != nil {
				t.Fatal(err)
			}
			delete(env, "HOOKWATCH_TOKEN")
			r := Run(context.Background(), Options{Getenv: func(k string) string { return env[k] }, WorkDir: root, Self: self, HookBinary: self,
				Version: "test", Timeout: 2 * time.Second, Database: db})
			for _, got := range r.Checks {
				if got.Name == "database" && got.Status != Fail {
					t.Errorf("a machine of its own collector: database %s %q, want the damaged file failed", got.Status, got.Message)
				}
			}
		})
	}
}

// teamHookMode is one way a team server's developer's hooks may be
// installed and reach the server's token.
type teamHookMode struct {
	name   string
	mode   string // install.ModeCommand or install.ModeHTTP
	export bool   // HOOKWATCH_TOKEN exported from the token file
}

// teamHookModes are the ways the doctor must tell a team server's
// developer's machine in: command hooks, which read the token file whether
// or not the profile exports it too, and http hooks, which send the
// HOOKWATCH_TOKEN the profile exports (as install tells) — and the same
// hooks seen from a shell that does not export it.
var teamHookModes = []teamHookMode{
	{"command", install.ModeCommand, false},
	{"command, HOOKWATCH_TOKEN exported", install.ModeCommand, true},
	{"http", install.ModeHTTP, true},
	{"http, HOOKWATCH_TOKEN not exported here", install.ModeHTTP, false},
}

// teamDeveloperHome makes, under root, a team server's developer's
// machine whose hooks send to url in mode: its home (returned), a damaged
// database file there past the size the disk check warns of (no SQLite
// database: one left from before would be damaged), and a hookwatch binary
// installed in the user's Claude Code settings.
func teamDeveloperHome(t *testing.T, root, mode, url string) (hw, db, self string) {
	t.Helper()
	hw = filepath.Join(root, "hw")
	if err := os.MkdirAll(hw, 0o700); err != nil {
		t.Fatal(err)
	}
	db = filepath.Join(hw, "hookwatch.db")
	if err := os.WriteFile(db, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(db, diskWarnBytes+1); err != nil {
		t.Fatal(err)
	}
	self = filepath.Join(root, "hookwatch")
	if err := os.WriteFile(self, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	o := install.Options{Scope: "user", ConfigDir: filepath.Join(root, "home", ".claude"), Mode: mode, Binary: self}
	if mode == install.ModeHTTP {
		o.CollectorURL, o.TokenHeader = url, true
	}
	if _, err := install.Install(o); err != nil {
		t.Fatal(err)
	}
	return hw, db, self
}

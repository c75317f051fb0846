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
	db, err := sqlite.Open(filepath.Join(root, "hw.db"))
	if err != nil {
		t.Fatal(err)
	}
	hw := filepath.Join(root, "hw")
	c, err := collector.Start(collector.Options{Config: collector.Config{Store: db, Version: "test"}, Addr: "127.0.0.1:0", Home: hw, TLSCert: certFile, TLSKey: keyFile})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop(context.Background())
	addr := strings.TrimPrefix(c.URL(), "http://")
	url := "https://" + addr
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
	if ts.Listener, err = net.Listen("tcp", addr); err != nil {
		t.Skipf("cannot listen at %s again: %v", addr, err)
	}
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
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"status":"ok","version":"test","db":"ok"}`))
	}))
	defer ts.Close()
	ca := filepath.Join(root, "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
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

package main

import (
	"context"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/forward"
)

// TestLastLogLineAfterRotation: the start of a collector rotates a
// serve.log grown past its bound (hook.StartServeProcess), so the size
// measured before the start lies past the end of the new log: the line the
// collector that exited wrote is read from the start of it.
func TestLastLogLineAfterRotation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "serve.log")
	if err := os.WriteFile(path, []byte("hookwatch serve: listening on http://127.0.0.1:1\nhookwatch: cannot open the database: locked\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, want := lastLogLine(path, 9<<20), "cannot open the database: locked"; got != want {
		t.Errorf("lastLogLine from an offset past the end = %q, want %q", got, want)
	}
	if got := lastLogLine(path, 93); got != "" {
		t.Errorf("lastLogLine from the end = %q, want nothing", got)
	}
}

// TestCollectorClientTrustsTheTeamCA: a team server whose certificate its
// own authority signed answers the commands (sessions, sessions diff,
// statusline, demo) as it answers the forwarder, trusting the ca.pem
// 'install --ca-file' kept, or HOOKWATCH_CA_FILE, rather than seem down.
func TestCollectorClientTrustsTheTeamCA(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer hwt_secret" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		io.WriteString(w, `{"status":"ok"}`)
	}))
	defer srv.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	home := t.TempDir()
	t.Setenv("HOOKWATCH_HOME", home)
	t.Setenv("HOOKWATCH_CA_FILE", "")
	ctx := context.Background()

	if _, err := apiGet(ctx, srv.URL, "hwt_secret", srv.URL+"/healthz"); err == nil {
		t.Fatal("apiGet trusted a certificate no authority it knows signed")
	}
	if err := os.WriteFile(filepath.Join(home, forward.CAFileName), ca, 0o600); err != nil {
		t.Fatal(err)
	}
	body, err := apiGet(ctx, srv.URL, "hwt_secret", srv.URL+"/healthz")
	if err != nil || string(body) != `{"status":"ok"}` {
		t.Errorf("apiGet with the home's %s = %q, %v; want the answer", forward.CAFileName, body, err)
	}
	if ok, _ := health(ctx, srv.URL, "hwt_secret", 5*time.Second); !ok {
		t.Errorf("health with the home's %s: not healthy", forward.CAFileName)
	}

	// HOOKWATCH_CA_FILE comes before the home's file, as for the forwarder.
	other := filepath.Join(t.TempDir(), "other.pem")
	if err := os.WriteFile(other, []byte("no certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOOKWATCH_CA_FILE", other)
	if _, err := apiGet(ctx, srv.URL, "hwt_secret", srv.URL+"/healthz"); err == nil || !strings.Contains(err.Error(), other) {
		t.Errorf("apiGet with an unusable HOOKWATCH_CA_FILE = %v; want an error naming it", err)
	}
}

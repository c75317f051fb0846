package bench

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/internal/serveproc"
	"github.com/hookwatch/hookwatch/internal/testbin"
)

// TestStartLogged: a collector's log goes to a file of its own, not among
// the figures, and is removed once the collector stopped cleanly.
func TestStartLogged(t *testing.T) {
	bin := testbin.Build(t, "./cmd/hookwatch")
	p, err := startLogged(serveproc.Options{Bin: bin,
		Env: append(os.Environ(), "HOOKWATCH_HOME="+t.TempDir(), "HOOKWATCH_TOKEN=", "HOOKWATCH_DB=")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(p.Log) })
	if b, err := os.ReadFile(p.Log); err != nil || !strings.Contains(string(b), "listening on "+p.URL()) {
		t.Errorf("the log %s: %v %q, want serve's own words", p.Log, err, b)
	}
	if err := p.Stop(time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p.Log); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the log of a clean run is left: %v", err)
	}
}

// TestStartLoggedFails: a collector that does not start is an error that
// names its log, which holds what it said.
func TestStartLoggedFails(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "hookwatch")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho 'cannot open the database' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := startLogged(serveproc.Options{Bin: bin, Healthy: 5 * time.Second})
	if err == nil {
		t.Fatal("a collector that exits at once started")
	}
	_, path, ok := strings.Cut(err.Error(), "(its log: ")
	path = strings.TrimSuffix(path, ")")
	if !ok || !strings.HasPrefix(path, os.TempDir()) {
		t.Fatalf("the error names no log: %v", err)
	}
	t.Cleanup(func() { os.Remove(path) })
	if b, err := os.ReadFile(path); err != nil || !strings.Contains(string(b), "cannot open the database") {
		t.Errorf("the log %s: %v %q, want what the collector said", path, err, b)
	}
}

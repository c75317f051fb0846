package main

import (
	"os"
	"path/filepath"
	"testing"
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

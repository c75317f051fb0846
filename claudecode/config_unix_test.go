//go:build unix

package claudecode

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReadConfigFileRefuses: a settings path a project points at a FIFO,
// a device or a huge file is an error at once, not a hang or a read
// without end; a missing one is no file.
func TestReadConfigFileRefuses(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "settings.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "zero.json")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, []byte(`{"x":"`+strings.Repeat("a", MaxConfigBytes)+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{fifo, link, big} {
		done := make(chan error, 1)
		go func() { _, err := ReadSettings(path); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), path) {
				t.Errorf("ReadSettings(%s): %v, want an error naming it", path, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("ReadSettings(%s) still reading after 5 s", path)
		}
	}
	if s, err := ReadSettings(filepath.Join(dir, "none.json")); err != nil || s.Exists {
		t.Errorf("a missing file: %+v, %v", s, err)
	}
}

package doctor

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// TestReplacedBinary: a process whose executable was removed since it
// started (an upgrade's go install renames the new one over it) is told
// apart from one whose executable is still there.
func TestReplacedBinary(t *testing.T) {
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
	copied := filepath.Join(t.TempDir(), "old-sleep")
	if err := os.WriteFile(copied, b, 0o755); err != nil {
		t.Fatal(err)
	}
	start := func(path string) *exec.Cmd {
		cmd := exec.Command(path, "30")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd
	}
	same, old := start(sleep), start(copied)
	if err := os.Remove(copied); err != nil {
		t.Fatal(err)
	}
	if replacedBinary(same.Process.Pid) {
		t.Error("a process of a binary still there reads as replaced")
	}
	if !replacedBinary(old.Process.Pid) {
		t.Error("a process of a removed binary does not read as replaced")
	}
	if replacedBinary(0) {
		t.Error("no pid reads as replaced")
	}
}

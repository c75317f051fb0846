package doctor

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestReplacedBinary: a process whose executable was removed since it
// started (an upgrade's go install renames the new one over it) is told
// apart from one whose executable is still there.
func TestReplacedBinary(t *testing.T) {
	pid, copied := replacedProcess(t)
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep")
	}
	same := exec.Command(sleep, "30")
	if err := same.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { same.Process.Kill(); same.Wait() })
	if _, replaced := replacedBinary(same.Process.Pid); replaced {
		t.Error("a process of a binary still there reads as replaced")
	}
	if exe, replaced := replacedBinary(pid); !replaced || exe != copied {
		t.Errorf("a process of a removed binary %s: replaced %v, ran %q", copied, replaced, exe)
	}
	if _, replaced := replacedBinary(0); replaced {
		t.Error("no pid reads as replaced")
	}
}

// TestReplacedMessage: a collector whose binary is gone is told apart by
// what it ran: a build of 'go run' (the demo or serve started with go run,
// whose build is removed) is no upgrade, and is not called one.
func TestReplacedMessage(t *testing.T) {
	goRun := filepath.Join(os.TempDir(), "go-build2757964049", "b001", "exe", "hookwatch")
	msg, fix := replacedMessage(42, goRun)
	for _, w := range []string{"pid 42", "'go run'", goRun} {
		if !strings.Contains(msg, w) {
			t.Errorf("a collector of a go run build: %q, want it to say %q", msg, w)
		}
	}
	if strings.Contains(msg, "replaced") || strings.Contains(msg, "old version") || !strings.HasPrefix(fix, "hookwatch stop") {
		t.Errorf("a collector of a go run build: %q, fix %q", msg, fix)
	}
	msg, fix = replacedMessage(42, "/usr/local/bin/hookwatch")
	if !strings.Contains(msg, "replaced since it started") || strings.Contains(msg, "go run") || !strings.HasPrefix(fix, "hookwatch stop") {
		t.Errorf("a collector of an installed binary since replaced: %q, fix %q", msg, fix)
	}
}

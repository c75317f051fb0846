package testbin

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/internal/lockfile"
)

// TestDirOutlivesNoProcess: the directory of a running process stays when
// another sweeps; once the process has ended, the next sweep removes it.
// The process is this test binary, run again as a child that takes its
// Dir and waits for its stdin to close.
func TestDirOutlivesNoProcess(t *testing.T) {
	if os.Getenv("TESTBIN_CHILD") == "1" {
		os.Stdout.WriteString(Dir(t) + "\n")
		bufio.NewReader(os.Stdin).ReadString('\n')
		return
	}
	tmp := t.TempDir()
	child := exec.Command(os.Args[0], "-test.run=^TestDirOutlivesNoProcess$")
	child.Env = append(os.Environ(), "TESTBIN_CHILD=1", "TMPDIR="+tmp)
	stdin, err := child.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		child.Process.Kill()
		t.Fatalf("the child said no directory: %v", err)
	}
	d := strings.TrimSpace(line)
	if filepath.Dir(d) != tmp || !strings.HasPrefix(filepath.Base(d), dirPrefix) {
		t.Fatalf("the child's directory is %q, want %s* in %s", d, dirPrefix, tmp)
	}
	sweep(tmp, 0)
	if _, err := os.Stat(d); err != nil {
		t.Errorf("swept while its process runs: %v", err)
	}
	stdin.Close()
	if err := child.Wait(); err != nil {
		t.Fatalf("child: %v", err)
	}
	if _, err := os.Stat(d); err != nil {
		t.Fatalf("gone when its process ended, before any sweep: %v", err)
	}
	sweep(tmp, 0)
	if _, err := os.Stat(d); !os.IsNotExist(err) {
		t.Errorf("left by the sweep after its process ended: %v", err)
	}
}

// TestSweep: what a sweep removes, by lock and age.
func TestSweep(t *testing.T) {
	tmp := t.TempDir()
	old := time.Now().Add(-time.Hour)
	mk := func(name string, lock bool, mtime time.Time) string {
		d := filepath.Join(tmp, name)
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if lock {
			if err := os.WriteFile(filepath.Join(d, lockName), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Chtimes(d, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return d
	}
	held := mk(dirPrefix+"held", true, old)
	l, err := lockfile.Take(filepath.Join(held, lockName), []byte("1\n"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	ended := mk(dirPrefix+"ended", true, old)
	noLock := mk(dirPrefix+"nolock", false, old)
	young := mk(dirPrefix+"young", false, time.Now())
	other := mk("other-dir", false, old)
	file := filepath.Join(tmp, dirPrefix+"file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(file, old, old)

	sweep(tmp, time.Minute)

	for _, c := range []struct {
		path string
		stay bool
	}{{held, true}, {ended, false}, {noLock, false}, {young, true}, {other, true}, {file, true}} {
		_, err := os.Stat(c.path)
		if stays := err == nil; stays != c.stay {
			t.Errorf("%s: stays %v, want %v", filepath.Base(c.path), stays, c.stay)
		}
	}
}

package regfile_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/internal/regfile"
)

// within fails the test unless fn returns within a second: what it tests
// would otherwise block forever, and the test binary with it.
func within(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(time.Second):
		t.Fatalf("%s blocked", what)
	}
}

func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("cannot make a FIFO: %v", err)
	}
}

func TestOpenRefuses(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	mkfifo(t, fifo)
	link := filepath.Join(dir, "link-to-fifo")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	f := func(path string) {
		t.Helper()
		within(t, "Open("+path+")", func() {
			file, fi, err := regfile.Open(path)
			if !errors.Is(err, regfile.ErrNotRegular) || file != nil || fi != nil {
				t.Errorf("Open(%s) = %v, %v, %v; want ErrNotRegular", path, file, fi, err)
			}
			var pe *fs.PathError
			if !errors.As(err, &pe) || pe.Path != path {
				t.Errorf("Open(%s): %v does not name the path", path, err)
			}
		})
		within(t, "ReadHead("+path+")", func() {
			if b, err := regfile.ReadHead(path, 1<<20); !errors.Is(err, regfile.ErrNotRegular) || b != nil {
				t.Errorf("ReadHead(%s) = %q, %v; want ErrNotRegular", path, b, err)
			}
		})
	}
	f(fifo)
	f(link)
	f(dir)
	f("/dev/zero")
	f("/dev/null")

	// The error says what the path is in words, not in mode letters.
	g := func(path, want string) {
		t.Helper()
		if _, _, err := regfile.Open(path); err == nil || err.Error() != "open "+path+": not a regular file ("+want+")" {
			t.Errorf("Open(%s): %v, want it to say %q", path, err, want)
		}
	}
	g(dir, "a directory")
	g(fifo, "a named pipe")
	g(link, "a named pipe")
	g("/dev/null", "a character device")
}

func TestOpenMissing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gone")
	if _, _, err := regfile.Open(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open of a missing file: %v, want ErrNotExist", err)
	}
	if _, err := regfile.ReadHead(path, 10); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadHead of a missing file: %v, want ErrNotExist", err)
	}
}

func TestOpenRegular(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.jsonl")
	content := []byte("{\"uuid\":\"1\"}\n")
	if err := os.WriteFile(path, content, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, link} {
		f, fi, err := regfile.Open(p)
		if err != nil {
			t.Fatalf("Open(%s): %v", p, err)
		}
		if !fi.Mode().IsRegular() || fi.Size() != int64(len(content)) {
			t.Errorf("Open(%s): info %v size %d", p, fi.Mode(), fi.Size())
		}
		b := make([]byte, 64)
		n, err := f.Read(b)
		if err != nil || !bytes.Equal(b[:n], content) {
			t.Errorf("read %q, %v", b[:n], err)
		}
		f.Close()
	}
}

func TestReadHead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	content := bytes.Repeat([]byte("0123456789"), 10_000)
	if err := os.WriteFile(path, content, 0o600); err != nil {
		t.Fatal(err)
	}
	f := func(limit int64, want []byte) {
		t.Helper()
		b, err := regfile.ReadHead(path, limit)
		if err != nil || !bytes.Equal(b, want) {
			t.Errorf("ReadHead(%d) = %d bytes, %v; want %d", limit, len(b), err, len(want))
		}
	}
	f(0, []byte{})
	f(-1, []byte{})
	f(1, content[:1])
	f(64<<10, content[:64<<10])
	f(int64(len(content)), content)
	f(1<<30, content)

	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := regfile.ReadHead(empty, 100); err != nil || len(b) != 0 {
		t.Errorf("ReadHead(empty) = %q, %v", b, err)
	}
}

// TestReadHeadPseudoFile reads a file that says it is empty and is not,
// as those of /proc do.
func TestReadHeadPseudoFile(t *testing.T) {
	const path = "/proc/self/status"
	fi, err := os.Stat(path)
	if err != nil || fi.Size() != 0 {
		t.Skip("no /proc")
	}
	b, err := regfile.ReadHead(path, 1<<20)
	if err != nil || !bytes.HasPrefix(b, []byte("Name:")) {
		t.Errorf("ReadHead(%s) = %.40q…, %v", path, b, err)
	}
	if b, err := regfile.ReadHead(path, 3); err != nil || string(b) != "Nam" {
		t.Errorf("ReadHead(%s, 3) = %q, %v", path, b, err)
	}
}

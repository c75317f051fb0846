package atomicfile_test

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/hookwatch/hookwatch/internal/atomicfile"
)

// entries is the names in dir.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, de := range des {
		names = append(names, de.Name())
	}
	return names
}

func TestWriteReplacesWithModeAndLeavesNoTemp(t *testing.T) {
	for _, tc := range []struct {
		name string
		opt  atomicfile.Options
		want os.FileMode
	}{
		{"default", atomicfile.Options{}, 0o600},
		{"nosync", atomicfile.Options{NoSync: true}, 0o600},
		{"perm", atomicfile.Options{Perm: 0o644}, 0o644},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "state.json")
			// An old file of another mode: the new one takes opt's.
			if err := os.WriteFile(path, []byte("old"), 0o666); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, 0o666); err != nil {
				t.Fatal(err)
			}
			if err := atomicfile.Write(path, []byte("new"), tc.opt); err != nil {
				t.Fatal(err)
			}
			if b, err := os.ReadFile(path); err != nil || string(b) != "new" {
				t.Fatalf("content = %q, %v; want new", b, err)
			}
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if runtime.GOOS != "windows" && fi.Mode().Perm() != tc.want {
				t.Errorf("mode = %v, want %v", fi.Mode().Perm(), tc.want)
			}
			if names := entries(t, dir); len(names) != 1 {
				t.Errorf("directory holds %q, want only state.json", names)
			}
		})
	}
}

// A write that fails leaves the old file as it was and no temporary file:
// here the rename fails, path being a non-empty directory.
func TestWriteFailingLeavesOldAndNoTemp(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "busy")
	if err := os.MkdirAll(filepath.Join(path, "inside"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := atomicfile.Write(path, []byte("new"), atomicfile.Options{}); err == nil {
		t.Fatal("Write over a non-empty directory succeeded")
	}
	if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
		t.Errorf("path after the failed write: %v, %v; want the directory left", fi, err)
	}
	if names := entries(t, dir); len(names) != 1 || names[0] != "busy" {
		t.Errorf("directory holds %q, want only busy", names)
	}
}

// A write into a directory that cannot take the temporary file fails
// without touching the old file.
func TestWriteReadOnlyDirKeepsOld(t *testing.T) {
	if os.Getuid() == 0 {
		t.Skip("root writes into a read-only directory")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "token")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o700) })
	if err := atomicfile.Write(path, []byte("new"), atomicfile.Options{}); err == nil {
		t.Fatal("Write into a read-only directory succeeded")
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "old" {
		t.Errorf("content = %q, %v; want old", b, err)
	}
	if names := entries(t, dir); len(names) != 1 {
		t.Errorf("directory holds %q, want only token", names)
	}
}

// A missing directory is an error, not created: the caller decides its
// mode.
func TestWriteMissingDir(t *testing.T) {
	path := filepath.Join(t.TempDir(), "absent", "f")
	if err := atomicfile.Write(path, []byte("x"), atomicfile.Options{}); err == nil {
		t.Fatal("Write into a missing directory succeeded")
	}
}

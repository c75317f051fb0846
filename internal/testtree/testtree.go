// Package testtree copies directory trees of test fixtures, so that a test
// can grow, edit or rename what it reads without touching testdata.
package testtree

import (
	"os"
	"path/filepath"
	"testing"
)

// Copy copies the tree at src into dst (created as needed): directories
// of mode 0755, files of mode 0600, each file's bytes passed through edit
// when it is not nil. It fails the test on any error.
func Copy(t testing.TB, src, dst string, edit func([]byte) []byte) {
	t.Helper()
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if edit != nil {
			b = edit(b)
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
}

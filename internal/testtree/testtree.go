// Package testtree copies directory trees of test fixtures, so that a test
// can grow, edit or rename what it reads without touching testdata, and
// reads the files of such a tree.
package testtree

import (
	"io"
	"os"
	"path/filepath"
	"strings"
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

// Files calls read with each regular file under root whose name ends in
// ext, opened, in lexical order; the file is closed when read returns. It
// fails the test if the tree cannot be walked (root missing included) or a
// file cannot be opened.
func Files(t testing.TB, root, ext string, read func(io.Reader)) {
	t.Helper()
	err := filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() || !strings.HasSuffix(p, ext) {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		read(f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

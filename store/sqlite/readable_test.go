package sqlite

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestReadable: a database reads, also while open and before its first
// checkpoint, and so does an empty file; a file of other bytes, or one
// whose schema page was overwritten, does not. Nothing is created beside
// the file.
func TestReadable(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "hookwatch.db")
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := Readable(t.Context(), path); err != nil {
		t.Fatalf("an open database: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := Readable(t.Context(), path); err != nil {
		t.Fatalf("a closed database: %v", err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if err := Readable(t.Context(), write("empty.db", nil)); err != nil {
		t.Errorf("an empty file: %v", err)
	}
	noise := bytes.Repeat([]byte("not a database "), 7000)
	if err := Readable(t.Context(), write("noise.db", noise)); err == nil {
		t.Error("a file of text reads as a database")
	}
	// The schema's page, the first, overwritten past the header.
	damaged := bytes.Clone(b)
	copy(damaged[100:4096], noise)
	if err := Readable(t.Context(), write("damaged.db", damaged)); err == nil {
		t.Error("a database with its schema page overwritten reads")
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if n := e.Name(); filepath.Ext(n) != ".db" {
			t.Errorf("Readable left %s beside the files", n)
		}
	}
}

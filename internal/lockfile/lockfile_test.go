package lockfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestTakeHolderRelease: one Take holds the file at a time, with its
// description; others read it without taking anything; Release empties
// the file and lets the next Take in.
func TestTakeHolderRelease(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	if _, held := Holder(path); held {
		t.Fatal("a file that does not exist is held")
	}
	a, err := Take(path, []byte("addr\n42\n"))
	if err != nil {
		t.Fatal(err)
	}
	if desc, held := Holder(path); !held || string(desc) != "addr\n42\n" {
		t.Fatalf("Holder while held: %q, %v", desc, held)
	}
	_, err = Take(path, []byte("other\n"))
	var he *HeldError
	if !errors.As(err, &he) || !errors.Is(err, ErrHeld) || string(he.Desc) != "addr\n42\n" {
		t.Fatalf("a second Take: %v", err)
	}
	if err := a.Release(); err != nil {
		t.Fatal(err)
	}
	if err := a.Release(); err != nil {
		t.Fatalf("a second Release: %v", err)
	}
	if b, err := os.ReadFile(path); err != nil || len(b) != 0 {
		t.Fatalf("after Release the file holds %q, %v", b, err)
	}
	if _, held := Holder(path); held {
		t.Fatal("held after Release")
	}
	b, err := Take(path, []byte("b\n"))
	if err != nil {
		t.Fatalf("Take after Release: %v", err)
	}
	defer b.Release()
	if desc, held := Holder(path); !held || string(desc) != "b\n" {
		t.Fatalf("Holder of the second holder: %q, %v", desc, held)
	}
}

// TestTakeReplacesALongerDescription: what an earlier holder wrote
// (a crash leaves it) does not trail the new description.
func TestTakeReplacesALongerDescription(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	if err := os.WriteFile(path, []byte("127.0.0.1:7000\n123456\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := Take(path, []byte("a\n1\n"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if desc, _ := Holder(path); string(desc) != "a\n1\n" {
		t.Fatalf("description %q", desc)
	}
}

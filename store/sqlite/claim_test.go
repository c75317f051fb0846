package sqlite

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestClaim: one open DB of a file claims it at a time, the claim names
// its process, and it ends with Close.
func TestClaim(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hookwatch.db")
	a, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := a.Claim(); err != nil {
		t.Fatalf("first claim: %v", err)
	}
	if err := a.Claim(); err != nil {
		t.Fatalf("a claim claimed again: %v", err)
	}
	var ce *ClaimedError
	if err := b.Claim(); !errors.As(err, &ce) || ce.PID != os.Getpid() || ce.Path != a.Path() {
		t.Fatalf("second claim: %v, want a ClaimedError of pid %d", err, os.Getpid())
	}
	// Claiming is not opening: a DB that does not claim works beside it.
	if _, err := b.Insert(t.Context(), nil); err != nil {
		t.Fatalf("insert beside the claim: %v", err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Claim(); err != nil {
		t.Fatalf("claim after the claimant closed: %v", err)
	}
}

package patherr_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/hookwatch/hookwatch/internal/patherr"
)

func TestStrip(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	_, err := os.Stat(missing)
	got := patherr.Strip(err)
	if got.Error() != "no such file or directory" || !errors.Is(got, fs.ErrNotExist) {
		t.Errorf("Strip(%v) = %v", err, got)
	}
	// Wrapped: the wrapper is found below the message's own words.
	if got := patherr.Strip(fmt.Errorf("walking: %w", err)); got.Error() != "no such file or directory" {
		t.Errorf("Strip of a wrapped error = %v", got)
	}
	plain := errors.New("plain")
	if got := patherr.Strip(plain); got != plain {
		t.Errorf("Strip(%v) = %v", plain, got)
	}
}

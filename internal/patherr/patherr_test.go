package patherr_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookwatch/hookwatch/internal/patherr"
)

func TestStrip(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	_, err := os.Stat(missing)
	got := patherr.Strip(err, missing)
	if got.Error() != "no such file or directory" || !errors.Is(got, fs.ErrNotExist) {
		t.Errorf("Strip(%v) = %v", err, got)
	}
	// Wrapped: the wrapper is found below the message's own words.
	if got := patherr.Strip(fmt.Errorf("walking: %w", err), missing); got.Error() != "no such file or directory" {
		t.Errorf("Strip of a wrapped error = %v", got)
	}
	// A file made in the named directory: its name is not news either.
	inside := &fs.PathError{Op: "open", Path: filepath.Join(missing, "probe-1"), Err: fs.ErrPermission}
	if got := patherr.Strip(inside, missing+"/"); got != fs.ErrPermission {
		t.Errorf("Strip of an error within the named directory = %v", got)
	}
	// Another path is what the message lacks: the parent that is a file.
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	named := filepath.Join(file, "a", "b")
	err = os.MkdirAll(named, 0o700)
	if got := patherr.Strip(err, named); got != err || !strings.Contains(got.Error(), "mkdir "+file+":") {
		t.Errorf("Strip(%v) = %v, want the wrapper that names %s", err, got, file)
	}
	if got := patherr.Strip(&fs.PathError{Op: "stat", Path: missing + "-other", Err: fs.ErrNotExist}, missing); got.Error() == "file does not exist" {
		t.Errorf("a sibling sharing the named path's prefix was stripped: %v", got)
	}
	plain := errors.New("plain")
	if got := patherr.Strip(plain, missing); got != plain {
		t.Errorf("Strip(%v) = %v", plain, got)
	}
}

//go:build !linux

package main

import (
	"os"
	"testing"
)

// openPTY skips the test: opening a pseudo-terminal is written for Linux.
func openPTY(t *testing.T) (tty, ptmx *os.File) {
	t.Helper()
	t.Skip("opening a pseudo-terminal is written for Linux")
	return nil, nil
}

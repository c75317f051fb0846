package importer_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/importer"
	"github.com/hookwatch/hookwatch/internal/fifotest"
	"github.com/hookwatch/hookwatch/internal/regfile"
)

// TestImportFIFO: a transcript named on the command line, or swapped for
// a FIFO after a watcher saw a file there, is a file error reported at
// once, not a read that waits for a writer.
func TestImportFIFO(t *testing.T) {
	fifo := fifotest.Mkfifo(t, filepath.Join(t.TempDir(), "projects", "-p", "0b9e6a1c-5d3e-4f6a-8b7c-9d0e1f2a3b4c.jsonl"))
	files, err := importer.Find([]string{fifo})
	if err != nil || len(files) != 1 {
		t.Fatalf("Find = %v, %v", files, err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := importer.Run(context.Background(), files, importer.Options{Pipeline: pipeline(),
			Deliver: func(context.Context, []event.Envelope) error { return nil }})
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, regfile.ErrNotRegular) {
			t.Errorf("Run of a FIFO: %v, want ErrNotRegular", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run of a FIFO blocked")
	}
}

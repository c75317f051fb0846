package rollout_test

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/codex/rollout"
	"github.com/hookwatch/hookwatch/internal/fifotest"
	"github.com/hookwatch/hookwatch/internal/regfile"
)

// TestReadFIFO: a rollout that is a FIFO (named on import's command line,
// or swapped in after the collector's follower saw a file) fails at once.
func TestReadFIFO(t *testing.T) {
	fifo := fifotest.Mkfifo(t, filepath.Join(t.TempDir(), "rollout-2026-01-02T03-04-05-x.jsonl"))
	done := make(chan [2]error, 1)
	go func() {
		_, _, rerr := rollout.Read(fifo, "host", "user")
		_, terr := rollout.NewTail(fifo, "host", "user").Next()
		done <- [2]error{rerr, terr}
	}()
	select {
	case errs := <-done:
		for _, err := range errs {
			if !errors.Is(err, regfile.ErrNotRegular) {
				t.Errorf("reading a FIFO: %v, want ErrNotRegular", err)
			}
		}
	case <-time.After(5 * time.Second):
		t.Fatal("reading a FIFO blocked")
	}
}

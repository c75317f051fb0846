package ingest_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/ingest"
	"github.com/hookwatch/hookwatch/internal/fifotest"
	"github.com/hookwatch/hookwatch/privacy"
)

// TestPayloadPathsNeverBlock: every file a payload names that the pipeline
// reads (the file a tool read, the subagent's sidecar, the transcripts of a
// fork, the Codex rollout, the transcript a compaction archives) may be a
// FIFO or a device: the pipeline reads nothing of it, at once, and
// delivers the event.
func TestPayloadPathsNeverBlock(t *testing.T) {
	archive := filepath.Join(t.TempDir(), "archive")
	for _, c := range fifotest.Payloads(t) {
		envs := make(chan *event.Envelope, 1)
		pl := &ingest.Pipeline{Privacy: privacy.DefaultOptions(), ArchiveDir: archive, RecordFiles: true,
			Deliver: func(_ context.Context, e *event.Envelope) error { envs <- e; return nil }}
		done := make(chan error, 1)
		go func() {
			_, err := pl.Run(context.Background(), c.Payload)
			done <- err
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("%s: %v", c.Name, err)
				continue
			}
		case <-time.After(5 * time.Second):
			t.Errorf("%s: the pipeline blocked", c.Name) // its goroutine stays blocked
			continue
		}
		var env *event.Envelope
		select {
		case env = <-envs:
		default:
			t.Errorf("%s: not delivered", c.Name)
			continue
		}
		if env.Files != nil || env.Subagent != nil || env.ForkOf != "" || env.ExitCode != nil {
			t.Errorf("%s: files %v, subagent %v, fork of %q, exit code %v: want none", c.Name, env.Files, env.Subagent, env.ForkOf, env.ExitCode)
		}
	}
	if files, _ := filepath.Glob(filepath.Join(archive, "*", "*", "*")); len(files) > 0 {
		t.Errorf("archived %v", files)
	}
}

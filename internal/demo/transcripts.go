package demo

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/importer"
	"github.com/hookwatch/hookwatch/ingest"
	"github.com/hookwatch/hookwatch/privacy"
)

// Transcripts reads a run of the client captured twice, as the tests
// keep one (attribution/testdata/claude-transcript): the envelopes its
// hooks delivered to a collector (dir/envelopes.jsonl) and the
// transcripts it wrote (dir/projects), read by the importer into
// envelopes of kind transcript with the hooks' host and user.
func Transcripts(dir string) (hooks, imported []event.Envelope, err error) {
	f, err := os.Open(filepath.Join(dir, "envelopes.jsonl"))
	if err != nil {
		return nil, nil, fmt.Errorf("demo.Transcripts: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var e event.Envelope
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, nil, fmt.Errorf("demo.Transcripts: %w", err)
		}
		hooks = append(hooks, e)
	}
	if err := sc.Err(); err != nil || len(hooks) == 0 {
		return nil, nil, fmt.Errorf("demo.Transcripts: no envelopes in %s (%v)", dir, err)
	}
	files, err := importer.Find([]string{filepath.Join(dir, "projects")})
	if err != nil {
		return nil, nil, fmt.Errorf("demo.Transcripts: %w", err)
	}
	pl := &ingest.Pipeline{Origin: ingest.Origin{Host: hooks[0].Host, User: hooks[0].User}, Privacy: privacy.DefaultOptions()}
	_, err = importer.Run(context.Background(), files, importer.Options{Pipeline: pl,
		Deliver: func(_ context.Context, envs []event.Envelope) error {
			imported = append(imported, envs...)
			return nil
		}})
	if err != nil {
		return nil, nil, fmt.Errorf("demo.Transcripts: %w", err)
	}
	return hooks, imported, nil
}

// LoseCall returns hooks without the events of their last call that
// finished (PostToolUse), as if its hooks had not run, and that call's
// tool_use_id: a call a transcript alone then tells of. It returns hooks
// as they are and "" when none finished.
func LoseCall(hooks []event.Envelope) (kept []event.Envelope, lost string) {
	for _, e := range hooks {
		if p, err := event.Decode(e.Payload); err == nil && p.Name() == event.PostToolUse && p.Tool().ToolUseID != "" {
			lost = p.Tool().ToolUseID
		}
	}
	for _, e := range hooks {
		if p, err := event.Decode(e.Payload); err == nil && lost != "" && p.Tool() != nil && p.Tool().ToolUseID == lost {
			continue
		}
		kept = append(kept, e)
	}
	return kept, lost
}

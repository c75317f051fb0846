package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/importer"
	"github.com/hookwatch/hookwatch/ingest"
	"github.com/hookwatch/hookwatch/privacy"
)

// ImportOptions configure the import benchmark.
type ImportOptions struct {
	// Repo is the repository root: the real transcripts the tree is made
	// of are in importer/testdata.
	Repo string
	// Bytes is the size of the generated tree; 0 means 1 GB.
	Bytes int64
}

// ImportResult is what the import benchmark measured.
type ImportResult struct {
	Bytes     int64
	Files     int
	Envelopes int
	Elapsed   time.Duration
}

// MBps is the throughput in MB (10^6 bytes) of transcript per second.
func (r ImportResult) MBps() float64 { return float64(r.Bytes) / 1e6 / r.Elapsed.Seconds() }

// Import measures hookwatch import: a tree of Claude Code transcripts (the
// real session of importer/testdata/parallel, a main transcript and two
// subagents, copied under new session ids until the tree holds Bytes) is
// read, converted and passed through the ingest pipeline with the default
// privacy rules, as `hookwatch import` does; the envelopes are dropped
// instead of posted, so that the figure is the importer's, not the
// collector's.
func Import(ctx context.Context, w io.Writer, o ImportOptions) (ImportResult, error) {
	if o.Bytes <= 0 {
		o.Bytes = 1 << 30
	}
	src := filepath.Join(o.Repo, "importer", "testdata", "parallel", "projects", "-tmp-hc-1665870347-c-demo")
	const session = "04c54c49-9580-4ffd-ac42-925d83960a3b"
	main, err := os.ReadFile(filepath.Join(src, session+".jsonl"))
	if err != nil {
		return ImportResult{}, fmt.Errorf("cannot read the sample transcript: %w", err)
	}
	subDir := filepath.Join(src, session, "subagents")
	entries, err := os.ReadDir(subDir)
	if err != nil {
		return ImportResult{}, err
	}
	subs := map[string][]byte{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(subDir, e.Name()))
		if err != nil {
			return ImportResult{}, err
		}
		subs[e.Name()] = b
	}
	root, err := os.MkdirTemp("", "hookwatch-import-bench-")
	if err != nil {
		return ImportResult{}, err
	}
	defer os.RemoveAll(root)
	fmt.Fprintf(w, "import: generating %.0f MB of transcripts in %s\n", float64(o.Bytes)/1e6, root)
	var size int64
	for i := 0; size < o.Bytes; i++ {
		if err := ctx.Err(); err != nil {
			return ImportResult{}, err
		}
		id := fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i)
		dir := filepath.Join(root, "projects", fmt.Sprintf("-bench-project-%d", i%16))
		if err := os.MkdirAll(filepath.Join(dir, id, "subagents"), 0o700); err != nil {
			return ImportResult{}, err
		}
		write := func(path string, b []byte) error {
			b = []byte(strings.ReplaceAll(string(b), session, id))
			size += int64(len(b))
			return os.WriteFile(path, b, 0o600)
		}
		if err := write(filepath.Join(dir, id+".jsonl"), main); err != nil {
			return ImportResult{}, err
		}
		for name, b := range subs {
			if err := write(filepath.Join(dir, id, "subagents", name), b); err != nil {
				return ImportResult{}, err
			}
		}
	}
	files, err := importer.Find([]string{filepath.Join(root, "projects")})
	if err != nil {
		return ImportResult{}, err
	}
	n := 0
	start := time.Now()
	sum, err := importer.Run(ctx, files, importer.Options{
		Pipeline: &ingest.Pipeline{Origin: ingest.LocalOrigin("bench"), Privacy: privacy.DefaultOptions()},
		Deliver:  func(_ context.Context, envs []event.Envelope) error { n += len(envs); return nil },
	})
	res := ImportResult{Bytes: sum.Bytes, Files: sum.Files, Envelopes: n, Elapsed: time.Since(start)}
	if err != nil {
		return res, err
	}
	fmt.Fprintf(w, "import: %d files, %.0f MB, %d envelopes in %.1f s: %.1f MB/s, %.0f envelopes/s\n",
		res.Files, float64(res.Bytes)/1e6, res.Envelopes, res.Elapsed.Seconds(), res.MBps(), float64(n)/res.Elapsed.Seconds())
	return res, nil
}

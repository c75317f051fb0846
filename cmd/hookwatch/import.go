package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"sort"

	"github.com/hookwatch/hookwatch/codex"
	"github.com/hookwatch/hookwatch/codex/rollout"
	"github.com/hookwatch/hookwatch/ingest"
)

func init() {
	register(command{
		name:    "import",
		summary: "import Codex rollout files (tool calls hooks missed, exit codes, token usage)",
		run:     runImport,
	})
}

// importBatch is how many envelopes one POST carries.
const importBatch = 500

func runImport(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("import", "import --codex [PATH ...]", stderr)
	isCodex := fs.Bool("codex", false, "import Codex rollout files: the PATHs (files or directories), default every rollout under $CODEX_HOME/sessions")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if !*isCodex {
		return fmt.Errorf("%w: say what to import: --codex", errUsage)
	}
	paths := fs.Args()
	if len(paths) == 0 {
		home, err := codex.Home(os.Getenv)
		if err != nil {
			return err
		}
		paths = []string{filepath.Join(home, "sessions")}
	}
	files, err := rolloutFiles(paths)
	if err != nil {
		return err
	}
	base, token := collectorURL()
	// The hook's origin, so that imported calls join the sessions the
	// hooks recorded (lineage groups by host and user).
	origin := ingest.LocalOrigin(version)
	var client http.Client
	calls, usage := 0, 0
	for _, f := range files {
		envs, err := rollout.Read(f, origin.Host, origin.User)
		if err != nil {
			fmt.Fprintf(stderr, "hookwatch import: skipping %s: %v\n", f, err)
			continue
		}
		for i := 0; i < len(envs); i += importBatch {
			if err := postEnvelopes(ctx, &client, base, token, envs[i:min(i+importBatch, len(envs))], "the imported events"); err != nil {
				return err
			}
		}
		for _, e := range envs {
			if rollout.IsUsage(e) {
				usage++
			} else {
				calls++
			}
		}
	}
	fmt.Fprintf(stdout, "Imported %d tool events and %d token usage records from %d rollout file(s) into %s (events already there are ignored).\n", calls, usage, len(files), base)
	return nil
}

// rolloutFiles returns the rollout files of paths, each a file or a
// directory searched below, sorted.
func rolloutFiles(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		err := filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && (path == p || codex.IsRollout(path)) {
				out = append(out, path)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("cannot read %s: %w", p, err)
		}
	}
	sort.Strings(out)
	return out, nil
}

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/install"
	"github.com/hookwatch/hookwatch/internal/testbin"
)

// Client is one installed Claude Code client the suite runs against.
type Client struct {
	// Bin is the path of its native binary.
	Bin string
	// Version is what `claude --version` says.
	Version install.Version
}

// Name is the client's version, dotted: each real-client test runs once
// per client, as a subtest of that name (TestLifecycle/2.1.332).
func (c Client) Name() string { return c.Version.String() }

// BinsEnv names the variable that lists the clients of the version matrix:
// the paths of their binaries, separated by ':'. Each binary's version is
// what it says of itself. BinEnv names one binary, for a developer with a
// single client; BinsEnv wins when both are set.
const BinsEnv = "HOOKWATCH_CLAUDE_BINS"

// installGlob matches, below the repository root, every client
// scripts/install-claude.sh installed into its default directory
// (.e2e/claude-VERSION).
const installGlob = ".e2e/claude*/node_modules/@anthropic-ai/claude-code-linux-*/claude"

// FindClients returns the clients of $HOOKWATCH_CLAUDE_BINS, else the one of
// $HOOKWATCH_CLAUDE_BIN, else every client scripts/install-claude.sh
// installed under the repository root: ordered by version, one per version.
// It fails when a named binary is missing or does not tell its version, or
// when there is none.
func FindClients() ([]Client, error) {
	var paths []string
	switch {
	case os.Getenv(BinsEnv) != "":
		paths = filepath.SplitList(os.Getenv(BinsEnv))
	case os.Getenv(BinEnv) != "":
		paths = []string{os.Getenv(BinEnv)}
	default:
		root := testbin.ModuleRoot()
		paths, _ = filepath.Glob(filepath.Join(root, installGlob))
		if len(paths) == 0 {
			return nil, fmt.Errorf("no Claude Code client under %s (run scripts/install-claude.sh VERSION, or set %s or %s)",
				filepath.Join(root, ".e2e"), BinsEnv, BinEnv)
		}
	}
	var out []Client
	for _, p := range paths {
		if p == "" {
			continue
		}
		c, err := clientAt(p)
		if err != nil {
			return nil, err
		}
		if !slices.ContainsFunc(out, func(o Client) bool { return o.Version.Compare(c.Version) == 0 }) {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s names no binary", BinsEnv)
	}
	slices.SortFunc(out, func(a, b Client) int { return a.Version.Compare(b.Version) })
	return out, nil
}

// versions caches what each binary said of its version: a test binary
// asks each client once.
var versions sync.Map // path → install.Version

// clientAt returns the client whose binary is at path.
func clientAt(path string) (Client, error) {
	st, err := os.Stat(path)
	if err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		return Client{}, fmt.Errorf("no Claude Code binary at %s (run scripts/install-claude.sh or set %s)", path, BinsEnv)
	}
	if v, ok := versions.Load(path); ok {
		return Client{Bin: path, Version: v.(install.Version)}, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "--version")
	cmd.WaitDelay = time.Second
	out, err := cmd.Output()
	if err != nil {
		return Client{}, fmt.Errorf("cannot ask %s its version: %w", path, err)
	}
	v, err := install.ParseVersion(string(out))
	if err != nil || len(v) == 0 {
		return Client{}, fmt.Errorf("cannot ask %s its version: it says %q", path, strings.TrimSpace(string(out)))
	}
	versions.Store(path, v)
	return Client{Bin: path, Version: v}, nil
}

// Clients returns the clients of FindClients. When there is none it skips
// the test, or fails it when $CI is set: in CI the suite must run.
func Clients(tb testing.TB) []Client {
	tb.Helper()
	cs, err := FindClients()
	if err != nil {
		testbin.Missing(tb, "e2e: "+err.Error())
		return nil
	}
	return cs
}

// EachClient runs f once per client of Clients, as parallel subtests named
// by the client's version.
func EachClient(t *testing.T, f func(t *testing.T, c Client)) {
	t.Helper()
	for _, c := range Clients(t) {
		t.Run(c.Name(), func(t *testing.T) {
			t.Parallel()
			f(t, c)
		})
	}
}

// What the clients do differently. Each trait was measured on the oldest
// and the newest tested client (2.1.197 and 2.1.332) by the tests that
// consult it: the change happened somewhere between, so a trait holds from
// 2.1.332 on.
var since2332 = install.Version{2, 1, 332}

// ForksAsNewSession reports whether a fork's SessionStart comes under the
// fork's new id with source "fork" (2.1.197: under the old id, source
// "resume").
func (c Client) ForksAsNewSession() bool { return !c.Version.Before(since2332) }

// DefersMCPTools reports whether MCP tools are left out of the request's
// tools and named in the system prompt instead, to be loaded with
// ToolSearch ("select:<name>") before a call.
func (c Client) DefersMCPTools() bool { return !c.Version.Before(since2332) }

// RunsAgentsInBackground reports whether Agent calls made in parallel
// return at once while their subagents run on.
func (c Client) RunsAgentsInBackground() bool { return !c.Version.Before(since2332) }

// StopsAtDeny reports whether the client honours continue:false next to a
// PreToolUse deny: the run ends there, with no PostToolBatch (2.1.197
// ignores it and reports the denied call in a PostToolBatch).
func (c Client) StopsAtDeny() bool { return !c.Version.Before(since2332) }

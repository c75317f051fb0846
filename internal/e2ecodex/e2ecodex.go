// Package e2ecodex runs the real Codex CLI against a scripted Responses API
// ([fakeopenai]) with hookwatch's hook registered for every Codex hook
// event and trusted the way Codex's own /hooks review trusts it, delivering
// to a real collector, so that tests check through hookwatch's API what
// the collector made of what Codex really sent.
//
// The binary comes from scripts/install-codex.sh. Without it a test is
// skipped locally but fails when $CI is set: in CI the suite must run.
package e2ecodex

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/codex"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/fakeopenai"
	"github.com/hookwatch/hookwatch/internal/testbin"
)

// CodexVersion is the Codex CLI version the harness is written against.
const CodexVersion = "0.169.0"

// DefaultBinPath is where scripts/install-codex.sh puts the static binary,
// relative to the repository root.
const DefaultBinPath = ".e2e/codex/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex"

// BinEnv names the environment variable that overrides DefaultBinPath.
const BinEnv = "HOOKWATCH_CODEX_BIN"

// CodexBin returns the path of the Codex binary: $HOOKWATCH_CODEX_BIN, else
// DefaultBinPath under the repository root. When it is missing the test is
// skipped, or failed when $CI is set.
func CodexBin(tb testing.TB) string {
	tb.Helper()
	return testbin.Client(tb, BinEnv, DefaultBinPath, "run scripts/install-codex.sh")
}

// DefaultTimeout bounds one run of Codex unless Env.Timeout is set: exec
// loops "Reconnecting…" forever when the model cannot be reached.
const DefaultTimeout = 2 * time.Minute

// Model slugs: the metadata compiled into Codex decides the tools. gpt-5.5
// offers exec_command and apply_patch; a slug Codex does not know gets the
// fallback tools, with the multi_agent_v1 namespace (spawn_agent,
// wait_agent) but no apply_patch.
const (
	ModelClassic  = "gpt-5.5"
	ModelSubagent = "gpt-fake"
)

// Env is one isolated Codex installation: a temporary HOME and CODEX_HOME
// whose config.toml points at a scripted model, and a project directory.
type Env struct {
	tb testing.TB

	Bin       string
	Dir       string // holds everything below
	Home      string
	CodexHome string
	Project   string
	Model     *fakeopenai.Server
	ModelURL  string
	// Slug is the model Codex is configured with.
	Slug string
	// Vars are added to Codex's environment (which its hooks inherit).
	Vars    []string
	Timeout time.Duration
}

// New returns an Env with a config.toml for slug and no hooks.
func New(tb testing.TB, slug string, script fakeopenai.Script, vars ...string) *Env {
	tb.Helper()
	e := &Env{tb: tb, Bin: CodexBin(tb), Slug: slug, Vars: vars, Model: fakeopenai.New(script)}
	// Not t.TempDir: Codex refuses helper binaries under /tmp only with a
	// warning, and the paths must have no symlinks so hooks/list keys match.
	e.Dir = tb.TempDir()
	if d, err := filepath.EvalSymlinks(e.Dir); err == nil {
		e.Dir = d
	}
	e.Home, e.CodexHome, e.Project = filepath.Join(e.Dir, "home"), filepath.Join(e.Dir, "codexhome"), filepath.Join(e.Dir, "proj")
	for _, d := range []string{e.Home, e.CodexHome, e.Project} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			tb.Fatal(err)
		}
	}
	e.ModelURL = e.Model.Start(tb)
	config := fmt.Sprintf(`model = %q
model_provider = "fake"

[model_providers.fake]
name = "Fake OpenAI"
base_url = %q
env_key = "FAKE_OPENAI_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
`, slug, e.ModelURL)
	if err := os.WriteFile(filepath.Join(e.CodexHome, "config.toml"), []byte(config), 0o644); err != nil {
		tb.Fatal(err)
	}
	return e
}

// Environ is the environment Codex runs with, and so its hooks.
func (e *Env) Environ() []string {
	return append([]string{
		"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + e.Home, "CODEX_HOME=" + e.CodexHome,
		"FAKE_OPENAI_API_KEY=sk-fake", "LANG=C.UTF-8",
	}, e.Vars...)
}

// Run is the outcome of one run of Codex.
type Run struct {
	Stdout, Stderr string
	Err            error
	Took           time.Duration
}

// Exec runs `codex exec` with approvals and sandbox bypassed (exec runs
// with approval "never" whatever it is told) and the prompt, in the
// project directory, stdin closed.
func (e *Env) Exec(prompt string, extra ...string) Run {
	args := append([]string{"exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox"}, extra...)
	return e.Codex(append(args, prompt)...)
}

// Resume runs `codex exec resume --last` with a new prompt.
func (e *Env) Resume(prompt string) Run {
	return e.Codex("exec", "resume", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "--last", prompt)
}

// Codex runs the binary with args in the project directory.
func (e *Env) Codex(args ...string) Run {
	e.tb.Helper()
	timeout := e.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.Bin, args...)
	cmd.Dir, cmd.Env = e.Project, e.Environ()
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r := Run{Stdout: stdout.String(), Stderr: stderr.String(), Err: err, Took: time.Since(start)}
	e.tb.Logf("codex %s: %v in %v", strings.Join(args[:min(2, len(args))], " "), err, r.Took.Round(time.Millisecond))
	return r
}

// Rollouts returns the rollout files Codex wrote, sorted.
func (e *Env) Rollouts() []string {
	var out []string
	_ = filepath.WalkDir(filepath.Join(e.CodexHome, "sessions"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasPrefix(d.Name(), "rollout-") {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// HookTimeout is the timeout in seconds written for every hook (Codex
// clamps SessionEnd's and Interrupt's to 3 s).
const HookTimeout = 30

// RegisterHooks writes $CODEX_HOME/hooks.json running each command, in a
// group of its own, for every Codex hook event, and the recorder after
// them (see Recorded), then trusts those hooks as Codex's /hooks review
// does.
func (e *Env) RegisterHooks(commands ...string) {
	e.tb.Helper()
	hooks := map[string]any{}
	for _, name := range event.CodexEvents {
		var groups []any
		for _, c := range append(commands, e.recorder()) {
			groups = append(groups, group(name, c))
		}
		hooks[name] = groups
	}
	b, _ := json.MarshalIndent(map[string]any{"hooks": hooks}, "", "  ")
	if err := os.WriteFile(filepath.Join(e.CodexHome, codex.HooksFileName), b, 0o644); err != nil {
		e.tb.Fatal(err)
	}
	e.Trust()
}

// group is a matcher group of hooks.json running command.
func group(event, command string) map[string]any {
	g := map[string]any{"hooks": []any{map[string]any{"type": "command", "command": command, "timeout": HookTimeout}}}
	if codex.Matched(event) {
		g["matcher"] = "*"
	}
	return g
}

// recorder is a hook command that keeps each payload Codex hands it in a
// file of its own under Dir/recorded: what Codex really sent, independent
// of hookwatch (hooks run in parallel, so no shared file).
func (e *Env) recorder() string {
	dir := filepath.Join(e.Dir, "recorded")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		e.tb.Fatal(err)
	}
	// Written under another name and renamed, so that a reader never
	// sees a payload half written.
	return `f="` + dir + `/$(date +%s%N)-$$"; cat > "$f.part" && mv "$f.part" "$f.json"`
}

// Recorded returns every payload the recorder hook was handed, decoded.
func (e *Env) Recorded() []map[string]any {
	e.tb.Helper()
	files, _ := filepath.Glob(filepath.Join(e.Dir, "recorded", "*.json"))
	sort.Strings(files)
	var out []map[string]any
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			e.tb.Fatal(err)
		}
		var p map[string]any
		if err := json.Unmarshal(b, &p); err != nil {
			e.tb.Fatalf("recorded %s: %v: %q", f, err, b)
		}
		out = append(out, p)
	}
	return out
}

// Trust appends to config.toml the trust of every hook Codex lists as
// untrusted, and fails unless every hook is then trusted.
func (e *Env) Trust() {
	e.tb.Helper()
	hooks, err := codex.ListHooks(context.Background(), e.Bin, e.Project, e.Environ())
	if err != nil {
		e.tb.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(e.CodexHome, codex.ConfigFileName), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		e.tb.Fatal(err)
	}
	defer f.Close()
	for _, h := range hooks {
		if !h.Trusted() {
			if _, err := f.WriteString(codex.TrustBlock(h)); err != nil {
				e.tb.Fatal(err)
			}
		}
	}
	f.Close()
	if hooks, err = codex.ListHooks(context.Background(), e.Bin, e.Project, e.Environ()); err != nil {
		e.tb.Fatal(err)
	}
	if len(hooks) == 0 {
		e.tb.Fatal("codex lists no hooks")
	}
	for _, h := range hooks {
		if !h.Trusted() {
			e.tb.Fatalf("hook %s still %s after trusting it", h.Key, h.TrustStatus)
		}
	}
}

// WaitRecorded waits (bounded) until the recorder has a payload for which
// ok holds, and returns it.
func (e *Env) WaitRecorded(what string, ok func(p map[string]any) bool) map[string]any {
	e.tb.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		for _, p := range e.Recorded() {
			if ok(p) {
				return p
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	e.tb.Fatalf("codex handed its hooks no %s", what)
	return nil
}

// Package e2e runs the real Claude Code client against a scripted model
// ([fakeclaude]) with a hook command registered for every hook event, so
// that tests can check what real hooks receive and what the model sees.
//
// Every real-client test runs once per installed client version (see
// Clients): the oldest and the newest version hookwatch supports, installed
// by scripts/install-claude.sh. Without a client a test is skipped locally
// but fails when $CI is set: in CI the suite must run.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/claudecode"
	"github.com/hookwatch/hookwatch/internal/fakeclaude"
)

// BinEnv names the variable that names the one client binary to run when
// BinsEnv is not set.
const BinEnv = "HOOKWATCH_CLAUDE_BIN"

// Hook is the command registered for every hook event, in exec form: no
// shell, Command is run with Args.
type Hook struct {
	// Command is the absolute path of the executable.
	Command string
	// Args are its arguments; they may be empty.
	Args []string
}

// HookEvents lists the events the harness registers the hook for: every
// Claude Code hook event except WorktreeCreate, whose hook would replace
// the client's own worktree creation.
var HookEvents = []string{
	"SessionStart", "Setup", "InstructionsLoaded", "UserPromptSubmit", "UserPromptExpansion",
	"MessageDisplay", "PreToolUse", "PermissionRequest", "PermissionDenied", "PostToolUse",
	"PostToolUseFailure", "PostToolBatch", "Notification", "SubagentStart", "SubagentStop",
	"TaskCreated", "TaskCompleted", "Stop", "StopFailure", "TeammateIdle", "ConfigChange",
	"CwdChanged", "DirectoryAdded", "FileChanged", "WorktreeRemove", "PreCompact", "PostCompact",
	"SessionEnd", "Elicitation", "ElicitationResult",
}

// asyncEvents run their hook in the background. SubagentStart is async
// because the client writes the subagent's .meta.json sidecar only after
// the synchronous SubagentStart hooks returned: an async hook sees it.
var asyncEvents = map[string]bool{"SubagentStart": true}

// HookTimeout is the timeout in seconds written for every hook.
const HookTimeout = 30

// DefaultTimeout bounds one run of the client unless Env.Timeout is set.
const DefaultTimeout = 2 * time.Minute

// Env is one isolated client installation: a temporary HOME whose user
// settings register the hook, a project directory, and a scripted model.
// Its fields may be changed between runs.
type Env struct {
	tb testing.TB

	// Client is the Claude Code client the Env runs; Bin its binary.
	Client Client
	Bin    string
	// Home is the HOME of the client; transcripts go below it.
	Home string
	// Project is the working directory of the client: a small git-less Go
	// project with a CLAUDE.md. It has no symlinks in its path, so that the
	// transcript directory name derives from it.
	Project string
	// Tmp is the client's TMPDIR.
	Tmp string
	// Settings is the settings file that registers the hook:
	// $HOME/.claude/settings.json (user scope).
	Settings string
	// Model is the scripted model; ModelURL its base URL.
	Model    *fakeclaude.Server
	ModelURL string
	// WebURL is an https URL served by Model (its pages, fakeclaude.Page)
	// with a certificate the client trusts: WebFetch upgrades http to
	// https, so only an https server on loopback lets a fetch succeed.
	WebURL string
	// caFile is the PEM file of WebURL's certificate.
	caFile string
	// Vars are extra "KEY=value" variables for the client and so for its
	// hooks (e.g. where a hook records or sends what it sees).
	Vars []string
	// Timeout bounds each run; zero means DefaultTimeout.
	Timeout time.Duration
	// closers stop the model's servers.
	closers []func()
}

// New prepares an Env for client c whose settings register hook for every
// event of HookEvents. vars are added to Env.Vars.
func New(tb testing.TB, c Client, hook Hook, vars ...string) *Env {
	tb.Helper()
	root, err := filepath.EvalSymlinks(tb.TempDir())
	if err != nil {
		tb.Fatalf("cannot resolve the temporary directory: %s", err)
	}
	e, err := Setup(c.Bin, root, SettingsJSON(hook), vars...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(e.Close)
	e.tb, e.Client = tb, c
	return e
}

// Setup prepares an Env for the client bin below root, which must exist
// and have no symlinks in its path, with settings as its user settings
// (e.g. SettingsJSON of a hook). vars are added to Env.Vars. It is New for
// programs that are not tests: the caller calls Close when done, and uses
// RunContext (Run and the methods built on it need a test).
func Setup(bin, root string, settings []byte, vars ...string) (*Env, error) {
	e := &Env{
		Bin:     bin,
		Home:    filepath.Join(root, "home"),
		Project: filepath.Join(root, "demo"),
		Tmp:     filepath.Join(root, "tmp"),
		Model:   fakeclaude.New(nil),
		Vars:    vars,
	}
	e.Settings, _ = claudecode.SettingsPath(claudecode.ScopeUser, e.configDir(), e.Project)
	model := httptest.NewServer(e.Model)
	web := httptest.NewTLSServer(e.Model)
	e.closers = append(e.closers, model.Close, web.Close)
	e.ModelURL, e.WebURL = model.URL, web.URL
	e.caFile = filepath.Join(root, "web-ca.pem")
	files := map[string]string{
		e.caFile:   string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: web.Certificate().Raw})),
		e.Settings: string(settings),
	}
	for path, content := range projectFiles {
		files[filepath.Join(e.Project, path)] = content
	}
	err := os.MkdirAll(e.Tmp, 0o700)
	for path, content := range files {
		if err == nil {
			err = createFile(path, content)
		}
	}
	if err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

// Close stops the servers of the scripted model.
func (e *Env) Close() {
	for _, c := range e.closers {
		c()
	}
	e.closers = nil
}

// projectFiles is the project the client works in.
var projectFiles = map[string]string{
	"go.mod":    "module example.com/demo\n\ngo 1.22\n",
	"main.go":   "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(greeting())\n}\n",
	"greet.go":  "package main\n\nfunc greeting() string {\n\treturn \"hello\"\n}\n",
	"CLAUDE.md": "# demo\n\nA tiny Go program. Keep functions small and run `go vet` after edits.\n",
}

// writeFile writes content to path, creating its directory, or fails tb.
func writeFile(tb testing.TB, path, content string) {
	tb.Helper()
	if err := createFile(path, content); err != nil {
		tb.Fatal(err)
	}
}

// createFile writes content to path, creating its directory.
func createFile(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("cannot create %s: %w", filepath.Dir(path), err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	return nil
}

// SettingsJSON returns a settings document registering hook, in exec form,
// for every event of HookEvents (async for SubagentStart), with the
// WebFetch domain preflight off.
func SettingsJSON(hook Hook) []byte {
	type handler struct {
		Type    string   `json:"type"`
		Command string   `json:"command"`
		Args    []string `json:"args"`
		Timeout int      `json:"timeout"`
		Async   bool     `json:"async,omitempty"`
	}
	type group struct {
		Hooks []handler `json:"hooks"`
	}
	args := hook.Args
	if args == nil {
		args = []string{} // an empty args array still selects exec form
	}
	hooks := make(map[string][]group, len(HookEvents))
	for _, ev := range HookEvents {
		hooks[ev] = []group{{Hooks: []handler{{
			Type: "command", Command: hook.Command, Args: args, Timeout: HookTimeout, Async: asyncEvents[ev],
		}}}}
	}
	b, err := json.MarshalIndent(map[string]any{
		"hooks": hooks,
		// The WebFetch preflight asks claude.ai whether a domain may be
		// fetched; on a closed machine that fails every fetch.
		"skipWebFetchPreflight": true,
	}, "", "  ")
	if err != nil {
		panic(err) // plain strings and ints always marshal
	}
	return append(b, '\n')
}

// Result is the outcome of one run of the client.
type Result struct {
	// SessionID, Text (the "result" field), IsError, Subtype and NumTurns
	// come from the client's JSON result.
	SessionID string
	Text      string
	IsError   bool
	Subtype   string
	NumTurns  int
	// JSON is the whole JSON result as printed.
	JSON json.RawMessage
	// Stdout and Stderr are the client's output.
	Stdout, Stderr string
	// Elapsed is the wall time of the run.
	Elapsed time.Duration
	// CPU is the user and system time of the client and of the processes
	// it waited for: its hooks, its tools.
	CPU time.Duration
}

// Environ returns the environment of the client: built from scratch, so
// that nothing of the calling process (an ANTHROPIC_* key, CLAUDECODE of an
// enclosing session, a CLAUDE_CONFIG_DIR) leaks in; then Vars.
func (e *Env) Environ() []string {
	env := []string{
		"HOME=" + e.Home,
		"PATH=" + os.Getenv("PATH"),
		"ANTHROPIC_BASE_URL=" + e.ModelURL,
		"ANTHROPIC_API_KEY=sk-ant-test",
		"IS_SANDBOX=1",
		"DISABLE_TELEMETRY=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_ERROR_REPORTING=1",
		"LANG=C.UTF-8",
		"NODE_EXTRA_CA_CERTS=" + e.caFile,
		// The client keeps per-project state under $TMPDIR/claude-<uid>;
		// a private one keeps runs apart and leaves nothing behind.
		"TMPDIR=" + e.Tmp,
	}
	return append(env, e.Vars...)
}

// RunContext runs `claude -p prompt --dangerously-skip-permissions
// --output-format json flags...` in the project directory. The error, if
// any, says why the run failed and includes the client's stdout and stderr;
// the Result is filled as far as the output allows.
func (e *Env) RunContext(ctx context.Context, prompt string, flags ...string) (Result, error) {
	timeout := e.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	args := append([]string{"-p", prompt, "--dangerously-skip-permissions", "--output-format", "json"}, flags...)
	cmd := exec.CommandContext(ctx, e.Bin, args...)
	cmd.Dir = e.Project
	cmd.Env = e.Environ()
	cmd.Stdin = nil // the client must not wait for input
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// Hook processes inherit the pipes; do not wait for stragglers forever.
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	runErr := cmd.Run()
	res := Result{Stdout: stdout.String(), Stderr: stderr.String(), Elapsed: time.Since(start)}
	if st := cmd.ProcessState; st != nil {
		res.CPU = st.UserTime() + st.SystemTime()
	}
	fail := func(err error) (Result, error) {
		return res, fmt.Errorf("cannot run claude %s: %w\nstdout:\n%s\nstderr:\n%s",
			strings.Join(quoteArgs(args), " "), err, res.Stdout, res.Stderr)
	}
	if ctx.Err() != nil {
		return fail(fmt.Errorf("no result within %s: %w", timeout, ctx.Err()))
	}
	out := bytes.TrimSpace(stdout.Bytes())
	if i := bytes.LastIndexByte(out, '\n'); i >= 0 {
		out = out[i+1:] // the result is the last line
	}
	var r struct {
		SessionID string `json:"session_id"`
		Result    string `json:"result"`
		IsError   bool   `json:"is_error"`
		Subtype   string `json:"subtype"`
		NumTurns  int    `json:"num_turns"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		if runErr != nil {
			return fail(runErr)
		}
		return fail(fmt.Errorf("cannot parse the JSON result: %w", err))
	}
	res.SessionID, res.Text, res.IsError, res.Subtype, res.NumTurns = r.SessionID, r.Result, r.IsError, r.Subtype, r.NumTurns
	res.JSON = json.RawMessage(out)
	if runErr != nil {
		return fail(runErr)
	}
	if r.SessionID == "" {
		return fail(errors.New("the result has no session_id"))
	}
	return res, nil
}

func quoteArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = fmt.Sprintf("%q", a)
	}
	return out
}

// Run is RunContext that fails the test when the run fails or its result
// is an error.
func (e *Env) Run(prompt string, flags ...string) Result {
	e.tb.Helper()
	res, err := e.RunContext(context.Background(), prompt, flags...)
	if err != nil {
		e.tb.Fatal(err)
	}
	if res.IsError {
		e.tb.Fatalf("claude -p %q returned an error result: %s\nstderr:\n%s", prompt, res.JSON, res.Stderr)
	}
	return res
}

// Resume runs prompt in the existing session id (`--resume id`).
func (e *Env) Resume(id, prompt string) Result {
	e.tb.Helper()
	return e.Run(prompt, "--resume", id)
}

// Fork runs prompt in a new session forked from id
// (`--resume id --fork-session`).
func (e *Env) Fork(id, prompt string) Result {
	e.tb.Helper()
	return e.Run(prompt, "--resume", id, "--fork-session")
}

// Continue runs prompt in the most recent session of the project (`-c`).
func (e *Env) Continue(prompt string) Result {
	e.tb.Helper()
	return e.Run(prompt, "-c")
}

// Compact compacts session id with the given instructions
// (`-p "/compact instructions" --resume id`).
func (e *Env) Compact(id, instructions string) Result {
	e.tb.Helper()
	return e.Run(strings.TrimSpace("/compact "+instructions), "--resume", id)
}

// Play installs the scenario's script and runs its prompt.
func (e *Env) Play(sc Scenario) Result {
	e.tb.Helper()
	e.Model.SetScript(sc.Script)
	return e.Run(sc.Prompt)
}

// configDir is the client's configuration directory in e's home.
func (e *Env) configDir() string { return filepath.Join(e.Home, ".claude") }

// Transcript returns the path of session id's transcript, where
// claudecode.TranscriptPath says the client keeps it.
func (e *Env) Transcript(id string) string {
	return claudecode.TranscriptPath(e.configDir(), e.Project, id)
}

// SubagentMeta returns the path of the .meta.json sidecar the client
// writes for subagent agentID of session id; it names the spawning
// tool_use id.
func (e *Env) SubagentMeta(id, agentID string) string {
	p, _ := claudecode.SubagentMetaPath(e.Transcript(id), id, agentID)
	return p
}

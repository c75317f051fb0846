package install

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hookwatch/hookwatch/claudecode"
)

// specEvents is the catalogue of claude-code-hooks.md §1.1 (v2.1.240).
var specEvents = []string{
	"SessionStart", "Setup", "InstructionsLoaded", "UserPromptSubmit", "UserPromptExpansion",
	"MessageDisplay", "PreToolUse", "PermissionRequest", "PermissionDenied", "PostToolUse",
	"PostToolUseFailure", "PostToolBatch", "Notification", "SubagentStart", "SubagentStop",
	"TaskCreated", "TaskCompleted", "Stop", "StopFailure", "TeammateIdle", "ConfigChange",
	"CwdChanged", "DirectoryAdded", "FileChanged", "WorktreeCreate", "WorktreeRemove",
	"PreCompact", "PostCompact", "SessionEnd", "Elicitation", "ElicitationResult",
}

func TestEventTable(t *testing.T) {
	if len(specEvents) != 31 {
		t.Fatalf("spec list has %d events", len(specEvents))
	}
	var names []string
	for _, e := range Events() {
		names = append(names, e.Name)
		if e.Timeout <= 0 || e.Why == "" {
			t.Errorf("%s: timeout %d, why %q", e.Name, e.Timeout, e.Why)
		}
	}
	want := slices.DeleteFunc(slices.Clone(specEvents), func(s string) bool { return s == "WorktreeCreate" })
	if !slices.Equal(names, want) {
		t.Errorf("events = %v;\nwant the spec's catalogue minus WorktreeCreate, in order: %v", names, want)
	}

	f := func(name string, async, http bool) {
		t.Helper()
		e, ok := eventByName(name)
		if !ok || e.Async != async || e.HTTP != http {
			t.Errorf("%s: %+v; want async=%v http=%v", name, e, async, http)
		}
	}
	// Events a policy can answer or block run synchronously.
	for _, n := range []string{"PreToolUse", "PermissionRequest", "PermissionDenied", "UserPromptSubmit",
		"UserPromptExpansion", "PostToolUse", "PostToolUseFailure", "PostToolBatch", "Stop", "SubagentStop",
		"PreCompact", "TaskCreated", "TaskCompleted", "TeammateIdle", "ConfigChange", "Elicitation",
		"ElicitationResult", "SessionEnd", "PostCompact"} { // the last two: async handlers die at teardown
		f(n, false, true)
	}
	f("SessionStart", false, false) // no http handlers allowed
	f("Setup", false, false)
	f("SubagentStart", true, false) // its sidecar needs an async handler
	for _, n := range []string{"Notification", "InstructionsLoaded", "StopFailure", "CwdChanged",
		"FileChanged", "DirectoryAdded", "WorktreeRemove", "MessageDisplay"} {
		f(n, true, true)
	}
	if _, ok := eventByName("WorktreeCreate"); ok {
		t.Errorf("WorktreeCreate is registered: an observe-only handler breaks worktree creation")
	}
}

// TestPluginHooksJSON keeps ../hooks/hooks.json generated from the table:
// go test ./install -run TestPluginHooksJSON -update rewrites it.
func TestPluginHooksJSON(t *testing.T) {
	path := filepath.Join("..", "hooks", "hooks.json")
	want := PluginHooks()
	if *update {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("hooks/hooks.json is out of date (go test ./install -run TestPluginHooksJSON -update):\n%s",
			unifiedDiff("hooks.json", "generated", got, want))
	}

	// Read back independently of the generator: same events, same split.
	var doc struct {
		Description string
		Hooks       map[string][]struct {
			Matcher *string
			Hooks   []struct {
				Type    string
				Command string
				Args    []string
				Async   bool
				Timeout int
			}
		}
	}
	if err := json.Unmarshal(got, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Description == "" {
		t.Errorf("hooks.json has no description")
	}
	for _, e := range events {
		gs, ok := doc.Hooks[e.Name]
		if e.Name == "DirectoryAdded" {
			// 2.1.197 refuses the whole file over it.
			if ok {
				t.Errorf("hooks.json registers DirectoryAdded, unknown to %s", PluginMinClaudeVersion)
			}
			continue
		}
		if len(gs) != 1 || len(gs[0].Hooks) != 1 || gs[0].Matcher != nil {
			t.Errorf("%s: %+v; want one group without matcher, one handler", e.Name, gs)
			continue
		}
		h := gs[0].Hooks[0]
		delete(doc.Hooks, e.Name)
		if h.Type != "command" || h.Command != claudecode.PluginLauncher || h.Args != nil || h.Async != e.Async || h.Timeout != e.Timeout {
			t.Errorf("%s: %+v; want the launcher, async=%v, timeout %d", e.Name, h, e.Async, e.Timeout)
		}
	}
	if len(doc.Hooks) != 0 {
		t.Errorf("hooks.json registers events the table does not have: %v", doc.Hooks)
	}
}

// The launcher runs a real sh the way Claude Code runs a shell-form hook.
func TestPluginLauncher(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	run := func(env []string, stdin string) (string, int) {
		cmd := exec.Command(sh, "-c", claudecode.PluginLauncher)
		cmd.Env = env
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.Output()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), code
	}
	fake := func(dir, name, marker string) {
		t.Helper()
		os.MkdirAll(dir, 0o755)
		// Builtins only: PATH may hold nothing else.
		script := "#!/bin/sh\necho \"" + marker + " $*\"; read -r line; printf %s \"$line\"; exit 7\n"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	root, pathDir, home, empty := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()

	// Nothing anywhere: exit 0, no output, whatever comes in.
	env := []string{"CLAUDE_PLUGIN_ROOT=" + root, "PATH=" + empty, "HOME=" + home}
	if out, code := run(env, `{"hook_event_name":"PreToolUse"}`); out != "" || code != 0 {
		t.Errorf("without a binary: %q, exit %d; want nothing, exit 0", out, code)
	}
	// $HOME/go/bin, then $GOBIN, then PATH, then the plugin's own bin/.
	fake(filepath.Join(home, "go", "bin"), "hookwatch", "gopath")
	if out, code := run(env, "{}"); out != "gopath hook\n{}" || code != 7 {
		t.Errorf("go/bin: %q, exit %d", out, code)
	}
	gobin := t.TempDir()
	fake(gobin, "hookwatch", "gobin")
	if out, _ := run(append(env, "GOBIN="+gobin), "{}"); out != "gobin hook\n{}" {
		t.Errorf("GOBIN: %q", out)
	}
	fake(pathDir, "hookwatch", "path")
	env[1] = "PATH=" + pathDir
	if out, _ := run(env, "{}"); out != "path hook\n{}" {
		t.Errorf("PATH: %q", out)
	}
	fake(filepath.Join(root, "bin"), "hookwatch", "plugin")
	if out, _ := run(env, `{"x":1}`); out != "plugin hook\n{\"x\":1}" {
		t.Errorf("plugin bin: %q", out)
	}
	// A directory or a non-executable file named hookwatch is skipped.
	os.Remove(filepath.Join(root, "bin", "hookwatch"))
	os.Mkdir(filepath.Join(root, "bin", "hookwatch"), 0o755)
	os.Chmod(filepath.Join(pathDir, "hookwatch"), 0o644)
	if out, _ := run(env, "{}"); out != "gopath hook\n{}" {
		t.Errorf("skipping non-executables: %q", out)
	}
}

func TestPluginManifests(t *testing.T) {
	read := func(name string, v any) {
		t.Helper()
		b, err := os.ReadFile(filepath.Join("..", ".claude-plugin", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	var plugin struct {
		Name, Version, Description string
		Hooks                      any
	}
	read("plugin.json", &plugin)
	if plugin.Name != "hookwatch" || plugin.Version == "" || plugin.Description == "" {
		t.Errorf("plugin.json: %+v", plugin)
	}
	if plugin.Hooks != nil {
		// hooks/hooks.json is loaded by convention; naming it again makes
		// Claude Code load it twice (or refuse it as a duplicate).
		t.Errorf("plugin.json must not name the default hooks file: %v", plugin.Hooks)
	}
	var market struct {
		Name    string
		Owner   struct{ Name string }
		Plugins []struct {
			Name, Source, Description string
		}
	}
	read("marketplace.json", &market)
	if market.Name == "" || market.Owner.Name == "" || len(market.Plugins) != 1 {
		t.Fatalf("marketplace.json: %+v", market)
	}
	if p := market.Plugins[0]; p.Name != plugin.Name || p.Source != "./" {
		t.Errorf("marketplace plugin entry %+v; want %q from ./", p, plugin.Name)
	}
}

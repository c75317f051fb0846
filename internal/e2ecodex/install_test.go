package e2ecodex

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	fo "github.com/hookwatch/hookwatch/internal/fakeopenai"
	"github.com/hookwatch/hookwatch/internal/testbin"
)

// TestInstall: `hookwatch install --codex` in a CODEX_HOME that has hooks
// of the user's (the recorder) makes Codex run hookwatch's hooks with no
// other step, trust included; `uninstall --codex` gives hooks.json and
// config.toml back byte for byte.
func TestInstall(t *testing.T) {
	c := startCollector(t)
	e := New(t, ModelClassic, fo.Script{"Say hello": {{fo.Exec("echo hello")}, {fo.Text("Said it.")}}}, c.vars...)
	e.RegisterHooks() // the user's own hooks, trusted by the user
	hooksFile, config := filepath.Join(e.CodexHome, "hooks.json"), filepath.Join(e.CodexHome, "config.toml")
	before := [2][]byte{read(t, hooksFile), read(t, config)}

	hw := func(args ...string) string { t.Helper(); return hookwatch(t, e, args...) }
	out := hw("install", "--codex", "--dry-run")
	if !strings.Contains(out, "Dry run") || string(read(t, hooksFile)) != string(before[0]) || string(read(t, config)) != string(before[1]) {
		t.Fatalf("the dry run changed something:\n%s", out)
	}
	out = hw("install", "--codex", "--codex-bin", e.Bin)
	if !strings.Contains(out, "Trusted hookwatch's hooks") || !strings.Contains(out, "Codex runs the hooks") {
		t.Fatalf("install:\n%s", out)
	}
	if out := hw("install", "--codex", "--codex-bin", e.Bin); !strings.Contains(out, "already installed") || strings.Contains(out, "Trusted") {
		t.Errorf("a second install changed something:\n%s", out)
	}

	// doctor asks Codex itself whether the hooks are trusted.
	doctor := exec.Command(testbin.Build(t, "./cmd/hookwatch"), "doctor")
	doctor.Dir, doctor.Env = e.Project, append(e.Environ(), "PATH="+filepath.Dir(e.Bin)+":/usr/local/bin:/usr/bin:/bin")
	dout, _ := doctor.CombinedOutput()
	if !strings.Contains(string(dout), "all 12 trusted") {
		t.Errorf("hookwatch doctor:\n%s", dout)
	}

	id := c.sayHello(t, e)
	if calls := c.toolCalls(t, id); len(calls) != 1 || calls[0].Status != "ok" || calls[0].ExitCode == nil {
		t.Errorf("tool calls %v", calls)
	}

	hw("uninstall", "--codex")
	if got := read(t, hooksFile); string(got) != string(before[0]) {
		t.Errorf("hooks.json after uninstall:\n%s\nwant\n%s", got, before[0])
	}
	if got := read(t, config); string(got) != string(before[1]) {
		t.Errorf("config.toml after uninstall:\n%s\nwant\n%s", got, before[1])
	}
}

// TestInstallKeepsURL: `hookwatch install --codex --url` keeps the
// collector's URL in the home, and Codex, run without HOOKWATCH_URL in its
// environment, delivers its events there. The collector is of another
// home, as a team server is, so the hooks reach it by its URL alone; with
// HOOKWATCH_AUTOSTART=0 they start no collector of their own.
func TestInstallKeepsURL(t *testing.T) {
	c := startCollector(t)
	e := New(t, ModelClassic, fo.Script{"Say hello": {{fo.Exec("echo hello")}, {fo.Text("Said it.")}}},
		"HOOKWATCH_HOME="+t.TempDir(), "HOOKWATCH_AUTOSTART=0")
	e.RegisterHooks() // the recorder, which counts what Codex fired
	for _, kv := range e.Environ() {
		if strings.HasPrefix(kv, "HOOKWATCH_URL=") {
			t.Fatalf("Codex's environment holds %s", kv)
		}
	}
	if out := hookwatch(t, e, "install", "--codex", "--codex-bin", e.Bin, "--url", c.URL()); !strings.Contains(out, "Kept the collector URL "+c.URL()) {
		t.Fatalf("install --codex --url:\n%s", out)
	}
	c.sayHello(t, e)
}

func read(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestInstallProject: `hookwatch install --codex --scope project` writes
// the project's .codex/hooks.json; Codex ignores it until the project is
// trusted, which install says, failing, and does with --trust-project; then the
// hooks fire with no other step; uninstall gives config.toml back byte for
// byte and takes the project's hooks file away.
func TestInstallProject(t *testing.T) {
	c := startCollector(t)
	e := New(t, ModelClassic, fo.Script{"Say hello": {{fo.Exec("echo hello")}, {fo.Text("Said it.")}}}, c.vars...)
	e.RegisterHooks() // the user's own hooks, trusted by the user
	config, projectHooks := filepath.Join(e.CodexHome, "config.toml"), filepath.Join(e.Project, ".codex", "hooks.json")
	before := read(t, config)

	hw := func(args ...string) string { t.Helper(); return hookwatch(t, e, args...) }
	// Installed in an untrusted project, the hooks would never run: a
	// failure, which says how to trust the project.
	cmd := exec.Command(testbin.Build(t, "./cmd/hookwatch"), "install", "--codex", "--scope", "project", "--codex-bin", e.Bin)
	cmd.Dir, cmd.Env = e.Project, e.Environ()
	if b, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(b), "--trust-project") || strings.Contains(string(b), "Codex runs the hooks") {
		t.Fatalf("install in an untrusted project: %v\n%s", err, b)
	}
	if _, err := os.Stat(projectHooks); err != nil {
		t.Fatalf("no project hooks file: %v", err)
	}
	out := hw("install", "--codex", "--scope", "project", "--trust-project", "--codex-bin", e.Bin)
	if !strings.Contains(out, "Trusted the project") || !strings.Contains(out, "Codex runs the hooks") {
		t.Fatalf("install --trust-project:\n%s", out)
	}

	c.sayHello(t, e)

	hw("uninstall", "--codex", "--scope", "project")
	if got := read(t, config); string(got) != string(before) {
		t.Errorf("config.toml after uninstall:\n%s\nwant\n%s", got, before)
	}
	if _, err := os.Stat(projectHooks); !os.IsNotExist(err) {
		t.Errorf("the project's hooks file is still there: %v", err)
	}
}

// TestInstallRelativeProject: a --project relative to the working
// directory names the same project as its absolute path, which Codex keys
// the project's hooks and trust by: install trusts both and says so with
// that path, doctor finds them trusted, and uninstall gives config.toml
// back byte for byte.
func TestInstallRelativeProject(t *testing.T) {
	CodexBin(t) // skip before building anything
	e := New(t, ModelClassic, nil)
	config, projectHooks := filepath.Join(e.CodexHome, "config.toml"), filepath.Join(e.Project, ".codex", "hooks.json")
	before := read(t, config)
	bin := testbin.Build(t, "./cmd/hookwatch")
	rel := "./" + filepath.Base(e.Project) + "/"
	hw := func(args ...string) (string, error) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		// The project's parent; PATH for doctor, which asks the Codex on it.
		cmd.Dir, cmd.Env = e.Dir, append(e.Environ(), "PATH="+filepath.Dir(e.Bin)+":/usr/local/bin:/usr/bin:/bin")
		out, err := cmd.CombinedOutput()
		t.Logf("hookwatch %s: %v\n%s", strings.Join(args, " "), err, out)
		return string(out), err
	}
	out, err := hw("install", "--codex", "--scope", "project", "--project", rel, "--trust-project", "--codex-bin", e.Bin)
	if err != nil || !strings.Contains(out, "Created "+projectHooks+" ") || !strings.Contains(out, "Codex runs the hooks") {
		t.Fatalf("install --project %s: %v\n%s", rel, err, out)
	}
	if b := read(t, config); !strings.Contains(string(b), fmt.Sprintf("[projects.%q]", e.Project)) {
		t.Errorf("config.toml does not trust %s:\n%s", e.Project, b)
	}
	if out, _ := hw("doctor", "--no-round-trip", "--project", rel); !strings.Contains(out, projectHooks+" registers") || !strings.Contains(out, "all 12 trusted") {
		t.Errorf("doctor --project %s:\n%s", rel, out)
	}
	if _, err := hw("uninstall", "--codex", "--scope", "project", "--project", rel); err != nil {
		t.Fatalf("uninstall --project %s: %v", rel, err)
	}
	if got := read(t, config); string(got) != string(before) {
		t.Errorf("config.toml after uninstall:\n%s\nwant\n%s", got, before)
	}
	if _, err := os.Stat(projectHooks); !os.IsNotExist(err) {
		t.Errorf("the project's hooks file is still there: %v", err)
	}
}

// sayHello runs the "Say hello" session and checks that hookwatch's hooks
// stored each event Codex fired; it returns the session's id.
func (c *collector) sayHello(t *testing.T, e *Env) string {
	t.Helper()
	if run := e.Exec("Say hello"); run.Err != nil {
		t.Fatalf("codex exec: %v\n%s", run.Err, run.Stderr)
	}
	id := sessionOf(e.Rollouts()[0])
	want, total := fired(e, id)
	if want["PreToolUse"] != 1 {
		t.Fatalf("codex ran hooks %v", want)
	}
	sameCounts(t, "stored events", countEvents(c.waitEvents(t, id, total)), want)
	return id
}

// TestInstallHooksOff: with Codex's hooks feature turned off in
// config.toml (`[features] hooks = false`, or the older `codex_hooks`),
// Codex runs no hook at all. install --codex fails saying that, and which
// setting to change, not that a project is untrusted; doctor says the same
// with a fix that is not install again. A config.toml Codex cannot load
// (it then runs on defaults, hooks.json unread) is reported with Codex's
// own words, which name the line.
func TestInstallHooksOff(t *testing.T) {
	f := func(name, appended string, want ...string) {
		t.Run(name, func(t *testing.T) {
			e := New(t, ModelClassic, nil)
			config := filepath.Join(e.CodexHome, "config.toml")
			if err := os.WriteFile(config, append(read(t, config), appended...), 0o644); err != nil {
				t.Fatal(err)
			}
			bin := testbin.Build(t, "./cmd/hookwatch")
			cmd := exec.Command(bin, "install", "--codex", "--codex-bin", e.Bin)
			cmd.Dir, cmd.Env = e.Project, e.Environ()
			out, err := cmd.CombinedOutput()
			if err == nil || strings.Contains(string(out), "trust-project") || strings.Contains(string(out), "Codex runs the hooks") {
				t.Errorf("install --codex: %v\n%s", err, out)
			}
			doctor := exec.Command(bin, "doctor", "--no-round-trip")
			doctor.Dir, doctor.Env = e.Project, append(e.Environ(), "PATH="+filepath.Dir(e.Bin)+":/usr/local/bin:/usr/bin:/bin")
			dout, _ := doctor.CombinedOutput()
			if strings.Contains(string(dout), "fix: hookwatch install --codex\n") {
				t.Errorf("hookwatch doctor's fix is to install again:\n%s", dout)
			}
			for _, w := range want {
				if !strings.Contains(string(out), w) {
					t.Errorf("install --codex does not say %q:\n%s", w, out)
				}
				if !strings.Contains(string(dout), w) {
					t.Errorf("hookwatch doctor does not say %q:\n%s", w, dout)
				}
			}
		})
	}
	f("hooks", "\n[features]\nhooks = false\n", "hooks feature is off")
	f("codex_hooks", "\n[features]\ncodex_hooks = false\n", "hooks feature is off")
	f("unloadable", "\nmodel = \n", "Codex cannot load", "config.toml:12:9: string values must be quoted")
}

// TestInstallHookTurnedOff: a hook of hookwatch's the user turned off in
// Codex (enabled = false in its [hooks.state] table, as Codex's /hooks
// review records it) does not run, trusted or not: install and doctor say
// which, instead of that Codex runs the hooks.
func TestInstallHookTurnedOff(t *testing.T) {
	e := New(t, ModelClassic, nil)
	config := filepath.Join(e.CodexHome, "config.toml")
	out := hookwatch(t, e, "install", "--codex", "--codex-bin", e.Bin)
	if !strings.Contains(out, "Codex runs the hooks") {
		t.Fatalf("install:\n%s", out)
	}
	b := string(read(t, config))
	head := fmt.Sprintf("[hooks.state.%q]\ntrusted_hash = ", filepath.Join(e.CodexHome, "hooks.json")+":pre_tool_use:0:0")
	i := strings.Index(b, head)
	if i < 0 {
		t.Fatalf("no trust of PreToolUse's hook in config.toml:\n%s", b)
	}
	i += len(head) + strings.Index(b[i+len(head):], "\n") + 1
	if err := os.WriteFile(config, []byte(b[:i]+"enabled = false\n"+b[i:]), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := testbin.Build(t, "./cmd/hookwatch")
	cmd := exec.Command(bin, "install", "--codex", "--codex-bin", e.Bin)
	cmd.Dir, cmd.Env = e.Project, e.Environ()
	iout, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(iout), "turned off") || !strings.Contains(string(iout), "PreToolUse") || strings.Contains(string(iout), "Codex runs the hooks") {
		t.Errorf("install --codex with PreToolUse's hook turned off: %v\n%s", err, iout)
	}
	doctor := exec.Command(bin, "doctor", "--no-round-trip")
	doctor.Dir, doctor.Env = e.Project, append(e.Environ(), "PATH="+filepath.Dir(e.Bin)+":/usr/local/bin:/usr/bin:/bin")
	dout, _ := doctor.CombinedOutput()
	if !strings.Contains(string(dout), "FAIL  codex hooks (user)") || !strings.Contains(string(dout), "turned off") || !strings.Contains(string(dout), "PreToolUse") {
		t.Errorf("hookwatch doctor with PreToolUse's hook turned off:\n%s", dout)
	}
}

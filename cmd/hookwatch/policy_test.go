package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hookwatch/hookwatch/decision"
)

// userPolicy is a valid user policy: two rules.
const userPolicy = `rules:
  - id: no-rm-rf
    tool: Bash
    when: 'tool_input.command matches "rm\\s+-[a-zA-Z]*(rf|fr)"'
    action: deny
    reason: Recursive force deletes are not allowed here.
  - id: bash-quota
    tool: Bash
    quota: {limit: 1, per: [session]}
    action: deny
    reason: one Bash per session
`

// brokenPolicy has a condition that does not compile (line 4), a rule that
// redefines a user rule's id (line 6), and a valid rule.
const brokenPolicy = `rules:
  - id: typo
    tool: Bash
    when: 'tool_input.command startsWith 42'
    action: deny
  - id: no-rm-rf
    tool: Bash
    action: allow
  - id: fine
    events: [UserPromptSubmit]
    context: be brief
`

// policyEvents are three payloads of one session and a line that is not one.
const policyEvents = `{"session_id":"s1","cwd":"/p","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}
{"session_id":"s1","cwd":"/p","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"rm -rf build"}}
{"received_at":"2026-09-01T10:00:00Z","payload":{"session_id":"s1","cwd":"/p","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"echo hi"}}}
not json
`

func writePolicy(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func exitCodeOf(err error) int { return exitCode(err, &strings.Builder{}) }

func TestPolicyCheck(t *testing.T) {
	e := newTestEnv(t)
	t.Setenv("CLAUDE_PROJECT_DIR", "")

	// Nothing in force: not an error.
	out, _, err := hw(t, "", "policy", "check")
	if err != nil || !strings.Contains(out, "no policy files in force for "+e.project) {
		t.Fatalf("check without policies: %v, %q", err, out)
	}

	user := writePolicy(t, filepath.Join(e.hwHome, "policy.yaml"), userPolicy)
	out = mustHW(t, "policy", "check")
	if want := user + ": ok, 2 rules\n"; !strings.HasPrefix(out, "policy files in force for "+e.project) || !strings.HasSuffix(out, want) {
		t.Fatalf("check of the user policy printed %q, want %q", out, want)
	}

	// A project file with problems: each is reported with file, line and
	// rule id, and the exit status is 1.
	project := writePolicy(t, filepath.Join(e.project, ".hookwatch", "policy.yaml"), brokenPolicy)
	out, _, err = hw(t, "", "policy", "check")
	if code := exitCodeOf(err); code != 1 {
		t.Fatalf("check with a broken project policy: exit %d (%v), want 1\n%s", code, err, out)
	}
	for _, want := range []string{
		user + ": ok, 2 rules\n",
		project + ": 2 problems\n",
		project + `:4: rule "typo": cannot compile when:`,
		project + `:6: rule "no-rm-rf": id already defined by the user policy at ` + user + ":2",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("check output lacks %q:\n%s", want, out)
		}
	}

	// Explicit files are checked together, whatever is in force here.
	out = mustHW(t, "policy", "check", user)
	if out != user+": ok, 2 rules\n" {
		t.Fatalf("check FILE printed %q", out)
	}
	out, _, err = hw(t, "", "policy", "check", filepath.Join(e.root, "missing.yaml"))
	if exitCodeOf(err) != 1 || !strings.Contains(out, "missing.yaml: no such policy file") {
		t.Fatalf("check of a missing file: %v\n%s", err, out)
	}
	out, _, err = hw(t, "", "policy", "check", e.root)
	if want := e.root + ": cannot read policy file: not a regular file (a directory)\n"; exitCodeOf(err) != 1 || !strings.HasSuffix(out, want) {
		t.Fatalf("check of a directory: %v\n%s\nwant it to end with %q", err, out, want)
	}
}

func TestPolicyTest(t *testing.T) {
	e := newTestEnv(t)
	pol := writePolicy(t, filepath.Join(e.root, "policy.yaml"), userPolicy)
	events := writePolicy(t, filepath.Join(e.root, "events.jsonl"), policyEvents)

	// The table: the quota lets the first Bash through, the second is
	// denied by both rules, the third by the quota.
	out := mustHW(t, "policy", "test", pol, "--events", events)
	for _, want := range []string{
		"LINE  EVENT",
		"no opinion",
		"Recursive force deletes are not allowed here.",
		"=> no-rm-rf,bash-quota",
		"not a JSON object",
		"3 events, 2 with a decision, 2 denied or blocked (1 unreadable line not replayed, see its row)\n",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("policy test table lacks %q:\n%s", want, out)
		}
	}

	// JSON Lines, with the flags before the file and events from stdin.
	out, _, err := hw(t, policyEvents, "policy", "test", "--json", "--events", "-", pol)
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		Line     int    `json:"line"`
		Stdout   string `json:"stdout"`
		Error    string `json:"error"`
		Decision *struct {
			Action  string   `json:"action"`
			RuleIDs []string `json:"rule_ids"`
		} `json:"decision"`
	}
	var got []string
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var r result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("not JSON: %q", sc.Text())
		}
		s := "none"
		switch {
		case r.Error != "":
			s = "error"
		case r.Decision != nil:
			s = r.Decision.Action + ":" + strings.Join(r.Decision.RuleIDs, ",")
			if !strings.Contains(r.Stdout, `"permissionDecision":"deny"`) {
				t.Fatalf("line %d: stdout %q", r.Line, r.Stdout)
			}
		}
		got = append(got, s)
	}
	if want := "none deny:no-rm-rf,bash-quota deny:bash-quota error"; strings.Join(got, " ") != want {
		t.Fatalf("policy test --json: %s, want %s\n%s", strings.Join(got, " "), want, out)
	}

	// A policy with problems is dry-run without its invalid rules, and the
	// exit status is 1.
	broken := writePolicy(t, filepath.Join(e.root, "broken.yaml"), brokenPolicy)
	out, _, err = hw(t, "", "policy", "test", broken, "--events", events)
	if exitCodeOf(err) != 1 || !strings.Contains(out, `problem: `+broken+`:4: rule "typo"`) {
		t.Fatalf("test of a broken policy: %v\n%s", err, out)
	}

	f := func(wantErr string, args ...string) {
		t.Helper()
		_, _, err := hw(t, "", append([]string{"policy", "test"}, args...)...)
		if exitCodeOf(err) != 2 || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("policy test %q: %v, want a usage error with %q", args, err, wantErr)
		}
	}
	f("needs a policy FILE", "--events", events)
	f("needs --events EVENTS.jsonl or --command CMD", pol)
	f("takes --events or --command, not both", pol, "--events", events, "--command", "ls")
	f("--command is empty", pol, "--command", "")
	f("takes one policy file", pol, pol, "--events", events)
	f("flag provided but not defined", pol, "--bogus")
	_, _, err = hw(t, "", "policy", "test", filepath.Join(e.root, "nope.yaml"), "--events", events)
	if exitCodeOf(err) != 1 {
		t.Fatalf("test of a missing policy: %v", err)
	}
	// A directory is no policy file: refused before the dry run, which
	// would replay every event with no rule at all, in words.
	out, _, err = hw(t, "", "policy", "test", e.root, "--events", events)
	if want := "cannot read policy file " + e.root + ": not a regular file (a directory)"; exitCodeOf(err) != 1 || err.Error() != want || out != "" {
		t.Fatalf("test of a directory: %v, want %q, and no dry run\n%s", err, want, out)
	}
}

// TestPolicyTestCommand: a policy file not in force is tried on one
// command, with the rule that decides, its reason, and what the hook
// would print.
func TestPolicyTestCommand(t *testing.T) {
	e := newTestEnv(t)
	pol := writePolicy(t, filepath.Join(e.root, "draft.yaml"), userPolicy)
	out := mustHW(t, "policy", "test", pol, "--command", "rm -rf build")
	for _, want := range []string{
		"1     PreToolUse  Bash  main   no-rm-rf  deny    yes       Recursive force deletes are not allowed here.",
		"1 event, 1 with a decision, 1 denied or blocked\n",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("policy test --command lacks %q:\n%s", want, out)
		}
	}
	out = mustHW(t, "policy", "test", "--json", "--command", "ls -la", pol)
	var r struct {
		Event    string          `json:"event"`
		ToolName string          `json:"tool_name"`
		Decision *decision.Audit `json:"decision"`
		Stdout   string          `json:"stdout"`
		ExitCode int             `json:"exit_code"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("policy test --command --json: %v\n%s", err, out)
	}
	// One event: the quota's first Bash goes through, and no rule has an
	// opinion of ls.
	if r.Event != "PreToolUse" || r.ToolName != "Bash" || r.Decision != nil || r.Stdout != "" || r.ExitCode != 0 {
		t.Fatalf("policy test --command ls --json: %+v", r)
	}
	// A broken file is still dry-run, without its invalid rules (its
	// no-rm-rf, alone here, allows), and exits 1.
	broken := writePolicy(t, filepath.Join(e.root, "broken.yaml"), brokenPolicy)
	out, _, err := hw(t, "", "policy", "test", broken, "--command", "rm -rf build")
	if exitCodeOf(err) != 1 || !strings.Contains(out, `problem: `+broken+`:4: rule "typo"`) || !strings.Contains(out, "no-rm-rf  allow") {
		t.Fatalf("policy test --command of a broken policy: %v\n%s", err, out)
	}
}

func TestPolicyExplain(t *testing.T) {
	e := newTestEnv(t)
	t.Setenv("CLAUDE_PROJECT_DIR", "")
	user := writePolicy(t, filepath.Join(e.hwHome, "policy.yaml"), userPolicy)
	project := writePolicy(t, filepath.Join(e.project, ".hookwatch", "policy.yaml"), brokenPolicy)
	sub := filepath.Join(e.project, "pkg", "deep")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	out := strings.Join(strings.Fields(mustHW(t, "policy", "explain")), " ") // columns vary in width
	for _, want := range []string{
		"user " + user + " 2 rules",
		"project " + project + " 2 rules, 1 problem",
		`user no-rm-rf PreToolUse Bash when tool_input.command matches "rm\\s+-[a-zA-Z]*(rf|fr)" - deny enforce open`,
		"user bash-quota PreToolUse Bash - deny+quota 1/session enforce open",
		"project fine UserPromptSubmit - - context enforce open",
		"Problems (these parts are NOT in force: they fail open",
		project + `:4: rule "typo": cannot compile when`,
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("policy explain lacks %q:\n%s", want, out)
		}
	}
	// The rule that does not compile is not in force: it is no row of the
	// rules table, only a problem.
	if strings.Contains(out, "project typo") || !strings.Contains(out, "1 invalid rule left out of the table") {
		t.Fatalf("policy explain lists the invalid rule as in force:\n%s", out)
	}
	// From a subdirectory of the project, the project's policy is in force,
	// as for a session started in the project working there, and the
	// output says so.
	out = strings.Join(strings.Fields(mustHW(t, "policy", "explain", sub)), " ")
	for _, want := range []string{
		"Project directory: " + e.project + " (the nearest directory with a project policy; CLAUDE_PROJECT_DIR is not set)",
		"project " + project + " 2 rules, 1 problem",
		"project fine UserPromptSubmit",
		"Claude Code started in " + sub + " itself would not apply it",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("policy explain %s lacks %q:\n%s", sub, want, out)
		}
	}
	// In a session started in the subdirectory (CLAUDE_PROJECT_DIR), the
	// hook's search stops there and the parent's policy is not in force.
	t.Setenv("CLAUDE_PROJECT_DIR", sub)
	out = strings.Join(strings.Fields(mustHW(t, "policy", "explain", sub)), " ")
	if want := "project " + filepath.Join(sub, ".hookwatch", "policy.yaml") + " not found"; !strings.Contains(out, want) || strings.Contains(out, "project fine") {
		t.Fatalf("policy explain %s with CLAUDE_PROJECT_DIR=%[1]s lacks %q or shows the parent's rules:\n%s", sub, want, out)
	}
	// policy check, run in the subdirectory, checks the project file too.
	t.Setenv("CLAUDE_PROJECT_DIR", "")
	t.Chdir(sub)
	out, _, _ = hw(t, "", "policy", "check")
	if !strings.Contains(out, "(project directory "+e.project+" (") || !strings.Contains(out, project+": 2 problems") {
		t.Fatalf("policy check in %s:\n%s", sub, out)
	}
	_, _, err := hw(t, "", "policy", "explain", filepath.Join(e.root, "nowhere"))
	if exitCodeOf(err) != 1 {
		t.Fatalf("explain of a missing directory: %v", err)
	}
	_, _, err = hw(t, "", "policy", "explain", user)
	if exitCodeOf(err) != 2 {
		t.Fatalf("explain of a file: %v", err)
	}
}

func TestPolicyHelpAndUsage(t *testing.T) {
	newTestEnv(t)
	f := func(wantCode int, wantOut string, args ...string) {
		t.Helper()
		out, errOut, err := hw(t, "", args...)
		all := out + errOut
		if err != nil {
			all += err.Error()
		}
		if code := exitCodeOf(err); code != wantCode || !strings.Contains(all, wantOut) {
			t.Fatalf("hookwatch %s: exit %d (%v), want %d with %q\nstdout:\n%s\nstderr:\n%s",
				strings.Join(args, " "), code, err, wantCode, wantOut, out, errOut)
		}
		if wantCode == 0 && strings.HasSuffix(args[len(args)-1], "help") && !errors.Is(err, flag.ErrHelp) && err != nil {
			t.Fatalf("--help returned %v", err)
		}
	}
	f(0, "Usage: hookwatch policy <subcommand>", "policy", "--help")
	f(0, "Usage: hookwatch policy check [FILE…]", "policy", "check", "--help")
	f(0, "Usage: hookwatch policy check [FILE…]", "policy", "check", "policy.yaml", "--help")
	f(2, "flag provided but not defined: -q", "policy", "check", "policy.yaml", "-q")
	f(0, "Usage: hookwatch policy test FILE --events EVENTS.jsonl [--json]", "policy", "test", "--help")
	f(0, "hookwatch policy test FILE --command CMD [--json]", "policy", "test", "--help")
	f(0, "To try a file\nnot yet in force: policy test FILE --command CMD.", "policy", "explain", "--help")
	f(0, "Usage: hookwatch policy explain [DIR]", "policy", "explain", "-h")
	f(2, "missing policy subcommand", "policy")
	f(2, `unknown policy subcommand "lint" (want check, test or explain)`, "policy", "lint")
	f(2, "--json goes with --command", "policy", "explain", "--json")
	f(2, "--command is empty", "policy", "explain", "--command", "")
	f(2, "--command is empty", "policy", "explain", "--command=", "--json")
	f(0, "policy", "--help") // the top-level help lists it
}

func TestPolicyExplainCommand(t *testing.T) {
	e := newTestEnv(t)
	writePolicy(t, filepath.Join(e.hwHome, "policy.yaml"), `rules:
  - id: no-destruction
    tool: Bash
    when: command.effect == "destructive" and not all(command.writes, {under(#, cwd + "/build")})
    action: deny
    reason: This destroys data outside build/.
`)
	out := strings.Join(strings.Fields(mustHW(t, "policy", "explain", "--command", `cd src && bash -c "rm -r -f ../victim"`, e.project)), " ")
	for _, want := range []string{
		"Effect: destructive",
		"Writes: " + filepath.Join(e.project, "victim"),
		"2 bash -c rm -r -f ../victim - read_only run_command",
		"3 rm -r -f ../victim bash -c destructive delete_file " + filepath.Join(e.project, "victim"),
		`answers a Bash call of it (PreToolUse): deny rule "no-destruction": deny — This destroys data outside build/.`,
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("policy explain --command lacks %q:\n%s", want, out)
		}
	}
	out = mustHW(t, "policy", "explain", "--command", "rm -rf build/out", e.project)
	if !strings.Contains(out, "no rule fires") {
		t.Fatalf("a deletion under build/ is denied:\n%s", out)
	}
	// The directory first, then the flags, as the usage line writes them.
	if got := mustHW(t, "policy", "explain", e.project, "--command", "rm -rf build/out"); got != out {
		t.Fatalf("policy explain DIR --command CMD printed\n%s\nwant, as with the flags first,\n%s", got, out)
	}
	var v struct {
		Command struct {
			Effect string   `json:"effect"`
			Writes []string `json:"writes"`
		} `json:"command"`
		Subtype  string          `json:"subtype"`
		Decision *decision.Audit `json:"decision"`
	}
	if err := json.Unmarshal([]byte(mustHW(t, "policy", "explain", "--json", "--command", "git clean -fdx", e.project)), &v); err != nil {
		t.Fatal(err)
	}
	// The decision reads as the audit records it.
	if v.Command.Effect != "destructive" || v.Subtype != "git_operation" || len(v.Command.Writes) != 1 ||
		v.Decision == nil || v.Decision.Action != decision.ActionDeny || !slices.Equal(v.Decision.RuleIDs, []string{"no-destruction"}) {
		t.Fatalf("--json: %+v, decision %+v", v, v.Decision)
	}
}

// TestHookLogsPolicyProblemsOnce: with the collector down, the hook answers
// a broken policy alone; a headless run shows its systemMessage to no one,
// so hook.log must say what is wrong — once per change of the files, not
// on every event. The hooks are real processes of the binary.
func TestHookLogsPolicyProblemsOnce(t *testing.T) {
	e := newTestEnv(t)
	t.Setenv("HOOKWATCH_AUTOSTART", "0") // the collector stays down
	writePolicy(t, filepath.Join(e.hwHome, "policy.yaml"), brokenPolicy+"  - id: typo2\n    whne: x\n")
	logPath := filepath.Join(e.hwHome, "hook.log")
	hookRun := func(payload string) {
		t.Helper()
		cmd := exec.Command(e.lean)
		cmd.Stdin = strings.NewReader(payload)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("hook: %v; stderr:\n%s", err, stderr.String())
		}
		// A policy decided (the warning): its answer, and nothing else.
		if s := stdout.String(); s != "" && !json.Valid(stdout.Bytes()) {
			t.Fatalf("hook's stdout is not its answer: %q", s)
		}
	}
	problemLines := func() []string {
		t.Helper()
		var out []string
		for _, l := range strings.Split(readFileString(logPath), "\n") {
			if strings.Contains(l, "policy.yaml:") {
				out = append(out, l)
			}
		}
		return out
	}
	prompt := `{"session_id":"s1","cwd":"` + e.project + `","hook_event_name":"UserPromptSubmit","prompt":"hi"}`
	bash := `{"session_id":"s1","cwd":"` + e.project + `","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"t1"}`
	hookRun(prompt)
	hookRun(bash)
	hookRun(prompt)
	got := problemLines()
	want := []string{
		`:4: rule \"typo\": cannot compile when`, // a condition, compiled though no event reached it
		`:12: rule \"typo2\": a rule needs an action`,
		`:13: rule \"typo2\": unknown key \"whne\"; did you mean \"when\"?`,
	}
	if len(got) != len(want) {
		t.Fatalf("hook.log has %d lines on the policy, want %d (once, not per event):\n%s", len(got), len(want), readFileString(logPath))
	}
	for _, w := range want {
		if !slices.ContainsFunc(got, func(l string) bool { return strings.Contains(l, w) }) {
			t.Errorf("hook.log has no line with %s:\n%s", w, strings.Join(got, "\n"))
		}
	}
	// An edit is a change: told again, once.
	writePolicy(t, filepath.Join(e.hwHome, "policy.yaml"), "rules:\n  - id: a\n    whne: x\n")
	hookRun(prompt)
	hookRun(prompt)
	if got := problemLines(); len(got) != len(want)+2 {
		t.Fatalf("after the edit, hook.log has %d lines on the policy, want %d:\n%s", len(got), len(want)+2, readFileString(logPath))
	}
	// Fixed: nothing more.
	writePolicy(t, filepath.Join(e.hwHome, "policy.yaml"), userPolicy)
	hookRun(prompt)
	if got := problemLines(); len(got) != len(want)+2 {
		t.Fatalf("a valid policy was logged:\n%s", readFileString(logPath))
	}
}

// TestPolicyCheckWarns: a condition on a field the rule's tool never sends
// is warned about and exits 0.
func TestPolicyCheckWarns(t *testing.T) {
	path := writePolicy(t, filepath.Join(t.TempDir(), "policy.yaml"), "rules:\n  - id: env\n    tool: Read\n    when: 'tool_input.command contains \".env\"'\n    action: deny\n")
	out, _, err := hw(t, "", "policy", "check", path)
	if err != nil {
		t.Fatalf("policy check: %v\n%s", err, out)
	}
	want := path + ": ok, 1 rule, 1 warning\n" + path + `:4: rule "env": warning: Read's tool_input has no field command (it has file_path, offset, limit, pages): the condition reads it from no call` + "\n"
	if out != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out, want)
	}
}

// TestPolicyCheckWarnsCodex: an ask rule for both runtimes passes the
// check either way, and is warned about only once Codex's hooks run
// hookwatch (a Claude Code user hears nothing of Codex).
func TestPolicyCheckWarnsCodex(t *testing.T) {
	e := newTestEnv(t)
	t.Setenv("CODEX_HOME", filepath.Join(e.root, "codex"))
	path := writePolicy(t, filepath.Join(e.root, "policy.yaml"), "rules:\n  - id: a\n    tool: Bash\n    action: ask\n")
	out, _, err := hw(t, "", "policy", "check", path)
	if want := path + ": ok, 1 rule\n"; err != nil || out != want {
		t.Fatalf("policy check without Codex's hooks: %v\n%s\nwant:\n%s", err, out, want)
	}
	// Installed without a Codex to trust them by: the hooks file is written
	// all the same, which is what counts here.
	if _, _, err := hw(t, "", "install", "--codex"); err == nil || !exists(filepath.Join(e.root, "codex", "hooks.json")) {
		t.Fatalf("install --codex: %v, and no hooks file", err)
	}
	out, _, err = hw(t, "", "policy", "check", path)
	want := path + ": ok, 1 rule, 1 warning\n" + path + ":4: rule \"a\": warning: Codex has no ask on PreToolUse: on Codex the call runs; add `runtime: claude-code` if that is meant\n"
	if err != nil || out != want {
		t.Fatalf("policy check with Codex's hooks: %v\n%s\nwant:\n%s", err, out, want)
	}
	// Codex's hooks of the project count too.
	mustHW(t, "uninstall", "--codex")
	if _, _, err := hw(t, "", "install", "--codex", "--scope", "project"); err == nil {
		t.Fatal("install --codex --scope project without Codex succeeded")
	}
	if out, _, _ = hw(t, "", "policy", "check", path); out != want {
		t.Fatalf("policy check with Codex's project hooks:\n%s\nwant:\n%s", out, want)
	}
}

// TestPolicyTestAndExplainWarn: policy test and policy explain print the
// warnings policy check prints, in the same words, and still exit 0: in
// their text output, and on stderr beside JSON output, which holds results
// only. The Codex warning appears once Codex's hooks run hookwatch, as for
// check.
func TestPolicyTestAndExplainWarn(t *testing.T) {
	e := newTestEnv(t)
	t.Setenv("CLAUDE_PROJECT_DIR", "")
	t.Setenv("CODEX_HOME", filepath.Join(e.root, "codex"))
	path := writePolicy(t, filepath.Join(e.hwHome, "policy.yaml"), "rules:\n  - id: env\n    tool: Read\n    when: 'tool_input.command contains \".env\"'\n    action: deny\n  - id: a\n    tool: Bash\n    action: ask\n")
	field := path + `:4: rule "env": warning: Read's tool_input has no field command (it has file_path, offset, limit, pages): the condition reads it from no call`
	codex := path + ":8: rule \"a\": warning: Codex has no ask on PreToolUse: on Codex the call runs; add `runtime: claude-code` if that is meant"
	events := `{"session_id":"s1","cwd":"` + e.project + `","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":".env"}}` + "\n"

	// f runs the command, which must exit 0, and checks that the warnings
	// want are lines of the stream they belong on (stdout for text, stderr
	// beside JSON), that the others are not, and that JSON output is JSON.
	f := func(want []string, asJSON bool, args ...string) {
		t.Helper()
		out, errOut, err := hw(t, events, args...)
		if err != nil {
			t.Fatalf("hookwatch %s: %v (warnings must not fail it)\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, out, errOut)
		}
		where, other := out, errOut
		if asJSON {
			where, other = errOut, out
			// One JSON value (explain) or one per line (test).
			dec := json.NewDecoder(strings.NewReader(out))
			for {
				var v any
				if err := dec.Decode(&v); errors.Is(err, io.EOF) {
					break
				} else if err != nil {
					t.Fatalf("hookwatch %s: stdout is not JSON: %v\n%s", strings.Join(args, " "), err, out)
				}
			}
		}
		lines := strings.Split(where, "\n")
		for i := range lines {
			lines[i] = strings.TrimSpace(lines[i])
		}
		for _, w := range []string{field, codex} {
			if slices.Contains(want, w) != slices.Contains(lines, w) {
				t.Fatalf("hookwatch %s: want warnings %q, got\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), want, out, errOut)
			}
			if strings.Contains(other, w) {
				t.Fatalf("hookwatch %s: warning %q on the wrong stream:\n%s", strings.Join(args, " "), w, other)
			}
		}
	}
	check := func(want ...string) {
		t.Helper()
		f(want, false, "policy", "test", path, "--command", "ls")
		f(want, false, "policy", "test", path, "--events", "-")
		f(want, true, "policy", "test", path, "--events", "-", "--json")
		f(want, false, "policy", "explain")
		f(want, false, "policy", "explain", "--command", "ls")
		f(want, true, "policy", "explain", "--command", "ls", "--json")
	}
	check(field)
	// The warnings policy check prints, word for word.
	if out := mustHW(t, "policy", "check"); !strings.Contains(out, "\n"+field+"\n") {
		t.Fatalf("policy check lacks %q:\n%s", field, out)
	}
	// Installed without a Codex to trust them by: the hooks file is written
	// all the same, which is what counts here.
	if _, _, err := hw(t, "", "install", "--codex"); err == nil || !exists(filepath.Join(e.root, "codex", "hooks.json")) {
		t.Fatalf("install --codex: %v, and no hooks file", err)
	}
	check(field, codex)
	if out := mustHW(t, "policy", "check"); !strings.Contains(out, "\n"+codex+"\n") {
		t.Fatalf("policy check lacks %q:\n%s", codex, out)
	}
}

// TestPolicyHelpNamesHome: policy --help says where this home's policy file
// is, under HOOKWATCH_HOME, not where it is by default.
func TestPolicyHelpNamesHome(t *testing.T) {
	e := newTestEnv(t)
	t.Setenv("HOOKWATCH_HOME", filepath.Join(e.root, "elsewhere"))
	out, _, err := hw(t, "", "policy", "--help")
	if want := filepath.Join(e.root, "elsewhere", "policy.yaml"); err != nil || !strings.Contains(out, want) || strings.Contains(out, "~/.hookwatch") {
		t.Fatalf("policy --help with HOOKWATCH_HOME=%s (%v):\n%s\nwant it to name %s", filepath.Join(e.root, "elsewhere"), err, out, want)
	}
}

package policy

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	var buf bytes.Buffer
	if err := Check(&buf, "testdata/basic.yaml", "testdata/bench50.yaml"); err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	// The benchmark's generated rules read fields their tools never send:
	// warned about, not failed.
	head := "testdata/basic.yaml: ok, 11 rules\ntestdata/bench50.yaml: ok, 50 rules, 19 warnings\n"
	rest, ok := strings.CutPrefix(buf.String(), head)
	if !ok || strings.Count(rest, "\n") != 19 || strings.Count(rest, ": warning: ") != 19 {
		t.Fatalf("output:\n%s", buf.String())
	}
	if !strings.Contains(rest, `testdata/bench50.yaml:55: rule "rule-08": warning: Task's tool_input has no field command, nor Agent's (they have prompt, description, subagent_type, model, run_in_background, resume): the condition reads it from no call`+"\n") {
		t.Errorf("output:\n%s", rest)
	}
	buf.Reset()
	err := Check(&buf, "testdata/check/bad.yaml", "testdata/nope.yaml")
	if err == nil || err.Error() != "policy check failed: 14 problems" {
		t.Fatalf("err %v", err)
	}
	golden(t, "check/bad.golden", buf.String())
	if Check(&buf) == nil {
		t.Fatal("no files must be an error")
	}
}

// TestDryRun runs the real corpus through `policy test`: raw payload lines
// and lines wrapping the payload under "payload".
func TestDryRun(t *testing.T) {
	var events bytes.Buffer
	for _, name := range []string{"claude-code-2.1.197.jsonl", "public-captures.jsonl"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		events.Write(b)
	}
	events.WriteString("not json\n{\"no\":\"payload\"}\n\n")
	all := events.Bytes()

	var table bytes.Buffer
	if err := Test(&table, "", "testdata/basic.yaml", bytes.NewReader(all), false, CheckOptions{}); err != nil {
		t.Fatal(err)
	}
	golden(t, "dryrun/table.golden", table.String())

	var js bytes.Buffer
	if err := Test(&js, "", "testdata/basic.yaml", bytes.NewReader(all), true, CheckOptions{}); err != nil {
		t.Fatal(err)
	}
	golden(t, "dryrun/results.jsonl", js.String())

	var bad bytes.Buffer
	err := Test(&bad, "", "testdata/check/bad.yaml", bytes.NewReader(all), false, CheckOptions{})
	if err == nil || !strings.Contains(err.Error(), "has 13 problems") {
		t.Fatalf("invalid policy must fail the dry run: %v", err)
	}
	if !strings.Contains(bad.String(), `problem: testdata/check/bad.yaml:9: rule "typo"`) {
		t.Fatalf("problems not shown:\n%s", bad.String())
	}
}

// TestDryRunLineEnds: events with "\r\n" line ends, a line longer than
// the reader's buffer and no newline after the last line are replayed as
// the same events with '\n' ends.
func TestDryRunLineEnds(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "claude-code-2.1.197.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	long := `{"hook_event_name":"UserPromptSubmit","session_id":"s","prompt":"` + strings.Repeat("x", 200<<10) + `"}` + "\n"
	lf := append([]byte(long), b...)
	crlf := bytes.TrimSuffix(bytes.ReplaceAll(lf, []byte("\n"), []byte("\r\n")), []byte("\r\n"))
	var want, got bytes.Buffer
	if err := Test(&want, "", "testdata/basic.yaml", bytes.NewReader(lf), true, CheckOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := Test(&got, "", "testdata/basic.yaml", bytes.NewReader(crlf), true, CheckOptions{}); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		t.Errorf("with \\r\\n ends:\n%s\nwant:\n%s", got.String(), want.String())
	}
	if n := bytes.Count(want.Bytes(), []byte("\n")); n != bytes.Count(lf, []byte("\n")) {
		t.Errorf("%d results for %d lines", n, bytes.Count(lf, []byte("\n")))
	}
}

func TestExplain(t *testing.T) {
	root := t.TempDir()
	old := managedPath
	managedPath = filepath.Join(root, "etc", "policy.yaml")
	defer func() { managedPath = old }()
	writeFile(t, filepath.Dir(managedPath), "policy.yaml", `rules:
  - id: org-no-secrets
    description: Never read secrets
    tool: Read
    when: 'glob("**/.env", tool_input.file_path)'
    action: deny
    on_error: closed
  - id: org-broken-closed
    tool: Write
    when: 'glob('
    action: deny
    on_error: closed
`)
	home := filepath.Join(root, "home")
	writeFile(t, home, "policy.yaml", `rules:
  - id: bash-quota
    description: Keep Bash use in check
    tool: Bash
    quota: {limit: 200, per: [session], window: 1h}
    action: ask
  - id: utc
    events: PostToolUse
    tool: mcp__.*
    transform: [timestamps, redact]
`)
	proj := filepath.Join(root, "proj")
	writeFile(t, proj, ".hookwatch/policy.yaml", `rules:
  - id: org-no-secrets
    tool: Read
    action: allow
  - id: explore-readonly
    agent_type: Explore
    tool: Write|Edit
    action: deny
    mode: audit
  - id: broken
    when: 'nope('
    action: deny
`)
	var buf bytes.Buffer
	if err := Explain(&buf, home, proj, GuessProject(home, proj, ""), CheckOptions{}); err != nil {
		t.Fatal(err)
	}
	// The temporary root's length varies, and with it the column widths:
	// compare with runs of spaces collapsed.
	out := strings.ReplaceAll(buf.String(), root, "$ROOT")
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		lines[i] = strings.Join(strings.Fields(l), " ")
	}
	golden(t, "explain.golden", strings.Join(lines, "\n"))
}

// TestDryRunPassesOverStatusLines: an export's statusLine envelopes are no
// hook events: passed over and counted, not reported as errors.
func TestDryRunPassesOverStatusLines(t *testing.T) {
	events := `{"id":"1","kind":"statusline","payload":{"session_id":"s","cost":{"total_cost_usd":1}}}
{"id":"2","kind":"hook","payload":{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"t"}}
`
	var out bytes.Buffer
	if err := Test(&out, "", "testdata/basic.yaml", strings.NewReader(events), false, CheckOptions{}); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); strings.Contains(s, "hook_event_name") || !strings.Contains(s, "1 event, ") || !strings.Contains(s, "(1 statusLine payload passed over") {
		t.Errorf("dry run of an export with a statusLine:\n%s", s)
	}
}

// TestGuessProject: without CLAUDE_PROJECT_DIR the command line takes the
// nearest directory holding a project policy or a repository; with it, the
// hook's own project directory.
func TestGuessProject(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home", ".hookwatch")
	writeFile(t, home, "policy.yaml", "rules: []\n") // the user file: never a project's
	repo := filepath.Join(root, "repo")
	deep := filepath.Join(repo, "sub", "deeper")
	plain := filepath.Join(root, "plain", "a", "b")
	inHome := filepath.Join(root, "home", "work")
	for _, d := range []string{deep, plain, inHome} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, repo, ".git/HEAD", "ref: refs/heads/main\n")
	// An empty .git directory is no repository.
	if err := os.MkdirAll(filepath.Join(root, "plain", ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	f := func(dir, env, want, why string) {
		t.Helper()
		got := GuessProject(home, dir, env)
		if got.Dir != want || !strings.HasPrefix(got.Why, why) {
			t.Errorf("GuessProject(%s, %q) = %s, want %s (%s…)", dir, env, got, want, why)
		}
	}
	f(deep, "", repo, "the repository root")
	f(deep, filepath.Join(repo, "sub"), filepath.Join(repo, "sub"), "CLAUDE_PROJECT_DIR")
	f(deep, "/elsewhere", repo, "the repository root") // not around dir: not this session's
	f(deep, "relative", repo, "the repository root")
	// Without a repository above the temporary directory, nothing is found.
	if above := repoAbove(root); above == "" {
		f(plain, "", plain, "the directory itself: no project policy")
		f(inHome, "", inHome, "the directory itself: no project policy") // ~/.hookwatch/policy.yaml is the user's
	} else {
		f(plain, "", above, "the repository root")
		f(inHome, "", above, "the repository root")
	}
	writeFile(t, filepath.Join(root, "plain"), ".hookwatch/policy.yaml", "rules: []\n")
	f(plain, "", filepath.Join(root, "plain"), "the nearest directory with a project policy")
	writeFile(t, filepath.Join(repo, "sub"), ".hookwatch/policy.yaml", "rules: []\n")
	f(deep, "", filepath.Join(repo, "sub"), "the nearest directory with a project policy")
	f(filepath.Join(repo, "sub"), "", filepath.Join(repo, "sub"), "the directory itself holds")
}

// TestExplainFindsTheProjectAbove: explained from a subdirectory of the
// project, the project's policy is in force, as for a session started at
// the project's root working there, and the output says which project
// directory it took and that a session started in the subdirectory would
// not apply it.
func TestExplainFindsTheProjectAbove(t *testing.T) {
	root := t.TempDir()
	old := managedPath
	managedPath = filepath.Join(root, "etc", "policy.yaml")
	defer func() { managedPath = old }()
	home := filepath.Join(root, "home")
	proj := filepath.Join(root, "proj4")
	deep := filepath.Join(proj, "sub", "deeper")
	writeFile(t, proj, ".git/HEAD", "ref: refs/heads/main\n")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, proj, ".hookwatch/policy.yaml", `rules:
  - id: no-secrets
    tool: Bash
    when: 'tool_input.command contains "secret"'
    action: deny
    reason: no secrets
`)
	var buf bytes.Buffer
	if err := ExplainCommand(&buf, home, deep, GuessProject(home, deep, ""), "echo secret; pwd", false, CheckOptions{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"Project directory: " + proj + " (the nearest directory with a project policy; CLAUDE_PROJECT_DIR is not set)",
		"Policy files: " + filepath.Join(proj, ".hookwatch", "policy.yaml"),
		"Claude Code started in " + deep + " itself would not apply it",
		`answers a Bash call of it (PreToolUse): deny`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("explain --command lacks %q:\n%s", want, out)
		}
	}
	// With CLAUDE_PROJECT_DIR, as in a session started in the subdirectory:
	// the search stops there, as the hook's does.
	buf.Reset()
	if err := Explain(&buf, home, deep, GuessProject(home, deep, deep), CheckOptions{}); err != nil {
		t.Fatal(err)
	}
	if out := buf.String(); !strings.Contains(out, "No rules in force") || !strings.Contains(out, "Project directory: "+deep+" (CLAUDE_PROJECT_DIR)") {
		t.Errorf("explain with CLAUDE_PROJECT_DIR=%s:\n%s", deep, out)
	}
}

// repoAbove returns the nearest directory above dir holding .git, or "".
func repoAbove(dir string) string {
	for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
		if isRepoRoot(d) {
			return d
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// TestDryRunReplaysOnlyHookEvents: an export holds, beside the hook events,
// records read from the client's transcript or rollout that tell of the
// same calls; replayed, they would count each call twice against a quota.
// Only hook events (and raw payloads) are evaluated; the others are counted
// in the summary with the reason.
func TestDryRunReplaysOnlyHookEvents(t *testing.T) {
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(pol, []byte(`rules:
  - id: two-bash
    tool: Bash
    quota: {limit: 2, per: [session]}
    action: deny
    reason: two Bash per session
`), 0o600); err != nil {
		t.Fatal(err)
	}
	bash := func(kind, id string) string {
		k := ""
		if kind != "" {
			k = `"kind":"` + kind + `",`
		}
		return `{"schema":"hookwatch.audit.event/v1",` + k + `"time":"2026-11-30T01:00:00Z","payload":{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"` + id + `"}}` + "\n"
	}
	events := bash("hook", "t1") + bash("transcript", "t1") + bash("hook", "t2") + bash("transcript", "t2") +
		bash("rollout", "t2") + `{"kind":"transcript","payload":{"session_id":"s","hook_event_name":"TranscriptUsage"}}` + "\n" +
		bash("", "t3") + // an envelope without kind: a hook's
		`{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}` + "\n" // a raw payload
	var out bytes.Buffer
	if err := Test(&out, "", pol, strings.NewReader(events), false, CheckOptions{}); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{
		"4 events, 2 with a decision, 2 denied or blocked (",
		"3 transcript records passed over: read from Claude Code's transcript, not sent by a hook",
		"1 rollout record passed over: read from Codex's rollout",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("dry run lacks %q:\n%s", want, s)
		}
	}
	// The lines denied are the third and fourth hook events: 7 and 8.
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "two-bash") && !strings.HasPrefix(l, "7 ") && !strings.HasPrefix(l, "8 ") {
			t.Errorf("line denied too early: %s", l)
		}
	}
}

// TestDryRunWindowsAtTheEventTime: a windowed quota counts at the time of
// the recorded event — an envelope's received_at, an export line's time —
// not at the time of the dry run.
func TestDryRunWindowsAtTheEventTime(t *testing.T) {
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(pol, []byte(`rules:
  - id: win
    tool: Bash
    quota: {limit: 1, per: [session], window: 90s}
    action: deny
    reason: one Bash per 90s
`), 0o600); err != nil {
		t.Fatal(err)
	}
	line := func(key, at string) string {
		return `{"kind":"hook","` + key + `":"` + at + `","payload":{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}}` + "\n"
	}
	f := func(events string, wantDenied int) {
		t.Helper()
		var out bytes.Buffer
		if err := Test(&out, "", pol, strings.NewReader(events), false, CheckOptions{}); err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("%d denied or blocked", wantDenied); !strings.Contains(out.String(), want) {
			t.Errorf("dry run: want %q:\n%s", want, out.String())
		}
	}
	// An hour apart: the window has passed each time.
	f(line("time", "2026-11-30T01:00:00Z")+line("time", "2026-11-30T02:00:00Z")+line("time", "2026-11-30T03:00:00.5Z"), 0)
	f(line("received_at", "2026-11-30T01:00:00Z")+line("received_at", "2026-11-30T02:00:00Z"), 0)
	// A minute apart: within the window.
	f(line("time", "2026-11-30T01:00:00Z")+line("time", "2026-11-30T01:01:00Z"), 1)
}

// TestCheckSameFileTwice checks that a file named twice — the same path,
// another spelling of it, a symbolic link to it — is read once, while a
// copy of it (another file defining the same ids) is still refused.
func TestCheckSameFileTwice(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile("testdata/basic.yaml")
	if err != nil {
		t.Fatal(err)
	}
	a := filepath.Join(dir, "a.yaml")
	if err := os.WriteFile(a, data, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.yaml")
	if err := os.Symlink("a.yaml", link); err != nil {
		t.Fatal(err)
	}
	f := func(again, want string) {
		t.Helper()
		var buf bytes.Buffer
		if err := Check(&buf, a, again); err != nil {
			t.Fatalf("Check(%s, %s): %v\n%s", a, again, err, buf.String())
		}
		if buf.String() != want {
			t.Fatalf("Check(%s, %s) output:\n%s\nwant:\n%s", a, again, buf.String(), want)
		}
	}
	f(a, a+": ok, 11 rules\n"+a+": the same file as "+a+", checked once\n")
	f(dir+"/./a.yaml", a+": ok, 11 rules\n"+dir+"/./a.yaml: the same file as "+a+", checked once\n")
	f(link, a+": ok, 11 rules\n"+link+": the same file as "+a+", checked once\n")

	copyOf := filepath.Join(dir, "copy.yaml")
	if err := os.WriteFile(copyOf, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	err = Check(&buf, a, copyOf)
	if err == nil || err.Error() != "policy check failed: 11 problems" {
		t.Fatalf("a copy: err %v\n%s", err, buf.String())
	}
	if want := copyOf + `:3: rule "no-rm-rf": id already defined by the user policy at ` + a + ":3; a rule cannot be redefined"; !strings.Contains(buf.String(), want) {
		t.Fatalf("a copy: output lacks %q:\n%s", want, buf.String())
	}
}

// TestCheckWarnsFieldNoToolSends: a condition on a field of tool_input that
// the rule's tools never send passes (tools gain fields; MCP tools' are
// their own) but is warned about, with the field meant when one is near.
func TestCheckWarnsFieldNoToolSends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policy.yaml")
	f := func(rules, want string) {
		t.Helper()
		if err := os.WriteFile(path, []byte("rules:\n"+rules), 0o644); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := Check(&buf, path); err != nil {
			t.Fatalf("%v\n%s", err, buf.String())
		}
		if got := strings.ReplaceAll(buf.String(), path, "P"); got != want {
			t.Errorf("got:\n%s\nwant:\n%s", got, want)
		}
	}
	f(`  - id: env
    tool: Read
    when: 'tool_input.command contains ".env"'
    action: deny
`, `P: ok, 1 rule, 1 warning
P:4: rule "env": warning: Read's tool_input has no field command (it has file_path, offset, limit, pages): the condition reads it from no call
`)
	f(`  - id: typo
    tool: Bash
    when: 'tool_input.comand contains "rm"'
    action: deny
`, `P: ok, 1 rule, 1 warning
P:4: rule "typo": warning: Bash's tool_input has no field comand; did you mean "command"?
`)
	// Each tool of several lacks it.
	f(`  - id: both
    tool: Read|Write
    when: 'tool_input["url"] != ""'
    action: deny
`, `P: ok, 1 rule, 1 warning
P:4: rule "both": warning: Read's tool_input has no field url (it has file_path, offset, limit, pages), nor Write's (it has file_path, content): the condition reads it from no call
`)
	// One of the tools sends it, an MCP tool's or an unknown tool's may,
	// payload is not tool_input: no warning.
	f(`  - {id: a, tool: Bash|Read, when: '(tool_input.command ?? "") contains "x"', action: deny}
  - {id: b, tool: mcp__github__create_issue, when: 'tool_input.title contains "x"', action: deny}
  - {id: c, tool: "Read|mcp__.*", when: 'tool_input.title contains "x"', action: deny}
  - {id: d, tool: Read, when: 'payload.command == "x"', action: deny}
  - {id: e, tool: Read, when: 'tool_input.file_path endsWith ".env"', action: deny}
`, "P: ok, 5 rules\n")
}

// TestCheckWarnsCodexDrops: where Codex's hooks run hookwatch, a rule for
// both runtimes whose action or effect Codex does not carry out is warned
// about, naming what happens on Codex instead; what Codex applies, a rule
// for Claude Code alone, and an allow (no output on Codex, which goes
// ahead) are not. Without Codex nothing is said.
func TestCheckWarnsCodexDrops(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policy.yaml")
	f := func(codex bool, rules, want string) {
		t.Helper()
		if err := os.WriteFile(path, []byte("rules:\n"+rules), 0o644); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := CheckWith(&buf, CheckOptions{Codex: codex}, path); err != nil {
			t.Fatalf("%v\n%s", err, buf.String())
		}
		if got := strings.ReplaceAll(buf.String(), path, "P"); got != want {
			t.Errorf("got:\n%s\nwant:\n%s", got, want)
		}
	}
	const ask = `  - id: a
    tool: Bash
    action: ask
    reason: check first
`
	f(true, ask, `P: ok, 1 rule, 1 warning
P:4: rule "a": warning: Codex has no ask on PreToolUse: on Codex the call runs; add `+"`runtime: claude-code`"+` if that is meant
`)
	f(false, ask, "P: ok, 1 rule\n")
	f(true, `  - {id: d, tool: Bash, action: defer}
  - {id: u, tool: Bash, action: allow, update_input: {command: '"ls"'}}
  - {id: c, tool: Bash, action: deny, context: use ls}
  - {id: s, events: [UserPromptSubmit], system_message: careful}
  - {id: t, events: [PostToolUse], tool: Bash, transform: [redact]}
`, `P: ok, 5 rules, 5 warnings
P:2: rule "d": warning: Codex has no defer on PreToolUse: on Codex the call runs; add `+"`runtime: claude-code`"+` if that is meant
P:3: rule "u": warning: Codex has no update_input on PreToolUse: on Codex the call runs with its input unchanged; add `+"`runtime: claude-code`"+` if that is meant
P:4: rule "c": warning: Codex has no context on PreToolUse: on Codex the model is not told; add `+"`runtime: claude-code`"+` if that is meant
P:5: rule "s": warning: Codex has no system_message on UserPromptSubmit: on Codex no one is shown it; add `+"`runtime: claude-code`"+` if that is meant
P:6: rule "t": warning: Codex has no transform on PostToolUse: on Codex the model sees the output unchanged; add `+"`runtime: claude-code`"+` if that is meant
`)
	// Codex applies these, the rule is Claude Code's alone, or the event
	// is not Codex's: nothing to say.
	f(true, `  - {id: deny, tool: Bash, action: deny, reason: no}
  - {id: allow, tool: Read, action: allow}
  - {id: claude, tool: Bash, action: ask, runtime: claude-code}
  - {id: prompt, events: [UserPromptSubmit], action: block, context: no}
  - {id: failure, events: [PostToolUseFailure], context: look again}
`, "P: ok, 5 rules\n")
	// A stop on PreToolUse denies the call on Codex, but stops nothing.
	f(true, `  - {id: stop, tool: Bash, action: stop}
`, `P: ok, 1 rule, 1 warning
P:2: rule "stop": warning: Codex has no stop on PreToolUse: on Codex the call is denied and the session goes on; add `+"`runtime: claude-code`"+` if that is meant
`)
}

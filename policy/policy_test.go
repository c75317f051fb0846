package policy

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/decision"
	"github.com/hookwatch/hookwatch/internal/fifotest"
)

// TestParseProblems checks that every invalid rule is reported as
// "file:line: rule "id": message" and left out, while valid rules load.
func TestParseProblems(t *testing.T) {
	f := func(yaml string, wantRules int, want ...string) {
		t.Helper()
		path := writeFile(t, t.TempDir(), "policy.yaml", yaml)
		set := LoadSources(Source{Path: path, Scope: ScopeUser})
		problems := append(set.Problems, set.compileAll()...)
		var got []string
		for _, p := range problems {
			got = append(got, strings.TrimPrefix(p.Error(), path))
		}
		if len(got) != len(want) {
			t.Fatalf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		for i := range want {
			if !strings.HasPrefix(got[i], want[i]) {
				t.Fatalf("problem %d:\n got %q\nwant prefix %q", i, got[i], want[i])
			}
		}
		if len(set.Rules) != wantRules {
			t.Fatalf("%d rules loaded, want %d", len(set.Rules), wantRules)
		}
	}
	f("", 0)
	f("# nothing\n", 0)
	f("rules:\n", 0)
	f("rules: []\n", 0)
	f("rules:\n  - id: a\n    action: deny\n", 1)
	f("rules: [\n", 0, `:1: invalid YAML`)
	// The broken line, not where its enclosing structure started.
	f("rules:\n  - id: a\n    events: PreToolUse\n   action: deny\n", 0, `:4: invalid YAML: did not find expected '-' indicator`)
	f("rules:\n  - id: a\n    action: deny\n\n  - id: b\n  action: deny\n", 0, `:6: invalid YAML`)
	f("rules:\n  - id: a\n    events: [PreToolUse\n    action: deny\n", 0, `:3: invalid YAML: did not find expected ',' or ']'`)
	f("rules:\n  - id: a\n    reason: *x\n", 0, `:3: invalid YAML: unknown anchor`)
	// The two YAML slips a policy's author makes most say what to do.
	f("rules:\n  - id: a\n    tool: Bash\n    when: \"tool_input.command matches 'rm\\s+-rf'\"\n    action: deny\n", 0,
		`:4: invalid YAML: found unknown escape character (in a "double-quoted" YAML string a backslash starts an escape: put the condition in 'single quotes'`)
	f("rules:\n\t- id: a\n", 0, `:2: invalid YAML: found character that cannot start any token (the line is indented with a tab: YAML indents with spaces only)`)
	// A condition must be a boolean by its type: a field of unknown type
	// would fail every evaluation.
	f("rules:\n  - id: a\n    action: deny\n    when: tool_input.command\n", 1, `:4: rule "a": cannot compile when: a condition must be a boolean, and this gives a value of any type`)
	f("rules:\n  - id: a\n    action: deny\n    when: len(tool_name)\n", 1, `:4: rule "a": cannot compile when: a condition must be a boolean, and this gives int`)
	// A string operator on a list says how to test the list.
	f("rules:\n  - id: a\n    action: deny\n    when: command.reads contains \".env\"\n", 1,
		`:4: rule "a": cannot compile when: invalid operation: contains (mismatched types []interface {} and string) (column 15): contains tests a string; of a list, write "X" in LIST for a member, or any(LIST, {# contains "X"})`)
	f("rules:\n  - id: a\n    action: deny\n    when: command.hosts endsWith \".example.com\"\n", 1,
		`:4: rule "a": cannot compile when: invalid operation: endsWith (mismatched types []interface {} and string) (column 15): endsWith tests a string`)
	f("rules:\n  - id: a\n    action: deny\n    when: tool_input.force == true\n", 1)
	f("rules:\n  - id: a\n    action: deny\n    when: tool_input.command matches \"rm\"\n", 1)
	f("- a\n- b\n", 0, `:1: a policy file is a mapping`)
	f("version: 2\nrules: []\n", 0, `:1: unsupported version "2"`)
	f(`rules:
  - id: t1
    events: PostToolUse
    transform: [{timestamps: 3}]
  - id: t2
    events: PostToolUse
    transform: [{redact: [email]}]
`, 0,
		`:4: rule "t1": timestamps options must be a mapping`,
		`:7: rule "t2": redact options must be a mapping`)
	f("rulez: []\n", 0, `:1: unknown key "rulez"`)
	// A misspelt key or event names the one it was meant to be.
	f("rules:\n  - id: a\n    tool: Bash\n    whne: tool_name == \"Bash\"\n    action: deny\n", 0,
		`:4: rule "a": unknown key "whne"; did you mean "when"?`)
	f("rules:\n  - id: a\n    events: pretooluse\n    action: deny\n", 0,
		`:3: rule "a": unknown event "pretooluse"; did you mean "PreToolUse"?`)
	f("rules:\n  - id: a\n    events: [PostToolUseFaliure]\n    action: block\n", 0,
		`:3: rule "a": unknown event "PostToolUseFaliure"; did you mean "PostToolUseFailure"?`)
	f("rules:\n  - id: a\n    events: [Interupt]\n    action: stop\n", 0,
		`:3: rule "a": unknown event "Interupt"; did you mean "Interrupt"?`)
	f("rules: {a: 1}\n", 0, `:1: rules must be a list`)
	f(`rules:
  - id: ok
    action: deny
  - id: typo
    actoin: deny
  - action: deny
  - id: "bad id!"
    action: deny
  - id: twice
    action: deny
    action: allow
  - id: ev
    events: [PreTooluse]
    action: deny
  - just a string
`, 1,
		`:5: rule "typo": unknown key "actoin"`,
		`:4: rule "typo": a rule needs an action`,
		`:6: rule "#3": missing id`,
		`:7: rule "bad id!": id "bad id!" must be`,
		`:11: rule "twice": "action" given twice`,
		`:13: rule "ev": unknown event "PreTooluse"`,
		`:15: rule "#7": a rule is a mapping`)
	f(`rules:
  - id: q
    quota: {limit: -1}
    action: deny
  - id: q2
    quota: {limit: 3, per: [user]}
    action: deny
  - id: q3
    quota: {limit: 3, window: soon}
    action: deny
  - id: t
    events: PostToolUse
    transform: [squash]
  - id: o
    on_error: maybe
    action: deny
  - id: m
    mode: strict
    action: deny
`, 0,
		`:3: rule "q": quota.limit must be`,
		`:6: rule "q2": quota.per: unknown dimension "user"`,
		`:9: rule "q3": quota.window: invalid duration "soon"`,
		`:13: rule "t": unknown transform "squash"`,
		`:15: rule "o": on_error must be open or closed`,
		`:18: rule "m": mode must be enforce or audit`)
	// Compile-time problems (found by Check, or lazily by Evaluate).
	f(`rules:
  - id: bad-when
    when: 'tool_input.command matches'
    action: deny
  - id: unknown-var
    when: 'tool_inptu.command == "x"'
    action: deny
  - id: multi-line
    when: |
      tool_name == "Bash" &&
      prompt > 3
    action: deny
  - id: bad-matcher
    tool: "Bash("
    action: deny
  - id: bad-update
    action: allow
    update_input:
      command: 'tool_input.command +'
  - id: bad-pattern
    events: PostToolUse
    transform:
      - redact: {patterns: {key: "("}}
`, 6,
		`:3: rule "bad-when": cannot compile when:`,
		`:6: rule "unknown-var": cannot compile when: unknown name tool_inptu (column 1); did you mean "tool_input"?`,
		`:11: rule "multi-line": cannot compile when: invalid operation`,
		`:14: rule "bad-matcher": cannot compile matcher "Bash("`,
		`:19: rule "bad-update": cannot compile update_input.command`,
		`:23: rule "bad-pattern": cannot compile redaction pattern "key"`)
	f("rules:\n  - id: a\n    action: deny\n  - id: a\n    action: allow\n", 1,
		`:4: rule "a": id already defined by the user policy at`)
}

// TestRuleKeysKnown: every key a misspelt one may be taken for is one a
// rule reads.
func TestRuleKeysKnown(t *testing.T) {
	for _, k := range ruleKeys {
		path := writeFile(t, t.TempDir(), "policy.yaml", "rules:\n  - id: a\n    "+k+": x\n")
		for _, p := range LoadSources(Source{Path: path, Scope: ScopeUser}).Problems {
			if strings.Contains(p.Msg, "unknown key") {
				t.Errorf("key %q: %v", k, p)
			}
		}
	}
}

func TestPrecedence(t *testing.T) {
	set := loadYAML(t, `rules:
  - {id: allow-all, tool: "*", action: allow, reason: fine}
  - {id: ask-bash, tool: Bash, action: ask, reason: check}
  - {id: deny-exit, tool: Bash, when: 'tool_input.command contains "exit"', action: deny, reason: no exit}
  - {id: defer-bash, tool: Bash, action: defer, reason: later}
  - {id: deny-vet, tool: Bash, when: 'tool_input.command startsWith "go vet"', action: deny, reason: no vet, alternative: go build}
  - {id: ctx, tool: Bash, context: be careful}
`)
	f := func(command string, want decision.Verdict, reasons []string, ruleIDs []string) {
		t.Helper()
		p := pick(t, "PreToolUse", "Bash", "main")
		p["tool_input"] = map[string]any{"command": command}
		d := eval(set, p)
		if d.Verdict != want || !reflect.DeepEqual(d.Reasons, reasons) {
			t.Fatalf("%q: %v %q, want %v %q", command, d.Verdict, d.Reasons, want, reasons)
		}
		if a := d.Audit(); !reflect.DeepEqual(a.RuleIDs, ruleIDs) {
			t.Fatalf("%q: rule ids %v, want %v", command, a.RuleIDs, ruleIDs)
		}
		if !reflect.DeepEqual(d.AdditionalContext, []string{"be careful"}) {
			t.Fatalf("context lost: %q", d.AdditionalContext)
		}
	}
	f("go vet ./...; exit 3", decision.Deny, []string{"no exit", "no vet Use instead: go build"}, []string{"deny-exit", "deny-vet"})
	f("ls", decision.Defer, []string{"later"}, []string{"defer-bash"})

	d := eval(set, pick(t, "PreToolUse", "Read", "main"))
	if d.Verdict != decision.Allow || d.Reason() != "fine" {
		t.Fatalf("Read: %v %q", d.Verdict, d.Reason())
	}
}

// TestScopes checks what "managed rules cannot be overridden" means.
func TestScopes(t *testing.T) {
	dir := t.TempDir()
	managed := writeFile(t, dir, "managed.yaml", `rules:
  - id: no-exit
    tool: Bash
    when: 'tool_input.command contains "exit"'
    action: deny
    reason: managed says no
  - id: managed-rewrite
    tool: Bash
    action: allow
    update_input:
      command: 'tool_input.command + " # audited"'
`)
	user := writeFile(t, dir, "user.yaml", `rules:
  - id: no-exit
    tool: Bash
    action: allow
    reason: user tries to replace the managed rule
  - id: user-allow
    tool: Bash
    action: allow
    reason: user allows bash
`)
	project := writeFile(t, dir, "project.yaml", `rules:
  - id: user-allow
    tool: Bash
    action: deny
    reason: project tries to replace a user rule
  - id: project-rewrite
    tool: Bash
    action: allow
    update_input:
      command: '"echo hi; exit 1"'
  - id: sees-final-input
    tool: Bash
    when: 'tool_input.command endsWith "# audited"'
    context: saw the managed rewrite
`)
	// Given in the wrong order on purpose: scopes order them.
	set := LoadSources(Source{Path: project, Scope: ScopeProject}, Source{Path: user, Scope: ScopeUser}, Source{Path: managed, Scope: ScopeManaged})
	var ids []string
	for _, r := range set.Rules {
		ids = append(ids, r.Scope.String()+":"+r.ID)
	}
	wantIDs := []string{"managed:no-exit", "managed:managed-rewrite", "user:user-allow", "project:project-rewrite", "project:sees-final-input"}
	if !reflect.DeepEqual(ids, wantIDs) {
		t.Fatalf("rules in force %v, want %v", ids, wantIDs)
	}
	if len(set.Problems) != 2 || !strings.Contains(set.Problems[0].Msg, "already defined by the managed policy") ||
		!strings.Contains(set.Problems[1].Msg, "already defined by the user policy") {
		t.Fatalf("problems %v", set.Problems)
	}

	p := pick(t, "PreToolUse", "Bash", "main")
	p["tool_input"] = map[string]any{"command": "ls"}
	d := eval(set, p)
	// The project rewrite ran first, the managed one last; the managed deny
	// saw the rewritten command ("exit") and wins over every allow.
	if got := d.UpdatedInput["command"]; got != "echo hi; exit 1 # audited" {
		t.Fatalf("final input %q", got)
	}
	if d.Verdict != decision.Deny || d.Reason() != "managed says no" {
		t.Fatalf("verdict %v %q", d.Verdict, d.Reason())
	}
	if !reflect.DeepEqual(d.AdditionalContext, []string{"saw the managed rewrite"}) {
		t.Fatalf("context %q", d.AdditionalContext)
	}
	if !strings.Contains(d.SystemMessages[0], "already defined by the managed policy") {
		t.Fatalf("no warning: %q", d.SystemMessages)
	}
}

func TestOnError(t *testing.T) {
	dir := t.TempDir()
	rules := `rules:
  - id: open
    tool: Bash
    when: 'int(tool_input.command) > 0'
    action: deny
  - id: closed
    tool: Bash
    when: 'int(tool_input.command) > 0'
    action: deny
    on_error: closed
`
	set := LoadSources(Source{Path: writeFile(t, dir, "p.yaml", rules), Scope: ScopeUser})
	d := eval(set, pick(t, "PreToolUse", "Bash", "main"))
	if d.Verdict != decision.Deny || len(d.Reasons) != 1 || !strings.Contains(d.Reasons[0], `rule "closed" could not be evaluated and fails closed`) {
		t.Fatalf("closed: %v %q", d.Verdict, d.Reasons)
	}
	a := d.Audit()
	if len(a.Rules) != 2 || a.Rules[0].Enforced || !strings.Contains(a.Rules[0].Error, "on_error: open") || !a.Rules[1].Enforced {
		t.Fatalf("notes %+v", a.Rules)
	}
	// Events the rule does not select are untouched.
	if d := eval(set, pick(t, "PreToolUse", "Read", "main")); !d.IsZero() {
		t.Fatalf("Read: %+v", d)
	}
}

// TestInvalidFailsOpen: a broken file or rule never stops the hook; it
// warns loudly, except a managed rule declared closed, which denies.
func TestInvalidFailsOpen(t *testing.T) {
	dir := t.TempDir()
	broken := writeFile(t, dir, "user.yaml", "rules: [\n  - id: x\n")
	good := writeFile(t, dir, "project.yaml", "rules:\n  - {id: read-ctx, tool: Read, context: hi}\n  - {id: bad, tool: Bash, when: 'nope(', action: deny}\n")
	set := LoadSources(Source{Path: broken, Scope: ScopeUser}, Source{Path: good, Scope: ScopeProject})

	d := eval(set, pick(t, "PreToolUse", "Read", "main"))
	if !reflect.DeepEqual(d.AdditionalContext, []string{"hi"}) {
		t.Fatalf("valid rules must still apply: %+v", d)
	}
	if len(d.SystemMessages) != 1 || !strings.Contains(d.SystemMessages[0], "invalid YAML") {
		t.Fatalf("want a loud warning, got %q", d.SystemMessages)
	}
	d = eval(set, pick(t, "PreToolUse", "Bash", "main"))
	if d.Verdict != decision.None || !strings.Contains(d.SystemMessages[0], `rule "bad": cannot compile when`) {
		t.Fatalf("Bash: %v %q", d.Verdict, d.SystemMessages)
	}
	out := render(d)
	if !strings.HasPrefix(out, `{"systemMessage":"hookwatch: invalid policy ignored (fail-open)`) {
		t.Fatalf("rendered %s", out)
	}
	// Events that discard systemMessage render nothing.
	if out := render(eval(set, pick(t, "SessionEnd", "", ""))); out != "" {
		t.Fatalf("SessionEnd: %s", out)
	}

	// A managed rule declared closed denies when invalid — at load time ...
	managed := writeFile(t, dir, "managed.yaml", `on_error: closed
rules:
  - id: mgd-bad-key
    tool: Bash
    action: deny
    colour: red
  - id: mgd-bad-when
    tool: Write
    when: 'tool_input.file_path matches'
    action: deny
  - id: mgd-open
    on_error: open
    tool: Read
    when: 'nope('
    action: deny
`)
	set = LoadSources(Source{Path: managed, Scope: ScopeManaged})
	for tool, want := range map[string]decision.Verdict{"Bash": decision.Deny, "Write": decision.Deny, "Read": decision.None, "Edit": decision.None} {
		d := eval(set, pick(t, "PreToolUse", tool, "main"))
		if d.Verdict != want {
			t.Fatalf("managed closed, %s: %v, want %v (%q)", tool, d.Verdict, want, d.Reasons)
		}
		if want == decision.Deny && !strings.Contains(d.Reason(), "managed rule is invalid") {
			t.Fatalf("reason %q", d.Reason())
		}
	}
	// ... but a user rule declared closed fails open when invalid.
	set = loadYAML(t, "rules:\n  - {id: u, tool: Bash, when: 'nope(', action: deny, on_error: closed}\n")
	if d := eval(set, pick(t, "PreToolUse", "Bash", "main")); d.Verdict != decision.None || len(d.SystemMessages) != 1 {
		t.Fatalf("user closed invalid: %+v", d)
	}
}

func TestStopHookActiveNeverLoops(t *testing.T) {
	set := loadYAML(t, `rules:
  - {id: keep-going, events: [Stop, SubagentStop], action: block, reason: more work}
  - {id: feedback, events: Stop, context: check the changelog}
`)
	p := pick(t, "Stop", "", "")
	p["stop_hook_active"] = false
	if d := eval(set, p); d.Verdict != decision.Deny || len(d.AdditionalContext) != 1 {
		t.Fatalf("first stop: %+v", d)
	}
	p["stop_hook_active"] = true
	d := eval(set, p)
	if out := render(d); out != "" {
		t.Fatalf("second stop must not block again: %s", out)
	}
	a := d.Audit()
	if a == nil || a.Enforced || a.Action != "block" || !strings.Contains(a.Reason, "stop_hook_active") {
		t.Fatalf("audit %+v", a)
	}
}

func TestAuditMode(t *testing.T) {
	set := loadYAML(t, `rules:
  - {id: shadow-deny, tool: Bash, action: deny, reason: would deny, mode: audit}
  - {id: shadow-rewrite, tool: Bash, action: allow, update_input: {command: '"ls"'}, mode: audit}
  - {id: real-ctx, tool: Bash, context: note}
`)
	d := eval(set, pick(t, "PreToolUse", "Bash", "main"))
	if d.Verdict != decision.None || d.UpdatedInput != nil || len(d.AdditionalContext) != 1 {
		t.Fatalf("audit rules must not act: %+v", d)
	}
	a := d.Audit()
	// Rewrite rules are evaluated first.
	if a.Action != "context" || !a.Enforced || len(a.Rules) != 3 || a.Rules[1].RuleID != "shadow-deny" || a.Rules[1].Enforced || a.Rules[1].Action != "deny" {
		t.Fatalf("audit %+v", a)
	}
	set = loadYAML(t, "rules:\n  - {id: shadow, tool: Bash, action: deny, reason: would deny, mode: audit}\n")
	a = eval(set, pick(t, "PreToolUse", "Bash", "main")).Audit()
	if a == nil || a.Enforced || a.Action != "deny" || !reflect.DeepEqual(a.RuleIDs, []string{"shadow"}) || a.Reason != "would deny" {
		t.Fatalf("audit-only %+v", a)
	}
}

func TestMatchersAndAgents(t *testing.T) {
	set := loadYAML(t, `rules:
  - {id: main-only, tool: Read, agent: main, action: ask}
  - {id: sub-only, tool: Read, agent: subagent, action: deny}
  - {id: explore-bash, tool: Bash, agent_type: Explore, action: deny}
  - {id: regex-tool, tool: "^(Wri|Ed)", action: ask}
  - {id: plugin-agents, tool: Bash, agent_type: "^my-plugin:", action: deny}
  - {id: startup, events: SessionStart, matcher: startup, context: fresh start}
  - {id: explore-stop, events: SubagentStop, matcher: Explore, action: block, reason: more}
`)
	f := func(p map[string]any, want decision.Verdict) {
		t.Helper()
		if d := eval(set, p); d.Verdict != want {
			t.Fatalf("%s %s agent=%v: %v, want %v", p["hook_event_name"], p["tool_name"], p["agent_type"], d.Verdict, want)
		}
	}
	f(pick(t, "PreToolUse", "Read", "main"), decision.Ask)
	f(pick(t, "PreToolUse", "Read", "general-purpose"), decision.Deny)
	f(pick(t, "PreToolUse", "Bash", "Explore"), decision.Deny)
	f(pick(t, "PreToolUse", "Bash", "main"), decision.None)
	f(pick(t, "PreToolUse", "Write", "main"), decision.Ask)
	f(pick(t, "PreToolUse", "Edit", "main"), decision.Ask)
	plugin := pick(t, "PreToolUse", "Bash", "Explore")
	plugin["agent_type"] = "my-plugin:reviewer"
	f(plugin, decision.Deny)
	// agent_type alone (an --agent main thread) is not a subagent.
	mainWithType := pick(t, "PreToolUse", "Read", "main")
	mainWithType["agent_type"] = "reviewer"
	f(mainWithType, decision.Ask)

	ss := pick(t, "SessionStart", "", "")
	if d := eval(set, ss); len(d.AdditionalContext) != 1 {
		t.Fatalf("startup: %+v", d)
	}
	ss["source"] = "resume"
	if d := eval(set, ss); len(d.AdditionalContext) != 0 {
		t.Fatalf("resume: %+v", d)
	}
	f(pick(t, "SubagentStop", "", "Explore"), decision.Deny)
	f(pick(t, "SubagentStop", "", "general-purpose"), decision.None)
}

func TestConditionFunctions(t *testing.T) {
	set := loadYAML(t, `rules:
  - id: go-files
    tool: Edit|Write
    when: 'glob("**/*.go", tool_input.file_path) && under(tool_input.file_path, cwd)'
    action: ask
  - id: outside
    tool: Edit|Write
    when: 'not under(tool_input.file_path, cwd)'
    action: deny
  - id: subagent-flag
    tool: Read
    when: 'is_subagent && payload["tool_use_id"] != ""'
    action: deny
`)
	f := func(tool, path string, want decision.Verdict) {
		t.Helper()
		p := pick(t, "PreToolUse", "Edit", "main")
		p["tool_name"] = tool
		p["tool_input"] = map[string]any{"file_path": path}
		if d := eval(set, p); d.Verdict != want {
			t.Fatalf("%s %s: %v, want %v", tool, path, d.Verdict, want)
		}
	}
	f("Edit", "/home/dev/src/demo/main.go", decision.Ask)
	f("Write", "/home/dev/src/demo/pkg/x/y.go", decision.Ask)
	f("Edit", "/home/dev/src/demo/README.md", decision.None)
	f("Edit", "/home/dev/src/demo/../other/main.go", decision.Deny)
	f("Edit", "/etc/passwd", decision.Deny)
	if d := eval(set, pick(t, "PreToolUse", "Read", "general-purpose")); d.Verdict != decision.Deny {
		t.Fatalf("is_subagent: %v", d.Verdict)
	}

	g := func(pattern, name string, want bool) {
		t.Helper()
		if ok, err := globMatch(pattern, name, ""); ok != want || err != nil {
			t.Fatalf("glob(%q, %q) = %v, %v; want %v", pattern, name, ok, err, want)
		}
	}
	g("*.go", "/a/b/c.go", true)
	g("**/*.go", "a/b/c.go", true)
	g("/a/**", "/a/b/c", true)
	g("/a/**/c", "/a/c", true)
	g("/a/*/c", "/a/b/x/c", false)
	g("**/secrets/**", "/repo/config/secrets/key.pem", true)
	g("*.go", "/a/b/c.gox", false)
}

// TestHostilePayloads: odd types and missing fields never panic or deny by
// accident.
func TestHostilePayloads(t *testing.T) {
	set := loadYAML(t, `rules:
  - {id: r1, tool: Bash, when: 'tool_input.command contains "rm"', action: deny}
  - {id: r2, events: [UserPromptSubmit], when: 'prompt contains "x"', action: block}
  - {id: r3, events: [Stop], action: block, reason: r}
`)
	for _, p := range []map[string]any{
		{},
		{"hook_event_name": 42},
		{"hook_event_name": "PreToolUse"},
		{"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": "rm -rf /"},
		{"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": map[string]any{"command": 7}},
		{"hook_event_name": "PreToolUse", "tool_name": []any{"Bash"}, "agent_id": map[string]any{}},
		{"hook_event_name": "UserPromptSubmit", "prompt": nil},
		{"hook_event_name": "UserPromptSubmit", "prompt": 3.5},
		{"hook_event_name": "Stop", "stop_hook_active": "true"},
		{"hook_event_name": "NoSuchEvent"},
	} {
		d := eval(set, p)
		render(d)
		d.Audit()
	}
	var nilSet *Set
	if d := nilSet.Evaluate(context.Background(), map[string]any{"hook_event_name": "PreToolUse"}, nil); !d.IsZero() {
		t.Fatal("nil set must have no opinion")
	}
}

func TestDiscover(t *testing.T) {
	root := t.TempDir()
	old := managedPath
	managedPath = filepath.Join(root, "etc", "hookwatch", "policy.yaml")
	defer func() { managedPath = old }()
	home := filepath.Join(root, "home", "u", ".hookwatch")
	writeFile(t, home, "policy.yaml", "rules:\n  - {id: user-rule, action: deny}\n")
	writeFile(t, filepath.Dir(managedPath), "policy.yaml", "rules:\n  - {id: managed-rule, action: deny}\n")
	proj := filepath.Join(root, "home", "u", "proj")
	writeFile(t, proj, ".hookwatch/policy.yaml", "rules:\n  - {id: project-rule, action: deny}\n")
	writeFile(t, root, "home/.hookwatch/policy.yaml", "rules:\n  - {id: parent-rule, action: deny}\n")
	sub := filepath.Join(proj, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}

	f := func(cwd, projectDir string, want ...string) {
		t.Helper()
		set := Discover(home, cwd, projectDir)
		var got []string
		for _, r := range set.Rules {
			got = append(got, r.ID)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Discover(cwd=%s, project=%s) = %v, want %v", cwd, projectDir, got, want)
		}
	}
	f(sub, proj, "managed-rule", "user-rule", "project-rule")
	f(sub, "", "managed-rule", "user-rule", "project-rule")
	f(proj, proj, "managed-rule", "user-rule", "project-rule")
	// A cwd outside the project: the nearest policy upwards from cwd.
	other := filepath.Join(root, "home", "u", "other")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	// Walking up from other reaches /home/u/.hookwatch (the user file,
	// skipped) and then /home/.hookwatch.
	f(other, "", "managed-rule", "user-rule", "parent-rule")
	// Inside the project dir without a policy, the search stops at it.
	bare := filepath.Join(root, "home", "bare")
	if err := os.MkdirAll(filepath.Join(bare, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	f(filepath.Join(bare, "x"), bare, "managed-rule", "user-rule")
	// Not found: reported with the project's path.
	srcs := Locate(home, filepath.Join(bare, "x"), bare)
	if len(srcs) != 3 || srcs[2].Path != filepath.Join(bare, ".hookwatch", "policy.yaml") {
		t.Fatalf("Locate = %v", srcs)
	}
	// The cache is used and follows edits.
	if _, err := os.Stat(filepath.Join(home, "cache")); err != nil {
		t.Fatalf("no parse cache: %v", err)
	}
	writeFile(t, home, "policy.yaml", "rules:\n  - {id: user-rule-2, action: deny}\n")
	f(proj, proj, "managed-rule", "user-rule-2", "project-rule")
}

func TestLoadMissing(t *testing.T) {
	set, err := Load(filepath.Join(t.TempDir(), "nope.yaml"))
	if err == nil || !strings.Contains(err.Error(), "no such policy file") || set == nil {
		t.Fatalf("err %v", err)
	}
	var p Problem
	if !errors.As(err, &p) {
		t.Fatalf("error is not a Problem: %T", err)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"rules:\n  - {id: a, action: deny}\n",
		"rules:\n  - &r {id: a, action: deny}\n  - *r\n",
		"version: 1\non_error: closed\nrules:\n  - id: q\n    quota: {limit: 2, per: [session], window: 1h}\n    action: deny\n",
		"rules:\n  - id: t\n    events: PostToolUse\n    transform:\n      - timestamps: {epoch: all}\n      - redact: {kinds: [email]}\n",
		"rules: [{id: x, when: 'tool_input.command matches \"(\"', action: deny}]",
		"rules: [{id: g, when: 'glob(\"src/{a,b}/*.go\", file_path) or glob(\"[\", file_path, cwd)', action: deny}]",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, scope := range []Scope{ScopeManaged, ScopeUser} {
			pf := parse(Source{Path: "fuzz.yaml", Scope: scope}, []byte(s))
			set := &Set{Rules: pf.rules, Problems: pf.problems}
			set.compileAll()
		}
	})
}

func FuzzEvaluate(f *testing.F) {
	f.Add(benchPayload)
	f.Add(`{"hook_event_name":"PostToolUse","tool_name":"mcp__x__y","tool_response":[{"type":"text","text":"{\"at\":1700000000}"}]}`)
	f.Add(`{"hook_event_name":"Stop","stop_hook_active":true,"last_assistant_message":"TODO"}`)
	f.Add(`{"hook_event_name":"UserPromptSubmit","prompt":"a@b.io 4111111111111111"}`)
	set := LoadSources(Source{Path: "testdata/bench50.yaml", Scope: ScopeUser})
	extra := LoadSources(Source{Path: "testdata/basic.yaml", Scope: ScopeUser})
	f.Fuzz(func(t *testing.T, payload string) {
		p, _, err := payloadOf([]byte(payload))
		if err != nil {
			return
		}
		for _, s := range []*Set{set, extra} {
			d := s.Evaluate(context.Background(), p, MemoryState())
			decision.Render(d)
			d.Audit()
		}
	})
}

// TestLoadNotRegular: a project's policy file comes from a repository
// whoever wrote it may have made a link to a FIFO or to /dev/zero; loading
// it, with the parse cache or without, is a problem reported at once, not a
// hang or a read without end.
func TestLoadNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := fifotest.Mkfifo(t, filepath.Join(dir, "fifo"))
	for _, target := range []string{fifo, "/dev/zero", dir} {
		link := filepath.Join(t.TempDir(), ".hookwatch", "policy.yaml")
		if err := os.MkdirAll(filepath.Dir(link), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		for _, cache := range []string{"", t.TempDir()} {
			done := make(chan *Set, 1)
			go func() { done <- loadSources(cache, []Source{{Path: link, Scope: ScopeProject}}) }()
			select {
			case set := <-done:
				if len(set.Rules) != 0 || len(set.Problems) != 1 || !strings.Contains(set.Problems[0].Msg, "not a regular file") {
					t.Errorf("link to %s (cache %q): rules %v, problems %v", target, cache, set.Rules, set.Problems)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("link to %s (cache %q): loading blocked", target, cache)
			}
		}
	}
}

// TestUnknownNameDidYouMean: a misspelt variable, or field of an object the
// conditions know (command, its steps, session, agent), names the one meant;
// a name near none is reported without a guess.
func TestUnknownNameDidYouMean(t *testing.T) {
	f := func(src, want string) {
		t.Helper()
		_, err := exprs.compile(src, true, "/")
		if err == nil {
			t.Fatalf("%s: compiled", src)
		}
		if got := exprMessage(err); got != want {
			t.Errorf("%s:\n got %s\nwant %s", src, got, want)
		}
	}
	f(`tool_inptu.command contains "x"`, `unknown name tool_inptu (column 1); did you mean "tool_input"?`)
	f(`tol_name == "Bash"`, `unknown name tol_name (column 1); did you mean "tool_name"?`)
	f(`comand.effect == "write"`, `unknown name comand (column 1); did you mean "command"?`)
	f(`command.efect == "write"`, `unknown field efect (column 9); did you mean "effect"?`)
	f(`command.steps[0].progam == "rm"`, `unknown field progam (column 18); did you mean "program"?`)
	f(`agent.failures_in_a_rw > 2`, `unknown field failures_in_a_rw (column 7); did you mean "failures_in_a_row"?`)
	// session has no failures_in_a_row: agent's is no guess for it.
	f(`session.failures_in_a_rw > 2`, `unknown field failures_in_a_rw (column 9)`)
	f(`session.signals.thrahs`, `unknown field thrahs (column 17); did you mean "thrash"?`)
	// In a predicate, # is a step.
	f(`any(command.steps, {#.efect == "write"})`, `unknown field efect (column 23); did you mean "effect"?`)
	f(`frobnicate == "x"`, `unknown name frobnicate (column 1)`)
	// A function's name is a function's slip, not a variable's.
	f(`undr(tool_input.file_path, "/x")`, `unknown name undr (column 1); did you mean "under"?`)
	f(`lenn(prompt) > 3`, `unknown name lenn (column 1); did you mean "len"?`)
	f(`globb("*.go", tool_input.file_path)`, `unknown name globb (column 1); did you mean "glob"?`)
}

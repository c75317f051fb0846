package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/hookwatch/hookwatch/internal/deadport"
	"github.com/hookwatch/hookwatch/policy"
)

// PolicyOptions configures the policy benchmark.
type PolicyOptions struct {
	Repo   string // repository root, to build the binaries from
	Runs   int    // runs per command and round (default 200)
	Warmup int    // unmeasured runs per command before each round (default 10)
	// Rounds repeats the interleaved measurement (default 1); with more
	// than one, the summary quotes the median of the rounds' medians, which
	// a loaded machine moves less than any single round.
	Rounds int
}

// PolicyGoal is the target: the hook with policy50 in force answers a
// PreToolUse within this multiple of the floor program's time.
const PolicyGoal = 1.6

// Policy measures what enforcing a policy costs the hook: the wall time of
// hookwatch-hook answering a real PreToolUse with the 50 rules of policy50 in
// force (user scope), against the same hook with no policy and the floor
// program, interleaved. The collector is down for both hooks (each event is
// spooled), so the difference between them is the policy alone: finding the
// files, loading the cached parse, compiling and evaluating the rules that
// select the event, the quota state, rendering the answer.
//
// Before measuring it checks that the policy is valid and that the hook
// really denies the payload with it, so a broken policy cannot make the
// figures look good.
func Policy(ctx context.Context, w io.Writer, o PolicyOptions) error {
	if o.Runs <= 0 {
		o.Runs = 200
	}
	if o.Warmup <= 0 {
		o.Warmup = 10
	}
	if o.Rounds <= 0 {
		o.Rounds = 1
	}
	b, err := buildAll(ctx, o.Repo)
	if err != nil {
		return err
	}
	defer os.RemoveAll(b.tmp)
	tmp, floor, hookBin, fullBin := b.tmp, b.floor, b.hook, b.full
	dead, err := deadport.Open()
	if err != nil {
		return err
	}
	defer dead.Close()
	down := dead.URL()
	noPolicy, withPolicy := filepath.Join(tmp, "home-none"), filepath.Join(tmp, "home-policy")
	policyFile := filepath.Join(withPolicy, "policy.yaml")
	if err := os.MkdirAll(withPolicy, 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(policyFile, []byte(policy50), 0o600); err != nil {
		return err
	}
	set, err := policy.Load(policyFile)
	if err != nil {
		return fmt.Errorf("the benchmark policy is invalid: %w", err)
	}
	// Check compiles every rule, as the hook compiles only those an event
	// selects: a rule that fails to compile would make the hook answer
	// with a warning instead of evaluating it, and the figures a lie.
	if err := policy.Check(io.Discard, policyFile); err != nil {
		return fmt.Errorf("the benchmark policy does not compile: %w", err)
	}
	if len(set.Rules) != 50 {
		return fmt.Errorf("the benchmark policy has %d rules, want 50", len(set.Rules))
	}
	// Each home has its collector, as on a developer's machine: the hook
	// hands events over through the spool, and with policies in force the
	// collector answers with its rules compiled. The last row has no
	// collector: the hook then runs the full binary for the answer.
	urlNone, stopNone, err := startCollector(fullBin, noPolicy)
	if err != nil {
		return err
	}
	defer stopNone()
	urlPolicy, stopPolicy, err := startCollector(fullBin, withPolicy)
	if err != nil {
		return err
	}
	defer stopPolicy()
	env := func(home, url string) []string {
		return []string{"HOOKWATCH_HOME=" + home, "HOOKWATCH_URL=" + url, projectDirEnv(), "HOOKWATCH_AUTOSTART=0"}
	}
	downHome := withPolicy + "-down"
	if err := os.MkdirAll(downHome, 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(downHome, "policy.yaml"), []byte(policy50), 0o600); err != nil {
		return err
	}
	// The same policy plus a rule on the command's meaning: the hook
	// then pays for the shell analysis (and, without a collector, the full
	// binary for linking it).
	effectHome, effectDown := withPolicy+"-effect", withPolicy+"-effect-down"
	for _, h := range []string{effectHome, effectDown} {
		if err := os.MkdirAll(h, 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(h, "policy.yaml"), []byte(policy50+effectRule), 0o600); err != nil {
			return err
		}
	}
	if err := policy.Check(io.Discard, filepath.Join(effectHome, "policy.yaml")); err != nil {
		return fmt.Errorf("the benchmark's effect rule does not compile: %w", err)
	}
	urlEffect, stopEffect, err := startCollector(fullBin, effectHome)
	if err != nil {
		return err
	}
	defer stopEffect()
	for _, e := range [][]string{env(withPolicy, urlPolicy), env(downHome, down), env(effectHome, urlEffect), env(effectDown, down)} {
		if err := checkDenies(ctx, hookBin, e); err != nil {
			return err
		}
	}
	cmds := []Command{
		{Name: "floor (Go, reads stdin)", Argv: []string{floor}},
		{Name: "hookwatch-hook, no policy", Argv: []string{hookBin}, Env: env(noPolicy, urlNone)},
		{Name: "hookwatch-hook, 50 rules", Argv: []string{hookBin}, Env: env(withPolicy, urlPolicy)},
		{Name: "hookwatch-hook, 50 rules, no collector", Argv: []string{hookBin}, Env: env(downHome, down)},
		{Name: "hookwatch-hook, 50 rules + effect rule", Argv: []string{hookBin}, Env: env(effectHome, urlEffect)},
		{Name: "hookwatch-hook, 50 rules + effect rule, no collector", Argv: []string{hookBin}, Env: env(effectDown, down)},
	}
	fmt.Fprintf(w, "policy cost: PreToolUse(Bash) of %d bytes, %d rules in force (%d answer PreToolUse, 15 select Bash), local collector, %d runs each, interleaved, %d round%s\n",
		len(preToolUsePayload), len(set.Rules), selecting(set), o.Runs, o.Rounds, map[bool]string{true: "s"}[o.Rounds > 1])
	m, err := RunRounds(ctx, w, cmds, preToolUsePayload, o.Runs, o.Warmup, o.Rounds, func(tw io.Writer, ts []Timing) {
		fmt.Fprintf(tw, "50 rules − no policy\t%v\t\t\t\n", (ts[2].Median() - ts[1].Median()).Round(time.Microsecond))
		fmt.Fprintf(tw, "effect rule − 50 rules\t%v\t\t\t\n", (ts[4].Median() - ts[2].Median()).Round(time.Microsecond))
		fmt.Fprintf(tw, "effect rule − 50 rules, no collector\t%v\t\t\t\n", (ts[5].Median() - ts[3].Median()).Round(time.Microsecond))
	})
	if err != nil {
		return err
	}
	verdict := "met"
	if ratio(m[2], m[0]) > PolicyGoal {
		verdict = "MISSED"
	}
	if o.Rounds > 1 {
		fmt.Fprintf(w, "median of %d rounds: floor %v, no policy %v (%.2f×), 50 rules %v (%.2f×), policy cost %v\n", o.Rounds,
			m[0].Round(time.Microsecond), m[1].Round(time.Microsecond), ratio(m[1], m[0]),
			m[2].Round(time.Microsecond), ratio(m[2], m[0]), (m[2] - m[1]).Round(time.Microsecond))
	}
	fmt.Fprintf(w, "goal: 50 rules ≤ %.1f× the floor: %s (%.2f×)\n", PolicyGoal, verdict, ratio(m[2], m[0]))
	verdict = "met"
	if ratio(m[4], m[0]) > PolicyGoal {
		verdict = "MISSED"
	}
	fmt.Fprintf(w, "goal: 50 rules + effect rule ≤ %.1f× the floor: %s (%.2f×)\n", PolicyGoal, verdict, ratio(m[4], m[0]))
	return nil
}

// effectRule is a rule on the meaning of the command (the shell analysis),
// added to policy50 to measure what the analysis costs the hook.
const effectRule = `  - id: no-destruction
    tool: Bash
    when: command.effect == "destructive" and not all(command.writes, {under(#, cwd + "/build")})
    action: deny
    reason: This command destroys data outside build/.
`

// selecting counts the rules whose event list names PreToolUse.
func selecting(set *policy.Set) int { return len(set.RulesFor("PreToolUse")) }

// checkDenies runs the hook once on the payload and fails unless it denied
// it: the benchmark must measure a policy that works.
func checkDenies(ctx context.Context, hookBin string, env []string) error {
	cmd := exec.CommandContext(ctx, hookBin)
	cmd.Stdin = bytes.NewReader(preToolUsePayload)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("cannot run the hook with the benchmark policy: %w", err)
	}
	if !bytes.Contains(out, []byte(`"permissionDecision":"deny"`)) || !strings.Contains(string(out), "Do not force an exit status") {
		return fmt.Errorf("the hook did not deny the benchmark payload with the policy in force: stdout %q", out)
	}
	return nil
}

// policy50 is a realistic user policy of 50 rules across events, tools,
// agents, conditions, rewrites, transforms and quotas: what a team would
// write. 15 of them name PreToolUse and select Bash (by matcher "Bash",
// "Bash|PowerShell" or "*"), so the benchmark payload compiles and runs
// those; the others are parsed (from the cache) and skipped by their event
// or matcher. no-forced-exit denies the payload.
const policy50 = `version: 1
rules:
  # --- Bash (PreToolUse): these select the benchmark payload ---
  - id: no-rm-rf
    description: Never delete recursively with force
    tool: Bash|PowerShell
    when: 'tool_input.command matches "rm\\s+-[a-zA-Z]*(rf|fr)"'
    action: deny
    reason: Recursive force deletes are not allowed here.
    alternative: delete the specific files with rm, or ask the user
  - id: no-force-push
    tool: Bash
    when: 'tool_input.command matches "git\\s+push\\s+.*(--force|-f\\b)"'
    action: deny
    reason: Force pushes rewrite shared history.
    alternative: git push --force-with-lease on your own branch
  - id: no-curl-pipe-sh
    tool: Bash
    when: 'tool_input.command matches "(curl|wget)[^|]*\\|\\s*(ba|z)?sh"'
    action: deny
    reason: Piping downloads into a shell runs unreviewed code.
  - id: no-sudo
    tool: Bash
    when: 'tool_input.command startsWith "sudo " || tool_input.command contains "&& sudo "'
    action: deny
    reason: No root from the agent.
  - id: no-forced-exit
    tool: Bash|PowerShell
    when: 'tool_input.command matches ";\\s*exit\\s+[0-9]+"'
    action: deny
    reason: Do not force an exit status.
    alternative: run "go vet ./..." on its own and read its status
    context: The CI reads the real exit status.
  - id: vet-is-safe
    tool: Bash
    when: 'tool_input.command startsWith "go vet" || tool_input.command startsWith "go test"'
    action: allow
    reason: go vet and go test are read-only
  - id: prod-db-ask
    tool: Bash
    when: 'tool_input.command matches "\\b(psql|mysql|mongo)\\b" && tool_input.command contains "prod"'
    action: ask
    reason: This touches a production database.
  - id: bash-per-session
    tool: Bash
    quota: {limit: 500, per: [session]}
    action: deny
    reason: 500 shell commands per session; summarise and ask the user to continue.
  - id: no-cat-env
    tool: Bash
    when: 'tool_input.command matches "(cat|less|head|tail)\\s+[^|;]*\\.env\\b"'
    action: deny
    reason: .env files hold secrets.
  - id: deploy-dry-run
    tool: Bash
    when: 'tool_input.command startsWith "make deploy"'
    action: allow
    reason: added DRY_RUN=1
    update_input:
      command: '"DRY_RUN=1 " + tool_input.command'
  - id: explore-read-only-shell
    tool: Bash
    agent_type: Explore
    when: 'not (tool_input.command matches "^(ls|cat|head|tail|wc|find|grep|rg|git (log|show|diff|status))\\b")'
    action: deny
    reason: The Explore agent only reads.
  - id: no-chmod-777
    tool: Bash
    when: 'tool_input.command matches "chmod\\s+(-R\\s+)?777"'
    action: deny
    reason: World-writable files are not allowed.
  - id: no-privileged-docker
    tool: Bash
    when: 'tool_input.command contains "docker run" && tool_input.command contains "--privileged"'
    action: deny
    reason: Privileged containers escape the sandbox.
  - id: package-install-ask
    tool: Bash
    when: 'tool_input.command matches "^(npm|pnpm|yarn)\\s+(install|add|i)\\b|^pip3?\\s+install\\b|^go\\s+get\\b"'
    action: ask
    reason: New dependencies need a human.
  - id: no-bypass-in-prod
    tool: "*"
    when: 'permission_mode == "bypassPermissions" && cwd startsWith "/srv/prod"'
    action: stop
    reason: bypassPermissions is not allowed on production hosts.

  # --- other tools (PreToolUse) ---
  - id: no-write-etc
    tool: Write|Edit|MultiEdit
    when: 'under(tool_input.file_path ?? "", "/etc")'
    action: deny
    reason: System configuration is off limits.
  - id: no-aws-keys-in-files
    tool: Write
    when: '(tool_input.content ?? "") matches "AKIA[0-9A-Z]{16}"'
    action: deny
    reason: That file would contain an AWS access key.
  - id: designer-no-go
    tool: Write|Edit
    agent_type: ui-designer
    when: 'glob("*.go", tool_input.file_path ?? "")'
    action: deny
    reason: The ui-designer agent does not change Go code.
    alternative: describe the change and let the main agent make it
  - id: sandbox-writes
    tool: Write
    agent: subagent
    when: 'not under(tool_input.file_path ?? "", cwd)'
    action: ask
    reason: redirected into the project
    update_input:
      file_path: 'cwd + "/sandbox/" + trimPrefix(tool_input.file_path ?? "", "/")'
  - id: no-dotenv-read
    tool: Read
    when: 'glob("**/.env*", tool_input.file_path ?? "")'
    action: deny
    reason: .env files hold secrets.
  - id: fetch-rate
    tool: WebFetch
    quota: {limit: 10, per: [session], window: 1m}
    action: ask
    reason: more than 10 fetches a minute
  - id: no-internal-urls
    tool: WebFetch
    when: '(tool_input.url ?? "") matches "^https?://(10\\.|192\\.168\\.|172\\.(1[6-9]|2[0-9]|3[01])\\.|localhost|127\\.)"'
    action: deny
    reason: No internal hosts.
  - id: no-nested-delegation
    tool: Agent|Task
    agent: subagent
    action: deny
    reason: Subagents do not spawn subagents here.
  - id: github-no-delete
    tool: mcp__github__delete_.*
    action: deny
    reason: Deleting on GitHub needs a human.
  - id: refund-limit
    tool: mcp__billing__refund
    when: '(tool_input.amount ?? 0) > 500'
    action: deny
    reason: Refunds above 500 need a manager.
  - id: notebook-ask
    tool: NotebookEdit
    action: ask
    reason: Notebook edits are reviewed.
  - id: worker-no-write
    tool: Write|Edit
    agent_type: worker
    action: deny
    reason: The worker agent may not write files.
  - id: protect-lockfiles
    tool: Write|Edit
    when: 'glob("**/{go.sum,package-lock.json,yarn.lock}", tool_input.file_path ?? "") || glob("go.sum", tool_input.file_path ?? "")'
    action: deny
    reason: Lock files are written by the package manager.
  - id: protect-vendor
    tool: Write|Edit
    when: '(tool_input.file_path ?? "") contains "/vendor/"'
    action: deny
    reason: vendor/ is generated.
  - id: migrations-ask
    tool: Write
    when: 'glob("**/migrations/*.sql", tool_input.file_path ?? "")'
    action: ask
    reason: Schema migrations are reviewed.

  # --- PostToolUse and failures ---
  - id: utc-mcp
    events: [PostToolUse]
    tool: mcp__.*
    transform:
      - timestamps: {epoch: keys}
  - id: redact-shell-output
    events: [PostToolUse]
    tool: Bash
    transform: [redact]
  - id: gofmt-reminder
    events: [PostToolUse]
    tool: Edit|Write
    when: 'glob("*.go", tool_input.file_path ?? "")'
    context: Run gofmt after editing Go files.
  - id: private-key-block
    events: [PostToolUse]
    tool: Read
    when: 'string(tool_response) contains "BEGIN PRIVATE KEY"'
    action: block
    reason: This file holds a private key; do not repeat or use its content.
  - id: vet-help
    events: [PostToolUseFailure]
    tool: Bash
    when: 'error contains "go vet"'
    context: go vet failed; read its first error and fix that first.

  # --- prompts, stops, sessions ---
  - id: no-pii-prompts
    events: [UserPromptSubmit]
    when: 'len(pii(prompt)) > 0'
    action: block
    reason: Your prompt contains personal data; remove it and resend.
  - id: release-freeze
    events: [UserPromptSubmit]
    context: Release freeze until Friday; no dependency upgrades.
  - id: no-drop-table
    events: [UserPromptSubmit]
    when: 'prompt matches "(?i)drop\\s+table"'
    action: block
    reason: Schema drops go through a migration review.
  - id: finish-todos
    events: [Stop]
    when: 'last_assistant_message contains "TODO"'
    action: block
    reason: You left a TODO; finish it before stopping.
  - id: explore-report
    events: [SubagentStop]
    agent_type: Explore
    action: block
    reason: Also list the files you read.
  - id: rules-reminder
    events: [SessionStart]
    tool: startup|resume
    context: hookwatch policy is active; destructive commands are denied.
    system_message: hookwatch policy active
  - id: explore-context
    events: [SubagentStart]
    tool: Explore
    context: Read excerpts, not whole files.

  # --- permission dialogs ---
  - id: allow-read
    events: [PermissionRequest]
    tool: Read
    action: allow
  - id: no-web
    events: [PermissionRequest]
    tool: WebFetch|WebSearch
    action: deny
    reason: No web access from this repository.
    interrupt: true
  - id: bash-timeout
    events: [PermissionRequest]
    tool: Bash
    when: 'tool_input.command startsWith "go test"'
    action: allow
    update_input:
      timeout: '600000'

  # --- the rest of the lifecycle ---
  - id: task-subjects
    events: [TaskCreated]
    when: 'not (task_subject matches "^[A-Z]")'
    action: block
    reason: Task subjects start with a capital letter.
  - id: no-settings-edits
    events: [ConfigChange]
    tool: user_settings|project_settings
    action: block
    reason: Settings change through review.
  - id: no-auto-compact
    events: [PreCompact]
    tool: auto
    when: 'is_subagent'
    action: block
  - id: big-batch
    events: [PostToolBatch]
    when: 'len(tool_calls ?? []) > 8'
    context: Many calls at once; check each result.
  - id: audit-web-search
    tool: WebSearch
    mode: audit
    action: deny
    reason: Web search is under review.
`

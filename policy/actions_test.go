package policy

import (
	"strings"
	"testing"
)

// TestActionsGolden loads one rule per action and event, evaluates it on a
// real payload of that event and compares the hook's stdout with
// testdata/actions/<name>.json: the whole path from YAML to the bytes
// Claude Code reads.
func TestActionsGolden(t *testing.T) {
	f := func(name, rule string, payload map[string]any) {
		t.Helper()
		set := loadYAML(t, "rules:\n"+rule)
		if err := set.Err(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if ps := set.compileAll(); len(ps) > 0 {
			t.Fatalf("%s: %v", name, ps)
		}
		d := eval(set, payload)
		out := render(d)
		if out == "" {
			t.Fatalf("%s: no output", name)
		}
		if a := d.Audit(); a == nil || !a.Enforced {
			t.Fatalf("%s: audit %+v", name, a)
		}
		golden(t, "actions/"+name+".json", out+"\n")
	}
	bash := func() map[string]any { return pick(t, "PreToolUse", "Bash", "main") }

	// PreToolUse: allow | deny | ask | defer, reason + alternative, updatedInput.
	f("pretooluse_allow", `
  - id: vet-ok
    tool: Bash
    when: 'tool_input.command startsWith "go vet"'
    action: allow
    reason: go vet is read-only`, bash())
	f("pretooluse_deny", `
  - id: no-exit
    tool: Bash|PowerShell
    when: 'tool_input.command matches ";\\s*exit\\s+[0-9]+"'
    action: deny
    reason: Do not force an exit status.
    alternative: run "go vet ./..." on its own and read its status
    context: The CI reads the real exit status.`, bash())
	f("pretooluse_ask", `
  - id: ask-write
    tool: Write
    agent: main
    action: ask
    reason: Writing a new file; please confirm.`, pick(t, "PreToolUse", "Write", "main"))
	f("pretooluse_defer", `
  - id: defer-agent
    tool: Task|Agent
    action: defer
    reason: subagents need a human in -p runs`, pick(t, "PreToolUse", "Agent", "main"))
	f("pretooluse_rewrite_dry_run", `
  - id: dry-run
    tool: Bash
    when: 'tool_input.command startsWith "go vet"'
    action: allow
    reason: added -n (dry run)
    update_input:
      command: 'replace(tool_input.command, "go vet", "go vet -n")'`, bash())
	f("pretooluse_rewrite_sandbox", `
  - id: sandbox-writes
    tool: Write
    when: 'not under(tool_input.file_path, "/tmp/sandbox")'
    action: ask
    reason: redirected into the sandbox
    update_input:
      file_path: '"/tmp/sandbox/" + trimPrefix(tool_input.file_path, cwd + "/")'`, pick(t, "PreToolUse", "Write", "main"))
	f("pretooluse_context", `
  - id: prod-note
    tool: Bash
    context: This machine is production; prefer read-only commands.`, bash())

	// PermissionRequest: decision.behavior.
	f("permissionrequest_allow", `
  - id: allow-read
    events: PermissionRequest
    tool: Read
    action: allow`, pick(t, "PermissionRequest", "Read", ""))
	f("permissionrequest_deny", `
  - id: deny-fetch
    events: PermissionRequest
    tool: WebFetch
    action: deny
    reason: No web access from this repository.
    interrupt: true`, pick(t, "PermissionRequest", "WebFetch", ""))
	f("permissionrequest_allow_rewrite", `
  - id: bash-timeout
    events: [PermissionRequest]
    tool: Bash
    action: allow
    update_input:
      timeout: '60000'`, pick(t, "PermissionRequest", "Bash", ""))

	// PostToolUse: context, block, output rewrites.
	f("posttooluse_context", `
  - id: edit-note
    events: PostToolUse
    tool: Edit|Write
    context: Run gofmt after editing Go files.`, pick(t, "PostToolUse", "Edit", "main"))
	f("posttooluse_block", `
  - id: secret-in-output
    events: PostToolUse
    tool: Read
    when: 'tool_response.file.content contains "println"'
    action: block
    reason: The file content must not be used verbatim.`, pick(t, "PostToolUse", "Read", "main"))
	bashOut := pick(t, "PostToolUse", "Bash", "")
	bashOut["tool_response"] = map[string]any{"stdout": "build 2024-06-01T12:00:00+02:00 by jane@example.com, card 4111 1111 1111 1111", "stderr": "", "interrupted": false, "isImage": false}
	f("posttooluse_transform", `
  - id: clean-output
    events: PostToolUse
    tool: Bash
    transform: [timestamps, redact]`, bashOut)
	mcp := pick(t, "PostToolUse", "Bash", "")
	mcp["tool_name"] = "mcp__billing__list_invoices"
	mcp["tool_input"] = map[string]any{"customer": "c_1"}
	mcp["tool_response"] = []any{map[string]any{"type": "text", "text": `{"invoices":[{"id":"in_1","created":1717236000,"due_at":"2024-07-01T00:00:00-04:00"}]}`}}
	f("posttooluse_transform_mcp", `
  - id: utc-mcp
    events: PostToolUse
    tool: mcp__billing__.*
    transform:
      - timestamps: {epoch: keys}`, mcp)

	// PostToolUseFailure: context, block.
	f("posttoolusefailure_context", `
  - id: vet-help
    events: PostToolUseFailure
    tool: Bash
    context: go vet failed; read its first error and fix that first.`, pick(t, "PostToolUseFailure", "Bash", "main"))
	f("posttoolusefailure_block", `
  - id: stop-retrying
    events: PostToolUseFailure
    tool: Read
    action: block
    reason: The file does not exist; do not retry.`, pick(t, "PostToolUseFailure", "Read", ""))

	// UserPromptSubmit: block with reason, add context.
	prompt := pick(t, "UserPromptSubmit", "", "")
	prompt["prompt"] = "charge card 4111 1111 1111 1111 for jane@example.com"
	f("userpromptsubmit_block", `
  - id: no-pii-prompts
    events: UserPromptSubmit
    when: 'len(pii(prompt)) > 0'
    action: block
    reason: Your prompt contains personal data (card or email); remove it and resend.`, prompt)
	f("userpromptsubmit_context", `
  - id: freeze
    events: UserPromptSubmit
    context: Release freeze until Friday; no dependency upgrades.`, pick(t, "UserPromptSubmit", "", ""))

	// Stop / SubagentStop: block with a reason.
	stop := pick(t, "Stop", "", "")
	stop["last_assistant_message"] = "Done. TODO: tests"
	f("stop_block", `
  - id: finish-todos
    events: Stop
    when: 'last_assistant_message contains "TODO"'
    action: block
    reason: You left a TODO; finish it before stopping.`, stop)
	f("subagentstop_block", `
  - id: explore-report
    events: SubagentStop
    agent_type: Explore
    action: block
    reason: Also list the files you read.`, pick(t, "SubagentStop", "", "Explore"))

	// SessionStart: add context.
	f("sessionstart_context", `
  - id: rules-reminder
    events: SessionStart
    tool: startup|resume
    context: hookwatch policy is active; destructive commands are denied.
    system_message: hookwatch policy active`, pick(t, "SessionStart", "", ""))

	// Stop the whole run.
	f("pretooluse_stop", `
  - id: kill-switch
    tool: "*"
    action: stop
    reason: The kill switch is on.`, bash())
}

// TestActionsPerEventShape checks every golden against the output contract.
func TestActionsNotOnWrongEvent(t *testing.T) {
	f := func(rule, want string) {
		t.Helper()
		set := loadYAML(t, "rules:\n"+rule)
		err := set.Err()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("want error containing %q, got %v", want, err)
		}
	}
	f("  - {id: a, events: UserPromptSubmit, action: allow}", "action allow is not honoured on UserPromptSubmit")
	f("  - {id: a, events: Stop, action: ask}", "action ask is not honoured on Stop")
	f("  - {id: a, events: PermissionRequest, action: defer}", "action defer is not honoured on PermissionRequest")
	f("  - {id: a, events: SessionStart, action: block}", "action block is not honoured on SessionStart")
	f("  - {id: a, transform: [timestamps]}", "transform is not honoured on PreToolUse")
	f("  - {id: a, update_input: {command: '\"x\"'}}", "update_input needs action allow or ask")
	f("  - {id: a, events: PermissionRequest, action: ask, update_input: {command: '\"x\"'}}", "action ask is not honoured on PermissionRequest")
	f("  - {id: a, events: PostToolUse, update_input: {command: '\"x\"'}, action: block}", "update_input is not honoured on PostToolUse")
	f("  - {id: a, action: deny, interrupt: true}", "interrupt is only honoured on PermissionRequest")
	f("  - {id: a, events: SessionEnd, context: x}", "ignores every hook answer")
	f("  - {id: a, events: ConfigChange, system_message: x}", "system_message is not honoured on ConfigChange")
}

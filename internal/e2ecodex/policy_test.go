package e2ecodex

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	fo "github.com/hookwatch/hookwatch/internal/fakeopenai"
)

// TestPolicy: a Codex rule denying a command (the command does not run and
// the model's next request carries the reason), a Stop block that makes
// Codex go on once and not loop (stop_hook_active), and context added to
// the prompt.
func TestPolicy(t *testing.T) {
	c := startCollector(t)
	policy := `rules:
  - id: no-rm
    runtime: codex
    tool: Bash
    when: tool_input.command contains "rm -rf"
    action: deny
    reason: rm -rf is not allowed here.
  - id: checks-first
    runtime: codex
    events: Stop
    action: block
    reason: Run the checks before you stop.
  - id: brief
    runtime: codex
    events: UserPromptSubmit
    context: "Project rule: answer briefly."
  - id: claude-only
    runtime: claude-code
    tool: Bash
    action: deny
    reason: never seen by Codex
`
	c.writePolicy(t, policy)
	e := c.newEnv(t, ModelClassic, fo.Script{
		"Clean up": {
			{fo.Exec("rm -rf build && echo removed")},
			{fo.Text("I could not remove it.")},
			{fo.Exec("echo checks ok")},
			{fo.Text("Checks done.")},
		},
	})
	keep := filepath.Join(e.Project, "build", "keep.txt")
	if err := os.MkdirAll(filepath.Dir(keep), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keep, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := e.Exec("Clean up the build directory")
	if run.Err != nil {
		t.Fatalf("codex exec: %v\n%s", run.Err, run.Stderr)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Fatalf("the denied command ran: %v", err)
	}
	// The model saw the reason in the next request, and the Stop block as
	// a new prompt once.
	var sawReason, sawBlock, sawContext bool
	reqs := e.Model.Requests()
	for _, r := range reqs {
		text := r.Text()
		// Codex follows the reason with its own period: one, not two.
		sawReason = sawReason || strings.Contains(text, "rm -rf is not allowed here. Command: ")
		sawBlock = sawBlock || strings.Contains(text, "Run the checks before you stop.")
		sawContext = sawContext || strings.Contains(text, "Project rule: answer briefly.")
	}
	if !sawReason || !sawBlock || !sawContext || len(reqs) != 4 {
		t.Errorf("%d model requests; reason seen %v, stop block seen %v, prompt context seen %v", len(reqs), sawReason, sawBlock, sawContext)
	}
	id := sessionOf(e.Rollouts()[0])
	want, total := fired(e, id)
	if want["Stop"] != 2 {
		t.Errorf("codex ran hooks %v", want)
	}
	var active []any
	for _, p := range e.Recorded() {
		if p["hook_event_name"] == "Stop" {
			active = append(active, p["stop_hook_active"])
		}
	}
	if len(active) != 2 || active[0] != false || active[1] != true {
		t.Errorf("stop_hook_active %v", active)
	}
	evs := c.waitEvents(t, id, total)
	sameCounts(t, "stored events", countEvents(evs), want)
	calls := c.toolCalls(t, id)
	if len(calls) != 2 || calls[0].Status != "denied" || !strings.Contains(calls[0].Error, "rm -rf is not allowed here") || calls[1].Status != "ok" {
		t.Errorf("tool calls %v", calls)
	}
	// The rollout says the same of the denied call: imported, nothing
	// changes but the evidence.
	hookwatch(t, e, "import", "--codex")
	c.waitEvents(t, id, total+4+4) // PreToolUse and PermissionDenied, PreToolUse and PostToolUse; 4 responses' usage
	again := c.toolCalls(t, id)
	if len(again) != 2 || again[0].Status != "denied" || again[0].ToolUseID != calls[0].ToolUseID || again[1].Status != "ok" {
		t.Errorf("tool calls after the import %v", again)
	}
}

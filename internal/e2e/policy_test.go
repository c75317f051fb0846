package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hookwatch/hookwatch/decision"
	hwevent "github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/fakeclaude"
	"github.com/hookwatch/hookwatch/internal/testbin"
	"github.com/hookwatch/hookwatch/spool"
)

// The policy tests run the real client with the real hook binary
// (cmd/hookwatch-hook, built static as released) registered for every
// event, and a policy file in force. The collector is down on purpose: the
// decisions must not need it, and every envelope lands in the spool, where
// the tests read the decision audit the hook stored with each event.
//
// What each test proves is what the client did with the hook's answer: a
// file a denied command would have deleted still exists, a rewritten command
// wrote another file, the model's next request holds the reason or the
// rewritten tool output, the prompt never reached the model.

// policyBins are the programs the policy tests run: the client of the
// subtest, and the others built once.
type policyBins struct {
	client   Client
	hook     string // cmd/hookwatch-hook
	mcpclock string // testdata/mcpclock
}

func buildPolicyBins(t *testing.T) policyBins {
	t.Helper()
	Clients(t) // skip (or fail in CI) before building anything
	// hookwatch-hook does not link the policy engine: with no collector
	// attached it asks the hookwatch binary beside it, built here too.
	testbin.Build(t, "./cmd/hookwatch")
	b := policyBins{hook: testbin.Build(t, "./cmd/hookwatch-hook"), mcpclock: filepath.Join(t.TempDir(), "mcpclock")}
	cmd := exec.Command("go", "build", "-trimpath", "-o", b.mcpclock, "./testdata/mcpclock")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cannot build mcpclock: %v\n%s", err, msg)
	}
	return b
}

// policyEnv is an Env whose hook is hookwatch-hook with its own
// HOOKWATCH_HOME and a collector URL nobody listens on.
type policyEnv struct {
	*Env
	t      *testing.T
	hwHome string
}

// newPolicyEnv returns a policyEnv with userPolicy as
// $HOOKWATCH_HOME/policy.yaml ("" for none).
func newPolicyEnv(t *testing.T, bins policyBins, userPolicy string) *policyEnv {
	t.Helper()
	hwHome := t.TempDir()
	p := &policyEnv{t: t, hwHome: hwHome}
	// No collector, and none started by the hook: every envelope stays in
	// the spool for the test to read.
	p.Env = New(t, bins.client, Hook{Command: bins.hook}, "HOOKWATCH_HOME="+hwHome, "HOOKWATCH_URL="+testbin.DeadURL(t), "HOOKWATCH_AUTOSTART=0")
	if userPolicy != "" {
		writeFile(t, filepath.Join(hwHome, "policy.yaml"), userPolicy)
	}
	return p
}

// spooled is one envelope the hook spooled, decoded.
type spooled struct {
	env     hwevent.Envelope
	payload event
	audit   *decision.Audit
}

func (s spooled) String() string {
	a, _ := json.Marshal(s.audit)
	return fmt.Sprintf("%s decision=%s", s.payload, a)
}

// envelopes drains the spool: every envelope the hook wrote, in order; the
// test fails when there is none.
func (p *policyEnv) envelopes() []spooled {
	p.t.Helper()
	out := p.drain()
	if len(out) == 0 {
		log, _ := os.ReadFile(filepath.Join(p.hwHome, "hook.log"))
		p.t.Fatalf("the hook spooled nothing; hook.log:\n%s", log)
	}
	return out
}

// drain drains the spool: the envelopes the hook wrote since the last
// drain, in order, none if it wrote none.
func (p *policyEnv) drain() []spooled {
	p.t.Helper()
	sp, err := spool.Open(filepath.Join(p.hwHome, "spool"), spool.Options{})
	if err != nil {
		p.t.Fatal(err)
	}
	var out []spooled
	_, err = sp.Drain(context.Background(), 1<<20, func(recs [][]byte) error {
		for _, rec := range recs {
			var s spooled
			if err := json.Unmarshal(rec, &s.env); err != nil {
				return fmt.Errorf("spooled record is not an envelope: %w: %s", err, rec)
			}
			if err := json.Unmarshal(s.env.Payload, &s.payload); err != nil {
				return fmt.Errorf("envelope payload: %w", err)
			}
			if len(s.env.Decision) > 0 {
				s.audit = new(decision.Audit)
				if err := json.Unmarshal(s.env.Decision, s.audit); err != nil {
					return fmt.Errorf("envelope decision: %w: %s", err, s.env.Decision)
				}
			}
			out = append(out, s)
		}
		return nil
	})
	if err != nil {
		p.t.Fatal(err)
	}
	return out
}

// find returns the spooled envelopes of event name whose payload satisfies
// keep (all if nil).
func find(envs []spooled, name string, keep func(event) bool) []spooled {
	var out []spooled
	for _, s := range envs {
		if s.payload.name() == name && (keep == nil || keep(s.payload)) {
			out = append(out, s)
		}
	}
	return out
}

// decided returns the envelopes that carry a decision.
func decided(envs []spooled) []spooled {
	var out []spooled
	for _, s := range envs {
		if s.audit != nil {
			out = append(out, s)
		}
	}
	return out
}

// checkAudit fails unless s carries a decision with the given action, rule
// and enforcement.
func checkAudit(t *testing.T, s spooled, action, rule string, enforced bool) {
	t.Helper()
	a := s.audit
	if a == nil || a.Action != action || a.Enforced != enforced || len(a.RuleIDs) != 1 || a.RuleIDs[0] != rule {
		t.Fatalf("want decision %s by %s (enforced %v) on %s", action, rule, enforced, s)
	}
}

// dump logs the model requests and the spooled events, for failing tests.
func (p *policyEnv) dump(envs []spooled) {
	p.t.Helper()
	var b strings.Builder
	for i, s := range envs {
		fmt.Fprintf(&b, "%3d %-18s agent=%q type=%q tool=%s", i, s.payload.name(), s.payload.str("agent_id"),
			s.payload.str("agent_type"), s.payload.str("tool_name"))
		if s.audit != nil {
			a, _ := json.Marshal(s.audit)
			fmt.Fprintf(&b, " decision=%s", a)
		}
		b.WriteByte('\n')
	}
	for _, q := range p.Model.Requests() {
		fmt.Fprintf(&b, "request %d kind=%s conv=%q turn=%d reply=%v\n", q.Seq, q.Kind, q.Conversation, q.Turn, q.Reply)
	}
	if log, err := os.ReadFile(filepath.Join(p.hwHome, "hook.log")); err == nil {
		// Every event was spooled (the collector is down); show the rest.
		for _, line := range strings.Split(string(log), "\n") {
			if line != "" && !strings.Contains(line, "spooled:") {
				fmt.Fprintf(&b, "hook.log: %s\n", line)
			}
		}
	}
	p.t.Log("\n" + b.String())
}

// replyTool returns the id of the first call of tool in the requests of
// conversation key.
func replyTool(t *testing.T, reqs []fakeclaude.Request, tool string) string {
	t.Helper()
	for _, q := range reqs {
		for _, b := range q.Reply {
			if b.Tool == tool {
				return b.ID
			}
		}
	}
	t.Fatalf("the model never called %s", tool)
	return ""
}

// resultOf returns the tool_result the model saw for call id.
func resultOf(t *testing.T, reqs []fakeclaude.Request, id string) fakeclaude.Content {
	t.Helper()
	for _, q := range reqs {
		if c, ok := q.ToolResult(id); ok {
			return c
		}
	}
	t.Fatalf("no request holds the result of %s", id)
	return fakeclaude.Content{}
}

// called reports whether the conversation of r holds a call of tool.
func called(r *fakeclaude.Request, tool string) bool {
	return slices.ContainsFunc(r.ToolUses(), func(u fakeclaude.Content) bool { return u.Name == tool })
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func TestPolicy(t *testing.T) {
	built := buildPolicyBins(t)
	// The subtests run in parallel; the binaries live until they all end.
	EachClient(t, func(t *testing.T, c Client) {
		bins := built
		bins.client = c
		t.Run("DenyRmRf", func(t *testing.T) { t.Parallel(); testPolicyDeny(t, bins) })
		t.Run("DenyByEffect", func(t *testing.T) { t.Parallel(); testPolicyDenyByEffect(t, bins) })
		t.Run("DenyDynamic", func(t *testing.T) { t.Parallel(); testPolicyDenyDynamic(t, bins) })
		t.Run("RewriteInput", func(t *testing.T) { t.Parallel(); testPolicyRewrite(t, bins) })
		t.Run("SubagentType", func(t *testing.T) { t.Parallel(); testPolicySubagent(t, bins) })
		t.Run("MCPTimestamps", func(t *testing.T) { t.Parallel(); testPolicyMCP(t, bins) })
		t.Run("BlockPrompt", func(t *testing.T) { t.Parallel(); testPolicyPrompt(t, bins) })
		t.Run("StopOnce", func(t *testing.T) { t.Parallel(); testPolicyStop(t, bins) })
		t.Run("Quota", func(t *testing.T) { t.Parallel(); testPolicyQuota(t, bins) })
		t.Run("StopRun", func(t *testing.T) { t.Parallel(); testPolicyStopRun(t, bins) })
	})
}

const denyPolicy = `rules:
  - id: no-rm-rf
    tool: Bash
    when: 'tool_input.command matches "rm\\s+-[a-zA-Z]*(rf|fr)"'
    action: deny
    reason: Recursive force deletes are not allowed here.
    alternative: delete the specific files with rm
`

// testPolicyDeny: a deny keeps the command from running, and the model's
// next request holds the reason as the call's result.
func testPolicyDeny(t *testing.T, bins policyBins) {
	checkDeniedDelete(t, bins, denyPolicy, "precious", "rm -rf precious", "no-rm-rf",
		"Recursive force deletes are not allowed here. Use instead: delete the specific files with rm")
}

// effectPolicy holds the regular expression rule of denyPolicy and a rule
// on the command's meaning: only the second sees through bash -c and
// split flags.
const effectPolicy = denyPolicy + `  - id: no-destruction
    tool: Bash
    when: command.effect == "destructive" and not all(command.writes, {under(#, cwd + "/build")})
    action: deny
    reason: This command destroys data outside build/.
`

// testPolicyDenyByEffect: a rephrased rm -rf that the regular expression
// lets through is denied by the effect rule alone; the directory survives
// and the model sees the reason.
func testPolicyDenyByEffect(t *testing.T, bins policyBins) {
	checkDeniedDelete(t, bins, effectPolicy, "victim", "bash -c 'rm -r -f victim'", "no-destruction",
		"This command destroys data outside build/.")
}

// testPolicyDenyDynamic: a command whose program is only known when it
// runs writes anywhere, so the rule that allows destruction under build/
// denies it.
func testPolicyDenyDynamic(t *testing.T, bins policyBins) {
	checkDeniedDelete(t, bins, effectPolicy, "victim", `eval "$(echo rm) -rf victim"`, "no-destruction",
		"This command destroys data outside build/.")
}

// checkDeniedDelete has the model run command, which deletes dir, with
// policy in force, and fails unless rule alone denied it: dir survives,
// the model's next request holds the reason as the call's result, the
// call never ran (no PostToolUse) and nothing else was decided.
func checkDeniedDelete(t *testing.T, bins policyBins, policy, dir, command, rule, reason string) {
	p := newPolicyEnv(t, bins, policy)
	marker := filepath.Join(p.Project, dir, "keep.txt")
	writeFile(t, marker, "keep me\n")
	key := "[e2e:policy-" + rule + "]"
	p.Model.SetScript(fakeclaude.Script{key: {
		fakeclaude.Reply(fakeclaude.ToolUse("Bash", input{"command": command, "description": "Clean up"})),
		fakeclaude.Reply(fakeclaude.Text("I could not delete it.")),
	}})
	p.Run(key + " clean up the " + dir + " directory")
	envs := p.envelopes()
	reqs := turnRequests(p.Model.Requests(), key)

	if !exists(marker) {
		p.dump(envs)
		t.Fatalf("the denied %s ran: the marker file is gone", command)
	}
	id := replyTool(t, reqs, "Bash")
	res := resultOf(t, reqs, id)
	if !strings.Contains(res.ResultText(), reason) {
		p.dump(envs)
		t.Fatalf("the model saw %q (is_error %v), want the reason %q", res.ResultText(), res.IsError, reason)
	}
	pre := find(envs, "PreToolUse", func(ev event) bool { return ev.str("tool_use_id") == id })
	if len(pre) != 1 {
		p.dump(envs)
		t.Fatalf("%d PreToolUse envelopes for %s", len(pre), id)
	}
	checkAudit(t, pre[0], decision.ActionDeny, rule, true)
	if pre[0].audit.Reason != reason {
		t.Fatalf("audit reason %q", pre[0].audit.Reason)
	}
	if post := find(envs, "PostToolUse", func(ev event) bool { return ev.str("tool_use_id") == id }); len(post) != 0 {
		t.Fatalf("a PostToolUse for the denied call: %v", post)
	}
	if d := decided(envs); len(d) != 1 {
		p.dump(envs)
		t.Fatalf("%d decided events, want 1", len(d))
	}
}

const rewritePolicy = `rules:
  - id: notes-to-sandbox
    tool: Bash
    when: 'tool_input.command contains "original.txt"'
    action: allow
    reason: writes go to rewritten.txt
    update_input:
      command: 'replace(tool_input.command, "original.txt", "rewritten.txt")'
`

// testPolicyRewrite: updatedInput changes what actually runs.
func testPolicyRewrite(t *testing.T, bins policyBins) {
	p := newPolicyEnv(t, bins, rewritePolicy)
	const key = "[e2e:policy-rewrite]"
	p.Model.SetScript(fakeclaude.Script{key: {
		fakeclaude.Reply(fakeclaude.ToolUse("Bash", input{"command": "echo hello > original.txt && echo wrote", "description": "Write a file"})),
		fakeclaude.Reply(fakeclaude.Text("Written.")),
	}})
	p.Run(key + " write the file")
	envs := p.envelopes()
	reqs := turnRequests(p.Model.Requests(), key)

	if exists(filepath.Join(p.Project, "original.txt")) {
		p.dump(envs)
		t.Fatal("the original command ran: original.txt exists")
	}
	b, err := os.ReadFile(filepath.Join(p.Project, "rewritten.txt"))
	if err != nil || string(b) != "hello\n" {
		p.dump(envs)
		t.Fatalf("the rewritten command did not run: rewritten.txt %q, %v", b, err)
	}
	id := replyTool(t, reqs, "Bash")
	if res := resultOf(t, reqs, id); res.IsError || !strings.Contains(res.ResultText(), "wrote") {
		t.Fatalf("the model saw %q (is_error %v)", res.ResultText(), res.IsError)
	}
	pre := find(envs, "PreToolUse", func(ev event) bool { return ev.str("tool_use_id") == id })
	if len(pre) != 1 {
		t.Fatalf("%d PreToolUse envelopes for %s", len(pre), id)
	}
	// The merged answer is an allow carrying the rewrite.
	checkAudit(t, pre[0], decision.ActionAllow, "notes-to-sandbox", true)
	// The client reports the input it ran in PostToolUse.
	post := find(envs, "PostToolUse", func(ev event) bool { return ev.str("tool_use_id") == id })
	if len(post) != 1 || !strings.Contains(post[0].payload.input("command"), "rewritten.txt") {
		p.dump(envs)
		t.Fatalf("PostToolUse of the rewritten call: %v", post)
	}
}

const workerAgent = `---
name: worker
description: Writes the files it is asked to write.
tools: Write, Read
---
You write the files you are asked to write, then say so.
`

const workerPolicy = `rules:
  - id: worker-no-write
    tool: Write
    agent_type: worker
    action: deny
    reason: The worker agent may not write files.
    alternative: report the content to the main agent
`

// testPolicySubagent: a rule for agent_type worker denies Write inside that
// subagent while the main agent's Write succeeds. The policy is the
// project's, the agent a custom one of the project.
func testPolicySubagent(t *testing.T, bins policyBins) {
	p := newPolicyEnv(t, bins, "")
	writeFile(t, filepath.Join(p.Project, ".claude", "agents", "worker.md"), workerAgent)
	writeFile(t, filepath.Join(p.Project, ".hookwatch", "policy.yaml"), workerPolicy)
	mainFile, workerFile := filepath.Join(p.Project, "main.txt"), filepath.Join(p.Project, "worker.txt")
	const key, workerKey = "[e2e:policy-main]", "[e2e:policy-worker]"
	p.Model.SetScript(fakeclaude.Script{
		key: {
			fakeclaude.Reply(fakeclaude.ToolUse("Write", input{"file_path": mainFile, "content": "from main\n"})),
			func(r *fakeclaude.Request) []fakeclaude.Block {
				return []fakeclaude.Block{spawn(r, "worker", "write a file", workerKey+" write worker.txt")}
			},
			fakeclaude.Reply(fakeclaude.Text("Main and worker are done.")),
		},
		workerKey: {
			fakeclaude.Reply(fakeclaude.ToolUse("Write", input{"file_path": workerFile, "content": "from worker\n"})),
			fakeclaude.Reply(fakeclaude.Text("I was not allowed to write.")),
		},
	})
	p.Run(key + " write a file, then let the worker write one")
	envs := p.envelopes()
	all := p.Model.Requests()

	if b, err := os.ReadFile(mainFile); err != nil || string(b) != "from main\n" {
		p.dump(envs)
		t.Fatalf("the main agent's Write did not run: %q, %v", b, err)
	}
	if exists(workerFile) {
		p.dump(envs)
		t.Fatal("the worker's denied Write ran")
	}
	workerReqs := turnRequests(all, workerKey)
	if len(workerReqs) != 2 {
		p.dump(envs)
		t.Fatalf("%d worker turns, want 2", len(workerReqs))
	}
	id := replyTool(t, workerReqs, "Write")
	if res := resultOf(t, workerReqs, id); !strings.Contains(res.ResultText(), "The worker agent may not write files.") {
		t.Fatalf("the worker saw %q", res.ResultText())
	}
	writes := find(envs, "PreToolUse", func(ev event) bool { return ev.str("tool_name") == "Write" })
	if len(writes) != 2 {
		p.dump(envs)
		t.Fatalf("%d PreToolUse(Write), want 2", len(writes))
	}
	for _, w := range writes {
		switch w.payload.str("agent_type") {
		case "":
			if w.audit != nil || w.payload.has("agent_id") {
				t.Fatalf("the main agent's Write was decided: %s", w)
			}
		case "worker":
			checkAudit(t, w, decision.ActionDeny, "worker-no-write", true)
		default:
			t.Fatalf("Write from agent type %q", w.payload.str("agent_type"))
		}
	}
}

const mcpPolicy = `rules:
  - id: utc-clock
    events: [PostToolUse]
    tool: mcp__clock__.*
    transform: [timestamps]
`

// testPolicyMCP: a PostToolUse transform turns the epoch times an MCP tool
// returns into ISO 8601 UTC, and the model sees only those.
func testPolicyMCP(t *testing.T, bins policyBins) {
	p := newPolicyEnv(t, bins, mcpPolicy)
	cfg := filepath.Join(t.TempDir(), "mcp.json")
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"clock": map[string]any{"type": "stdio", "command": bins.mcpclock, "args": []string{}},
	}})
	writeFile(t, cfg, string(b))
	const key = "[e2e:policy-mcp]"
	const tool = "mcp__clock__now"
	// The clock is offered at once (2.1.197), or deferred: named in the
	// prompt, to be loaded with ToolSearch first (2.1.332).
	turn := func(r *fakeclaude.Request) []fakeclaude.Block {
		switch {
		case called(r, tool):
			return []fakeclaude.Block{fakeclaude.Text("The deployment was at 10:00 UTC.")}
		case r.Offers(tool):
			return []fakeclaude.Block{fakeclaude.ToolUse(tool, input{})}
		case r.Offers("ToolSearch") && !called(r, "ToolSearch") && strings.Contains(r.System+r.AllText(), tool):
			return []fakeclaude.Block{fakeclaude.ToolUse("ToolSearch", input{"query": "select:" + tool, "max_results": 1})}
		}
		return []fakeclaude.Block{fakeclaude.Text("no clock tool offered")}
	}
	p.Model.SetScript(fakeclaude.Script{key: {turn, turn, turn}})
	res := p.Run(key+" when was the last deployment?", "--mcp-config", cfg)
	envs := p.envelopes()
	reqs := turnRequests(p.Model.Requests(), key)
	turns := 2
	if bins.client.DefersMCPTools() {
		turns = 3
	}
	if res.Text != "The deployment was at 10:00 UTC." || len(reqs) != turns || reqs[0].Offers(tool) == bins.client.DefersMCPTools() {
		p.dump(envs)
		t.Fatalf("result %q after %d turns, want %d; tools offered: %v", res.Text, len(reqs), turns, reqs[0].Tools)
	}
	id := replyTool(t, reqs, tool)
	got := resultOf(t, reqs, id).ResultText()
	for _, want := range []string{`"created_at":"2024-06-01T10:00:00Z"`, `"updated_at_ms":"2024-06-01T10:00:00.123Z"`, `"expires":"2024-06-01T10:30:00Z"`, `"count":3`} {
		if !strings.Contains(got, want) {
			p.dump(envs)
			t.Fatalf("the model saw %q, want it to contain %s", got, want)
		}
	}
	for _, raw := range []string{"1717236000", "+02:00"} {
		if strings.Contains(got, raw) {
			t.Fatalf("the model still saw %s: %q", raw, got)
		}
	}
	post := find(envs, "PostToolUse", func(ev event) bool { return ev.str("tool_use_id") == id })
	if len(post) != 1 {
		p.dump(envs)
		t.Fatalf("%d PostToolUse envelopes for %s", len(post), id)
	}
	checkAudit(t, post[0], decision.ActionRewriteOutput, "utc-clock", true)
	// The hook saw the original output: the rewrite is only what the
	// model sees.
	if raw, _ := json.Marshal(post[0].payload["tool_response"]); !strings.Contains(string(raw), "1717236000") {
		t.Fatalf("PostToolUse tool_response %s", raw)
	}
}

const promptPolicy = `rules:
  - id: no-secret-project
    events: [UserPromptSubmit]
    when: 'prompt contains "project nightingale"'
    action: block
    reason: Prompts about project nightingale are not allowed here.
`

// testPolicyPrompt: a UserPromptSubmit block stops the prompt before the
// model sees it.
func testPolicyPrompt(t *testing.T, bins policyBins) {
	p := newPolicyEnv(t, bins, promptPolicy)
	const key = "[e2e:policy-prompt]"
	p.Model.SetScript(fakeclaude.Script{key: {fakeclaude.Reply(fakeclaude.Text("Here is everything about it."))}})
	res, err := p.RunContext(context.Background(), key+" tell me about project nightingale")
	envs := p.envelopes()
	if n := len(turnRequests(p.Model.Requests(), key)); n != 0 {
		p.dump(envs)
		t.Fatalf("the blocked prompt reached the model (%d requests); result %q", n, res.Text)
	}
	const reason = "Prompts about project nightingale are not allowed here."
	if err != nil || !strings.Contains(res.Text, reason) {
		p.dump(envs)
		t.Fatalf("the run does not say why it ended (%v): result %q, stderr %q", err, res.Text, res.Stderr)
	}
	ups := find(envs, "UserPromptSubmit", nil)
	if len(ups) != 1 {
		p.dump(envs)
		t.Fatalf("%d UserPromptSubmit envelopes", len(ups))
	}
	checkAudit(t, ups[0], decision.ActionBlock, "no-secret-project", true)
	if len(find(envs, "Stop", nil)) != 0 || len(find(envs, "PreToolUse", nil)) != 0 {
		p.dump(envs)
		t.Fatal("the blocked prompt started a turn")
	}
}

const stopPolicy = `rules:
  - id: one-more-check
    events: [Stop]
    action: block
    reason: Before stopping, state the result in one line.
`

// testPolicyStop: a Stop block makes the agent continue exactly once: the
// second Stop carries stop_hook_active, and the rule is then recorded but
// not enforced.
func testPolicyStop(t *testing.T, bins policyBins) {
	p := newPolicyEnv(t, bins, stopPolicy)
	const key = "[e2e:policy-stop]"
	p.Model.SetScript(fakeclaude.Script{key: {
		fakeclaude.Reply(fakeclaude.Text("First answer.")),
		fakeclaude.Reply(fakeclaude.Text("Result: all good.")),
		fakeclaude.Reply(fakeclaude.Text("A third answer must never be asked for.")),
	}})
	res := p.Run(key + " check everything")
	envs := p.envelopes()
	reqs := turnRequests(p.Model.Requests(), key)
	if len(reqs) != 2 || res.Text != "Result: all good." {
		p.dump(envs)
		t.Fatalf("%d model turns, result %q; want 2 turns ending with the second answer", len(reqs), res.Text)
	}
	const reason = "Before stopping, state the result in one line."
	if !strings.Contains(reqs[1].LastUserText(), reason) {
		t.Fatalf("the model's second request does not carry the reason: %q", reqs[1].LastUserText())
	}
	stops := find(envs, "Stop", nil)
	if len(stops) != 2 {
		p.dump(envs)
		t.Fatalf("%d Stop events, want 2", len(stops))
	}
	if active, _ := stops[0].payload["stop_hook_active"].(bool); active {
		t.Fatalf("first Stop has stop_hook_active: %s", stops[0])
	}
	checkAudit(t, stops[0], decision.ActionBlock, "one-more-check", true)
	if active, _ := stops[1].payload["stop_hook_active"].(bool); !active {
		t.Fatalf("second Stop lacks stop_hook_active: %s", stops[1])
	}
	checkAudit(t, stops[1], decision.ActionBlock, "one-more-check", false)
}

const quotaPolicy = `rules:
  - id: two-shells
    tool: Bash
    quota: {limit: 2, per: [session]}
    action: deny
    reason: Two shell commands per session; ask the user to continue.
`

// testPolicyQuota: a quota of two Bash calls per session denies the third.
func testPolicyQuota(t *testing.T, bins policyBins) {
	p := newPolicyEnv(t, bins, quotaPolicy)
	const key = "[e2e:policy-quota]"
	touch := func(n int) fakeclaude.Turn {
		return fakeclaude.Reply(fakeclaude.ToolUse("Bash", input{"command": fmt.Sprintf("touch q%d && echo touched %d", n, n), "description": "Touch"}))
	}
	p.Model.SetScript(fakeclaude.Script{key: {touch(1), touch(2), touch(3), fakeclaude.Reply(fakeclaude.Text("Out of shells."))}})
	p.Run(key + " touch three files")
	envs := p.envelopes()
	reqs := turnRequests(p.Model.Requests(), key)
	for n, want := range []bool{true, true, false} {
		if got := exists(filepath.Join(p.Project, fmt.Sprintf("q%d", n+1))); got != want {
			p.dump(envs)
			t.Fatalf("q%d exists: %v, want %v", n+1, got, want)
		}
	}
	if len(reqs) != 4 {
		p.dump(envs)
		t.Fatalf("%d model turns, want 4", len(reqs))
	}
	var ids []string
	for _, q := range reqs[:3] {
		ids = append(ids, q.Reply[0].ID)
	}
	if res := resultOf(t, reqs, ids[2]); !strings.Contains(res.ResultText(), "Two shell commands per session") {
		t.Fatalf("the model saw %q for the third call", res.ResultText())
	}
	for i, id := range ids {
		pre := find(envs, "PreToolUse", func(ev event) bool { return ev.str("tool_use_id") == id })
		if len(pre) != 1 {
			t.Fatalf("%d PreToolUse envelopes for call %d", len(pre), i+1)
		}
		if i < 2 && pre[0].audit != nil {
			t.Fatalf("call %d within the quota was decided: %s", i+1, pre[0])
		}
		if i == 2 {
			checkAudit(t, pre[0], decision.ActionDeny, "two-shells", true)
		}
	}
}

const killPolicy = `rules:
  - id: kill-switch
    tool: Bash
    when: 'tool_input.command contains "deploy"'
    action: stop
    reason: Deploys are frozen; the run stops here.
`

// testPolicyStopRun: action stop on PreToolUse ends the run without running
// the call. Claude Code runs a call answered with continue:false alone, so
// the engine denies the call, with continue:false. 2.1.197 ignores
// continue:false next to a deny, so the engine also carries the stop to
// the PostToolBatch that follows, which ends the run; a newer client ends
// the run at the deny, and sends no PostToolBatch.
func testPolicyStopRun(t *testing.T, bins policyBins) {
	p := newPolicyEnv(t, bins, killPolicy)
	const key, resume = "[e2e:policy-kill]", "[e2e:policy-kill-resume] go on"
	// After the stop, only a resume of the session asks the model again:
	// it runs one harmless command and ends. The clients count the turns
	// of a stopped run differently, so the turns answer by content.
	after := func(r *fakeclaude.Request) []fakeclaude.Block {
		switch all := r.AllText(); {
		case !strings.Contains(all, resume):
			return []fakeclaude.Block{fakeclaude.Text("The model must not be asked again.")}
		case !strings.Contains(all, "touch resumed"):
			return []fakeclaude.Block{fakeclaude.ToolUse("Bash", input{"command": "touch resumed && echo resumed", "description": "Resume"})}
		}
		return []fakeclaude.Block{fakeclaude.Text("Resumed after the stop.")}
	}
	p.Model.SetScript(fakeclaude.Script{key: {
		fakeclaude.Reply(fakeclaude.ToolUse("Bash", input{"command": "touch deployed # deploy", "description": "Deploy"})),
		after, after, after, after,
	}})
	res, err := p.RunContext(context.Background(), key+" deploy it")
	envs := p.envelopes()
	reqs := turnRequests(p.Model.Requests(), key)
	if err != nil || exists(filepath.Join(p.Project, "deployed")) || len(reqs) != 1 {
		p.dump(envs)
		t.Fatalf("run error %v, deployed %v, %d model turns; want no error, no deploy, 1 turn", err,
			exists(filepath.Join(p.Project, "deployed")), len(reqs))
	}
	if res.Text == "The model must not be asked again." {
		t.Fatalf("the run went on: %s", res.JSON)
	}
	pre := find(envs, "PreToolUse", nil)
	if len(pre) != 1 {
		p.dump(envs)
		t.Fatalf("%d PreToolUse envelopes", len(pre))
	}
	checkAudit(t, pre[0], decision.ActionDeny, "kill-switch", true)
	if r := pre[0].audit.Rules; len(r) != 1 || r[0].Action != decision.ActionStop || !r[0].Enforced {
		t.Fatalf("the deny does not record the enforced stop: %s", pre[0])
	}
	batch := find(envs, "PostToolBatch", nil)
	if bins.client.StopsAtDeny() {
		if len(batch) != 0 || len(find(envs, "Stop", nil)) != 0 {
			p.dump(envs)
			t.Fatalf("the run went on after the deny: %d PostToolBatch, Stop %v", len(batch), find(envs, "Stop", nil))
		}
	} else {
		if len(batch) != 1 {
			p.dump(envs)
			t.Fatalf("%d PostToolBatch envelopes", len(batch))
		}
		checkAudit(t, batch[0], decision.ActionStop, "kill-switch", true)
		if batch[0].audit.Reason != "Deploys are frozen; the run stops here." {
			t.Fatalf("stop reason %q", batch[0].audit.Reason)
		}
	}

	// The stop ended its own run only: a resume of the session runs its
	// command and goes on to its answer.
	if again := p.Resume(res.SessionID, resume); again.Text != "Resumed after the stop." || !exists(filepath.Join(p.Project, "resumed")) {
		p.dump(p.envelopes())
		t.Fatalf("the resumed run: result %q, its command ran: %v", again.Text, exists(filepath.Join(p.Project, "resumed")))
	}
	if d := decided(p.envelopes()); len(d) != 0 {
		t.Fatalf("the resumed run was decided: %v", d)
	}
}

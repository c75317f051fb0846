package toolhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/decision"
	"github.com/hookwatch/hookwatch/policy"
)

func writePolicy(t *testing.T, yaml string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(p, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestDecisionsMergeAsThePolicyEngine checks, over random rule lists, that
// hooks answering what rules answer reach the very decision the policy
// engine reaches for the same rules, and that a registry loaded with those
// rules does too.
func TestDecisionsMergeAsThePolicyEngine(t *testing.T) {
	verdicts := []decision.Verdict{decision.Allow, decision.Ask, decision.Defer, decision.Deny}
	rng := rand.New(rand.NewPCG(1, 18))
	for round := range 200 {
		n := 1 + rng.IntN(6)
		var yaml strings.Builder
		yaml.WriteString("version: 1\nrules:\n")
		var hooks Registry
		var want []decision.Decision
		for i := range n {
			v := verdicts[rng.IntN(len(verdicts))]
			reason := fmt.Sprintf("rule %d says %s", i, v)
			fmt.Fprintf(&yaml, "  - id: r%d\n    tool: Bash\n    action: %s\n    reason: %s\n", i, v, reason)
			d := decision.Decision{Verdict: v, Reasons: []string{reason}}
			want = append(want, d)
			hooks.Pre("Bash", func(context.Context, *Call) PreResult { return PreResult{Decision: d} })
		}
		set, err := policy.Load(writePolicy(t, yaml.String()))
		if err != nil {
			t.Fatal(err)
		}
		var fromPolicy Registry
		fromPolicy.UsePolicy(set, nil)

		input := map[string]any{"command": "ls"}
		engine := set.Evaluate(context.Background(), map[string]any{
			"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": input, "session_id": "s",
		}, nil)
		merged := decision.Merge(want...)
		if engine.Verdict != merged.Verdict || !reflect.DeepEqual(engine.Reasons, merged.Reasons) {
			t.Fatalf("round %d: the engine says %s %q, decision.Merge %s %q", round, engine.Verdict, engine.Reasons, merged.Verdict, merged.Reasons)
		}
		for _, r := range []*Registry{&hooks, &fromPolicy} {
			rec := &memRecorder{}
			x := &Executor{Registry: r, Recorder: rec, SessionID: "s", Tools: map[string]Tool{"Bash": echo}}
			x.Call(context.Background(), "Bash", input)
			got := rec.calls[0].Decision
			if got == nil {
				t.Fatalf("round %d: no decision recorded", round)
			}
			if got.Verdict != engine.Verdict || !reflect.DeepEqual(got.Reasons, engine.Reasons) {
				t.Fatalf("round %d: the executor says %s %q, the engine %s %q", round, got.Verdict, got.Reasons, engine.Verdict, engine.Reasons)
			}
		}
	}
}

func TestLoadPolicy(t *testing.T) {
	p := writePolicy(t, `version: 1
rules:
  - id: refund-cap
    tool: process_refund
    when: 'tool_input.amount > 500'
    action: deny
    reason: refunds above 500 need escalate_to_human
  - id: dry
    tool: Bash
    action: allow
    update_input:
      command: 'tool_input.command + " -n"'
  - id: utc
    events: PostToolUse
    tool: Read
    transform: [timestamps]
  - id: explorer-no-bash
    tool: Bash
    agent_type: Explore
    action: deny
    reason: explorers do not run commands
`)
	var r Registry
	if err := r.LoadPolicy(p); err != nil {
		t.Fatal(err)
	}
	x := &Executor{Registry: &r, Tools: map[string]Tool{
		"process_refund": func(context.Context, map[string]any) (any, error) { return "refunded", nil },
		"Bash":           echo,
		"Read":           func(context.Context, map[string]any) (any, error) { return "at 2024-01-02T04:05:06+01:00", nil },
	}}
	ctx := context.Background()

	f := func(ctx context.Context, tool string, in map[string]any, wantOut any, wantErr string) {
		t.Helper()
		out, err := x.Call(ctx, tool, in)
		if fmt.Sprint(err) != wantErr || !reflect.DeepEqual(out, wantOut) {
			t.Fatalf("%s %v: got %v, %v; want %v, %s", tool, in, out, err, wantOut, wantErr)
		}
	}
	f(ctx, "process_refund", map[string]any{"amount": 120}, "refunded", "<nil>")
	f(ctx, "process_refund", map[string]any{"amount": 501.5}, nil, "tool process_refund: deny: refunds above 500 need escalate_to_human")
	f(ctx, "Bash", map[string]any{"command": "make"}, map[string]any{"command": "make -n"}, "<nil>")
	f(ctx, "Read", map[string]any{}, "at 2024-01-02T03:05:06Z", "<nil>")
	f(SpawnAgent(ctx, "a1", "Explore"), "Bash", map[string]any{"command": "ls"}, nil, "tool Bash: deny: explorers do not run commands")

	var r2 Registry
	err := r2.LoadPolicy(filepath.Join(t.TempDir(), "missing.yaml"))
	if err == nil || !errors.Is(err, os.ErrNotExist) && !strings.Contains(err.Error(), "missing.yaml") {
		t.Fatalf("a missing file: %v", err)
	}
}

// refundCapPolicy denies refunds above 500.
const refundCapPolicy = `version: 1
rules:
  - id: refund-cap
    tool: process_refund
    when: 'tool_input.amount > 500'
    action: deny
    reason: Refunds above 500 must go through escalate_to_human.
`

// TestDoneContext checks that a call whose context is done does not run,
// and that a caller's deadline passing while the hooks run does not turn
// the policy off.
func TestDoneContext(t *testing.T) {
	var r Registry
	if err := r.LoadPolicy(writePolicy(t, refundCapPolicy)); err != nil {
		t.Fatal(err)
	}
	ran := false
	rec := &memRecorder{}
	x := &Executor{Registry: &r, Recorder: rec, SessionID: "s", Tools: map[string]Tool{
		"process_refund": func(context.Context, map[string]any) (any, error) { ran = true; return "refunded", nil },
	}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel()
	<-ctx.Done()
	for _, amount := range []float64{800, 10} {
		_, err := x.Call(ctx, "process_refund", map[string]any{"amount": amount})
		if !errors.Is(err, context.DeadlineExceeded) || ran {
			t.Fatalf("amount %v, context past its deadline: error %v, tool ran %v; want the deadline's error, no run", amount, err, ran)
		}
		if c := rec.calls[len(rec.calls)-1]; c.Status != "interrupted" {
			t.Fatalf("recorded status %q, want interrupted", c.Status)
		}
	}

	// The deadline passes while the hooks run: the rules still answer.
	var late Registry
	lateCtx, lateCancel := context.WithCancel(context.Background())
	late.Pre("*", func(context.Context, *Call) PreResult { lateCancel(); return PreResult{} })
	if err := late.LoadPolicy(writePolicy(t, refundCapPolicy)); err != nil {
		t.Fatal(err)
	}
	x.Registry = &late
	_, err := x.Call(lateCtx, "process_refund", map[string]any{"amount": 800.0})
	var denied *DeniedError
	if !errors.As(err, &denied) || ran {
		t.Fatalf("cancelled while the hooks ran: error %v, tool ran %v; want the rule's deny", err, ran)
	}
	c := rec.calls[len(rec.calls)-1]
	if c.Status != "denied" || c.Decision == nil || strings.Contains(fmt.Sprint(c.Decision.SystemMessages), "invalid") {
		t.Fatalf("recorded %s %+v, want a denied call and no word of an invalid policy", c.Status, c.Decision)
	}
	// Allowed by the rules, but the context is done: the tool does not start.
	_, err = x.Call(lateCtx, "process_refund", map[string]any{"amount": 10.0})
	if !errors.Is(err, context.Canceled) || ran {
		t.Fatalf("allowed call, cancelled context: error %v, ran %v", err, ran)
	}
}

// TestPolicyAnswersAsTheHook checks that a project's policy file loaded
// with LoadPolicy answers calls as the hook answers Claude Code's calls of
// the same tools and inputs from the project's directory: relative globs
// from the project, cwd the agent's directory, and permission_mode and
// transcript_path the Executor's, set or not.
func TestPolicyAnswersAsTheHook(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".hookwatch"), 0o700); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, ".hookwatch", "policy.yaml")
	if err := os.WriteFile(file, []byte(`rules:
  - id: no-go-for-designers
    tool: Write
    when: 'glob("src/**/*.go", tool_input.file_path)'
    action: deny
    reason: designers do not write Go
  - id: no-destruction-outside-build
    tool: Bash|exec_command
    when: command.effect == "destructive" and not all(command.writes, {under(#, cwd + "/build")})
    action: deny
    reason: This command deletes or overwrites data outside build/.
  - id: no-commands-unchecked
    tool: Bash
    when: permission_mode == "bypassPermissions"
    action: deny
    reason: Commands are checked in this project.
  - id: docs-with-a-record
    tool: Write
    when: 'glob("docs/**", tool_input.file_path) and transcript_path == ""'
    action: deny
    reason: Writes to docs/ keep their conversation.
`), 0o600); err != nil {
		t.Fatal(err)
	}
	var r Registry
	if err := r.LoadPolicy(file); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	calls := []struct {
		tool  string
		input map[string]any
	}{
		{"Write", map[string]any{"file_path": filepath.Join(dir, "src/a/b.go"), "content": "x"}},
		{"Write", map[string]any{"file_path": "src/a/b.go", "content": "x"}},
		{"Write", map[string]any{"file_path": filepath.Join(dir, "docs/a.md"), "content": "x"}},
		{"Bash", map[string]any{"command": "rm -rf build/out"}},
		{"Bash", map[string]any{"command": "rm -rf " + filepath.Join(dir, "build/out")}},
		{"Bash", map[string]any{"command": "rm -rf src"}},
		{"Bash", map[string]any{"command": "ls"}},
	}
	for _, session := range []struct {
		mode, transcript string
		denials          int
	}{
		{"", "", 4},
		{"default", filepath.Join(dir, "conversation.jsonl"), 3},
		{"bypassPermissions", filepath.Join(dir, "conversation.jsonl"), 6},
		{"bypassPermissions", "", 7},
	} {
		x := &Executor{Registry: &r, SessionID: "s", Dir: dir, PermissionMode: session.mode, TranscriptPath: session.transcript,
			Tools: map[string]Tool{"Write": echo, "Bash": echo}}
		denials := 0
		for _, c := range calls {
			p := map[string]any{
				"hook_event_name": "PreToolUse", "session_id": "s", "cwd": dir,
				"tool_name": c.tool, "tool_input": c.input, "tool_use_id": "toolu_1",
			}
			// As Claude Code sends them: with a value, or not at all.
			if session.mode != "" {
				p["permission_mode"] = session.mode
			}
			if session.transcript != "" {
				p["transcript_path"] = session.transcript
			}
			data, _ := json.Marshal(p)
			stdout, _, _, _ := policy.Answer(context.Background(), home, dir, "", data)
			hookDenies := strings.Contains(string(stdout), `"permissionDecision":"deny"`)
			_, err := x.Call(context.Background(), c.tool, c.input)
			var denied *DeniedError
			if got := errors.As(err, &denied); got != hookDenies {
				t.Errorf("mode %q, transcript %q: %s %v: the executor denies: %v (%v), the hook: %v (%s)",
					session.mode, session.transcript, c.tool, c.input, got, err, hookDenies, stdout)
			}
			if hookDenies {
				denials++
			}
		}
		if denials != session.denials {
			t.Errorf("mode %q, transcript %q: the hook denied %d calls, want %d", session.mode, session.transcript, denials, session.denials)
		}
	}
}

// TestPolicySourceUserFile: the user's own policy file, under
// $HOOKWATCH_HOME, has a project file's shape by default
// (~/.hookwatch/policy.yaml) and is still loaded as the user's.
func TestPolicySourceUserFile(t *testing.T) {
	home := filepath.Join(t.TempDir(), ".hookwatch")
	t.Setenv("HOOKWATCH_HOME", home)
	user := filepath.Join(home, "policy.yaml")
	if s := policySource(user); s.Scope != policy.ScopeUser {
		t.Errorf("%s: scope %v, want user", user, s.Scope)
	}
	proj := filepath.Join(t.TempDir(), "proj", ".hookwatch", "policy.yaml")
	if s := policySource(proj); s.Scope != policy.ScopeProject {
		t.Errorf("%s: scope %v, want project", proj, s.Scope)
	}
}

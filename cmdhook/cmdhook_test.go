package cmdhook

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hookwatch/hookwatch/decision"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/hook"
)

// guard denies Bash commands that write with a shell redirection.
func guard(_ context.Context, p *event.Payload) (decision.Decision, error) {
	var in struct {
		Command string `json:"command"`
	}
	tool, err := ToolInput(p, &in)
	if p.Name() != event.PreToolUse || tool != "Bash" || err != nil {
		return decision.Decision{}, err
	}
	if strings.Contains(in.Command, ">") && !strings.Contains(in.Command, "2>&1") {
		return decision.Decision{Verdict: decision.Deny, Reasons: []string{"no redirections: " + in.Command}}, nil
	}
	return decision.Decision{}, nil
}

func TestReplayRecordedPayloads(t *testing.T) {
	files, _ := filepath.Glob("../testdata/payloads/*.jsonl")
	if len(files) == 0 {
		t.Fatal("no recorded payloads in testdata/payloads")
	}
	var denied []string
	for _, f := range files {
		results, err := ReplayFile(context.Background(), guard, f)
		if err != nil {
			t.Fatal(err)
		}
		if len(results) == 0 {
			t.Fatalf("%s: no payloads replayed", f)
		}
		for _, r := range results {
			if r.ExitCode != 0 || r.Err != nil {
				t.Fatalf("%s:%d: exit %d, %v", f, r.Line, r.ExitCode, r.Err)
			}
			if len(r.Stdout) == 0 {
				continue
			}
			var out struct {
				HookSpecificOutput struct {
					HookEventName            string `json:"hookEventName"`
					PermissionDecision       string `json:"permissionDecision"`
					PermissionDecisionReason string `json:"permissionDecisionReason"`
				} `json:"hookSpecificOutput"`
			}
			if err := json.Unmarshal(r.Stdout, &out); err != nil {
				t.Fatalf("%s:%d: stdout %q is not JSON: %v", f, r.Line, r.Stdout, err)
			}
			h := out.HookSpecificOutput
			if r.Event != event.PreToolUse || h.HookEventName != event.PreToolUse || h.PermissionDecision != "deny" ||
				!strings.HasPrefix(h.PermissionDecisionReason, "no redirections: ") {
				t.Fatalf("%s:%d: %s answered %s", f, r.Line, r.Event, r.Stdout)
			}
			denied = append(denied, filepath.Base(f)+": "+strings.TrimPrefix(h.PermissionDecisionReason, "no redirections: "))
		}
	}
	if len(denied) != 2 {
		t.Fatalf("denied %q, want 2", denied)
	}
	// claude-code-2.1.332.jsonl records "echo hello > notes.txt" once,
	// codex-0.169.jsonl (wrapped) "echo hello > hi.txt && ls".
	for _, want := range []string{"claude-code-2.1.332.jsonl: echo hello > notes.txt", "codex-0.169.jsonl: echo hello > hi.txt && ls"} {
		if !slices.Contains(denied, want) {
			t.Fatalf("denied %q, want %q among them", denied, want)
		}
	}
}

func TestFailuresAnswerNothing(t *testing.T) {
	const pre = `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`
	f := func(h Handler, in, wantErr string) {
		t.Helper()
		var stdout, stderr strings.Builder
		code := Run(context.Background(), h, strings.NewReader(in), &stdout, &stderr)
		if code != 0 || stdout.Len() != 0 || !strings.Contains(stderr.String(), wantErr) {
			t.Fatalf("exit %d, stdout %q, stderr %q; want 0, nothing, %q", code, stdout.String(), stderr.String(), wantErr)
		}
	}
	f(guard, `[1,2]`, "cannot decode the hook payload")
	f(guard, `{"hook_event_name":`, "cannot decode the hook payload")
	f(func(context.Context, *event.Payload) (decision.Decision, error) {
		return decision.Decision{Verdict: decision.Deny}, errors.New("database down")
	}, pre, "hook handler failed: database down")
	f(func(context.Context, *event.Payload) (decision.Decision, error) { panic("boom") }, pre, "hook handler panicked: boom")
	f(guard, strings.Repeat(" ", 9<<20), "larger than")
	f(guard, `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":5}}`, "hook handler failed: cannot decode the input of Bash")
}

// TestReplayUnwraps checks that every line of the corpus reaches the
// handler as the payload a hook got, wrapped (codex, public captures) or
// not, and that a record no hook was sent is not answered.
func TestReplayUnwraps(t *testing.T) {
	files, _ := filepath.Glob("../testdata/payloads/*.jsonl")
	for _, f := range files {
		calls := 0
		results, err := ReplayFile(context.Background(), func(_ context.Context, p *event.Payload) (decision.Decision, error) {
			calls++
			return decision.Decision{}, nil
		}, f)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range results {
			if r.Event == "" || r.Err != nil {
				t.Fatalf("%s:%d: event %q, %v", f, r.Line, r.Event, r.Err)
			}
		}
		if calls != len(results) {
			t.Fatalf("%s: %d payloads answered of %d", f, calls, len(results))
		}
	}
	in := `{"kind":"hook","received_at":"2026-11-21T10:00:00Z","payload":{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"echo hi > x"}}}
{"kind":"statusline","payload":{"hook_event_name":"Status"}}
`
	results, err := Replay(context.Background(), guard, strings.NewReader(in))
	if err != nil || len(results) != 2 {
		t.Fatalf("%d results, %v", len(results), err)
	}
	if r := results[0]; r.Event != event.PreToolUse || !strings.Contains(string(r.Stdout), `"deny"`) || strings.HasPrefix(string(r.Payload), `{"kind"`) {
		t.Fatalf("an envelope's payload: %s answered %s (payload %s)", r.Event, r.Stdout, r.Payload)
	}
	if r := results[1]; r.Err == nil || r.Stdout != nil {
		t.Fatalf("a statusline record: answered %s, %v", r.Stdout, r.Err)
	}

	// A line longer than a hook reads is not answered, and the lines
	// after it are.
	huge := `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"` + strings.Repeat("x", hook.MaxPayloadBytes) + `"}}`
	first := strings.SplitN(in, "\n", 2)[0]
	results, err = Replay(context.Background(), guard, strings.NewReader(huge+"\n"+first+"\n"))
	if err != nil || len(results) != 2 {
		t.Fatalf("a line past the hook's limit, then one within: %d results, %v", len(results), err)
	}
	if r := results[0]; r.Line != 1 || r.Err == nil || !strings.Contains(r.Err.Error(), "not answered") || r.Stdout != nil || r.Payload != nil {
		t.Errorf("the line past the limit: line %d, answered %q, payload of %d bytes, %v", r.Line, r.Stdout, len(r.Payload), r.Err)
	}
	if r := results[1]; r.Line != 2 || !strings.Contains(string(r.Stdout), `"deny"`) {
		t.Errorf("the line after it: line %d answered %s, %v", r.Line, r.Stdout, r.Err)
	}
}

package policy

import (
	"context"
	"strings"
	"testing"
)

// TestCutShortIsNotInvalid checks that an evaluation its context ended
// says so, without calling a valid policy invalid.
func TestCutShortIsNotInvalid(t *testing.T) {
	set := LoadSources()
	set.order = map[string][]*Rule{"PreToolUse": {{ID: "r"}}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	d := set.Evaluate(ctx, map[string]any{"hook_event_name": "PreToolUse", "tool_name": "Bash"}, nil)
	msg := strings.Join(d.SystemMessages, "\n")
	if !strings.Contains(msg, "cut short") || strings.Contains(msg, "invalid") {
		t.Fatalf("system messages %q, want a cut-short notice that calls nothing invalid", msg)
	}
}

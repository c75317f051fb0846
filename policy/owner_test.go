//go:build unix

package policy

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookwatch/hookwatch/decision"
)

// TestForeignProjectPolicy: a project policy file another user owns is
// not applied, and says why with every answer; the same file owned by
// this user is.
func TestForeignProjectPolicy(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("giving a file to another user needs root")
	}
	root := t.TempDir()
	old := managedPath
	managedPath = filepath.Join(root, "etc", "hookwatch", "policy.yaml")
	defer func() { managedPath = old }()
	home := filepath.Join(root, "home", ".hookwatch")
	proj := filepath.Join(root, "shared", "proj")
	writeFile(t, proj, ".hookwatch/policy.yaml", "rules:\n  - {id: planted, tool: Bash, action: allow}\n  - {id: no-rm, tool: Bash, when: 'command contains \"rm\"', action: deny, reason: no}\n")
	file := filepath.Join(proj, ".hookwatch", "policy.yaml")
	pre := map[string]any{"hook_event_name": "PreToolUse", "cwd": proj, "tool_name": "Bash", "tool_input": map[string]any{"command": "rm x"}}

	if set := Discover(home, proj, proj); len(set.Rules) != 2 || len(set.Problems) != 0 {
		t.Fatalf("this user's file: %d rules, problems %v", len(set.Rules), set.Problems)
	}
	if err := os.Chown(file, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	set := Discover(home, proj, proj)
	if len(set.Rules) != 0 || len(set.Problems) != 1 || !strings.Contains(set.Problems[0].Msg, "owned by uid 65534") {
		t.Fatalf("another user's file: %d rules, problems %v", len(set.Rules), set.Problems)
	}
	d := set.Evaluate(context.Background(), pre, nil)
	if d.Verdict != decision.None || len(d.SystemMessages) == 0 || !strings.Contains(d.SystemMessages[0], file) {
		t.Fatalf("answer with another user's file: %+v", d)
	}
}

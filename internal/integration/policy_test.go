package integration

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/internal/testbin"
)

const denyRmRf = `rules:
  - id: no-rm-rf
    tool: Bash
    when: 'tool_input.command contains "rm -rf"'
    action: deny
    reason: recursive deletes are not allowed
`

// TestLeanHookPolicies: hookwatch-hook links no policy engine, yet answers
// exactly like the full binary — through the collector attached to its
// home when one runs (on the home's socket), through the hookwatch binary beside it when none
// does — and the stored event carries the decision either way.
func TestLeanHookPolicies(t *testing.T) {
	hookBin := testbin.Build(t, "./cmd/hookwatch-hook")
	serveBin := testbin.Build(t, "./cmd/hookwatch")
	payload := `{"session_id":"policy-lean","cwd":"/tmp","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"rm -rf build"},"tool_use_id":"toolu_1"}`
	const want = `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"recursive deletes are not allowed"}}`

	// Alone in its directory, the hook has no full binary to fall back
	// on: an answer can only come from the collector.
	lone := filepath.Join(t.TempDir(), "hookwatch-hook")
	if b, err := os.ReadFile(hookBin); err != nil || os.WriteFile(lone, b, 0o755) != nil {
		t.Fatalf("cannot copy the hook: %v", err)
	}
	run := func(t *testing.T, bin, home, url string) string {
		t.Helper()
		cmd := exec.Command(bin)
		cmd.Env = []string{"HOOKWATCH_HOME=" + home, "HOOKWATCH_URL=" + url, "HOOKWATCH_AUTOSTART=0"}
		cmd.Stdin = strings.NewReader(payload)
		var out bytes.Buffer
		cmd.Stdout = &out
		if err := cmd.Run(); err != nil {
			t.Fatalf("hook: %v", err)
		}
		return strings.TrimSpace(out.String())
	}

	for _, attached := range []bool{true, false} {
		name := map[bool]string{true: "attached collector", false: "full binary"}[attached]
		t.Run(name, func(t *testing.T) {
			home := t.TempDir()
			if err := os.WriteFile(filepath.Join(home, "policy.yaml"), []byte(denyRmRf), 0o600); err != nil {
				t.Fatal(err)
			}
			addr := testbin.FreeAddr(t)
			var c *testbin.Collector
			bin := hookBin
			if attached {
				c = testbin.StartCollector(t, serveBin, home, addr)
				bin = lone
			}
			if got := run(t, bin, home, "http://"+addr); !strings.Contains(got, `"permissionDecision":"deny"`) || !strings.Contains(got, "recursive deletes are not allowed") {
				t.Fatalf("hook answered %q, want %s", got, want)
			}
			if !attached {
				c = testbin.StartCollector(t, serveBin, home, addr) // drains what was spooled
			}
			var decision string
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
				if evs := sessionEvents(t, c.URL(), "policy-lean"); len(evs) > 0 {
					decision = string(evs[0].Envelope.Decision)
					break
				}
			}
			if !strings.Contains(decision, `"no-rm-rf"`) || !strings.Contains(decision, `"action":"deny"`) {
				t.Errorf("stored event lacks the decision: %q", decision)
			}
		})
	}
}

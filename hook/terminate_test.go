//go:build unix

package hook_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/internal/testbin"
)

// TestTerminatedRunStoresEvent: the real hook binary sent SIGTERM while it
// posts its event, as Claude Code ends its last turn's hook as it exits,
// still stores the event (here in the spool: the collector accepts the
// connection and never answers), exits 0 and, with no policy to answer,
// says nothing.
func TestTerminatedRunStoresEvent(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the hook binary")
	}
	bin := testbin.Build(t, "./cmd/hookwatch-hook")
	url, accepted := hungCollector(t)
	home := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin)
	cmd.Env = append(cmd.Environ(), "HOOKWATCH_HOME="+home, "HOOKWATCH_URL="+url, "HOOKWATCH_HOOK_BUDGET=500ms")
	cmd.Stdin = bytes.NewReader(preToolUse(t))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-accepted:
	case <-ctx.Done():
		t.Fatal("the hook never posted")
	}
	// The payload is read: the post comes after it.
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil || stdout.Len() != 0 || stderr.Len() != 0 {
		t.Fatalf("after SIGTERM: %v, stdout %q, stderr %q; want exit 0 and nothing", err, stdout.String(), stderr.String())
	}
	spooled, err := os.ReadFile(filepath.Join(home, "spool", "current.jsonl"))
	if err != nil {
		t.Fatalf("the event is not in the spool: %v", err)
	}
	if !bytes.Contains(spooled, []byte(`"hook_event_name":"PreToolUse"`)) || !bytes.Contains(spooled, []byte(`"tool_use_id"`)) {
		t.Errorf("the spool holds %q, want the PreToolUse event", spooled)
	}
}

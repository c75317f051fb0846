package hook_test

import (
	"bytes"
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/hook"
	"github.com/hookwatch/hookwatch/internal/bench"
	"github.com/hookwatch/hookwatch/internal/testbin"
)

// runHookOnPipe runs the real hook binary with a real pipe as stdin, fed
// by feed (which gets the write end and closes it, or not), and returns how
// long the hook took, its peak RSS and its home. It wants exit 0 and
// nothing on stdout.
func runHookOnPipe(t *testing.T, budget string, feed func(w *os.File)) (took time.Duration, maxRSS int64, home string) {
	t.Helper()
	bin := buildHook(t)
	dir := testbin.Dir(t)
	wrapOnce.Do(func() {
		wrap, wrapErr = bench.BuildRSSWrapper(context.Background(), "..", dir)
	})
	if wrapErr != nil {
		t.Fatal(wrapErr)
	}
	home = t.TempDir()
	env := []string{"HOOKWATCH_HOME=" + home, "HOOKWATCH_URL=" + testbin.DeadURL(t), "HOOKWATCH_AUTOSTART=0", "HOOKWATCH_HOOK_BUDGET=" + budget}
	m, err := bench.MeasureRSS(context.Background(), wrap, []string{bin}, env, feed, 20*time.Second)
	if err != nil {
		t.Fatalf("hook: %v", err)
	}
	if m.ExitCode != 0 || len(m.Stdout) != 0 {
		t.Fatalf("hook: exit %d, stdout %q; want exit 0 and nothing written", m.ExitCode, m.Stdout)
	}
	return m.Took, m.PeakRSS, home
}

var (
	wrapOnce sync.Once
	wrap     string
	wrapErr  error
)

// TestStdinLeftOpen: a stdin that stays open costs the hook the wait for
// its payload (five budgets), not the time until the writer closes it;
// nothing is recorded of the payload that never ended, and the loss is
// logged.
func TestStdinLeftOpen(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the hook binary")
	}
	took, _, home := runHookOnPipe(t, "300ms", func(w *os.File) {
		w.Write(preToolUse(t)) // the whole payload, but no end of file
		time.Sleep(15 * time.Second)
	})
	if took < 1500*time.Millisecond || took > 4*time.Second {
		t.Errorf("with stdin left open the hook took %v, want about 1.5s (budget 300ms)", took)
	}
	lines := logLines(t, home)
	if len(lines) != 1 || !strings.Contains(lines[0], "still open when the wait for the payload ran out") {
		t.Errorf("hook.log: %q", lines)
	}
	if spooled, _ := os.ReadFile(home + "/spool/current.jsonl"); len(spooled) != 0 {
		t.Errorf("a payload cut short was spooled: %.200s", spooled)
	}
}

// TestStdinLate: a payload its writer is late to write, past the budget
// but within the wait for it (a client on a loaded machine), is recorded.
func TestStdinLate(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the hook binary")
	}
	_, _, home := runHookOnPipe(t, "300ms", func(w *os.File) {
		time.Sleep(800 * time.Millisecond)
		w.Write(preToolUse(t))
		w.Close()
	})
	if lines := logLines(t, home); len(lines) != 0 && strings.Contains(strings.Join(lines, "\n"), "still open") {
		t.Errorf("hook.log: %q", lines)
	}
	spooled, _ := os.ReadFile(home + "/spool/current.jsonl")
	if !bytes.Contains(spooled, []byte(`"PreToolUse"`)) {
		t.Errorf("the late payload was not recorded: spool %.300q, hook.log %q", spooled, logLines(t, home))
	}
}

// TestStdinBounded: whatever the size of stdin, the hook reads at most
// hook.MaxPayloadBytes of it, drains the rest within its budget, and stays
// under 64 MiB of memory; a payload just under the bound is recorded.
func TestStdinBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the hook binary")
	}
	const maxRSS = 64 << 20
	huge := func(w *os.File) {
		chunk := bytes.Repeat([]byte("x"), 1<<20)
		w.Write([]byte(`{"session_id":"s","hook_event_name":"PostToolUse","tool_response":"`))
		for range 300 {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
		w.Close()
	}
	took, rss, home := runHookOnPipe(t, "5s", huge)
	t.Logf("300 MB on stdin: %v, peak RSS %.1f MiB", took, float64(rss)/(1<<20))
	if rss > maxRSS {
		t.Errorf("300 MB on stdin: peak RSS %d MiB, want < 64", rss>>20)
	}
	if took > 5*time.Second {
		t.Errorf("300 MB on stdin: took %v, budget 5s", took)
	}
	if lines := logLines(t, home); len(lines) != 1 || !strings.Contains(lines[0], "more than the") {
		t.Errorf("hook.log: %q", lines)
	}

	// The largest payload the hook takes, a written file.
	content := strings.Repeat("y", hook.MaxPayloadBytes-1024)
	payload := `{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Write","tool_use_id":"toolu_1","cwd":"/tmp","tool_input":{"file_path":"/tmp/f","content":"` + content + `"}}`
	took, rss, home = runHookOnPipe(t, "5s", func(w *os.File) {
		w.Write([]byte(payload))
		w.Close()
	})
	t.Logf("a payload of %d bytes: %v, peak RSS %.1f MiB", len(payload), took, float64(rss)/(1<<20))
	if rss > maxRSS {
		t.Errorf("a payload of %d bytes: peak RSS %d MiB, want < 64", len(payload), rss>>20)
	}
	if took > 5*time.Second {
		t.Errorf("a payload of %d bytes: took %v, budget 5s", len(payload), took)
	}
	if spooled, err := os.ReadFile(home + "/spool/current.jsonl"); err != nil || !bytes.Contains(spooled, []byte(`"file_path":"/tmp/f"`)) {
		t.Errorf("the largest payload was not spooled: %v", err)
	}
}

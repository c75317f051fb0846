package integration

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/internal/testbin"
)

// TestAutostartOneCollector: 32 hook processes start at once with no
// collector running; exactly one collector is started, and every event
// reaches it.
func TestAutostartOneCollector(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a collector in the background")
	}
	hookBin := testbin.Build(t, "./cmd/hookwatch-hook")
	testbin.Build(t, "./cmd/hookwatch") // the hook starts the hookwatch beside it
	home := t.TempDir()
	addr := testbin.FreeAddr(t)
	testbin.StopCollectorsAt(t, addr)

	const n = 32
	cmds := make([]*exec.Cmd, n)
	for i := range cmds {
		payload := fmt.Sprintf(`{"session_id":"autostart","cwd":"/tmp","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"echo %d"},"tool_use_id":"toolu_%02d"}`, i, i)
		cmds[i] = exec.Command(hookBin)
		cmds[i].Env = []string{"HOOKWATCH_HOME=" + home, "HOOKWATCH_URL=http://" + addr}
		cmds[i].Stdin = strings.NewReader(payload)
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for _, c := range cmds {
		wg.Add(1)
		go func(c *exec.Cmd) {
			defer wg.Done()
			<-start
			var out bytes.Buffer
			c.Stdout = &out
			if err := c.Run(); err != nil || out.Len() > 0 {
				t.Errorf("hook: %v, stdout %q", err, out.String())
			}
		}(c)
	}
	close(start)
	wg.Wait()

	// Every event arrives: delivered, or spooled and drained by the
	// collector the hooks started.
	deadline := time.Now().Add(30 * time.Second)
	got := 0
	for time.Now().Before(deadline) {
		if got = countEvents(t, "http://"+addr, "autostart"); got == n {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if got != n {
		t.Fatalf("collector stored %d events, want %d; serve.log:\n%s", got, n, readFile(filepath.Join(home, "serve.log")))
	}
	if pids := testbin.CollectorPIDs(addr); len(pids) != 1 {
		t.Errorf("%d collectors running for %s, want exactly 1", len(pids), addr)
	}
	if log := readFile(filepath.Join(home, "serve.log")); strings.Count(log, "listening on") != 1 {
		t.Errorf("serve.log shows %d starts, want 1:\n%s", strings.Count(log, "listening on"), log)
	}
}

func countEvents(t *testing.T, base, session string) int {
	t.Helper()
	resp, err := http.Get(base + "/v1/sessions/" + session)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0
	}
	var s struct {
		EventCount int `json:"event_count"`
	}
	if err := jsonDecode(resp, &s); err != nil {
		t.Fatal(err)
	}
	return s.EventCount
}

func readFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

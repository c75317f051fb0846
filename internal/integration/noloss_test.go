// Package integration holds tests that run hookwatch's real processes
// together: the hook binary as agents start it, and the collector.
package integration

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/internal/testbin"
	"github.com/hookwatch/hookwatch/spool"
	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/sqlite"
)

// TestNoLossAcrossRestarts: 16 concurrent hook processes send 5,000 events
// while the collector is stopped and restarted twice; afterwards exactly
// 5,000 distinct events are stored, and the spool is empty with nothing
// dropped.
func TestNoLossAcrossRestarts(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 5,000 hook processes")
	}
	const (
		workers = 16
		total   = 5000
	)
	hookBin := testbin.Build(t, "./cmd/hookwatch-hook")
	serveBin := testbin.Build(t, "./cmd/hookwatch")
	home := t.TempDir()
	c := testbin.StartCollector(t, serveBin, home, "")

	var sent atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for {
				n := sent.Add(1)
				if n > total {
					return
				}
				payload := fmt.Sprintf(`{"session_id":"noloss-%02d","transcript_path":"/tmp/t.jsonl","cwd":"/tmp","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"echo %d"},"tool_use_id":"toolu_%06d"}`, w, n, n)
				cmd := exec.Command(hookBin)
				// No autostart: the test stops and starts the collector itself.
				cmd.Env = []string{"HOOKWATCH_HOME=" + home, "HOOKWATCH_URL=" + c.URL(), "HOOKWATCH_HOOK_BUDGET=2s", "HOOKWATCH_AUTOSTART=0"}
				cmd.Stdin = bytes.NewReader([]byte(payload))
				var out bytes.Buffer
				cmd.Stdout = &out
				if err := cmd.Run(); err != nil || out.Len() > 0 {
					errs <- fmt.Errorf("hook run %d: %v, stdout %q", n, err, out.String())
					return
				}
			}
		}(w)
	}
	// Stop and restart the collector twice while the hooks run.
	for _, at := range []int64{total / 3, 2 * total / 3} {
		for sent.Load() < at {
			time.Sleep(5 * time.Millisecond)
		}
		c.Stop(t)
		time.Sleep(300 * time.Millisecond) // hooks meanwhile spool
		c.Start(t)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	// The collector drains what was spooled; wait for the count to settle.
	var stored map[string]bool
	deadline := time.Now().Add(60 * time.Second)
	for {
		stored = storedIDs(t, c.URL(), workers)
		if len(stored) >= total || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if len(stored) != total {
		t.Fatalf("stored %d distinct events, want exactly %d", len(stored), total)
	}
	sp, err := spool.Open(filepath.Join(home, "spool"), spool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := sp.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if st.PendingBytes != 0 || st.Dropped != 0 || st.Corrupt != 0 {
		t.Errorf("spool after drain: %+v, want empty with nothing dropped or corrupt", st)
	}
	// The restarts must really have sent events through the spool, or this
	// test proved nothing about it.
	log, err := os.ReadFile(filepath.Join(home, "hook.log"))
	if err != nil {
		t.Fatalf("no hook.log: the collector restarts spooled nothing: %v", err)
	}
	spooled := strings.Count(string(log), "spooled")
	if spooled == 0 {
		t.Fatal("no event was spooled during the restarts")
	}
	t.Logf("5,000 events stored exactly once across two collector restarts; %d went through the spool", spooled)
}

// TestHTTPHooksSurviveACrash: every event of an http hook the collector
// answered is stored once, even when the collector is killed right after
// answering (it hands the events over through its spool rather than wait
// for their commit), once it is started again.
func TestHTTPHooksSurviveACrash(t *testing.T) {
	const total = 200
	serveBin := testbin.Build(t, "./cmd/hookwatch")
	home := t.TempDir()
	c := testbin.StartCollector(t, serveBin, home, "")
	for n := range total {
		payload := fmt.Sprintf(`{"session_id":"noloss-00","transcript_path":"/tmp/t.jsonl","cwd":"/tmp","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"echo %d"},"tool_use_id":"toolu_%06d"}`, n, n)
		res, err := http.Post(c.URL()+"/v1/hooks/claude", "application/json", strings.NewReader(payload))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("http hook %d: %s", n, res.Status)
		}
	}
	c.Kill(t)
	db, err := sqlite.Open(filepath.Join(home, "hookwatch.db"))
	if err != nil {
		t.Fatal(err)
	}
	sess, err := db.Session(t.Context(), "noloss-00")
	db.Close()
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		t.Fatal(err)
	}
	t.Logf("%d of %d answered events were stored when the collector was killed", sess.EventCount, total)

	c.Start(t)
	var stored map[string]bool
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if stored = storedIDs(t, c.URL(), 1); len(stored) == total {
			return
		}
	}
	t.Fatalf("stored %d distinct events after the restart, want %d", len(stored), total)
}

// storedIDs returns the distinct tool_use_ids stored in the sessions,
// failing on any duplicate.
func storedIDs(t *testing.T, base string, sessions int) map[string]bool {
	t.Helper()
	ids := map[string]bool{}
	for s := 0; s < sessions; s++ {
		for _, e := range sessionEvents(t, base, fmt.Sprintf("noloss-%02d", s)) {
			if ids[e.ToolUseID] {
				t.Fatalf("event %s stored twice", e.ToolUseID)
			}
			ids[e.ToolUseID] = true
		}
	}
	return ids
}

func jsonDecode(resp *http.Response, v any) error { return json.NewDecoder(resp.Body).Decode(v) }

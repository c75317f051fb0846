package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/importer"
	"github.com/hookwatch/hookwatch/internal/fakeclaude"
	"github.com/hookwatch/hookwatch/internal/serveproc"
	"github.com/hookwatch/hookwatch/internal/syncbuf"
	"github.com/hookwatch/hookwatch/internal/testbin"
)

// TestHTTPModeCollectorDown plays a session whose hooks `hookwatch install
// --mode http` registered and stops the collector in the middle of it:
// the http hooks posted while it is down fail, and nothing spools them.
// The collector starts again more than a day later (the transcript's time
// set back two days): it reads the session's transcript on from where it
// stopped (serve follows the transcripts by default), however old, and
// recovers the call made while it was down, with its outcome. What only a
// hook tells is lost: the Stop, the PostToolBatch, the SessionEnd (the
// session reads running).
func TestHTTPModeCollectorDown(t *testing.T) {
	Clients(t) // skip (or fail in CI) before building anything
	hookwatch := testbin.Build(t, "./cmd/hookwatch")
	testbin.Build(t, "./cmd/hookwatch-hook") // install registers the lean hook beside hookwatch
	EachClient(t, func(t *testing.T, c Client) { testHTTPModeCollectorDown(t, c, hookwatch) })
}

func testHTTPModeCollectorDown(t *testing.T, c Client, hookwatch string) {
	home, addr := t.TempDir(), testbin.FreeAddr(t)
	testbin.StopCollectorsAt(t, addr)
	url := "http://" + addr
	// No autostart: the test says when the collector runs.
	e := New(t, c, Hook{Command: "/bin/true"}, "HOOKWATCH_HOME="+home, "HOOKWATCH_URL="+url, "HOOKWATCH_AUTOSTART=0")
	writeFile(t, e.Settings, `{"skipWebFetchPreflight": true}`+"\n")
	install := exec.Command(hookwatch, "install", "--scope", "user", "--mode", "http", "--url", url)
	install.Env = e.Environ()
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("hookwatch install --mode http: %v\n%s", err, out)
	}

	// The collector as a hook would start it: the client's HOME, so
	// that it follows the client's transcripts.
	out := &syncbuf.Buffer{}
	start := func() *serveproc.Proc {
		t.Helper()
		p, err := serveproc.Start(serveproc.Options{
			Bin: hookwatch, Addr: addr, Stdout: out, Stderr: out,
			Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + e.Home, "HOOKWATCH_HOME=" + home, "HOOKWATCH_CODEX_ROLLOUTS=off"},
		})
		if err != nil {
			t.Fatalf("hookwatch serve: %v\n%s", err, out)
		}
		return p
	}
	p := start()
	var stopped atomic.Bool
	e.Model.SetScript(fakeclaude.Script{"[e2e:http-down]": {
		fakeclaude.Reply(fakeclaude.ToolUse("Bash", input{"command": "echo up", "description": "Run while the collector runs"})),
		func(r *fakeclaude.Request) []fakeclaude.Block {
			if stopped.CompareAndSwap(false, true) {
				// The collector has read the transcript's start: it was
				// following the session when it stopped.
				for deadline := time.Now().Add(20 * time.Second); !followed(t, home, e.Home); time.Sleep(50 * time.Millisecond) {
					if time.Now().After(deadline) {
						t.Errorf("the collector never read the transcript\n%s", out)
						break
					}
				}
				if err := p.Stop(20 * time.Second); err != nil {
					t.Errorf("%v\n%s", err, out)
				}
			}
			return []fakeclaude.Block{fakeclaude.ToolUse("Bash", input{"command": "echo down", "description": "Run while the collector is down"})}
		},
		fakeclaude.Reply(fakeclaude.Text("Done.")),
	}})
	res := e.Run("[e2e:http-down] run two commands")
	if !stopped.Load() {
		t.Fatal("the collector was never stopped")
	}

	// More than a day later.
	past := time.Now().Add(-48 * time.Hour)
	filepath.Walk(filepath.Join(e.Home, ".claude", "projects"), func(path string, _ os.FileInfo, err error) error {
		if err == nil {
			err = os.Chtimes(path, past, past)
		}
		return err
	})
	p = start()
	t.Cleanup(func() {
		if err := p.Stop(20 * time.Second); err != nil {
			t.Errorf("%v\n%s", err, out)
		}
		if t.Failed() {
			t.Logf("hookwatch serve output:\n%s\nhook.log:\n%s", out, readLog(home))
		}
	})
	col := &collectorProc{url: url, home: home}
	id := res.SessionID
	var calls []apiCall
	var s apiSession
	deadline := time.Now().Add(30 * time.Second)
	for {
		// The calls first, then the session: its model, read after,
		// holds at least those calls once it has applied every event
		// stored (a look of the follower may store more in between).
		calls = col.toolCalls(t, id)
		if col.get(t, "/v1/sessions/"+id, &s) != 200 {
			calls = nil
		}
		ok := 0
		for _, call := range calls {
			if call.Status == "ok" {
				ok++
			}
		}
		if ok == 2 && s.DerivedSeq == s.LastSeq {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s the restarted collector has %d calls of session %s: %v", len(calls), id, calls)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// What the hooks delivered while the collector ran, and only that.
	got := eventNames(t, url, id)
	want := map[string]int{"SessionStart": 1, "InstructionsLoaded": 1, "UserPromptSubmit": 1, "PreToolUse": 1, "PostToolUse": 1, "PostToolBatch": 1}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("hook events stored %v, want %v (those before the collector stopped)", got, want)
	}
	if s.Status != "running" || s.Counts["prompts"] != 1 || s.Counts["tool_calls"] != 2 {
		t.Errorf("session %s: status %s, counts %v; want running (no SessionEnd), one prompt, two calls", id, s.Status, s.Counts)
	}
	for _, call := range calls {
		if call.Input["command"] == "echo down" && call.EndedAt == nil {
			t.Errorf("the call made while the collector was down has no end: %v", call)
		}
	}
}

// followed reports whether the collector of home has read some of a
// transcript below the client's home clientHome: the import state keeps an
// offset for it.
func followed(t *testing.T, home, clientHome string) bool {
	offsets, err := importer.Offsets(filepath.Join(home, "import-state.json"))
	if err != nil {
		t.Error(err) // on the model's goroutine: no Fatal
		return false
	}
	for p, off := range offsets {
		if off > 0 && strings.HasPrefix(p, clientHome+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

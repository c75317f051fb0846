package collector_test

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/internal/fifotest"
)

// TestClaudeHookFIFO: http hooks from loopback, whose file states and
// compaction archive the collector records itself, name FIFOs and devices
// (and a project whose policy file is a link to a FIFO): every request is
// answered at once, and none leaves a goroutine behind.
func TestClaudeHookFIFO(t *testing.T) {
	archive := filepath.Join(t.TempDir(), "archive")
	s := newServer(t, collector.Config{ArchiveDir: archive})
	s.Handle("POST /v1/hooks/claude", s.HandleClaudeHook(collector.ClaudeHookConfig{Home: t.TempDir()}))

	cases := fifotest.Payloads(t)
	project := t.TempDir()
	fifo := fifotest.Mkfifo(t, filepath.Join(t.TempDir(), "fifo"))
	if err := os.MkdirAll(filepath.Join(project, ".hookwatch"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(fifo, filepath.Join(project, ".hookwatch", "policy.yaml")); err != nil {
		t.Fatal(err)
	}
	cases = append(cases, fifotest.Case{Name: "PreToolUse in a project whose policy file is a FIFO",
		Payload: []byte(`{"session_id":"fifo-policy","cwd":` + strconv.Quote(project) + `,"hook_event_name":"PreToolUse","tool_name":"Bash","tool_use_id":"tp","tool_input":{"command":"ls"}}`)})

	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	post := func(c fifotest.Case) {
		t.Helper()
		start := time.Now()
		res, err := client.Post(s.http.URL+"/v1/hooks/claude", "application/json", bytes.NewReader(c.Payload))
		if err != nil {
			t.Errorf("%s: %v after %v", c.Name, err, time.Since(start).Round(time.Millisecond))
			return
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Errorf("%s: status %d", c.Name, res.StatusCode)
		}
	}
	post(cases[0]) // the server's goroutines started
	settle := func() int {
		time.Sleep(100 * time.Millisecond)
		return runtime.NumGoroutine()
	}
	before := settle()
	for range 5 {
		for _, c := range cases {
			post(c)
		}
	}
	var after int
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); {
		if after = settle(); after <= before+2 {
			break
		}
	}
	if after > before+2 {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines before the requests, %d after:\n%s", before, after, buf[:runtime.Stack(buf, true)])
	}
	if files, _ := filepath.Glob(filepath.Join(archive, "*", "*", "*")); len(files) > 0 {
		t.Errorf("archived %v", files)
	}
}

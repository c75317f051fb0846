package collector_test

import (
	"bytes"
	"net/http"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/internal/fifotest"
)

// TestClaudeHookFIFO: http hooks from loopback, whose file states and
// compaction archive the collector records itself, name FIFOs and devices:
// every request is answered at once, and none leaves a goroutine behind.
func TestClaudeHookFIFO(t *testing.T) {
	archive := filepath.Join(t.TempDir(), "archive")
	s := newServer(t, collector.Config{ArchiveDir: archive})
	s.Handle("POST /v1/hooks/claude", s.HandleClaudeHook(collector.ClaudeHookConfig{Home: t.TempDir()}))

	cases := fifotest.Payloads(t)
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

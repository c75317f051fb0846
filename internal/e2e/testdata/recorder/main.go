// Command recorder is the hook of the end-to-end harness's own tests: it
// appends each hook payload it reads on stdin as one line to the file named
// by $HOOKWATCH_E2E_RECORD, prints nothing and exits 0, so it never changes
// what the client does.
//
// For an event from inside a subagent it also appends to
// $HOOKWATCH_E2E_SIDECARS whether the subagent's .meta.json sidecar existed
// when the hook ran: the sidecar is written late, and which hooks can see it
// decides where attribution may read it.
//
// It ignores SIGTERM, as the hook does (hook/terminate.go): the client ends
// the hooks still running as it exits, and the recorder, like the hook,
// keeps the payload it read.
package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
)

func main() {
	signal.Ignore(syscall.SIGTERM)
	in, _ := io.ReadAll(os.Stdin)
	var ev struct {
		Event          string `json:"hook_event_name"`
		SessionID      string `json:"session_id"`
		TranscriptPath string `json:"transcript_path"`
		AgentID        string `json:"agent_id"`
	}
	var line bytes.Buffer
	if json.Compact(&line, in) != nil || json.Unmarshal(in, &ev) != nil {
		// Not JSON: keep it, quoted, so a test can see what arrived.
		line.Reset()
		b, _ := json.Marshal(map[string]string{"recorder_invalid_payload": string(in)})
		line.Write(b)
	}
	appendLine(os.Getenv("HOOKWATCH_E2E_RECORD"), line.Bytes())

	if ev.AgentID == "" || ev.TranscriptPath == "" || ev.SessionID == "" {
		return
	}
	meta := filepath.Join(filepath.Dir(ev.TranscriptPath), ev.SessionID, "subagents", "agent-"+ev.AgentID+".meta.json")
	_, err := os.Stat(meta)
	b, _ := json.Marshal(map[string]any{"hook_event_name": ev.Event, "agent_id": ev.AgentID, "meta_exists": err == nil})
	appendLine(os.Getenv("HOOKWATCH_E2E_SIDECARS"), b)
}

// appendLine appends b and a newline to path, if path is set.
func appendLine(path string, b []byte) {
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	// Hooks of parallel tool calls and subagents run concurrently; the lock
	// keeps their lines whole even when a payload exceeds one atomic write.
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
	_, _ = f.Write(append(b, '\n'))
}

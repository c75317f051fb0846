package ingest

import (
	"encoding/json"
	"os"

	"github.com/hookwatch/hookwatch/claudecode"
	"github.com/hookwatch/hookwatch/event"
)

// maxMetaBytes bounds the sidecar read; real ones are ~200 bytes.
const maxMetaBytes = 64 << 10

// ReadSubagentMeta reads the sidecar Claude Code writes next to a subagent's
// transcript (claudecode.SubagentMetaPath), which names the Agent tool call
// that spawned the subagent. The client writes it only after synchronous
// SubagentStart hooks return, so it is read on every event of a subagent,
// not only at its start. It returns nil when the event is not a subagent's
// or the file is absent or unreadable.
func ReadSubagentMeta(p *event.Payload) *event.SubagentMeta {
	path, ok := claudecode.SubagentMetaPath(p.TranscriptPath, p.SessionID, p.AgentID)
	if !ok {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	buf := make([]byte, maxMetaBytes)
	n, _ := f.Read(buf)
	var m event.SubagentMeta
	if json.Unmarshal(buf[:n], &m) != nil || m.ToolUseID == "" {
		return nil
	}
	return &m
}

// forkOf returns, on a SessionStart with source "fork" only (other events
// pay nothing for it), the session the fork's transcript was copied from:
// see claudecode.ForkParent.
func forkOf(p *event.Payload) string {
	if e, ok := p.Event.(*event.SessionStartInput); !ok || e.Source != "fork" {
		return ""
	}
	return claudecode.ForkParent(p.TranscriptPath, p.SessionID)
}

package hook

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"github.com/hookwatch/hookwatch/event"
)

// maxMetaBytes bounds the sidecar read; real ones are ~200 bytes.
const maxMetaBytes = 64 << 10

// ReadSubagentMeta reads the sidecar Claude Code writes next to a subagent's
// transcript, <dir(transcript_path)>/<session_id>/subagents/agent-<id>.meta.json,
// which names the Agent tool call that spawned the subagent. The client
// writes it only after synchronous SubagentStart hooks return, so it is read
// on every event of a subagent, not only at its start. It returns nil when
// the event is not a subagent's or the file is absent or unreadable.
func ReadSubagentMeta(p *event.Payload) *event.SubagentMeta {
	if p.AgentID == "" || p.TranscriptPath == "" || p.SessionID == "" || !safeName(p.AgentID) || !safeName(p.SessionID) {
		return nil
	}
	path := filepath.Join(filepath.Dir(p.TranscriptPath), p.SessionID, "subagents", "agent-"+p.AgentID+".meta.json")
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

// safeName rejects ids that could walk out of the transcript directory: the
// payload is hostile input.
func safeName(s string) bool {
	return s != "." && s != ".." && !strings.ContainsAny(s, "/\\\x00")
}

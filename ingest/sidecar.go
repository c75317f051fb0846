package ingest

import (
	"github.com/hookwatch/hookwatch/claudecode"
	"github.com/hookwatch/hookwatch/codex"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/regfile"
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
	// The path is made of the payload's fields: it may name a FIFO or a
	// device, which regfile refuses without blocking.
	buf, err := regfile.ReadHead(path, maxMetaBytes)
	if err != nil {
		return nil
	}
	m, ok := event.DecodeSubagentMeta(buf)
	if !ok || m.ToolUseID == "" {
		return nil
	}
	return &m
}

// forkOf returns, on a SessionStart with source "fork" and on SessionEnd
// only (other events pay nothing for it), the session the session was
// forked from, which no payload names. For Claude Code, the session its
// transcript was copied from: see claudecode.ForkParent. 2.1.332 writes
// nothing to a fork's transcript before its first prompt has been
// answered, so its SessionStart finds no copied message: SessionEnd, once
// per run and off the agent's working path, is where the proof is read.
// For Codex (runtime), the one its rollout's first record names: see
// codex.ForkParent. A session that is not a fork names none.
func forkOf(p *event.Payload, runtime string) string {
	switch e := p.Event.(type) {
	case *event.SessionStartInput:
		if e.Source != "fork" {
			return ""
		}
	case *event.SessionEndInput:
	default:
		return ""
	}
	if runtime == event.RuntimeCodex {
		return codex.ForkParent(p.TranscriptPath, p.SessionID)
	}
	return claudecode.ForkParent(p.TranscriptPath, p.SessionID)
}

// exitCode returns, on a Codex PostToolUse of a command (Bash: Codex's
// exec_command) only, the command's exit code from the rollout
// (codex.ExitCode): Codex writes the command's record before it runs the
// hook, and the payload carries only the output.
func exitCode(p *event.Payload) *int {
	e, ok := p.Event.(*event.PostToolUseInput)
	if !ok || e.ToolName != "Bash" {
		return nil
	}
	if code, ok := codex.ExitCode(p.TranscriptPath, e.ToolUseID); ok {
		return &code
	}
	return nil
}

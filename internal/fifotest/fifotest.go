// Package fifotest makes hook payloads whose paths name FIFOs and devices,
// for the tests that hold every reader of a payload's paths (package
// regfile) to never blocking on one: the hook, the ingest pipeline, the
// collector's http hooks.
package fifotest

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// Case is one hostile payload.
type Case struct {
	Name string
	// Payload is the hook payload; its session_id is unique to the case.
	Payload []byte
}

// Mkfifo makes a FIFO at path (and its directory), skipping the test where
// FIFOs cannot be made. When the test ends, whatever still waits to read
// it is released (a writer opens it and closes it at once), so that a test
// that finds a reader blocked fails instead of hanging in its cleanup (a
// server that waits for its handlers).
func Mkfifo(tb testing.TB, path string) string {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		tb.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		tb.Skipf("cannot make a FIFO: %v", err)
	}
	tb.Cleanup(func() { release(path) })
	return path
}

// release opens the FIFO at path for writing and closes it while a reader
// is there to be released (else the open fails at once: ENXIO).
func release(path string) {
	for range 100 {
		f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			return
		}
		f.Close()
		time.Sleep(10 * time.Millisecond)
	}
}

// Payloads returns, in a fresh temporary directory, a payload for each way
// a Claude Code or Codex hook payload names a file hookwatch reads, every
// such file a FIFO (or a device, or a link to a FIFO): nothing ever writes
// to them, so a reader that opens one the usual way blocks forever.
func Payloads(tb testing.TB) []Case {
	tb.Helper()
	dir := tb.TempDir()
	q := strconv.Quote
	var cases []Case
	add := func(name, payload string) {
		cases = append(cases, Case{Name: name, Payload: []byte(payload)})
	}
	session := func(i int) string { return "fifo-" + strconv.Itoa(i) }

	// A Read of a FIFO: the file state the stale-context guard records.
	fifo := Mkfifo(tb, filepath.Join(dir, "read", "f1"))
	add("PostToolUse Read of a FIFO", `{"session_id":"`+session(1)+`","transcript_path":`+q(filepath.Join(dir, "read", session(1)+".jsonl"))+
		`,"cwd":`+q(filepath.Join(dir, "read"))+`,"hook_event_name":"PostToolUse","tool_name":"Read","tool_use_id":"tf1","tool_input":{"file_path":`+q(fifo)+`},"tool_response":{}}`)

	// A Write of a link to a FIFO, relative to cwd.
	link := filepath.Join(dir, "read", "link")
	if err := os.Symlink(fifo, link); err != nil {
		tb.Fatal(err)
	}
	add("PostToolUse Write of a link to a FIFO", `{"session_id":"`+session(2)+`","transcript_path":`+q(filepath.Join(dir, "read", session(2)+".jsonl"))+
		`,"cwd":`+q(filepath.Join(dir, "read"))+`,"hook_event_name":"PostToolUse","tool_name":"Write","tool_use_id":"tf2","tool_input":{"file_path":"link","content":"x"},"tool_response":{}}`)

	// A Read of a device that never ends.
	add("PostToolUse Read of /dev/zero", `{"session_id":"`+session(3)+`","transcript_path":`+q(filepath.Join(dir, "read", session(3)+".jsonl"))+
		`,"cwd":"/","hook_event_name":"PostToolUse","tool_name":"Read","tool_use_id":"tf3","tool_input":{"file_path":"/dev/zero"},"tool_response":{}}`)

	// A subagent's event: its sidecar <dir>/<session>/subagents/agent-<id>.meta.json.
	sub := filepath.Join(dir, "sidecar")
	Mkfifo(tb, filepath.Join(sub, session(4), "subagents", "agent-a4.meta.json"))
	add("PreToolUse of a subagent whose sidecar is a FIFO", `{"session_id":"`+session(4)+`","transcript_path":`+q(filepath.Join(sub, session(4)+".jsonl"))+
		`,"cwd":`+q(sub)+`,"hook_event_name":"PreToolUse","agent_id":"a4","agent_type":"worker","tool_name":"Bash","tool_use_id":"tf4","tool_input":{"command":"true"}}`)

	// SessionEnd: the fork's parent is looked for from its transcript.
	end := filepath.Join(dir, "end")
	Mkfifo(tb, filepath.Join(end, session(5)+".jsonl"))
	add("SessionEnd whose transcript is a FIFO", `{"session_id":"`+session(5)+`","transcript_path":`+q(filepath.Join(end, session(5)+".jsonl"))+
		`,"cwd":`+q(end)+`,"hook_event_name":"SessionEnd","reason":"other"}`)

	// A candidate parent of a fork that is a FIFO beside a real fork.
	fork := filepath.Join(dir, "fork")
	if err := os.MkdirAll(fork, 0o700); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(fork, session(6)+".jsonl"), []byte(`{"type":"user","uuid":"0b9e6a1c-5d3e-4f6a-8b7c-9d0e1f2a3b4c","sessionId":"`+session(6)+`"}`+"\n"), 0o600); err != nil {
		tb.Fatal(err)
	}
	Mkfifo(tb, filepath.Join(fork, "parent.jsonl"))
	add("SessionStart(fork) beside a FIFO transcript", `{"session_id":"`+session(6)+`","transcript_path":`+q(filepath.Join(fork, session(6)+".jsonl"))+
		`,"cwd":`+q(fork)+`,"hook_event_name":"SessionStart","source":"fork"}`)

	// Codex: the command's exit code from the tail of the rollout.
	rollout := Mkfifo(tb, filepath.Join(dir, "codex", "rollout-2026-01-02T03-04-05-"+session(7)+".jsonl"))
	add("Codex PostToolUse Bash whose rollout is a FIFO", `{"session_id":"`+session(7)+`","transcript_path":`+q(rollout)+
		`,"cwd":`+q(filepath.Dir(rollout))+`,"hook_event_name":"PostToolUse","turn_id":"t7","model":"gpt-5","tool_name":"Bash","tool_use_id":"call_7","tool_input":{"command":"true"},"tool_response":"ok"}`)

	// PreCompact: the transcript is copied to the archive.
	compact := filepath.Join(dir, "projects", "-tmp-compact") // the client's layout
	Mkfifo(tb, filepath.Join(compact, session(8)+".jsonl"))
	add("PreCompact whose transcript is a FIFO", `{"session_id":"`+session(8)+`","transcript_path":`+q(filepath.Join(compact, session(8)+".jsonl"))+
		`,"cwd":`+q(compact)+`,"hook_event_name":"PreCompact","trigger":"auto","custom_instructions":""}`)

	// PreCompact of a subagent: its own transcript is copied.
	Mkfifo(tb, filepath.Join(compact, session(9), "subagents", "agent-a9.jsonl"))
	add("PreCompact of a subagent whose transcript is a FIFO", `{"session_id":"`+session(9)+`","transcript_path":`+q(filepath.Join(compact, session(9)+".jsonl"))+
		`,"cwd":`+q(compact)+`,"hook_event_name":"PreCompact","agent_id":"a9","agent_type":"worker","trigger":"auto","custom_instructions":""}`)
	return cases
}

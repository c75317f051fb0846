// Package rollout reads Codex's rollout files (its transcripts:
// $CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl) into envelopes of kind
// event.KindRollout, for `hookwatch import --codex`: the tool calls the
// rollout records, each as the PreToolUse and PostToolUse payloads Codex's
// hooks would have sent for it (same tool names and inputs), so that the
// session model merges them with the hook events by tool_use_id (Codex's
// call_id) and counts each call once, whichever way it arrived. The
// rollout adds what hooks lack: the exit code of a command, and calls that
// fired no hook (denied — read as a PermissionDenied with the hook's
// reason —, interrupted or still running — a PreToolUse alone —, or made
// while no hook was installed).
//
// It is not linked into the hook.
package rollout

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hookwatch/hookwatch/event"
)

// maxLine bounds one rollout record; a record past it is skipped.
const maxLine = 32 << 20

// record is one line of a rollout.
type record struct {
	Timestamp time.Time       `json:"timestamp"`
	Type      string          `json:"type"`
	Payload   json.RawMessage `json:"payload"`
}

type item struct {
	Type      string `json:"type"`
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	Arguments string `json:"arguments"`
	Input     string `json:"input"`
	CallID    string `json:"call_id"`
	Output    any    `json:"output"`
	// item_completed (event_msg)
	Item *struct {
		Type     string `json:"type"`
		ID       string `json:"id"`
		ExitCode *int   `json:"exit_code"`
	} `json:"item"`
	Meta struct {
		TurnID string `json:"turn_id"`
	} `json:"internal_chat_message_metadata_passthrough"`
	TurnID string `json:"turn_id"`
	// session_meta
	ID        string `json:"id"`
	SessionID string `json:"session_id"`
	CWD       string `json:"cwd"`
}

// call is one tool call being read.
type call struct {
	id, name, turn string
	input          json.RawMessage
	at             time.Time
	out            *time.Time
	output         any
	exit           *int
}

// Read reads the rollout at path into envelopes (Runtime codex, Kind
// rollout, ReceivedAt the record's time), in the file's order; host and
// user are the envelopes'. Ids are derived from the thread and call ids,
// so that importing a file again adds nothing. A line that is not a record
// is skipped.
func Read(path, host, user string) ([]event.Envelope, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot open rollout: %w", err)
	}
	defer f.Close()
	return read(f, path, host, user)
}

func read(r io.Reader, path, host, user string) ([]event.Envelope, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	var thread, session, cwd string
	var calls []*call
	byID := map[string]*call{}
	exits := map[string]int{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	for sc.Scan() {
		var rec record
		var it item
		if json.Unmarshal(sc.Bytes(), &rec) != nil || json.Unmarshal(rec.Payload, &it) != nil {
			continue
		}
		switch {
		case rec.Type == "session_meta":
			thread, session, cwd = it.ID, it.SessionID, it.CWD
		case rec.Type == "response_item" && (it.Type == "function_call" || it.Type == "custom_tool_call") && it.CallID != "":
			if byID[it.CallID] != nil {
				continue
			}
			name, input := hookView(it)
			c := &call{id: it.CallID, name: name, input: input, at: rec.Timestamp, turn: it.Meta.TurnID}
			byID[it.CallID] = c
			calls = append(calls, c)
		case rec.Type == "response_item" && (it.Type == "function_call_output" || it.Type == "custom_tool_call_output"):
			if c := byID[it.CallID]; c != nil && c.out == nil {
				at := rec.Timestamp
				c.out, c.output = &at, it.Output
			}
		case rec.Type == "event_msg" && it.Type == "item_completed" && it.Item != nil && it.Item.ExitCode != nil:
			exits[it.Item.ID] = *it.Item.ExitCode
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("cannot read rollout %s: %w", path, err)
	}
	if session == "" {
		session = thread
	}
	if session == "" {
		return nil, fmt.Errorf("rollout %s has no session_meta", path)
	}
	agent := ""
	if thread != session {
		agent = thread // a subagent's rollout: its thread is the agent
	}
	var envs []event.Envelope
	for _, c := range calls {
		if x, ok := exits[c.id]; ok {
			c.exit = &x
		}
		base := map[string]any{"session_id": session, "transcript_path": abs, "cwd": cwd,
			"tool_name": c.name, "tool_input": c.input, "tool_use_id": c.id}
		if c.turn != "" {
			base["turn_id"] = c.turn
		}
		if agent != "" {
			base["agent_id"] = agent
		}
		envs = append(envs, envelope(base, event.PreToolUse, thread, c.id, c.at, host, user, nil))
		if why, ok := blocked(c.output); ok {
			// No tool_response for a call a hook denied: the client's
			// refusal, as Claude Code reports one.
			base["reason"] = why
			envs = append(envs, envelope(base, event.PermissionDenied, thread, c.id, *c.out, host, user, nil))
			continue
		}
		if c.out != nil {
			base["tool_response"] = c.output
			envs = append(envs, envelope(base, event.PostToolUse, thread, c.id, *c.out, host, user, c.exit))
		}
	}
	return envs, nil
}

func envelope(p map[string]any, name, thread, callID string, at time.Time, host, user string, exit *int) event.Envelope {
	p["hook_event_name"] = name
	b, _ := json.Marshal(p)
	return event.Envelope{
		ID:      "rollout:" + thread + ":" + callID + ":" + name,
		Runtime: event.RuntimeCodex, Kind: event.KindRollout, ReceivedAt: at.UTC(),
		Host: host, User: user, ExitCode: exit, Payload: b,
	}
}

// blockedPrefix starts the output Codex gives the model for a call a
// PreToolUse hook denied: "Command blocked by PreToolUse hook: <reason>.
// Command: <command>".
const blockedPrefix = "Command blocked by PreToolUse hook: "

// blocked returns the reason of a call a PreToolUse hook denied, from its
// output.
func blocked(output any) (string, bool) {
	s, ok := output.(string)
	if !ok || !strings.HasPrefix(s, blockedPrefix) {
		return "", false
	}
	why := s[len(blockedPrefix):]
	if i := strings.LastIndex(why, ". Command: "); i >= 0 {
		why = why[:i]
	}
	return why, true
}

// hookView returns the tool name and input Codex's hooks give a call:
// exec_command is Bash with {"command": cmd}, a freeform tool's input is
// {"command": text}, wait_agent has its namespace glued on.
func hookView(it item) (string, json.RawMessage) {
	switch {
	case it.Type == "custom_tool_call":
		b, _ := json.Marshal(map[string]string{"command": it.Input})
		return it.Name, b
	case it.Name == "exec_command":
		var a struct {
			Cmd string `json:"cmd"`
		}
		_ = json.Unmarshal([]byte(it.Arguments), &a)
		b, _ := json.Marshal(map[string]string{"command": a.Cmd})
		return "Bash", b
	}
	name := it.Name
	if it.Namespace != "" && it.Name != "spawn_agent" {
		name = it.Namespace + it.Name
	}
	in := json.RawMessage(it.Arguments)
	if !json.Valid(in) {
		b, _ := json.Marshal(map[string]string{"arguments": it.Arguments})
		in = b
	}
	return name, in
}

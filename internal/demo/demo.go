// Package demo makes envelopes: the session `hookwatch demo` plays (Story),
// and for the dashboard's browser tests, its screenshots and its benchmark
// real Claude Code payloads given times, a session whose every displayed
// string is an XSS attempt, and large synthetic sessions with many parallel
// subagents.
//
// Everything here is deterministic for a given start time (Story's
// envelope ids aside), so screenshots and benchmark figures can be compared
// between runs.
package demo

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/hookwatch/hookwatch/event"
)

// Payloads wraps each JSONL payload read from r in an envelope. Times start
// at start and advance by a step that depends on the event, so that the
// ordering of the file is kept and a tool call lasts at least its
// duration_ms; a SessionStart after a SessionEnd comes two minutes later, as
// a resume does. Blank lines are skipped; a line that is not a JSON object
// is an error.
func Payloads(r io.Reader, start time.Time) ([]event.Envelope, error) {
	var out []event.Envelope
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	t := start
	ended := false
	n := 0
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			continue
		}
		var head struct {
			Event      string `json:"hook_event_name"`
			DurationMS int64  `json:"duration_ms"`
		}
		if err := json.Unmarshal(line, &head); err != nil {
			return nil, fmt.Errorf("cannot read payload %d: %w", n+1, err)
		}
		step := 180*time.Millisecond + time.Duration(n%7)*45*time.Millisecond
		switch head.Event {
		case event.SessionStart:
			if ended {
				step = 2 * time.Minute
			}
		case event.UserPromptSubmit:
			step = 900 * time.Millisecond
		case event.PostToolUse, event.PostToolUseFailure:
			step = max(step, time.Duration(head.DurationMS)*time.Millisecond)
		}
		ended = head.Event == event.SessionEnd
		if n > 0 {
			t = t.Add(step)
		}
		out = append(out, envelope("p", t, n, json.RawMessage(append([]byte(nil), line...)), nil))
		n++
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("cannot read payloads: %w", err)
	}
	return out, nil
}

// envelope returns an envelope whose id is unique per (t, n) and sorts by t.
func envelope(tag string, t time.Time, n int, payload json.RawMessage, decision json.RawMessage) event.Envelope {
	return event.Envelope{
		ID:         fmt.Sprintf("%s-%s-%06d", tag, t.UTC().Format("20060102T150405.000000000"), n),
		Runtime:    event.RuntimeClaudeCode,
		Kind:       event.KindHook,
		ReceivedAt: t.UTC(),
		Host:       "devbox",
		User:       "dev",
		Payload:    payload,
		Decision:   decision,
	}
}

// XSSStrings are the hostile strings the dashboard must show as inert text:
// script tags, javascript: URLs, event-handler attributes, markup that
// closes the surrounding element, and template syntax. Each one that
// executed would set window.__xss.
var XSSStrings = []string{
	`<script>window.__xss=1</script>`,
	`<img src=x onerror="window.__xss=2">`,
	`javascript:window.__xss=3`,
	`"><svg onload=window.__xss=4>`,
	`<a href="javascript:window.__xss=5">click me</a>`,
	`</textarea></pre><iframe srcdoc="<script>parent.__xss=6</script>"></iframe>`,
	`{{constructor.constructor('window.__xss=7')()}} ${window.__xss=8}`,
	`<style>*{display:none!important}</style><body onload=window.__xss=9>`,
}

// XSSSessionID is the session of XSS.
const XSSSessionID = "7b1c0000-0000-4000-8000-00000000a55a"

// XSS returns one session whose title, project directory, prompt, subagent
// type, tool names, commands, file paths, tool output, errors and decision
// reasons are XSSStrings.
func XSS(start time.Time) []event.Envelope {
	x := XSSStrings
	cwd := "/home/dev/" + x[3]
	common := func(name string) map[string]any {
		return map[string]any{
			"session_id":      XSSSessionID,
			"transcript_path": "/home/dev/.claude/projects/x/" + XSSSessionID + ".jsonl",
			"cwd":             cwd,
			"hook_event_name": name,
			"prompt_id":       "p-xss-1",
			"permission_mode": "default",
		}
	}
	with := func(m map[string]any, kv ...any) map[string]any {
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	sub := func(m map[string]any) map[string]any {
		return with(m, "agent_id", "a-xss-sub", "agent_type", x[1])
	}
	type ev struct {
		p        map[string]any
		decision any
	}
	evs := []ev{
		{p: with(common(event.SessionStart), "source", "startup", "session_title", x[0])},
		{p: with(common(event.UserPromptSubmit), "prompt", "fix "+x[0]+" and "+x[2], "session_title", x[0]+x[1])},
		{p: with(common(event.PreToolUse), "tool_name", "Bash", "tool_use_id", "toolu_x1",
			"tool_input", map[string]any{"command": "echo '" + x[1] + "' > " + x[5], "description": x[4]})},
		{p: with(common(event.PostToolUse), "tool_name", "Bash", "tool_use_id", "toolu_x1", "duration_ms", 40,
			"tool_input", map[string]any{"command": "echo '" + x[1] + "' > " + x[5]},
			"tool_response", map[string]any{"stdout": x[0] + "\n" + x[6], "stderr": x[7]})},
		{p: with(common(event.PreToolUse), "tool_name", "Read", "tool_use_id", "toolu_x2",
			"tool_input", map[string]any{"file_path": "/tmp/" + x[2]})},
		{p: with(common(event.PostToolUseFailure), "tool_name", "Read", "tool_use_id", "toolu_x2", "duration_ms", 5,
			"tool_input", map[string]any{"file_path": "/tmp/" + x[2]}, "error", x[5])},
		{p: with(common(event.PreToolUse), "tool_name", "Bash", "tool_use_id", "toolu_x3",
			"tool_input", map[string]any{"command": "rm -rf / " + x[3]}),
			decision: map[string]any{"action": "deny", "rule_ids": []string{x[4]}, "reason": x[0], "enforced": true}},
		{p: with(common(event.PreToolUse), "tool_name", "Agent", "tool_use_id", "toolu_x4",
			"tool_input", map[string]any{"description": x[6], "prompt": x[7], "subagent_type": x[1]})},
		{p: sub(with(common(event.SubagentStart)))},
		{p: sub(with(common(event.PreToolUse), "tool_name", "mcp__"+x[0]+"__tool", "tool_use_id", "toolu_x5",
			"tool_input", map[string]any{"url": x[2], x[1]: x[3]}))},
		{p: sub(with(common(event.PostToolUse), "tool_name", "mcp__"+x[0]+"__tool", "tool_use_id", "toolu_x5", "duration_ms", 120,
			"tool_input", map[string]any{"url": x[2]}, "tool_response", x[7]))},
		{p: sub(with(common(event.SubagentStop), "last_assistant_message", x[0]))},
		{p: with(common(event.PostToolUse), "tool_name", "Agent", "tool_use_id", "toolu_x4", "duration_ms", 900,
			"tool_input", map[string]any{"subagent_type": x[1]},
			"tool_response", map[string]any{"agentId": "a-xss-sub", "agentType": x[1], "content": []any{map[string]any{"type": "text", "text": x[0]}}})},
		{p: with(common(event.Notification), "message", x[1], "notification_type", x[2])},
		{p: with(common(event.Stop), "last_assistant_message", x[6])},
	}
	out := make([]event.Envelope, 0, len(evs))
	t := start
	for i, e := range evs {
		p, _ := json.Marshal(e.p)
		var d json.RawMessage
		if e.decision != nil {
			d, _ = json.Marshal(e.decision)
		}
		out = append(out, envelope("x", t, i, p, d))
		t = t.Add(350 * time.Millisecond)
	}
	return out
}

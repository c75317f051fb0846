package toolhook

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/hookwatch/hookwatch/audit"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/jsonstr"
	"github.com/hookwatch/hookwatch/privacy"
)

// FuzzMembers holds what a call's records keep of its input, output and
// error — each passed through the privacy rules once, the output's preview
// taken from the parts privacy made — to what the rules give a whole
// payload (privacy.Apply) and a reader of it (audit.Preview): the same
// bytes, so no secret the payload rules redact passes by the shortcut.
func FuzzMembers(f *testing.F) {
	const tok = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"
	long := strings.Repeat("line of output\n", 60)
	for _, s := range []string{
		"", "plain", tok, "export GITHUB_TOKEN=" + tok, "password=hunter2", "AKIAIOSFODNN7EXAMPLE",
		long + "Authorization: Bearer abcdef0123456789abcdef\n" + long,
		long[:500] + "sk-ant-api03-" + strings.Repeat("x", 90) + long,
		`{"password":"hunter2","nested":"{\"api_key\":\"0123456789abcdef0123\"}"}`,
		"<tag> & \"quoted\" \x01 é \xff",
	} {
		f.Add(s, s, s, false)
		f.Add("ls", s, "", true)
	}
	f.Fuzz(func(t *testing.T, in, out, errText string, object bool) {
		for _, o := range []privacy.Options{privacy.DefaultOptions(), {Capture: privacy.CaptureFull, Redact: true}, {Capture: privacy.CaptureNone, Redact: true}, {Capture: privacy.CapturePreview, PreviewBytes: 40, Redact: true}} {
			c := &Call{ToolName: "Bash", Input: map[string]any{"command": in, in: 1}}
			c.Output = any(out)
			if object {
				c.Output = map[string]any{"stdout": out, "stderr": in}
			}
			if errText != "" && !object {
				c.Err = errors.New(errText)
			}
			m := membersOf(c, o, nil)
			var rec audit.ToolCall
			var end callEnd
			toolCallRecord(&rec, &end, c, &m)

			p := map[string]json.RawMessage{"tool_name": json.RawMessage(`"Bash"`)}
			p["tool_input"], _ = appendValue(nil, c.Input)
			if c.Err != nil {
				p["error"] = jsonstr.AppendQuoted(nil, c.Err.Error())
			} else {
				p["tool_response"], _ = appendValue(nil, c.Output)
			}
			privacy.Apply(p, o)
			if string(m.input) != string(p["tool_input"]) {
				t.Fatalf("%+v: tool_input %s, Apply's %s", o, m.input, p["tool_input"])
			}
			if c.Err == nil && string(m.output) != string(p["tool_response"]) {
				t.Fatalf("%+v: tool_response %s, Apply's %s", o, m.output, p["tool_response"])
			}
			if c.Err != nil && string(m.errText) != string(p["error"]) {
				t.Fatalf("%+v: error %s, Apply's %s", o, m.errText, p["error"])
			}
			if want := audit.Preview(p["tool_input"]); rec.InputPreview != want {
				t.Fatalf("%+v: input preview %q, want %q", o, rec.InputPreview, want)
			}
			if want := audit.Preview(p["tool_response"]); c.Err == nil && rec.OutputPreview != want {
				t.Fatalf("%+v: output preview %q, want %q", o, rec.OutputPreview, want)
			}
		}
	})
}

// FuzzPayloads reads the payloads a call, a sub-agent's start and stop and
// a session's end are recorded with back through the lenient reader of
// every payload (event.Decode): whatever the session's strings, each is
// valid JSON and carries them. The sub-agent's id is the reason's string,
// its type the permission mode's.
func FuzzPayloads(f *testing.F) {
	f.Add("/home/dev/src/demo", "bypassPermissions", "/home/dev/.claude/projects/-home-dev-src-demo/s.jsonl", "s", "other")
	f.Add("", "", "", "", "")
	f.Add("C:\\Users\\dev \"q\"", "<plan>", "\xff\x00", "é", "prompt_input_exit")
	f.Fuzz(func(t *testing.T, cwd, mode, transcript, session, reason string) {
		c := &Call{SessionID: session, ToolName: "Bash", ToolUseID: "toolu_1", Cwd: cwd, PermissionMode: mode, TranscriptPath: transcript,
			Input: map[string]any{"command": "ls"}, Status: "ok", Output: "x"}
		m := membersOf(c, privacy.DefaultOptions(), nil)
		end := &SessionEnd{SessionID: session, Reason: reason, Cwd: cwd, TranscriptPath: transcript}
		start := &AgentEvent{Event: event.SubagentStart, SessionID: session, AgentID: reason, AgentType: mode,
			Cwd: cwd, PermissionMode: mode, TranscriptPath: transcript}
		stop := *start
		stop.Event = event.SubagentStop
		// The reader reads strings as encoding/json does: invalid UTF-8
		// as U+FFFD.
		var want []string
		b, _ := json.Marshal([]string{cwd, mode, transcript, session, reason})
		json.Unmarshal(b, &want)
		for _, data := range [][]byte{
			appendPayload(nil, c, event.PreToolUse, &m),
			appendPayload(nil, c, event.PostToolUse, &m),
			appendEndPayload(nil, end),
			appendAgentPayload(nil, start),
			appendAgentPayload(nil, &stop),
		} {
			if !json.Valid(data) {
				t.Fatalf("not JSON: %s", data)
			}
			p, err := event.Decode(data)
			if err != nil {
				t.Fatalf("%s: %v", data, err)
			}
			if p.CWD != want[0] || p.TranscriptPath != want[2] || p.SessionID != want[3] {
				t.Fatalf("%s: read cwd %q, transcript %q, session %q", data, p.CWD, p.TranscriptPath, p.SessionID)
			}
			switch p.Event.(type) {
			case *event.SubagentStartInput, *event.SubagentStopInput:
				// A start has no permission_mode, as Claude Code's has none.
				_, stops := p.Event.(*event.SubagentStopInput)
				if p.AgentID != want[4] || !p.AgentType.Set || p.AgentType.Value != want[1] || stops != (p.PermissionMode == want[1]) && want[1] != "" {
					t.Fatalf("%s: read agent %q of type %+v, permission_mode %q", data, p.AgentID, p.AgentType, p.PermissionMode)
				}
				continue
			}
			if e, ok := p.Event.(*event.SessionEndInput); ok {
				if e.Reason != want[4] {
					t.Fatalf("%s: read reason %q", data, e.Reason)
				}
			} else if p.PermissionMode != want[1] {
				t.Fatalf("%s: read permission_mode %q", data, p.PermissionMode)
			}
		}
	})
}

package attribution

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/event"
)

var update = flag.Bool("update", false, "rewrite golden files")

// t0 is the received_at of the first envelope of a fixture.
var t0 = time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC)

// at returns t0 plus n steps of 250 ms.
func at(n int) time.Time { return t0.Add(time.Duration(n) * 250 * time.Millisecond) }

// envID returns a fixed envelope id that sorts with n.
func envID(n int) string { return fmt.Sprintf("0190f000-0000-7000-8000-%012d", n) }

// loadCorpus wraps every payload of a JSONL fixture in an envelope, with ids
// and received_at in file order. Lines of the public corpora hold the
// payload under "payload".
func loadCorpus(t testing.TB, name, runtime string) []event.Envelope {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var envs []event.Envelope
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(line, &obj); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		payload := json.RawMessage(append([]byte(nil), line...))
		if p, ok := obj["payload"]; ok && obj["hook_event_name"] == nil {
			payload = p
		}
		n := len(envs)
		envs = append(envs, event.Envelope{ID: envID(n), Runtime: runtime, Kind: event.KindHook, ReceivedAt: at(n), Payload: payload})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return envs
}

// env builds an envelope from a payload given as JSON text.
func env(n int, payload string) event.Envelope {
	return event.Envelope{ID: envID(n), Runtime: event.RuntimeClaudeCode, Kind: event.KindHook, ReceivedAt: at(n), Payload: json.RawMessage(payload)}
}

// mustJSON encodes v indented, failing the test on error.
func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs from the golden file; run with -update and review the diff", name)
	}
}

// ev is a synthetic hook payload. Keys starting with "_" are envelope
// settings: "_sidecar" (*event.SubagentMeta), "_decision" (JSON text),
// "_exit_code" (int),
// "_host".
type ev map[string]any

// stream wraps payloads in envelopes in the given order, filling in
// session_id "s1", cwd and a transcript_path in the client's layout when
// absent.
func stream(t testing.TB, evs ...ev) []event.Envelope {
	t.Helper()
	envs := make([]event.Envelope, 0, len(evs))
	for n, e := range evs {
		p := map[string]any{}
		for k, v := range e {
			p[k] = v
		}
		if _, ok := p["session_id"]; !ok {
			p["session_id"] = "s1"
		}
		if _, ok := p["cwd"]; !ok {
			p["cwd"] = "/w/p"
		}
		if _, ok := p["transcript_path"]; !ok {
			p["transcript_path"] = "/h/.claude/projects/-w-p/" + fmt.Sprint(p["session_id"]) + ".jsonl"
		}
		out := env(n, "{}")
		if m, ok := p["_sidecar"].(*event.SubagentMeta); ok {
			out.Subagent = m
		}
		if d, ok := p["_decision"].(string); ok {
			out.Decision = json.RawMessage(d)
		}
		if x, ok := p["_exit_code"].(int); ok {
			out.ExitCode = &x
		}
		if h, ok := p["_host"].(string); ok {
			out.Host = h
		}
		for k := range p {
			if k[0] == '_' {
				delete(p, k)
			}
		}
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		out.Payload = b
		envs = append(envs, out)
	}
	return envs
}

// with returns e plus the given key/value pairs.
func (e ev) with(kv ...any) ev {
	out := ev{}
	for k, v := range e {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

// in marks an event as fired inside a subagent.
func (e ev) in(agentID, agentType string) ev {
	return e.with("agent_id", agentID, "agent_type", agentType)
}

func sessionStart(source string) ev {
	return ev{"hook_event_name": "SessionStart", "source": source}
}

func sessionEnd(reason string) ev { return ev{"hook_event_name": "SessionEnd", "reason": reason} }

func prompt(text string) ev { return ev{"hook_event_name": "UserPromptSubmit", "prompt": text} }

func pre(tool, id string, input map[string]any) ev {
	return ev{"hook_event_name": "PreToolUse", "tool_name": tool, "tool_use_id": id, "tool_input": input}
}

func post(tool, id string, input map[string]any, resp any) ev {
	return ev{"hook_event_name": "PostToolUse", "tool_name": tool, "tool_use_id": id, "tool_input": input, "tool_response": resp}
}

func spawn(id, subagentType string) ev {
	return pre("Agent", id, map[string]any{"description": "d-" + id, "prompt": "p", "subagent_type": subagentType})
}

func spawned(id, subagentType string, resp any) ev {
	return post("Agent", id, map[string]any{"description": "d-" + id, "prompt": "p", "subagent_type": subagentType}, resp)
}

func subStart(agentID, agentType string) ev {
	return ev{"hook_event_name": "SubagentStart"}.in(agentID, agentType)
}

func subStop(agentID, agentType string) ev {
	return ev{"hook_event_name": "SubagentStop", "last_assistant_message": "done " + agentID}.in(agentID, agentType)
}

func bash(cmd string) map[string]any { return map[string]any{"command": cmd} }

// agentOf returns the agent with the given id in session s, failing if absent.
func agentOf(t testing.TB, s *Session, id string) *Agent {
	t.Helper()
	for _, a := range s.Agents {
		if a.AgentID == id {
			return a
		}
	}
	t.Fatalf("no agent %q in session %s", id, s.SessionID)
	return nil
}

// callOf returns the tool call with the given id in session s, failing if absent.
func callOf(t testing.TB, s *Session, id string) *ToolCall {
	t.Helper()
	for _, c := range s.ToolCalls {
		if c.ToolUseID == id {
			return c
		}
	}
	t.Fatalf("no tool call %q in session %s", id, s.SessionID)
	return nil
}

// only returns the single session of r.
func only(t testing.TB, r *Result) *Session {
	t.Helper()
	if len(r.Sessions) != 1 {
		t.Fatalf("%d sessions, want 1", len(r.Sessions))
	}
	return r.Sessions[0]
}

func deref(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

package attribution

import (
	"bytes"
	"encoding/json"
	"hash/fnv"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/event"
)

// fuzzEnvelopes turns fuzz input into envelopes: one per line. Ids repeat
// (so that same-id envelopes with other content occur), received_at comes
// from a hash of the line (so that ties and disorder occur), a line is also
// used as the envelope's decision and read as a sidecar meta.
func fuzzEnvelopes(data []byte) []event.Envelope {
	var envs []event.Envelope
	for i, line := range bytes.Split(data, []byte("\n")) {
		h := fnv.New32a()
		h.Write(line)
		sum := h.Sum32()
		e := event.Envelope{
			ID:         "e" + strconv.Itoa(i%7),
			Runtime:    event.RuntimeClaudeCode,
			ReceivedAt: t0.Add(time.Duration(sum%16) * time.Second),
			Payload:    json.RawMessage(line),
		}
		if i%5 == 4 {
			e.ID = ""
		}
		if sum%3 == 0 {
			e.Decision = json.RawMessage(line)
		}
		var m event.SubagentMeta
		if json.Unmarshal(line, &m) == nil && m.ToolUseID != "" {
			e.Subagent = &m
		}
		envs = append(envs, e)
	}
	return envs
}

func FuzzBuild(f *testing.F) {
	for _, name := range []string{"claude-code-2.1.197.jsonl", "codex-0.169.jsonl"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		lines := bytes.Split(b, []byte("\n"))
		for i := 0; i < len(lines); i += 12 {
			f.Add(bytes.Join(lines[i:min(i+12, len(lines))], []byte("\n")))
		}
	}
	f.Add([]byte(`{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Agent","tool_use_id":"t1","tool_input":{"subagent_type":"w"}}
{"session_id":"s","hook_event_name":"SubagentStart","agent_id":"a","agent_type":"w","toolUseId":"t1"}
{"session_id":"s","hook_event_name":"PreToolUse","agent_id":"a","tool_name":"Agent","tool_use_id":"t2","toolUseId":"t2"}
{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Agent","tool_use_id":"t1","tool_response":{"agentId":"a"}}
{"session_id":"s","hook_event_name":"PermissionRequest","tool_name":"Agent","tool_input":{"subagent_type":"w"}}
{"action":"deny","enforced":true,"reason":"r"}
{"session_id":"t","hook_event_name":"InstructionsLoaded"}
{"session_id":"s","hook_event_name":"SessionStart","source":"fork"}
{"session_id":"u","hook_event_name":"SessionEnd","reason":"clear"}
{"session_id":"v","hook_event_name":"SessionStart","source":"clear"}
{"session_id":"s","hook_event_name":"PostToolBatch","tool_calls":[{"tool_use_id":"t9","tool_response":"<tool_use_error>x"}]}`))
	f.Add([]byte(`{"session_id":"s","hook_event_name":"SessionStart","source":"startup","cwd":"/w","transcript_path":"/t/s.jsonl"}
{"session_id":"s","hook_event_name":"SubagentStart","agent_id":"a","agent_type":"w"}
{"session_id":"s","hook_event_name":"TranscriptUsage","message_id":"m1","prompt_id":"p","model":"x","usage":{"input_tokens":5,"output_tokens":1}}
{"session_id":"s","hook_event_name":"TranscriptUsage","message_id":"m1","prompt_id":"q","usage":{"input_tokens":5,"output_tokens":9}}
{"session_id":"s","hook_event_name":"TranscriptUsage","message_id":"m2","agent_id":"a","agent_type":"v","usage":{"output_tokens":3}}
{"session_id":"s","hook_event_name":"TranscriptUsage","message_id":"m2","usage":{"output_tokens":4},"cwd":"/v","transcript_path":"/u/s.jsonl"}
{"session_id":"s","hook_event_name":"TranscriptUsage","uuid":"u3","agent_id":"a","toolUseId":"t","agentType":"w","usage":{"cache_read_input_tokens":7}}
{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_use_id":"t1","tool_input":{"command":"ls"}}
{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"t1","tool_response":"ok"}
{"session_id":"s","hook_event_name":"TranscriptUsage","message_id":"m3","agent_id":"a","usage":{"input_tokens":2}}`))
	f.Add([]byte("{\"session_id\":1,\"agent_id\":{},\"hook_event_name\":null}\nnot json\n[]\n{\"session_id\":\"\\u0000\",\"tool_use_id\":\"\"}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		envs := fuzzEnvelopes(data)
		got := Build(envs)
		if _, err := json.Marshal(got); err != nil {
			t.Fatalf("result does not encode: %v", err)
		}
		rev := make([]event.Envelope, len(envs))
		for i, e := range envs {
			rev[len(envs)-1-i] = e
		}
		if again := Build(append(rev, envs...)); !reflect.DeepEqual(again, got) {
			t.Fatalf("reversed and duplicated input gives another result:\n%s\nwant:\n%s", mustJSON(t, again), mustJSON(t, got))
		}
		// Applied one at a time, as the collector applies a live stream:
		// each envelope to the kept state, the lineage derived again from
		// the kept index, what changed written to a store (the mirror).
		g, m := NewGroup(), newMirror()
		for _, e := range envs {
			g.Apply(e)
			m.apply(g.Changes())
		}
		want := mustJSON(t, got)
		if live := mustJSON(t, g.Result()); !bytes.Equal(live, want) {
			t.Fatalf("input applied one at a time gives another result:\n%s", firstDiff(live, want))
		}
		if stored := mustJSON(t, m.result(g.skipped)); !bytes.Equal(stored, want) {
			t.Fatalf("the model built from the changes of input applied one at a time differs:\n%s", firstDiff(stored, want))
		}
	})
}

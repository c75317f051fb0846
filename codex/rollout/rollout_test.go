package rollout

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookwatch/hookwatch/event"
)

// file is a real rollout of Codex 0.169 (records the reader skips left
// out, paths rewritten): `echo hello > hi.txt && ls` (call_000004),
// apply_patch (call_000007), `echo bad; exit 3` (call_000010).
const file = "../testdata/rollout-2026-11-25T14-46-05-01a2132b-c636-7c31-93a8-aeaecf1768f7.jsonl"

func TestRead(t *testing.T) {
	envs, err := Read(file, "h", "u")
	if err != nil {
		t.Fatal(err)
	}
	type view struct {
		name, tool, id, input string
		exit                  int
	}
	var got []view
	var usage []string
	for _, e := range envs {
		p, err := event.Decode(e.Payload)
		if err != nil {
			t.Fatal(err)
		}
		if p.Name() == UsageEvent {
			var u struct {
				MessageID string `json:"message_id"`
				TurnID    string `json:"turn_id"`
				Usage     map[string]int64
			}
			_ = json.Unmarshal(e.Payload, &u)
			usage = append(usage, fmt.Sprintf("%s %s in=%d out=%d cache=%d", u.MessageID, u.TurnID, u.Usage["input_tokens"], u.Usage["output_tokens"], u.Usage["cache_read_input_tokens"]))
			continue
		}
		if e.Kind != event.KindRollout || e.Runtime != event.RuntimeCodex || e.Host != "h" || p.SessionID != "01a2132b-c636-7c31-93a8-aeaecf1768f7" ||
			p.AgentID != "" || p.TurnID == "" || e.ReceivedAt.IsZero() {
			t.Errorf("envelope %+v payload %s", e, e.Payload)
		}
		tc := p.Tool()
		v := view{name: p.Name(), tool: tc.ToolName, id: tc.ToolUseID, input: string(tc.ToolInput), exit: -1}
		if e.ExitCode != nil {
			v.exit = *e.ExitCode
		}
		got = append(got, v)
	}
	bash := func(c string) string { b, _ := json.Marshal(map[string]string{"command": c}); return string(b) }
	patch := bash("*** Begin Patch\n*** Add File: notes.md\n+# Notes\n*** End Patch\n")
	want := []view{
		{"PreToolUse", "Bash", "call_000004", bash("echo hello > hi.txt && ls"), -1},
		{"PostToolUse", "Bash", "call_000004", bash("echo hello > hi.txt && ls"), 0},
		{"PreToolUse", "apply_patch", "call_000007", patch, -1},
		{"PostToolUse", "apply_patch", "call_000007", patch, -1},
		{"PreToolUse", "Bash", "call_000010", bash("echo bad; exit 3"), -1},
		{"PostToolUse", "Bash", "call_000010", bash("echo bad; exit 3"), 3},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	// One usage a response: the four token_count records, each moving the
	// running total.
	turn := "01a2132b-c66b-7141-b184-5de8b4391722"
	wantUsage := []string{
		"01a2132b-c636-7c31-93a8-aeaecf1768f7:15 " + turn + " in=100 out=10 cache=0",
		"01a2132b-c636-7c31-93a8-aeaecf1768f7:20 " + turn + " in=100 out=10 cache=0",
		"01a2132b-c636-7c31-93a8-aeaecf1768f7:25 " + turn + " in=100 out=10 cache=0",
		"01a2132b-c636-7c31-93a8-aeaecf1768f7:29 " + turn + " in=100 out=10 cache=0",
	}
	if fmt.Sprint(usage) != fmt.Sprint(wantUsage) {
		t.Errorf("usage\n%s\nwant\n%s", strings.Join(usage, "\n"), strings.Join(wantUsage, "\n"))
	}
	// Reading again gives the same ids: an import is idempotent.
	again, _ := Read(file, "h", "u")
	for i := range envs {
		if again[i].ID != envs[i].ID {
			t.Fatalf("id %s then %s", envs[i].ID, again[i].ID)
		}
	}
	if _, err := Read("../testdata/none.jsonl", "", ""); err == nil {
		t.Error("a missing file read")
	}
}

// TestReadDenied: a call a PreToolUse hook denied (a real rollout) has no
// result but the refusal, read as a PermissionDenied with the reason.
func TestReadDenied(t *testing.T) {
	envs, err := Read("../testdata/rollout-2026-11-25T15-19-47-01a2134a-a05f-7352-b020-bbc5e8c0633b.jsonl", "", "")
	if err != nil {
		t.Fatal(err)
	}
	envs = tools(envs)
	if len(envs) != 2 {
		t.Fatalf("%d envelopes", len(envs))
	}
	p, err := event.Decode(envs[1].Payload)
	if err != nil {
		t.Fatal(err)
	}
	d, ok := p.Event.(*event.PermissionDeniedInput)
	if !ok || d.Reason != "nope" || d.ToolUseID != "call_000003" || d.ToolName != "Bash" {
		t.Errorf("denial %s", envs[1].Payload)
	}
}

// TestTail: a rollout read as Codex writes it, in pieces cut anywhere
// (mid-line too), gives the envelopes Read gives, each once; a line past
// the bound on a record is passed over.
func TestTail(t *testing.T) {
	whole, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	f := func(piece int) {
		t.Helper()
		path := filepath.Join(t.TempDir(), filepath.Base(file))
		if err := os.WriteFile(path, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		tail := NewTail(path, "h", "u")
		var got []event.Envelope
		for i := 0; i < len(whole); i += piece {
			appendFile(t, path, whole[i:min(i+piece, len(whole))])
			envs, err := tail.Next()
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, envs...)
		}
		want, err := Read(path, "h", "u")
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("pieces of %d: %d envelopes, want %d", piece, len(got), len(want))
		}
		for i := range want {
			if got[i].ID != want[i].ID || string(got[i].Payload) != string(want[i].Payload) {
				t.Errorf("pieces of %d: %d: got %s %s, want %s %s", piece, i, got[i].ID, got[i].Payload, want[i].ID, want[i].Payload)
			}
		}
		if tail.Offset() != int64(len(whole)) || tail.Session() != "01a2132b-c636-7c31-93a8-aeaecf1768f7" {
			t.Errorf("offset %d of %d, session %q", tail.Offset(), len(whole), tail.Session())
		}
	}
	f(len(whole))
	f(1000)
	f(97)

	// A line past maxLine, between two records, written in two halves.
	lines := bytes.SplitAfter(whole, []byte("\n"))
	path := filepath.Join(t.TempDir(), filepath.Base(file))
	appendFile(t, path, bytes.Join(lines[:4], nil)) // session_meta … the first call
	tail := NewTail(path, "h", "u")
	first, _ := tail.Next()
	huge := bytes.Repeat([]byte("x"), maxLine/2+1)
	appendFile(t, path, huge)
	if envs, err := tail.Next(); len(envs) != 0 || err != nil {
		t.Fatalf("half a huge line: %v %v", envs, err)
	}
	appendFile(t, path, append(huge, '\n'))
	appendFile(t, path, bytes.Join(lines[4:], nil))
	rest, err := tail.Next()
	if first, rest = tools(first), tools(rest); err != nil || len(first) != 1 || len(rest) != 5 {
		t.Fatalf("with a huge line: %d + %d envelopes, want 1 + 5 (%v)", len(first), len(rest), err)
	}
}

func appendFile(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
}

// tools returns the envelopes of tool events.
func tools(envs []event.Envelope) []event.Envelope {
	var out []event.Envelope
	for _, e := range envs {
		if p, err := event.Decode(e.Payload); err == nil && p.Tool() != nil {
			out = append(out, e)
		}
	}
	return out
}

// TestReadWebSearch: a web search the model ran (a real rollout of Codex
// 0.169; no hook fires for it) is a call of its own, and the response's
// usage names the turn's model.
func TestReadWebSearch(t *testing.T) {
	envs, err := Read("../testdata/rollout-2026-11-25T16-00-39-01a2136f-dd18-74f0-84e8-1ce61761151f.jsonl", "", "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range envs {
		var p struct {
			Name      string          `json:"hook_event_name"`
			Tool      string          `json:"tool_name"`
			ID        string          `json:"tool_use_id"`
			Input     json.RawMessage `json:"tool_input"`
			Model     string          `json:"model"`
			Turn      string          `json:"turn_id"`
			MessageID string          `json:"message_id"`
		}
		if err := json.Unmarshal(e.Payload, &p); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s %s %s %s %s %s", p.Name, p.Tool, p.ID, p.Input, p.Model, p.MessageID))
		if p.Turn != "01a2136f-dd65-7c53-bc82-82072265aec5" {
			t.Errorf("%s: turn %q", p.Name, p.Turn)
		}
	}
	want := []string{
		`PreToolUse web_search ws_000003 {"type":"search","query":"hookwatch codex"}  `,
		`PostToolUse web_search ws_000003 {"type":"search","query":"hookwatch codex"}  `,
		`TranscriptUsage    gpt-5.5 01a2136f-dd18-74f0-84e8-1ce61761151f:14`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

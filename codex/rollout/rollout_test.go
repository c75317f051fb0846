package rollout

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/codex"
	"github.com/hookwatch/hookwatch/event"
)

// file is a real rollout of Codex 0.169 (records the reader skips left
// out, paths rewritten): `echo hello > hi.txt && ls` (call_000004),
// apply_patch (call_000007), `echo bad; exit 3` (call_000010).
const file = "../testdata/rollout-2026-11-25T14-46-05-01a2132b-c636-7c31-93a8-aeaecf1768f7.jsonl"

// subagentRollout is a subagent's rollout (real, Codex 0.169, spawned by
// spawn_agent): this package's alone, as the sessions of the shared
// fixtures are whole sessions, for the commands' tests.
var subagentRollout = filepath.Join("testdata", "rollout-2026-12-01T03-54-03-01a22fbc-f7e2-7d32-aa89-c0fb650dcf4f.jsonl")

func TestRead(t *testing.T) {
	envs, _, err := Read(file, "h", "u")
	if err != nil {
		t.Fatal(err)
	}
	type view struct {
		name, tool, id, input string
		exit                  int
	}
	var got []view
	var usage []string
	ends, prompts := 0, []string(nil)
	for _, e := range envs {
		p, err := event.Decode(e.Payload)
		if err != nil {
			t.Fatal(err)
		}
		switch e := p.Event.(type) {
		case *event.SessionEndInput:
			ends++
			continue
		case *event.UserPromptSubmitInput:
			prompts = append(prompts, e.Prompt+" "+p.Model+" "+p.TurnID)
			continue
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
	// The user's prompt (the file keeps no turn_context: no model).
	if fmt.Sprint(prompts) != "[do it  01a2132b-c66b-7141-b184-5de8b4391722]" {
		t.Errorf("prompts %q", prompts)
	}
	// A `codex exec` run ends with its turn.
	if ends != 1 {
		t.Errorf("%d session ends, want the exec run's", ends)
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
	again, _, _ := Read(file, "h", "u")
	for i := range envs {
		if again[i].ID != envs[i].ID {
			t.Fatalf("id %s then %s", envs[i].ID, again[i].ID)
		}
	}
	if _, _, err := Read("../testdata/none.jsonl", "", ""); err == nil {
		t.Error("a missing file read")
	}
}

// TestReadDenied: a call a PreToolUse hook denied (a real rollout) has no
// result but the refusal, read as a PermissionDenied with the reason.
func TestReadDenied(t *testing.T) {
	envs, _, err := Read("../testdata/rollout-2026-11-25T15-19-47-01a2134a-a05f-7352-b020-bbc5e8c0633b.jsonl", "", "")
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
// the bound on a record is passed over, by Read too.
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
		want, _, err := Read(path, "h", "u")
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

	// A line past MaxLine, between two records, written in two halves.
	lines := bytes.SplitAfter(whole, []byte("\n"))
	path := filepath.Join(t.TempDir(), filepath.Base(file))
	appendFile(t, path, bytes.Join(lines[:4], nil)) // session_meta … the first call
	tail := NewTail(path, "h", "u")
	first, _ := tail.Next()
	huge := bytes.Repeat([]byte("x"), MaxLine/2+1)
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
	if st := tail.Lost(); st != (Stats{Long: 1}) {
		t.Errorf("a huge line written in two halves: %+v lost, want 1 long", st)
	}
	// Read, of the whole file, passes over it as the tail does.
	if all, _, err := Read(path, "h", "u"); err != nil || len(tools(all)) != 6 {
		t.Fatalf("Read with a huge line: %d envelopes, %v; want 6", len(tools(all)), err)
	}
	// And reads a last line that has no newline.
	cut := filepath.Join(t.TempDir(), filepath.Base(file))
	appendFile(t, cut, bytes.TrimSuffix(whole, []byte("\n")))
	ref, _, err := Read(file, "h", "u")
	if err != nil {
		t.Fatal(err)
	}
	if all, _, err := Read(cut, "h", "u"); err != nil || len(all) != len(ref) {
		t.Fatalf("Read of a file without its last newline: %d envelopes, %v; want %d", len(all), err, len(ref))
	}
}

// TestTailPastMaxLine: the part of a line past MaxLine that a Tail has
// read is passed over for good, and its rest, written later, too.
func TestTailPastMaxLine(t *testing.T) {
	whole, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(whole, []byte("\n"))
	head := bytes.Join(lines[:4], nil)
	path := filepath.Join(t.TempDir(), filepath.Base(file))
	appendFile(t, path, head)
	tail := NewTail(path, "h", "u")
	first, _ := tail.Next()
	appendFile(t, path, bytes.Repeat([]byte("x"), MaxLine+1))
	if envs, err := tail.Next(); len(envs) != 0 || err != nil {
		t.Fatalf("a line past MaxLine, not ended: %v %v", envs, err)
	}
	if st := tail.Lost(); st != (Stats{}) {
		t.Errorf("a line past MaxLine, not ended: %+v lost, want none until it ends", st)
	}
	if want := int64(len(head) + MaxLine + 1); tail.Offset() != want {
		t.Errorf("offset %d, want %d: past what was read of the line", tail.Offset(), want)
	}
	if envs, err := tail.Next(); len(envs) != 0 || err != nil {
		t.Fatalf("nothing new: %v %v", envs, err)
	}
	appendFile(t, path, []byte("xx\n"))
	appendFile(t, path, bytes.Join(lines[4:], nil))
	rest, err := tail.Next()
	if first, rest = tools(first), tools(rest); err != nil || len(first) != 1 || len(rest) != 5 {
		t.Fatalf("%d + %d envelopes, want 1 + 5 (%v)", len(first), len(rest), err)
	}
	if tail.Offset() != int64(len(whole)+MaxLine+1+3) {
		t.Errorf("offset %d, want the file's size %d", tail.Offset(), len(whole)+MaxLine+1+3)
	}
	if st := tail.Lost(); st != (Stats{Long: 1}) {
		t.Errorf("a line past MaxLine read in two calls: %+v lost, want 1 long", st)
	}
}

// TestResumeTail: a Tail resumed at the offset another reached (a
// collector restarted) returns what the first would have returned next,
// the calls started before the offset completed by their results after
// it, and nothing of before; a Tail stopped within a line past MaxLine is
// resumed there, the line lost once.
func TestResumeTail(t *testing.T) {
	whole, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for off := 0; off <= len(whole); {
		path := filepath.Join(t.TempDir(), filepath.Base(file))
		appendFile(t, path, whole[:off])
		first := NewTail(path, "h", "u")
		got, err := first.Next()
		if err != nil || first.Offset() != int64(off) {
			t.Fatalf("at %d: offset %d, %v", off, first.Offset(), err)
		}
		appendFile(t, path, whole[off:])
		ref, _, err := Read(path, "h", "u")
		if err != nil {
			t.Fatal(err)
		}
		resumed, err := ResumeTail(path, "h", "u", first.Offset())
		if err != nil {
			t.Fatal(err)
		}
		if resumed.Offset() != int64(off) || resumed.Session() != first.Session() {
			t.Fatalf("resumed at %d: offset %d, session %q, want %q", off, resumed.Offset(), resumed.Session(), first.Session())
		}
		rest, err := resumed.Next()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, rest...)
		if len(got) != len(ref) {
			t.Fatalf("resumed at %d: %d envelopes in all, want %d", off, len(got), len(ref))
		}
		for i := range ref {
			if got[i].ID != ref[i].ID || string(got[i].Payload) != string(ref[i].Payload) {
				t.Errorf("resumed at %d: %d: got %s %s, want %s %s", off, i, got[i].ID, got[i].Payload, ref[i].ID, ref[i].Payload)
			}
		}
		if off == len(whole) {
			break
		}
		off += bytes.IndexByte(whole[off:], '\n') + 1
	}

	// Stopped within a line past MaxLine, not ended yet.
	lines := bytes.SplitAfter(whole, []byte("\n"))
	path := filepath.Join(t.TempDir(), filepath.Base(file))
	appendFile(t, path, bytes.Join(lines[:4], nil))
	appendFile(t, path, bytes.Repeat([]byte("x"), MaxLine+1))
	first := NewTail(path, "h", "u")
	if _, err := first.Next(); err != nil {
		t.Fatal(err)
	}
	appendFile(t, path, []byte("xx\n"))
	appendFile(t, path, bytes.Join(lines[4:], nil))
	resumed, err := ResumeTail(path, "h", "u", first.Offset())
	if err != nil {
		t.Fatal(err)
	}
	rest, err := resumed.Next()
	if rest = tools(rest); err != nil || len(rest) != 5 {
		t.Fatalf("resumed within a long line: %d envelopes, want 5 (%v)", len(rest), err)
	}
	if st := resumed.Lost(); st != (Stats{Long: 1}) {
		t.Errorf("resumed within a long line: %+v lost, want 1 long", st)
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
// TestTailSkipTo: a Tail moved on past lines another reader read (an
// import, on from the Tail's offset kept) returns, from its next Next,
// the envelopes of what follows them, as a Tail that had read them would
// have; none of the lines skipped.
func TestTailSkipTo(t *testing.T) {
	whole, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var ends []int64 // every line end
	for off := 0; off < len(whole); {
		off += bytes.IndexByte(whole[off:], '\n') + 1
		ends = append(ends, int64(off))
	}
	path := filepath.Join(t.TempDir(), filepath.Base(file))
	appendFile(t, path, whole)
	// What a Tail that had read on past each line end returns after it
	// (ReadOn, held to ResumeTail's and Read's by the tests above).
	after := map[int64][]string{}
	for _, end := range ends {
		envs, _, err := ReadOn(path, "h", "u", end)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range envs {
			after[end] = append(after[end], e.ID+" "+string(e.Payload))
		}
	}
	for i, from := range ends {
		for _, to := range ends[i:] {
			tl, err := ResumeTail(path, "h", "u", from)
			if err != nil {
				t.Fatal(err)
			}
			if err := tl.SkipTo(to); err != nil || tl.Offset() != to {
				t.Fatalf("from %d, skipped to %d: offset %d, %v", from, to, tl.Offset(), err)
			}
			if err := tl.SkipTo(from); err != nil || tl.Offset() != to {
				t.Fatalf("skipped back to %d from %d: offset %d, %v; want it left at %d", from, to, tl.Offset(), err, to)
			}
			got, err := tl.Next()
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, e := range got {
				ids = append(ids, e.ID+" "+string(e.Payload))
			}
			if !slices.Equal(ids, after[to]) {
				t.Errorf("from %d, skipped to %d: %d envelopes, want %d", from, to, len(ids), len(after[to]))
			}
		}
	}
	// An offset within a line: the Tail stops at the line end before it.
	tl := NewTail(path, "h", "u")
	if err := tl.SkipTo(ends[2] + 3); err != nil || tl.Offset() != ends[2] {
		t.Fatalf("skipped to within a line: offset %d, %v; want %d", tl.Offset(), err, ends[2])
	}
}

func TestReadWebSearch(t *testing.T) {
	envs, _, err := Read("../testdata/rollout-2026-11-25T16-00-39-01a2136f-dd18-74f0-84e8-1ce61761151f.jsonl", "", "")
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

// summary returns one line per envelope of envs that is not token usage:
// its event, tool, call, exit code, and the failure's error and interrupt.
func summary(t *testing.T, envs []event.Envelope) []string {
	t.Helper()
	var out []string
	for _, e := range envs {
		if IsUsage(e) {
			continue
		}
		var p struct {
			Name      string `json:"hook_event_name"`
			Tool      string `json:"tool_name"`
			ID        string `json:"tool_use_id"`
			Error     string `json:"error"`
			Interrupt bool   `json:"is_interrupt"`
			Prompt    string `json:"prompt"`
			Model     string `json:"model"`
			Reason    string `json:"reason"`
			Turn      string `json:"turn_id"`
		}
		if err := json.Unmarshal(e.Payload, &p); err != nil {
			t.Fatal(err)
		}
		line := p.Name
		switch p.Name {
		case event.UserPromptSubmit:
			line += fmt.Sprintf(" %q %s %s", p.Prompt, p.Model, p.Turn)
		case event.SessionEnd:
			line += " " + p.Reason
		default:
			line += " " + p.Tool + " " + p.ID
			if e.ExitCode != nil {
				line += fmt.Sprintf(" exit %d", *e.ExitCode)
			}
			if p.Error != "" {
				line += fmt.Sprintf(" error %q", p.Error)
			}
			if p.Interrupt {
				line += " interrupt"
			}
		}
		out = append(out, line)
	}
	return out
}

func readSummary(t *testing.T, path string) []string {
	t.Helper()
	envs, _, err := Read(path, "", "")
	if err != nil {
		t.Fatal(err)
	}
	return summary(t, envs)
}

func sameLines(t *testing.T, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestReadInterrupted: a command interrupted by the user (a real rollout
// of Codex 0.169: Ctrl-C on `codex exec` during `sleep 30`) — its output
// "aborted by user", then the turn_aborted, then its item_completed with
// exit code -1 — is a PostToolUseFailure with is_interrupt, not a
// result; the exec run ends with the turn.
func TestReadInterrupted(t *testing.T) {
	sameLines(t, readSummary(t, "../testdata/rollout-2026-11-30T00-28-40-01a229da-93cd-7040-bd45-f5ddb1d5c40a.jsonl"), []string{
		`UserPromptSubmit "Run a slow one" gpt-5.5 01a229da-93dd-7990-b276-cc903d1d1afd`,
		`PreToolUse Bash call_000016`,
		`PostToolUseFailure Bash call_000016 error "Wall time: 5.7 seconds\naborted by user" interrupt`,
		`SessionEnd other`,
	})
}

// TestReadYielded: a command that yielded (yield_time_ms) and was killed
// when `codex exec` ended (a real rollout): its output "Process running
// with session ID …" is not its end, its item_completed is — exit code -1,
// after the turn's task_complete.
func TestReadYielded(t *testing.T) {
	envs, _, err := Read("../testdata/rollout-2026-11-30T00-30-20-01a229dc-1aa3-7a63-b2bf-bdf2419a639b.jsonl", "", "")
	if err != nil {
		t.Fatal(err)
	}
	sameLines(t, summary(t, envs), []string{
		`UserPromptSubmit "Yield test" gpt-5.5 01a229dc-1aba-7571-b403-c84045030c3d`,
		`PreToolUse Bash call_000011`,
		`SessionEnd other`,
		`PostToolUse Bash call_000011 exit -1`,
	})
	// The result is stamped when the process ended, not when it yielded.
	if at := envs[len(envs)-1].ReceivedAt.Format(time.RFC3339Nano); at != "2026-11-30T00:30:21.187Z" {
		t.Errorf("the command ended at %s", at)
	}
}

// TestReadPatchFailed: a patch Codex refused (a real rollout: an Update
// File of a file that does not exist — no FileChange item, the output
// "apply_patch verification failed: …") is a PostToolUseFailure; a
// command that failed is a result with its exit code.
func TestReadPatchFailed(t *testing.T) {
	sameLines(t, readSummary(t, "../testdata/rollout-2026-11-30T00-30-19-01a229dc-18be-7000-9cea-a05da2ec00c3.jsonl"), []string{
		`UserPromptSubmit "Patch failure" gpt-5.5 01a229dc-18e2-7153-a022-f30ef5be939f`,
		`PreToolUse apply_patch call_000003`,
		`PostToolUseFailure apply_patch call_000003 error "apply_patch verification failed: Failed to read file to update /home/dev/src/demo/missing.md: No such file or directory (os error 2)"`,
		`PreToolUse Bash call_000006`,
		`PostToolUse Bash call_000006 exit 127`,
		`SessionEnd other`,
	})
}

// TestReadPatchStatus: a patch's outcome is its FileChange item's status,
// whatever its output says; a command whose end never came has no result.
func TestReadPatchStatus(t *testing.T) {
	meta := `{"timestamp":"2026-11-30T00:00:00Z","type":"session_meta","payload":{"id":"t1","session_id":"t1","cwd":"/w","source":"cli"}}`
	call := func(id, name string) string {
		return `{"timestamp":"2026-11-30T00:00:01Z","type":"response_item","payload":{"type":"custom_tool_call","call_id":"` + id + `","name":"` + name + `","input":"*** Begin Patch\n*** End Patch\n","internal_chat_message_metadata_passthrough":{"turn_id":"u1"}}}`
	}
	item := func(id, status string) string {
		return `{"timestamp":"2026-11-30T00:00:02Z","type":"event_msg","payload":{"type":"item_completed","turn_id":"u1","item":{"type":"FileChange","id":"` + id + `","status":"` + status + `"}}}`
	}
	output := func(id, out string) string {
		return `{"timestamp":"2026-11-30T00:00:03Z","type":"response_item","payload":{"type":"custom_tool_call_output","call_id":"` + id + `","output":"` + out + `"}}`
	}
	command := `{"timestamp":"2026-11-30T00:00:04Z","type":"response_item","payload":{"type":"function_call","call_id":"c9","name":"exec_command","arguments":"{\"cmd\":\"sleep 9\"}","internal_chat_message_metadata_passthrough":{"turn_id":"u1"}}}`
	running := `{"timestamp":"2026-11-30T00:00:05Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c9","output":"Process running with session ID 7"}}`
	done := `{"timestamp":"2026-11-30T00:00:06Z","type":"event_msg","payload":{"type":"task_complete","turn_id":"u1"}}`
	r := NewReader("/w/rollout-x.jsonl", "", "")
	var envs []event.Envelope
	for _, l := range []string{meta,
		call("p1", "apply_patch"), item("p1", "completed"), output("p1", "Exit code: 0"),
		call("p2", "apply_patch"), item("p2", "failed"), output("p2", "Exit code: 1"),
		call("p3", "other_tool"), output("p3", "whatever"),
		command, running, done,
	} {
		envs = append(envs, r.Record([]byte(l))...)
	}
	sameLines(t, summary(t, envs), []string{
		`PreToolUse apply_patch p1`, `PostToolUse apply_patch p1`,
		`PreToolUse apply_patch p2`, `PostToolUseFailure apply_patch p2 error "Exit code: 1"`,
		`PreToolUse other_tool p3`, `PostToolUse other_tool p3`,
		`PreToolUse Bash c9`, // still running: no end, and no session end (not exec)
	})
}

// TestSummarize reads real rollouts of Codex 0.169 for what a listing of
// sessions shows, and stops at the session_meta record when keep says no.
func TestSummarize(t *testing.T) {
	const patch = "../testdata/rollout-2026-11-30T00-30-19-01a229dc-18be-7000-9cea-a05da2ec00c3.jsonl"
	s, ok, err := Summarize(patch, func(s Summary) bool {
		if s.Thread != "01a229dc-18be-7000-9cea-a05da2ec00c3" || s.CWD != "/home/dev/src/demo" || s.Source != "exec" || s.Prompts != 0 {
			t.Errorf("keep asked with %+v", s)
		}
		return true
	})
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	abs, _ := filepath.Abs(patch)
	want := Summary{Path: abs, Thread: "01a229dc-18be-7000-9cea-a05da2ec00c3", Session: "01a229dc-18be-7000-9cea-a05da2ec00c3",
		CWD: "/home/dev/src/demo", Source: "exec", Model: "gpt-5.5", FirstPrompt: "Patch failure", Prompts: 1, LastAnswer: "Patch failed.",
		Started: time.Date(2026, 11, 30, 0, 30, 19, 884e6, time.UTC), LastActivity: time.Date(2026, 11, 30, 0, 30, 20, 174e6, time.UTC)}
	if s != want {
		t.Errorf("summary\n%+v, want\n%+v", s, want)
	}

	// Refused at its session_meta: nothing more is read.
	s, ok, err = Summarize(file, func(Summary) bool { return false })
	if err != nil || ok || s != (Summary{}) {
		t.Errorf("refused: %+v %v %v", s, ok, err)
	}
	notRollout := filepath.Join(t.TempDir(), "rollout-x.jsonl")
	os.WriteFile(notRollout, []byte("{}\nnot json\n"), 0o644)
	if _, _, err := Summarize(notRollout, func(Summary) bool { return true }); err == nil || !strings.Contains(err.Error(), "no session_meta") {
		t.Errorf("a file with no session_meta: %v", err)
	}
}

// TestSummarySubagent: a subagent's session_meta names its root's session
// and, in its source, the thread that spawned it.
func TestSummarySubagent(t *testing.T) {
	r := NewReader("x.jsonl", "", "")
	r.Record([]byte(`{"timestamp":"2026-11-30T00:00:00Z","ordinal":0,"type":"session_meta","payload":{"id":"child","session_id":"root","cwd":"/p",` +
		`"source":{"subagent":{"thread_spawn":{"parent_thread_id":"root","depth":1,"agent_nickname":"x"}}}}}`))
	if s := r.Summary(); s.Thread != "child" || s.Session != "root" || s.Parent != "root" || s.Source != "subagent" || s.Nickname != "x" {
		t.Errorf("subagent summary %+v", s)
	}
}

// TestReadNickname: a subagent's rollout (real, Codex 0.169) names the
// agent's nickname in its session_meta, beside its source's; each of the
// envelopes of the agent carries it (agent_nickname), which no hook does,
// and a session's own rollout names none.
func TestReadNickname(t *testing.T) {
	for name, want := range map[string]string{subagentRollout: "Copernicus", file: ""} {
		s, _, err := Summarize(name, func(Summary) bool { return true })
		if err != nil || s.Nickname != want {
			t.Errorf("%s: summary nickname %q, %v; want %q", name, s.Nickname, err, want)
		}
		envs, _, err := Read(name, "h", "u")
		if err != nil || len(envs) == 0 {
			t.Fatalf("%s: %d envelopes, %v", name, len(envs), err)
		}
		for _, e := range envs {
			var p struct {
				AgentNickname *string `json:"agent_nickname"`
			}
			if err := json.Unmarshal(e.Payload, &p); err != nil {
				t.Fatal(err)
			}
			if got := p.AgentNickname; want == "" && got != nil || want != "" && (got == nil || *got != want) {
				t.Errorf("%s: %s of agent_nickname %v, want %q", name, e.ID, got, want)
			}
		}
	}
	// Both: the session_meta's own wins.
	r := NewReader("x.jsonl", "", "")
	r.Record([]byte(`{"timestamp":"2026-11-30T00:00:00Z","ordinal":0,"type":"session_meta","payload":{"id":"child","session_id":"root",` +
		`"agent_nickname":"Maxwell","source":{"subagent":{"thread_spawn":{"parent_thread_id":"root","agent_nickname":"x"}}}}}`))
	if s := r.Summary(); s.Nickname != "Maxwell" {
		t.Errorf("nickname %q, want the session_meta's own, Maxwell", s.Nickname)
	}
}

// FuzzRecord feeds a Reader lines built from a real rollout's, cut and
// altered: it never panics, its envelopes are JSON, and its summary has
// no first prompt without counting it, nor activity before its start.
func FuzzRecord(f *testing.F) {
	b, err := os.ReadFile("../testdata/rollout-2026-11-30T00-30-19-01a229dc-18be-7000-9cea-a05da2ec00c3.jsonl")
	if err != nil {
		f.Fatal(err)
	}
	for _, l := range bytes.Split(b, []byte("\n")) {
		f.Add(l)
	}
	meta, _, _ := bytes.Cut(b, []byte("\n"))
	f.Fuzz(func(t *testing.T, line []byte) {
		r := NewReader("x.jsonl", "h", "u")
		for _, l := range [][]byte{line, meta, line, line} {
			for _, e := range r.Record(l) {
				if !json.Valid(e.Payload) {
					t.Fatalf("invalid payload %s", e.Payload)
				}
			}
		}
		s := r.Summary()
		if s.FirstPrompt != "" && s.Prompts == 0 || s.LastActivity.Before(s.Started) {
			t.Fatalf("summary %+v", s)
		}
	})
}

// TestReadUsagePrompt: a response's usage names the turn it was spent in,
// and its prompt as the hooks' events name it (event.PromptOf): the
// turn's for the main agent, none for a subagent, whose turn is no prompt
// of the user's. The subagent's rollout is a real one of Codex 0.169,
// spawned by spawn_agent.
func TestReadUsagePrompt(t *testing.T) {
	for name, sub := range map[string]bool{
		subagentRollout: true,
		filepath.Join("..", "testdata", "rollout-2026-11-30T00-30-19-01a229dc-18be-7000-9cea-a05da2ec00c3.jsonl"): false,
	} {
		envs, _, err := Read(name, "h", "u")
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, e := range envs {
			p, err := event.Decode(e.Payload)
			if err != nil {
				t.Fatal(err)
			}
			if p.Name() != UsageEvent {
				continue
			}
			n++
			if p.TurnID == "" || (p.AgentID != "") != sub || sub && p.PromptID != "" || !sub && p.PromptID != p.TurnID {
				t.Errorf("%s: usage of agent %q, turn %q, prompt %q", name, p.AgentID, p.TurnID, p.PromptID)
			}
		}
		if n == 0 {
			t.Errorf("%s: no usage read", name)
		}
	}
}

// TestReadFork: a fork's rollout (real, Codex 0.169's thread/fork) starts
// with the SessionStart its hook sends (source fork), with the session it
// was forked from as the hook reads it (Envelope.ForkOf, from the same
// session_meta record); a thread that is no fork, and a subagent's, start
// with none.
func TestReadFork(t *testing.T) {
	const fork, parent = "01a23316-3758-7a81-a9c2-a6bb4415263b", "01a23316-345b-74a0-a31e-017bc0d13103"
	envs, _, err := Read("../testdata/rollout-2026-12-01T19-30-23-"+fork+".jsonl", "h", "u")
	if err != nil {
		t.Fatal(err)
	}
	var starts []event.Envelope
	for _, e := range envs {
		if p, _ := event.Decode(e.Payload); p.Name() == event.SessionStart {
			starts = append(starts, e)
		}
	}
	if len(starts) != 1 || starts[0].ID != envs[0].ID {
		t.Fatalf("%d SessionStart, want the first of %d envelopes", len(starts), len(envs))
	}
	e := starts[0]
	p, _ := event.Decode(e.Payload)
	ss, _ := p.Event.(*event.SessionStartInput)
	if ss == nil || ss.Source != "fork" || p.SessionID != fork || p.AgentID != "" || p.CWD != "/home/dev/src/demo" || e.ForkOf != parent ||
		e.Kind != event.KindRollout || e.Host != "h" || e.ReceivedAt.Format(time.RFC3339Nano) != "2026-12-01T19:30:23.73Z" {
		t.Errorf("fork's start %+v payload %s", e, e.Payload)
	}
	// The hook's path reads the same record for the same parent.
	if got := codex.ForkParent("../testdata/rollout-2026-12-01T19-30-23-"+fork+".jsonl", fork); got != e.ForkOf {
		t.Errorf("codex.ForkParent %q, the rollout's %q", got, e.ForkOf)
	}

	for _, name := range []string{file, subagentRollout} {
		envs, _, err := Read(name, "", "")
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range envs {
			if p, _ := event.Decode(e.Payload); p.Name() == event.SessionStart || e.ForkOf != "" {
				t.Errorf("%s: %s fork of %q", name, p.Name(), e.ForkOf)
			}
		}
	}
}

// TestReadLost: the lines Read loses — above MaxLine, not JSON, torn by
// a crash, a record of the wrong shape — are counted, apart from the
// record types no envelope comes of and blank lines, and the records
// around them read as if they were not there.
func TestReadLost(t *testing.T) {
	whole, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(whole, []byte("\n"))
	huge := `{"timestamp":"2026-11-25T14:46:10.000Z","type":"response_item","payload":{"type":"message","content":"` + strings.Repeat("x", MaxLine) + `"}}` + "\n"
	lost := `{"timestamp":"2026-11-25T14:46:10.000Z","type":"response_item","payload":{"type":"function_call","name":"exec_command","call_id":"call_torn` + "\n" + // a crash's torn line
		"not json\n" +
		`{"timestamp":7,"type":"event_msg","payload":{}}` + "\n" + // a field of another type
		`{"timestamp":"2026-11-25T14:46:10.000Z","type":"a_later_record","payload":{"any":[1]}}` + "\n" + // of no use: not lost
		"\n" + huge
	path := filepath.Join(t.TempDir(), filepath.Base(file))
	appendFile(t, path, bytes.Join(lines[:3], nil))
	appendFile(t, path, []byte(lost))
	appendFile(t, path, bytes.Join(lines[3:], nil))
	ref, st, err := Read(file, "h", "u")
	if err != nil || st != (Stats{}) {
		t.Fatalf("Read(%s): %+v, %v; want nothing lost", file, st, err)
	}
	envs, st, err := Read(path, "h", "u")
	if err != nil || len(envs) != len(ref) || st != (Stats{Long: 1, Unreadable: 3}) {
		t.Fatalf("Read with lost lines: %d envelopes, %+v, %v; want %d, 1 long, 3 unreadable", len(envs), st, err, len(ref))
	}
	// A Tail (the collector's) loses the same lines, and counts them so.
	tail := NewTail(path, "h", "u")
	if tenvs, err := tail.Next(); err != nil || len(tenvs) != len(ref) || tail.Lost() != st {
		t.Fatalf("Tail with lost lines: %d envelopes, %+v, %v; want %d, %+v", len(tenvs), tail.Lost(), err, len(ref), st)
	}
}

// TestReadNothingLost: the real rollouts of the fixtures lose no line:
// every record type Codex writes has a shape Read takes, so that import
// says nothing of a loss there is not.
func TestReadNothingLost(t *testing.T) {
	var paths []string
	for _, g := range []string{"../testdata/*.jsonl", "testdata/*.jsonl", "../../attribution/testdata/codex-*/rollout-*.jsonl"} {
		m, _ := filepath.Glob(g)
		paths = append(paths, m...)
	}
	if len(paths) < 8 {
		t.Fatalf("only %d fixtures found", len(paths))
	}
	for _, p := range paths {
		if _, st, err := Read(p, "", ""); err != nil || st != (Stats{}) {
			t.Errorf("Read(%s): %+v, %v; want nothing lost", p, st, err)
		}
	}
}

// TestReadOn: ReadOn goes on from an offset a Tail reached as the Tail
// would have, counting only the lines lost after it; an offset past the
// end (the file truncated) or within a line (the file replaced) is read
// from the start, and said so.
func TestReadOn(t *testing.T) {
	whole, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(whole, []byte("\n"))
	head := bytes.Join(lines[:12], nil)
	path := filepath.Join(t.TempDir(), filepath.Base(file))
	appendFile(t, path, head)
	appendFile(t, path, []byte("not json\n"))
	first, r, err := ReadOn(path, "h", "u", 0)
	if err != nil || r.FromStart || r.Offset != int64(len(head)+len("not json\n")) || r.Lost != (Stats{Unreadable: 1}) {
		t.Fatalf("ReadOn from 0: %+v, %v", r, err)
	}
	appendFile(t, path, bytes.Join(lines[12:], nil))
	appendFile(t, path, []byte(`{"torn":`)) // being written: left
	rest, r2, err := ReadOn(path, "h", "u", r.Offset)
	if err != nil || r2.FromStart || r2.Offset != int64(len(head)+len("not json\n")+len(whole)-len(head)) || r2.Lost != (Stats{}) {
		t.Fatalf("ReadOn on from %d: %+v, %v", r.Offset, r2, err)
	}
	ref, _, err := Read(path, "h", "u") // the same file read whole
	if err != nil {
		t.Fatal(err)
	}
	got := append(first, rest...)
	if len(got) != len(ref) {
		t.Fatalf("read in two: %d envelopes, want %d", len(got), len(ref))
	}
	for i := range ref {
		if got[i].ID != ref[i].ID || string(got[i].Payload) != string(ref[i].Payload) {
			t.Errorf("%d: got %s %s, want %s %s", i, got[i].ID, got[i].Payload, ref[i].ID, ref[i].Payload)
		}
	}
	if none, r3, err := ReadOn(path, "h", "u", r2.Offset); err != nil || len(none) != 0 || r3.Offset != r2.Offset || r3.FromStart {
		t.Fatalf("ReadOn at the end: %d envelopes, %+v, %v", len(none), r3, err)
	}

	// Truncated, then replaced by a longer file in which the offset falls
	// within a line: read from the start each time.
	for name, content := range map[string][]byte{
		"truncated": head,
		"replaced":  append([]byte(" "), whole...),
	} {
		os.WriteFile(path, content, 0o600)
		envs, r, err := ReadOn(path, "h", "u", int64(len(whole))-1)
		all, _, _ := Read(path, "h", "u")
		if err != nil || !r.FromStart || r.Offset != int64(len(content)) || len(envs) != len(all) {
			t.Errorf("%s: %d envelopes, %+v, %v; want all %d from the start", name, len(envs), r, err, len(all))
		}
	}

	// No session_meta: no rollout, as Read says.
	os.WriteFile(path, []byte("{}\n"), 0o600)
	if _, _, err := ReadOn(path, "h", "u", 0); err == nil || !strings.Contains(err.Error(), "no session_meta record") {
		t.Errorf("ReadOn of a file that is no rollout: %v", err)
	}
}

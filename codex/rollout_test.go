package codex

import (
	"os"
	"path/filepath"
	"testing"
)

// rollout is a real rollout of Codex 0.169 (lines of other records left
// out, paths rewritten): exec_command `echo hello > hi.txt && ls`
// (call_000004, exit 0), apply_patch (call_000007), `echo bad; exit 3`
// (call_000010).
const rollout = "testdata/rollout-2026-11-25T14-46-05-01a2132b-c636-7c31-93a8-aeaecf1768f7.jsonl"

func TestExitCode(t *testing.T) {
	f := func(path, id string, want int, wantOK bool) {
		t.Helper()
		got, ok := ExitCode(path, id)
		if got != want || ok != wantOK {
			t.Errorf("ExitCode(%s, %q) = %d, %v; want %d, %v", path, id, got, ok, want, wantOK)
		}
	}
	f(rollout, "call_000004", 0, true)
	f(rollout, "call_000010", 3, true)
	f(rollout, "call_000007", 0, false) // a patch has no exit code
	f(rollout, "call_0000", 0, false)
	f(rollout, "", 0, false)
	f("testdata/missing/rollout-x.jsonl", "call_000004", 0, false)

	// Not a rollout by its name: never opened.
	dir := t.TempDir()
	b, err := os.ReadFile(rollout)
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "notes.jsonl")
	if err := os.WriteFile(other, b, 0o644); err != nil {
		t.Fatal(err)
	}
	f(other, "call_000010", 0, false)

	// Only the last MiB is read: a record before it is not found, one
	// cut by the read's start is skipped, the latest record wins.
	big := filepath.Join(dir, "rollout-big.jsonl")
	pad := make([]byte, tails[len(tails)-1])
	for i := range pad {
		pad[i] = 'x'
	}
	pad[len(pad)-1] = '\n'
	late := []byte(`{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"CommandExecution","id":"call_000010","exit_code":7}}}` + "\n")
	if err := os.WriteFile(big, append(append(append([]byte(nil), b...), pad...), late...), 0o644); err != nil {
		t.Fatal(err)
	}
	f(big, "call_000004", 0, false)
	f(big, "call_000010", 7, true)
}

// BenchmarkExitCode is what a Codex PostToolUse of a command adds to the
// hook: finding the call's record at the end of a rollout of a MiB and
// more (the read is bounded to its last MiB).
func BenchmarkExitCode(b *testing.B) {
	dir := b.TempDir()
	real, err := os.ReadFile(rollout)
	if err != nil {
		b.Fatal(err)
	}
	var big []byte
	for len(big) < 2<<20 {
		big = append(big, real...)
	}
	path := filepath.Join(dir, "rollout-bench.jsonl")
	if err := os.WriteFile(path, big, 0o644); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, ok := ExitCode(path, "call_000010"); !ok {
			b.Fatal("not found")
		}
	}
}

// TestCommandEnd: only an event_msg record of an item_completed with an
// exit code ends a command.
func TestCommandEnd(t *testing.T) {
	for line, want := range map[string]bool{
		`{"type":"event_msg","payload":{"type":"item_completed","item":{"id":"call_1","exit_code":3}}}`:     true,
		`{"type":"response_item","payload":{"type":"item_completed","item":{"id":"call_1","exit_code":3}}}`: false,
		`{"type":"event_msg","payload":{"type":"item_started","item":{"id":"call_1","exit_code":3}}}`:       false,
		`{"type":"event_msg","payload":{"type":"item_completed","item":{"id":"call_1"}}}`:                   false,
		`{"type":"event_msg","payload":{"type":"item_completed","item":{"id":"call_1","exit_code":"3"}}}`:   false,
		`not json`: false,
	} {
		id, code, ok := CommandEnd([]byte(line))
		if ok != want || ok && (id != "call_1" || code != 3) {
			t.Errorf("CommandEnd(%s) = %q, %d, %v; want ok %v", line, id, code, ok, want)
		}
	}
}

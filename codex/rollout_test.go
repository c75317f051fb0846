package codex

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
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

// forkRollout is a real rollout of Codex 0.169 (paths rewritten): thread
// 01a23316-3758-… made by the app-server's thread/fork of session
// 01a23316-345b-… after its first turn, then a turn of its own.
const (
	forkRollout = "testdata/rollout-2026-12-01T19-30-23-01a23316-3758-7a81-a9c2-a6bb4415263b.jsonl"
	forkThread  = "01a23316-3758-7a81-a9c2-a6bb4415263b"
	forkParent  = "01a23316-345b-74a0-a31e-017bc0d13103"
)

func TestForkParent(t *testing.T) {
	f := func(path, id, want string) {
		t.Helper()
		if got := ForkParent(path, id); got != want {
			t.Errorf("ForkParent(%s, %q) = %q; want %q", path, id, got, want)
		}
	}
	f(forkRollout, forkThread, forkParent)
	f(forkRollout, forkParent, "") // named for another thread
	f(forkRollout, "", "")
	f(rollout, "01a2132b-c636-7c31-93a8-aeaecf1768f7", "") // not a fork
	f("testdata/missing/rollout-x-"+forkThread+".jsonl", forkThread, "")

	real, err := os.ReadFile(forkRollout)
	if err != nil {
		t.Fatal(err)
	}
	meta, rest, _ := bytes.Cut(real, []byte("\n"))
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	// The file's name must be the thread's rollout's, and its session_meta
	// the thread's.
	f(write("notes-"+forkThread+".jsonl", real), forkThread, "")
	f(write("rollout-2026-12-01T19-30-23-"+forkParent+".jsonl", real), forkParent, "")
	f(write("rollout-y-"+forkThread+".jsonl", append([]byte("{}\n"), real...)), forkThread, "")

	// A session_meta line longer than the first window is read whole, up
	// to the last: its instructions may grow.
	grown := func(pad int) []byte {
		i := bytes.Index(meta, []byte(`"base_instructions":{"text":"`))
		if i < 0 {
			t.Fatal("no base instructions in the fixture")
		}
		i += len(`"base_instructions":{"text":"`)
		line := append(append(append([]byte(nil), meta[:i]...), bytes.Repeat([]byte("x"), pad)...), meta[i:]...)
		return append(append(line, '\n'), rest...)
	}
	f(write("rollout-a-"+forkThread+".jsonl", grown(int(heads[0]))), forkThread, forkParent)
	f(write("rollout-b-"+forkThread+".jsonl", grown(int(heads[len(heads)-1]))), forkThread, "")

	// A FIFO named like the rollout is refused without blocking.
	fifo := filepath.Join(dir, "rollout-fifo-"+forkThread+".jsonl")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	f(fifo, forkThread, "")
}

package claudecode

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BenchmarkForkParentWorstCase: what a fork's SessionEnd costs the hook
// at most: its first message is in the head of each of the maxCandidates
// newest transcripts, each a fork whose copies run past copiesBytes (so
// maxDeepReads of them are read that far for their own first message, and
// found none), and the fork's own transcript is read that far too. A
// session that is no fork costs the read of its head.
func BenchmarkForkParentWorstCase(b *testing.B) {
	dir := b.TempDir()
	const first = "aaaaaaaa-0000-4000-8000-000000000000"
	line := `{"parentUuid":null,"type":"user","message":{"role":"user","content":"` + strings.Repeat("x", 900) + `"},"uuid":"%s","timestamp":"2026-11-25T10:00:00.000Z","sessionId":"%s"}` + "\n"
	fork := func(id string, size int) string {
		var sb strings.Builder
		fmt.Fprintf(&sb, `{"type":"queue-operation","timestamp":"2026-11-25T11:00:00.000Z","sessionId":"%s"}`+"\n", id)
		fmt.Fprintf(&sb, line, first, id)
		for j := 0; sb.Len() < size; j++ {
			fmt.Fprintf(&sb, line, fmt.Sprintf("bbbbbbbb-0000-4000-8000-%012d", j), id)
		}
		return sb.String()
	}
	for i := range maxCandidates + 4 {
		id := fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
		if err := os.WriteFile(filepath.Join(dir, id+".jsonl"), []byte(fork(id, copiesBytes+(64<<10))), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	self := "ffffffff-0000-4000-8000-000000000000"
	path := filepath.Join(dir, self+".jsonl")
	if err := os.WriteFile(path, []byte(fork(self, copiesBytes+(64<<10))), 0o600); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if p := ForkParent(path, self); p != "" {
			b.Fatalf("parent %q", p)
		}
	}
}

func TestStartsWithCopies(t *testing.T) {
	dir := t.TempDir()
	f := func(content string, want bool) {
		t.Helper()
		p := filepath.Join(dir, "s.jsonl")
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := startsWithCopies(readHead(p, parentHeadBytes)); got != want {
			t.Fatalf("startsWithCopies(%q) = %v, want %v", content, got, want)
		}
	}
	// As 2.1.332 writes them: a fork's bookkeeping line, written when the
	// fork started, precedes the parent's messages it copied.
	f(`{"type":"mode"}`+"\n"+`{"type":"queue-operation","timestamp":"2026-11-25T15:50:21.981Z"}`+"\n"+
		`{"type":"user","uuid":"79430752-0000","timestamp":"2026-11-25T15:50:08.880Z"}`+"\n", true)
	// The parent itself: its queue line is older than its first message.
	f(`{"type":"queue-operation","timestamp":"2026-11-25T15:50:08.338Z"}`+"\n"+
		`{"type":"user","uuid":"79430752-0000","timestamp":"2026-11-25T15:50:08.880Z"}`+"\n", false)
	f(`{"type":"user","uuid":"79430752-0000","timestamp":"2026-11-25T15:50:08.880Z"}`+"\n", false)
	f("", false)
	f(`{"type":"queue-operation","timestamp":"2026-11-25T15:50:21.981Z"}`, false) // a cut line
}

// TestForkParentFamily: a session forked twice, and one of its forks
// forked again, laid out as 2.1.332 writes them — each fork's transcript a
// bookkeeping line written when it started, then copies of its parent's
// messages (same uuid and timestamp, sessionId rewritten), then its own.
// Every transcript of the family holds the first message, and the most
// recently modified one is never the parent here: each fork names the
// session it was copied from, a sibling or a fork of its own never. Once
// with short messages, once with a second message longer than the heads
// read first, so that a fork's own messages come past its head.
func TestForkParentFamily(t *testing.T) {
	for _, pad := range []int{0, parentHeadBytes} {
		t.Run(fmt.Sprint(pad), func(t *testing.T) { testForkParentFamily(t, pad) })
	}
}

func testForkParentFamily(t *testing.T, pad int) {
	dir := filepath.Join(t.TempDir(), "-home-dev-src-demo")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	const x, y, z, w = "10000000-0000-4000-8000-000000000000", "20000000-0000-4000-8000-000000000000",
		"30000000-0000-4000-8000-000000000000", "40000000-0000-4000-8000-000000000000"
	type msg struct {
		uuid, at string
		pad      int
	}
	m1, m2 := msg{"aaaaaaaa-0000-4000-8000-000000000001", "2026-11-25T10:00:01.000Z", 0}, msg{"aaaaaaaa-0000-4000-8000-000000000002", "2026-11-25T10:00:02.000Z", pad}
	y1, y2 := msg{"bbbbbbbb-0000-4000-8000-000000000001", "2026-11-25T11:00:01.000Z", 0}, msg{"bbbbbbbb-0000-4000-8000-000000000002", "2026-11-25T11:00:02.000Z", 0}
	z1 := msg{"cccccccc-0000-4000-8000-000000000001", "2026-11-25T12:00:01.000Z", 0}
	w1 := msg{"dddddddd-0000-4000-8000-000000000001", "2026-11-25T13:00:01.000Z", 0}
	mtime := time.Date(2026, 11, 25, 14, 0, 0, 0, time.UTC)
	write := func(id, started string, msgs ...msg) {
		t.Helper()
		var sb strings.Builder
		fmt.Fprintf(&sb, `{"type":"mode","mode":"normal","sessionId":"%s"}`+"\n", id)
		fmt.Fprintf(&sb, `{"type":"queue-operation","operation":"enqueue","timestamp":"%s","sessionId":"%s"}`+"\n", started, id)
		for _, m := range msgs {
			fmt.Fprintf(&sb, `{"parentUuid":null,"type":"user","message":{"role":"user","content":"x%s"},"uuid":"%s","timestamp":"%s","sessionId":"%s"}`+"\n",
				strings.Repeat("y", m.pad), m.uuid, m.at, id)
		}
		p := filepath.Join(dir, id+".jsonl")
		if err := os.WriteFile(p, []byte(sb.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		// Each written later than the one before: the newest transcript
		// holding the first message is the last fork.
		mtime = mtime.Add(time.Minute)
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	write(x, "2026-11-25T10:00:00.000Z", m1, m2)
	write(y, "2026-11-25T11:00:00.000Z", m1, m2, y1, y2)     // forked from x
	write(z, "2026-11-25T12:00:00.000Z", m1, m2, z1)         // forked from x again
	write(w, "2026-11-25T13:00:00.000Z", m1, m2, y1, y2, w1) // forked from y
	check := func(id, want string) {
		t.Helper()
		if got := ForkParent(filepath.Join(dir, id+".jsonl"), id); got != want {
			t.Errorf("ForkParent(%s) = %q, want %q", id[:1], got, want)
		}
	}
	check(x, "")
	check(y, x)
	check(z, x)
	check(w, y)
	// With the session it was copied from deleted, a fork names no other
	// member of its family.
	if err := os.Remove(filepath.Join(dir, x+".jsonl")); err != nil {
		t.Fatal(err)
	}
	check(z, "")
	check(y, "")
	check(w, y)
}

// FuzzForkParent: whatever two transcripts of a directory hold, ForkParent
// of one names the other or nothing, and never panics.
func FuzzForkParent(f *testing.F) {
	const x, y = "10000000-0000-4000-8000-000000000000", "20000000-0000-4000-8000-000000000000"
	parent := `{"type":"queue-operation","timestamp":"2026-11-25T10:00:00.000Z"}` + "\n" +
		`{"type":"user","uuid":"aaaaaaaa-0000-4000-8000-000000000001","timestamp":"2026-11-25T10:00:01.000Z"}` + "\n"
	fork := `{"type":"queue-operation","timestamp":"2026-11-25T11:00:00.000Z"}` + "\n" +
		`{"type":"user","uuid":"aaaaaaaa-0000-4000-8000-000000000001","timestamp":"2026-11-25T10:00:01.000Z"}` + "\n" +
		`{"type":"user","uuid":"bbbbbbbb-0000-4000-8000-000000000001","timestamp":"2026-11-25T11:00:01.000Z"}` + "\n"
	f.Add([]byte(fork), []byte(parent))
	f.Add([]byte(parent), []byte(fork))
	f.Add([]byte(`{"uuid":"a","timestamp":1}`+"\n"), []byte(`{"uuid":"a"`))
	f.Fuzz(func(t *testing.T, forkFile, other []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, x+".jsonl"), other, 0o600); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, y+".jsonl")
		if err := os.WriteFile(path, forkFile, 0o600); err != nil {
			t.Fatal(err)
		}
		if got := ForkParent(path, y); got != "" && got != x {
			t.Fatalf("ForkParent = %q, want %q or nothing", got, x)
		}
	})
}

// TestReadFork: real forks (--resume X --fork-session) of both clients
// name their parent and start at their transcript's first line, written
// when the fork started; the parent's own transcript is no fork.
func TestReadFork(t *testing.T) {
	f := func(dir, parent, fork, started string) {
		t.Helper()
		dir = filepath.Join("../attribution/testdata", dir, "projects")
		matches, _ := filepath.Glob(filepath.Join(dir, "*", fork+".jsonl"))
		if len(matches) != 1 {
			t.Fatalf("%s: no transcript of %s", dir, fork)
		}
		want, _ := time.Parse(time.RFC3339Nano, started)
		if got := ReadFork(matches[0], fork); got.Parent != parent || !got.Started.Equal(want) {
			t.Errorf("%s: ReadFork = %+v, want parent %s started %s", dir, got, parent, want)
		}
		if got := ReadFork(SessionTranscript(matches[0], parent), parent); got != (Fork{}) {
			t.Errorf("%s: the parent read as a fork: %+v", dir, got)
		}
	}
	f("claude-fork-2.1.332", "95f71cd0-68f7-43c7-aa4f-2d4f54f69415", "ade817eb-d549-4f37-8dec-fccc9a21af82", "2026-12-02T01:36:28.115Z")
	f("claude-fork-2.1.197", "ef495ce9-4e55-4d23-8aab-80eff1bceacd", "7726c990-717e-4482-a085-bca66fb9d688", "2026-12-02T01:36:29.723Z")
}

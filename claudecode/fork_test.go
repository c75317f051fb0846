package claudecode

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkForkParentWorstCase: what a SessionEnd of a session that is no
// fork costs the hook at most: the first message of its transcript is in
// none of the maxCandidates others, each larger than parentHeadBytes.
func BenchmarkForkParentWorstCase(b *testing.B) {
	dir := b.TempDir()
	line := `{"parentUuid":null,"type":"user","message":{"role":"user","content":"` + strings.Repeat("x", 900) + `"},"uuid":"%s","sessionId":"%s"}` + "\n"
	for i := range maxCandidates + 4 {
		id := fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
		var sb strings.Builder
		for j := 0; sb.Len() < parentHeadBytes+(64<<10); j++ {
			fmt.Fprintf(&sb, line, fmt.Sprintf("aaaaaaaa-0000-4000-8000-%06d%06d", i, j), id)
		}
		if err := os.WriteFile(filepath.Join(dir, id+".jsonl"), []byte(sb.String()), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	self := "ffffffff-0000-4000-8000-000000000000"
	path := filepath.Join(dir, self+".jsonl")
	if err := os.WriteFile(path, []byte(fmt.Sprintf(line, "bbbbbbbb-0000-4000-8000-000000000000", self)), 0o600); err != nil {
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
		if got := StartsWithCopies(p); got != want {
			t.Fatalf("StartsWithCopies(%q) = %v, want %v", content, got, want)
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

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

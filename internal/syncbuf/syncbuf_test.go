package syncbuf

import (
	"fmt"
	"slices"
	"sync"
	"testing"
)

// TestBuffer: writers on several goroutines and a reader at once (run
// with -race) lose no write, and Lines picks the lines holding every word.
func TestBuffer(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 100 {
				fmt.Fprintf(&b, "writer=%d line=%d\n", w, i)
				_ = b.String()
			}
		})
	}
	wg.Wait()
	if n := len(b.Lines("writer=")); n != 400 {
		t.Fatalf("%d lines, want 400", n)
	}
	if got := b.Lines("writer=2", "line=99"); !slices.Equal(got, []string{"writer=2 line=99"}) {
		t.Fatalf("Lines(writer=2, line=99) = %q", got)
	}
}

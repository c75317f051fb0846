package stale_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/internal/cputime"
	"github.com/hookwatch/hookwatch/stale"
)

// BenchmarkCheck: the guard's check at a resume of 100 recorded source
// files of 10 KiB: none changed (a stat each), and all touched with the
// same content (a stat and a hash each, the worst case short of the
// bound). docs/benchmarks.md quotes its CPU time (cpu-ns/op).
func BenchmarkCheck(b *testing.B) {
	dir := b.TempDir()
	var recs []stale.Recorded
	for i := 0; i < 100; i++ {
		p := filepath.Join(dir, strconv.Itoa(i)+".go")
		if err := os.WriteFile(p, []byte(strings.Repeat("x", 10<<10)), 0o600); err != nil {
			b.Fatal(err)
		}
		st, err := stale.Take(p)
		if err != nil {
			b.Fatal(err)
		}
		recs = append(recs, stale.Recorded{FileState: st})
	}
	b.Run("unchanged", func(b *testing.B) {
		cpu := cputime.Self()
		for b.Loop() {
			if got := stale.Check(recs, time.Time{}); len(got) != 0 {
				b.Fatal(got)
			}
		}
		b.ReportMetric(float64(cputime.Self()-cpu)/float64(b.N), "cpu-ns/op")
	})
	at := time.Now().Add(time.Hour)
	for _, r := range recs {
		if err := os.Chtimes(r.Path, at, at); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("touched", func(b *testing.B) {
		cpu := cputime.Self()
		for b.Loop() {
			if got := stale.Check(recs, time.Time{}); len(got) != 0 {
				b.Fatal(got)
			}
		}
		b.ReportMetric(float64(cputime.Self()-cpu)/float64(b.N), "cpu-ns/op")
	})
}

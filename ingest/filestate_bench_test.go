package ingest_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookwatch/hookwatch/ingest"
	"github.com/hookwatch/hookwatch/internal/cputime"
	"github.com/hookwatch/hookwatch/privacy"
)

// BenchmarkRecordFiles: what recording a file's state adds to the
// pipeline's run of a real Read's PostToolUse: off, and on for a file of
// 10 KiB, of 64 KiB (the hash cap), and of 1 MiB (over it: stat only).
// docs/benchmarks.md quotes its CPU time per run (cpu-ns/op; run with -cpu
// 1, so that the garbage collector's share counts as in the hook).
func BenchmarkRecordFiles(b *testing.B) {
	dir := b.TempDir()
	for _, c := range []struct {
		name   string
		size   int
		record bool
	}{{"off", 10 << 10, false}, {"10KiB", 10 << 10, true}, {"64KiB", 64 << 10, true}, {"1MiB", 1 << 20, true}} {
		file := filepath.Join(dir, c.name+".go")
		if err := os.WriteFile(file, []byte(strings.Repeat("x", c.size)), 0o600); err != nil {
			b.Fatal(err)
		}
		m := realRead(b)
		m["cwd"], m["tool_input"] = dir, map[string]any{"file_path": file}
		data, _ := json.Marshal(m)
		pl := ingest.Pipeline{Privacy: privacy.DefaultOptions(), RecordFiles: c.record}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu := cputime.Self()
			for b.Loop() {
				out, err := pl.Run(context.Background(), data)
				if err != nil || c.record != (len(out.Envelope.Files) == 1) {
					b.Fatal(err, out.Envelope.Files)
				}
			}
			b.ReportMetric(float64(cputime.Self()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

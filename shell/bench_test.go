package shell

import (
	"os"
	"testing"
)

// typicalCommand is a command of the size agents run most (as in
// internal/bench, which go run ./internal/cmd/bench shell runs).
const typicalCommand = `cd /home/dev/src/demo && go test ./... 2>&1 | tail -20`

func BenchmarkAnalyzeTypical(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		Analyze(typicalCommand, Options{Dir: "/w"})
	}
}

// BenchmarkAnalyzeScript10K analyses the 10 KB script of internal/bench.
func BenchmarkAnalyzeScript10K(b *testing.B) {
	s, err := os.ReadFile("../internal/bench/testdata/script10k.sh")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		Analyze(string(s), Options{Dir: "/w"})
	}
}

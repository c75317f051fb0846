package shell

import (
	"strings"
	"testing"
)

// typicalCommand is a command of the size agents run most.
const typicalCommand = `cd /home/dev/src/demo && go test ./... 2>&1 | tail -20`

func BenchmarkAnalyzeTypical(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		Analyze(typicalCommand, Options{Dir: "/w"})
	}
}

// Script10K is a shell script of about 10 KB mixing the constructs the
// analysis follows.
func script10K() string {
	const block = `set -euo pipefail
build() {
  local out="$1"
  mkdir -p "$out" && go build -o "$out/app" ./cmd/app
}
for f in $(git ls-files '*.go'); do
  gofmt -l "$f" | tee -a fmt.log
done
if [ -n "${CI:-}" ]; then
  npm ci && npm test -- --coverage > coverage.txt 2>&1
fi
build dist
curl -fsS https://example.com/health || echo "down" >&2
find dist -name '*.tmp' -delete
`
	var b strings.Builder
	for b.Len() < 10<<10 {
		b.WriteString(block)
	}
	return b.String()
}

func BenchmarkAnalyzeScript10K(b *testing.B) {
	s := script10K()
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		Analyze(s, Options{Dir: "/w"})
	}
}

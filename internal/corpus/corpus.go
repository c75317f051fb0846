// Package corpus reads the repository's real hook payloads
// (testdata/payloads/*.jsonl: captures of Claude Code 2.1.197, of older
// clients from public logs, and of Codex 0.169) for tests in any package.
package corpus

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookwatch/hookwatch/event"
)

// Payload is one real hook payload of the repository's corpus.
type Payload struct {
	// Label names the capture file and line.
	Label string
	// Runtime is the runtime that produced it, from the capture file name.
	Runtime string
	// JSON is the payload object.
	JSON []byte
}

// Load returns every payload of testdata/payloads/*.jsonl at the module
// root, unwrapped from the capture wrappers, in file and line order. It
// finds the module root by walking up from the working directory, so it works
// from any package's tests.
func Load(tb testing.TB) []Payload {
	tb.Helper()
	root, err := moduleRoot()
	if err != nil {
		tb.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(root, "testdata", "payloads", "*.jsonl"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no payload corpus under %s: %v", root, err)
	}
	var out []Payload
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		runtime := event.RuntimeClaudeCode
		if strings.HasPrefix(filepath.Base(f), "codex") {
			runtime = event.RuntimeCodex
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 1<<24)
		for n := 1; sc.Scan(); n++ {
			line := sc.Bytes()
			var wrap struct {
				Payload json.RawMessage `json:"payload"`
			}
			if err := json.Unmarshal(line, &wrap); err != nil {
				tb.Fatalf("%s:%d: %v", f, n, err)
			}
			p := line
			if len(wrap.Payload) > 0 {
				p = wrap.Payload
			}
			out = append(out, Payload{
				Label:   fmt.Sprintf("%s:%d", filepath.Base(f), n),
				Runtime: runtime,
				JSON:    append([]byte(nil), p...),
			})
		}
	}
	return out
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("cannot find the module root above the working directory")
		}
		dir = parent
	}
}

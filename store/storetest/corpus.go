package storetest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/store"
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

// Corpus returns every payload of testdata/payloads/*.jsonl at the module
// root, unwrapped from the capture wrappers, in file and line order. It
// finds the module root by walking up from the working directory, so it works
// from any package's tests.
func Corpus(tb testing.TB) []Payload {
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

// baseTime is an arbitrary fixed instant so that tests are reproducible.
var baseTime = time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC)

// At returns the fixed test instant plus ms milliseconds.
func At(ms int) time.Time { return baseTime.Add(time.Duration(ms) * time.Millisecond) }

// Envelope wraps a payload as the hook would, with a fresh UUIDv7 id.
func Envelope(runtime string, at time.Time, payload []byte) event.Envelope {
	return event.Envelope{
		ID:               event.NewID(at),
		Runtime:          runtime,
		Kind:             event.KindHook,
		ReceivedAt:       at,
		Host:             "devbox",
		User:             "dev",
		HookwatchVersion: "0.1.0-test",
		Payload:          append(json.RawMessage(nil), payload...),
	}
}

// MustEvent is store.FromEnvelope that fails the test on error.
func MustEvent(tb testing.TB, env event.Envelope) store.Event {
	tb.Helper()
	e, err := store.FromEnvelope(env)
	if err != nil {
		tb.Fatalf("FromEnvelope(%s): %v", env.Payload, err)
	}
	return e
}

// CorpusEvents wraps every corpus payload in an envelope, one millisecond
// apart, and derives its event.
func CorpusEvents(tb testing.TB) []store.Event {
	tb.Helper()
	var out []store.Event
	for i, p := range Corpus(tb) {
		out = append(out, MustEvent(tb, Envelope(p.Runtime, At(i), p.JSON)))
	}
	return out
}

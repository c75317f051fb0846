package attribution

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/event"
)

var update = flag.Bool("update", false, "rewrite golden files")

// t0 is the received_at of the first envelope of a fixture.
var t0 = time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC)

// at returns t0 plus n steps of 250 ms.
func at(n int) time.Time { return t0.Add(time.Duration(n) * 250 * time.Millisecond) }

// envID returns a fixed envelope id that sorts with n.
func envID(n int) string { return fmt.Sprintf("0190f000-0000-7000-8000-%012d", n) }

// loadCorpus wraps every payload of a JSONL fixture in an envelope, with ids
// and received_at in file order. Lines of the public corpora hold the
// payload under "payload".
func loadCorpus(t testing.TB, name, runtime string) []event.Envelope {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var envs []event.Envelope
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(line, &obj); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		payload := json.RawMessage(append([]byte(nil), line...))
		if p, ok := obj["payload"]; ok && obj["hook_event_name"] == nil {
			payload = p
		}
		n := len(envs)
		envs = append(envs, event.Envelope{ID: envID(n), Runtime: runtime, Kind: event.KindHook, ReceivedAt: at(n), Payload: payload})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return envs
}

// env builds an envelope from a payload given as JSON text.
func env(n int, payload string) event.Envelope {
	return event.Envelope{ID: envID(n), Runtime: event.RuntimeClaudeCode, Kind: event.KindHook, ReceivedAt: at(n), Payload: json.RawMessage(payload)}
}

// mustJSON encodes v indented, failing the test on error.
func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs from the golden file; run with -update and review the diff", name)
	}
}

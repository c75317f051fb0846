package audit_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/audit"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/ingest"
	"github.com/hookwatch/hookwatch/internal/corpus"
	"github.com/hookwatch/hookwatch/privacy"
	"github.com/hookwatch/hookwatch/store"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// t0 is the received_at of a capture's first event; events follow 250 ms
// apart, in file order.
var t0 = time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC)

// capture is one capture file of the corpus as the store would hold it.
type capture struct {
	name   string
	events []store.Event
	model  *attribution.Result
}

// loadCaptures wraps every payload of the real captures in an envelope
// (fixed ids and times in file order), admits it as the collector does
// (privacy rules), and builds the model of each capture file.
func loadCaptures(t testing.TB) []capture {
	var out []capture
	pl := ingest.Pipeline{Privacy: privacy.DefaultOptions()}
	var cur *capture
	var envs []event.Envelope
	finish := func() {
		if cur != nil {
			cur.model = attribution.Build(envs)
			out = append(out, *cur)
		}
	}
	for _, p := range corpus.Load(t) {
		file, _, _ := strings.Cut(p.Label, ":")
		name := strings.TrimSuffix(file, ".jsonl")
		if cur == nil || cur.name != name {
			finish()
			cur, envs = &capture{name: name}, nil
		}
		n := len(cur.events)
		env := event.Envelope{
			ID: fmt.Sprintf("0190f000-0000-7000-8000-%012d", n), Runtime: p.Runtime, Kind: event.KindHook,
			ReceivedAt: t0.Add(time.Duration(n) * 250 * time.Millisecond), Host: "host", User: "user",
			Payload: p.JSON,
		}
		pl.Admit(&env)
		e, err := store.FromEnvelope(env)
		if err != nil {
			continue // the store refuses it too
		}
		e.Seq = int64(n + 1)
		e.Decoded = nil // read back from the stored JSON, as an export does
		cur.events = append(cur.events, e)
		envs = append(envs, env)
	}
	finish()
	return out
}

// writeTrail writes a capture's trail through the Writer: per session,
// its events in Seq order and its model's calls.
func writeTrail(t testing.TB, c capture, dir string, o audit.WriterOptions) {
	w, err := audit.NewWriter(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	outputs := audit.Outputs{}
	for i := range c.events {
		outputs.Add(&c.events[i])
	}
	if _, _, err := w.WriteStored(c.events); err != nil {
		t.Fatal(err)
	}
	for _, s := range c.model.Sessions {
		var calls []audit.ToolCall
		for _, tc := range s.ToolCalls {
			calls = append(calls, audit.ToolCallOf(tc, outputs[tc.ToolUseID]))
		}
		if _, err := w.WriteToolCalls(s.SessionID, calls); err != nil {
			t.Fatal(err)
		}
	}
}

// TestGolden holds the trail of every real capture to its golden files
// (testdata/golden/<capture>/<session>/…; -update rewrites them), and
// each trail to Verify.
func TestGolden(t *testing.T) {
	for _, c := range loadCaptures(t) {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			writeTrail(t, c, dir, audit.WriterOptions{})
			golden := filepath.Join("testdata", "golden", c.name)
			if *update {
				os.RemoveAll(golden)
				copyTree(t, dir, golden)
			}
			got, want := readTree(t, dir), readTree(t, golden)
			if len(want) == 0 {
				t.Fatalf("no golden files in %s (run with -update)", golden)
			}
			for name, w := range want {
				if !bytes.Equal(got[name], w) {
					t.Errorf("%s differs from the golden file (run with -update and review the diff)", name)
				}
			}
			for name := range got {
				if _, ok := want[name]; !ok {
					t.Errorf("%s is not in the golden files", name)
				}
			}
			reports, err := audit.Verify(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range reports {
				if r.Problem != nil || r.Lines == 0 && filepath.Base(r.Files[0]) == audit.EventsFile {
					t.Errorf("%s", audit.Summary(r))
				}
			}
		})
	}
}

// TestGoldenFacts checks facts of the golden trails against the model and
// the log they were built from, so that a golden file rewritten with a
// wrong record cannot pass review unnoticed.
func TestGoldenFacts(t *testing.T) {
	for _, c := range loadCaptures(t) {
		dir := t.TempDir()
		writeTrail(t, c, dir, audit.WriterOptions{})
		events, calls := len(c.events), 0
		for _, s := range c.model.Sessions {
			calls += len(s.ToolCalls)
		}
		gotEvents, gotCalls := 0, 0
		for name, b := range readTree(t, dir) {
			n := bytes.Count(b, []byte("\n"))
			switch filepath.Base(name) {
			case audit.EventsFile:
				gotEvents += n
			case audit.ToolCallsFile:
				gotCalls += n
			}
		}
		if gotEvents != events || gotCalls != calls {
			t.Errorf("%s: %d event lines, %d call lines; want %d, %d", c.name, gotEvents, gotCalls, events, calls)
		}
	}
}

func readTree(t testing.TB, root string) map[string][]byte {
	out := map[string][]byte{}
	filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, path)
		out[rel] = b
		return nil
	})
	return out
}

func copyTree(t testing.TB, from, to string) {
	tree := readTree(t, from)
	names := make([]string, 0, len(tree))
	for n := range tree {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		p := filepath.Join(to, n)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, tree[n], 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

package importer_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/importer"
	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/sqlite"
)

// splitFixtures are the real runs whose transcripts the split tests grow
// record by record: the client's parallel subagents, the edge cases' run,
// and the run the session model's tests read (attribution/testdata).
var splitFixtures = []string{
	"testdata/parallel",
	"testdata/edges",
	"../attribution/testdata/claude-transcript/projects",
}

// storeRun imports root's transcripts, from the offsets state keeps, into
// db as the collector's follower stores them.
func storeRun(t *testing.T, db *sqlite.DB, root, state string) {
	t.Helper()
	files, err := importer.Find([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	_, err = importer.Run(context.Background(), files, importer.Options{
		Pipeline: pipeline(), StatePath: state, Holder: "test",
		Deliver: func(ctx context.Context, envs []event.Envelope) error {
			evs := make([]store.Event, len(envs))
			for i, e := range envs {
				ev, err := store.FromEnvelope(e)
				if err != nil {
					return err
				}
				evs[i] = ev
			}
			_, err := db.Insert(ctx, evs)
			return err
		},
	})
	if err != nil {
		t.Fatal(err)
	}
}

// stored returns every envelope db holds.
func stored(t *testing.T, db *sqlite.DB) []event.Envelope {
	t.Helper()
	var out []event.Envelope
	f := store.EventFilter{Limit: store.MaxLimit}
	for {
		page, err := db.Events(context.Background(), f)
		if err != nil {
			t.Fatal(err)
		}
		for i := range page.Events {
			env, err := store.StoredEnvelope(&page.Events[i])
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, env)
		}
		if page.Next == "" {
			return out
		}
		f.Cursor = page.Next
	}
}

// usageOf is the session model's token usage of envs: each session's, each
// of its agents', each of its turns' (tokens, responses, cost, models), as
// text to compare.
func usageOf(t *testing.T, envs []event.Envelope) string {
	t.Helper()
	var b strings.Builder
	for _, s := range attribution.Build(envs).Sessions {
		if s.Usage == nil {
			t.Fatalf("session %s has no usage", s.SessionID)
		}
		fmt.Fprintf(&b, "session %s %+v\n", s.SessionID, *s.Usage)
		for _, a := range s.Agents {
			if a.Usage != nil {
				fmt.Fprintf(&b, "  agent %q %+v\n", a.AgentID, *a.Usage)
			}
		}
		// Not a turn's StartedAt: a response's time is its earliest
		// record read, which a read ending inside the response sees and
		// one read of the whole file does not (it sends the last record).
		for _, u := range s.Turns {
			fmt.Fprintf(&b, "  turn %s %+v\n", u.PromptID, u.Usage)
		}
	}
	return b.String()
}

// grow copies the tree at src with its transcripts empty, then writes
// them back one line at a time, file after file, calling read after each
// line: a transcript the client writes as the follower reads it, each read
// ending at another record boundary. change, when set, rewrites each line
// first.
func grow(t *testing.T, src string, change func(line []byte) []byte, read func(root string)) {
	t.Helper()
	root := copyDir(t, src)
	files, err := importer.Find([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	lines := make([][][]byte, len(files))
	for i, f := range files {
		b, err := os.ReadFile(f.Path)
		if err != nil {
			t.Fatal(err)
		}
		lines[i] = bytes.SplitAfter(b, []byte("\n"))
		if err := os.WriteFile(f.Path, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for i, f := range files {
		for _, l := range lines[i] {
			if len(l) == 0 {
				continue
			}
			if change != nil {
				l = change(l)
			}
			w, err := os.OpenFile(f.Path, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			_, err = w.Write(l)
			w.Close()
			if err != nil {
				t.Fatal(err)
			}
			read(root)
		}
	}
}

// TestImportSplitUsage: transcripts read as they grow, each read ending
// between two records of a response, store what reading them whole
// stores, event for event, and the session model's usage (each session's,
// agent's and turn's tokens and cost) is the same.
func TestImportSplitUsage(t *testing.T) {
	for _, src := range splitFixtures {
		t.Run(filepath.Base(filepath.Dir(src))+"/"+filepath.Base(src), func(t *testing.T) {
			whole := sqlite.MustOpenDB(t)
			storeRun(t, whole, copyDir(t, src), filepath.Join(t.TempDir(), "state.json"))
			want := stored(t, whole)

			split := sqlite.MustOpenDB(t)
			state := filepath.Join(t.TempDir(), "state.json")
			reads := 0
			grow(t, src, nil, func(root string) { storeRun(t, split, root, state); reads++ })
			got := stored(t, split)
			if len(got) != len(want) {
				t.Errorf("%d reads stored %d events, one read of the whole files %d", reads, len(got), len(want))
			}
			if g, w := usageOf(t, got), usageOf(t, want); g != w {
				t.Errorf("usage read as the files grew:\n%s\nread whole:\n%s", g, w)
			}
		})
	}
}

// growingUsage rewrites an assistant record's usage as a client that
// writes a response's figures as they grow would: the output tokens of
// the n-th record of a response are n times those the fixture gives.
func growingUsage(t *testing.T) func([]byte) []byte {
	seen := map[string]int64{}
	return func(line []byte) []byte {
		var rec map[string]any
		if json.Unmarshal(line, &rec) != nil || rec["type"] != "assistant" {
			return line
		}
		msg, _ := rec["message"].(map[string]any)
		u, _ := msg["usage"].(map[string]any)
		id, _ := msg["id"].(string)
		if u == nil || id == "" {
			return line
		}
		seen[id]++
		u["output_tokens"] = u["output_tokens"].(float64) * float64(seen[id])
		b, err := json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		return append(b, '\n')
	}
}

// TestImportSplitGrowingUsage: a response whose records' usage grows, read
// in as many reads as it has records, is counted once with its last
// figures, as read whole; the store holds it once per figure read (a later
// record's figures are not known to be the last).
func TestImportSplitGrowingUsage(t *testing.T) {
	src := splitFixtures[0]
	whole := copyDir(t, src)
	files, err := importer.Find([]string{whole})
	if err != nil {
		t.Fatal(err)
	}
	change := growingUsage(t)
	records := map[string]int{} // by response
	for _, f := range files {
		b, err := os.ReadFile(f.Path)
		if err != nil {
			t.Fatal(err)
		}
		var out []byte
		for _, l := range bytes.SplitAfter(b, []byte("\n")) {
			if len(l) == 0 {
				continue
			}
			c := change(l)
			var r struct {
				Type    string `json:"type"`
				Message struct {
					ID    string          `json:"id"`
					Usage json.RawMessage `json:"usage"`
				} `json:"message"`
			}
			if json.Unmarshal(c, &r) == nil && r.Type == "assistant" && r.Message.Usage != nil {
				records[r.Message.ID]++
			}
			out = append(out, c...)
		}
		if err := os.WriteFile(f.Path, out, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	extra := 0
	for _, n := range records {
		extra += n - 1
	}
	if extra == 0 {
		t.Fatal("no response of the fixture has several records")
	}
	wholeDB := sqlite.MustOpenDB(t)
	storeRun(t, wholeDB, whole, filepath.Join(t.TempDir(), "state.json"))
	want := stored(t, wholeDB)

	split := sqlite.MustOpenDB(t)
	state := filepath.Join(t.TempDir(), "state.json")
	grow(t, src, growingUsage(t), func(root string) { storeRun(t, split, root, state) })
	got := stored(t, split)
	if g, w := usageOf(t, got), usageOf(t, want); g != w {
		t.Errorf("usage read as the files grew:\n%s\nread whole:\n%s", g, w)
	}
	if len(got) != len(want)+extra {
		t.Errorf("stored %d events, want %d: the %d read whole and %d figures past a response's first", len(got), len(want)+extra, len(want), extra)
	}
}

// TestImportSplitStateWithoutSent: a state that keeps no response sent (as
// saved before the state kept it, the collector upgraded while a response
// was being read) costs the response a second stored copy of its usage,
// under its last record's id, and the session model's usage is the
// whole file's: nothing is lost nor counted twice.
func TestImportSplitStateWithoutSent(t *testing.T) {
	src := splitFixtures[0]
	wholeDB := sqlite.MustOpenDB(t)
	storeRun(t, wholeDB, copyDir(t, src), filepath.Join(t.TempDir(), "state.json"))
	want := stored(t, wholeDB)

	root := copyDir(t, src)
	files, err := importer.Find([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	main := files[0].Path
	b, err := os.ReadFile(main)
	if err != nil {
		t.Fatal(err)
	}
	// Cut after the second of the six records of the first response.
	lines := bytes.SplitAfter(b, []byte("\n"))
	cut := 0
	for i, l := range lines {
		if bytes.Contains(l, []byte(`"uuid":"b36b057c`)) {
			cut = i + 1
		}
	}
	if cut == 0 {
		t.Fatal("the fixture lacks the record to cut after")
	}
	if err := os.WriteFile(main, bytes.Join(lines[:cut], nil), 0o600); err != nil {
		t.Fatal(err)
	}
	db := sqlite.MustOpenDB(t)
	state := filepath.Join(t.TempDir(), "state.json")
	storeRun(t, db, root, state)
	raw, err := os.ReadFile(state)
	if err != nil {
		t.Fatal(err)
	}
	var st map[string]any
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	fs := st["files"].(map[string]any)[main].(map[string]any)
	if fs["sent"] == nil {
		t.Fatalf("a read ending inside a response keeps no response sent: %s", raw)
	}
	delete(fs, "sent")
	if raw, err = json.Marshal(st); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(state, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(main, b, 0o600); err != nil {
		t.Fatal(err)
	}
	storeRun(t, db, root, state)
	got := stored(t, db)
	if len(got) != len(want)+1 {
		t.Errorf("stored %d events, want %d: the %d read whole and the response cut once more", len(got), len(want)+1, len(want))
	}
	if g, w := usageOf(t, got), usageOf(t, want); g != w {
		t.Errorf("usage read in two:\n%s\nread whole:\n%s", g, w)
	}
}

package shell

import (
	"bufio"
	"encoding/json"
	"os"
	"slices"
	"testing"
)

// corpusEntry is one line of testdata/commands.jsonl: a command, run in
// /proj, with the effect and written paths it must be analysed as.
type corpusEntry struct {
	Command string   `json:"command"`
	Effect  Effect   `json:"effect"`
	Writes  []string `json:"writes"`
	Note    string   `json:"note"`
}

// CorpusDir is the working directory of every corpus command.
const corpusDir = "/proj"

func readCorpus(tb testing.TB) []corpusEntry {
	tb.Helper()
	f, err := os.Open("testdata/commands.jsonl")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var out []corpusEntry
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e corpusEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			tb.Fatalf("cannot read corpus line %q: %v", sc.Text(), err)
		}
		out = append(out, e)
	}
	if len(out) < 60 {
		tb.Fatalf("the corpus has %d commands, want at least 60", len(out))
	}
	return out
}

func TestCorpus(t *testing.T) {
	for _, e := range readCorpus(t) {
		a := Analyze(e.Command, Options{Dir: corpusDir})
		if a.Effect != e.Effect {
			t.Errorf("%s: %q: effect %s, want %s (steps %+v, reason %q)", e.Note, e.Command, a.Effect, e.Effect, a.Steps, a.Reason)
		}
		want := e.Writes
		if want == nil {
			want = []string{}
		}
		got := a.Writes
		if got == nil {
			got = []string{}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: %q: writes %q, want %q", e.Note, e.Command, got, want)
		}
	}
}

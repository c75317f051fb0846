package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/codex/rollout"
	"github.com/hookwatch/hookwatch/importer"
)

// The rollout the tests below grow, cut and replace: a session of two
// turns with tool calls and token counts.
const (
	grownRollout = "rollout-2026-11-25T14-46-05-01a2132b-c636-7c31-93a8-aeaecf1768f7.jsonl"
	grownSession = "01a2132b-c636-7c31-93a8-aeaecf1768f7"
)

// codexRolloutsIn copies the project's rollouts into dir/sessions, the one
// grownRollout holds cut after its 12th line (a call whose output comes
// after the cut, token counts before and after); it returns the
// directory, the cut rollout's path, and its whole and cut contents.
func codexRolloutsIn(t *testing.T, dir string) (rollouts, path string, whole, cut []byte) {
	t.Helper()
	rollouts = filepath.Join(dir, "sessions")
	copyDir(t, "../../codex/testdata", rollouts)
	path = filepath.Join(rollouts, grownRollout)
	whole = readFile(t, path)
	end := 0
	for range 12 {
		end += bytes.IndexByte(whole[end:], '\n') + 1
	}
	cut = whole[:end]
	if !bytes.Contains(whole[end:], []byte(`"type":"function_call_output"`)) {
		t.Fatal("the cut leaves no call's output after it")
	}
	if err := os.WriteFile(path, cut, 0o600); err != nil {
		t.Fatal(err)
	}
	return rollouts, path, whole, cut
}

// rolloutOffset is the offset the home's import state keeps for the
// rollout at path.
func rolloutOffset(t *testing.T, home, path string) (int64, bool) {
	t.Helper()
	offs, err := importer.RolloutOffsets(filepath.Join(home, "import-state.json"))
	if err != nil {
		t.Fatal(err)
	}
	off, ok := offs[path]
	return off, ok
}

// codexModel is what the collector at base shows of a session: its view
// (less where its events stand among every session's), its
// tool calls and its events.
func codexModel(t *testing.T, base, sid string) map[string]any {
	t.Helper()
	var view map[string]any
	getJSON(t, base, "/v1/sessions/"+sid, &view)
	// The positions in the store's sequence of every session's events.
	for _, k := range []string{"last_seq", "derived_seq", "model_seq"} {
		delete(view, k)
	}
	var calls, events map[string]any
	getJSON(t, base, "/v1/sessions/"+sid+"/tool-calls?limit=1000", &calls)
	getJSON(t, base, "/v1/sessions/"+sid+"/events?limit=1000", &events)
	for _, e := range events["events"].([]any) {
		delete(e.(map[string]any), "seq")
	}
	return map[string]any{"view": view, "tool_calls": calls["tool_calls"], "events": events["events"]}
}

// TestImportCodexReadsOn: import --codex keeps how far it read each
// rollout and reads on from there: a second import posts nothing and says
// so; a rollout that grew is read from its offset only, its new events
// stored, none sent twice, and the session modelled as an import of the
// whole file in one go models it; a rollout that shrank, or was replaced,
// is read again from the start.
func TestImportCodexReadsOn(t *testing.T) {
	dir := t.TempDir()
	rollouts, path, whole, cut := codexRolloutsIn(t, dir)

	// The session as one import of the whole rollout models it.
	var want map[string]any
	t.Run("one-shot", func(t *testing.T) {
		base := collectorIn(t, filepath.Join(dir, "one-shot"), "--codex-rollouts", "off")
		// At the same path, which the events carry; in a home of its own.
		os.WriteFile(path, whole, 0o600)
		mustHW(t, "import", "--codex", path)
		os.WriteFile(path, cut, 0o600)
		want = codexModel(t, base, grownSession)
	})

	home := filepath.Join(dir, "home")
	base := collectorIn(t, home, "--codex-rollouts", "off")
	out := mustHW(t, "import", "--codex", rollouts)
	if !strings.Contains(out, " from 7 rollout files into ") || strings.Contains(out, "Nothing new") {
		t.Fatalf("first import:\n%s", out)
	}
	if off, _ := rolloutOffset(t, home, path); off != int64(len(cut)) {
		t.Fatalf("offset kept of the cut rollout: %d, want %d", off, len(cut))
	}
	first := codexModel(t, base, grownSession)

	// Again: nothing read, nothing sent, and said.
	out = mustHW(t, "import", "--codex", rollouts)
	if !strings.HasPrefix(out, "Imported 0 tool events, 0 session events and 0 token usage records from 0 rollout files into ") ||
		!strings.Contains(out, "\nNothing new in 7 rollout files: each was read to its end before (") ||
		!strings.Contains(out, filepath.Join(home, "import-state.json")) {
		t.Fatalf("second import:\n%s", out)
	}
	if again := codexModel(t, base, grownSession); !reflect.DeepEqual(again, first) {
		t.Errorf("a second import changed the session:\n%v\nwas:\n%v", again, first)
	}

	// Grown: only what it gained is read and sent, none of it known.
	os.WriteFile(path, whole, 0o600)
	gained := gainedIDs(t, whole, cut)
	if len(gained) == 0 {
		t.Fatal("the cut leaves no envelope to the rest")
	}
	out = mustHW(t, "import", "--codex", rollouts)
	if !strings.Contains(out, " from 1 rollout file into ") || !strings.Contains(out, "\n6 rollout files had nothing new since last read to the end (") ||
		strings.Contains(out, "had already") || strings.Contains(out, "the collector had all") {
		t.Fatalf("import of a grown rollout:\n%s", out)
	}
	if n := importedCount(t, out); n != len(gained) {
		t.Errorf("import of a grown rollout sent %d events, want the %d it gained:\n%s", n, len(gained), out)
	}
	if off, _ := rolloutOffset(t, home, path); off != int64(len(whole)) {
		t.Errorf("offset kept of the grown rollout: %d, want %d", off, len(whole))
	}
	if got := codexModel(t, base, grownSession); !reflect.DeepEqual(got, want) {
		gj, _ := json.MarshalIndent(got, "", " ")
		wj, _ := json.MarshalIndent(want, "", " ")
		t.Errorf("the session imported in two reads:\n%s\nimported whole in one:\n%s", gj, wj)
	}

	// Shrunk (rewritten shorter): read whole again, all of it known.
	os.WriteFile(path, cut, 0o600)
	out = mustHW(t, "import", "--codex", rollouts)
	if !strings.Contains(out, " from 1 rollout file into ") || !strings.Contains(out, "\n1 rollout file shorter than when last read, or replaced, read again from the start.\n") ||
		!strings.Contains(out, "\nNothing new: the collector had all ") {
		t.Errorf("import of a shrunk rollout:\n%s", out)
	}
	if off, _ := rolloutOffset(t, home, path); off != int64(len(cut)) {
		t.Errorf("offset kept of the shrunk rollout: %d, want %d", off, len(cut))
	}
	// Replaced by a file longer than the offset kept, which falls within
	// one of its lines: read whole again, not from the offset.
	replaced := append(bytes.Replace(cut, []byte(`{"timestamp"`), []byte(`{ "timestamp"`), 1), whole[len(cut):]...)
	os.WriteFile(path, replaced, 0o600)
	out = mustHW(t, "import", "--codex", rollouts)
	if !strings.Contains(out, "\n1 rollout file shorter than when last read, or replaced, read again from the start.\n") ||
		importedCount(t, out) != len(rolloutIDs(t, replaced)) {
		t.Errorf("import of a replaced rollout (%d envelopes in it):\n%s", len(rolloutIDs(t, replaced)), out)
	}
	if off, _ := rolloutOffset(t, home, path); off != int64(len(replaced)) {
		t.Errorf("offset kept of the replaced rollout: %d, want %d", off, len(replaced))
	}
}

// rolloutIDs are the ids of the envelopes a rollout holding content
// makes, read whole (rollout.Read).
func rolloutIDs(t *testing.T, content []byte) map[string]bool {
	t.Helper()
	path := filepath.Join(t.TempDir(), grownRollout)
	if err := os.WriteFile(path, content, 0o600); err != nil {
		t.Fatal(err)
	}
	envs, _, err := rollout.Read(path, "h", "u")
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, e := range envs {
		ids[e.ID] = true
	}
	return ids
}

// gainedIDs are the ids of the envelopes the lines whole holds past cut
// make: those of whole less those of cut.
func gainedIDs(t *testing.T, whole, cut []byte) map[string]bool {
	t.Helper()
	ids := rolloutIDs(t, whole)
	for id := range rolloutIDs(t, cut) {
		delete(ids, id)
	}
	return ids
}

// importedCount sums the events an import --codex summary says it sent.
func importedCount(t *testing.T, out string) int {
	t.Helper()
	line, _, _ := strings.Cut(out, "\n")
	m := regexp.MustCompile(`^(?:Imported|Would import) (\d+) tool events?, (\d+) session events? and (\d+) token usage records? from `).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("cannot read the counts of %q", line)
	}
	n := 0
	for _, d := range m[1:] {
		i, _ := strconv.Atoi(d)
		n += i
	}
	return n
}

// TestImportCodexDryRunKeepsNothing: a dry run reads from the offsets
// kept, as an import would, and keeps none.
func TestImportCodexDryRunKeepsNothing(t *testing.T) {
	dir := t.TempDir()
	rollouts, path, whole, cut := codexRolloutsIn(t, dir)
	home := filepath.Join(dir, "home")
	collectorIn(t, home, "--codex-rollouts", "off")
	state := filepath.Join(home, "import-state.json")
	mustHW(t, "import", "--codex", "--dry-run", rollouts)
	if _, err := os.Stat(state); !os.IsNotExist(err) {
		t.Fatalf("a dry run made the import state: %v", err)
	}
	mustHW(t, "import", "--codex", rollouts)
	kept := readFile(t, state)
	os.WriteFile(path, whole, 0o600)
	out := mustHW(t, "import", "--codex", "--dry-run", rollouts)
	if !strings.HasPrefix(out, "Would import ") || !strings.Contains(out, " from 1 rollout file into ") {
		t.Errorf("dry run of a grown rollout:\n%s", out)
	}
	if now := readFile(t, state); !bytes.Equal(now, kept) {
		t.Errorf("a dry run changed the import state:\n%s\nwas:\n%s", now, kept)
	}
	if off, _ := rolloutOffset(t, home, path); off != int64(len(cut)) {
		t.Errorf("offset kept after the dry run: %d, want %d", off, len(cut))
	}
}

// TestImportCodexAfterFollower: the collector following the rollouts and
// import --codex keep one set of offsets: an import after the collector
// followed them reads nothing again.
func TestImportCodexAfterFollower(t *testing.T) {
	dir := t.TempDir()
	rollouts, _, _, _ := codexRolloutsIn(t, dir)
	home := filepath.Join(dir, "home")
	collectorIn(t, home, "--codex-rollouts", rollouts)
	files, err := codexRollouts([]string{rollouts})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		followed := 0
		for _, f := range files {
			info, _ := os.Stat(f)
			if off, ok := rolloutOffset(t, home, f); ok && off == info.Size() {
				followed++
			}
		}
		if followed == len(files) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the collector kept the offsets of %d of %d rollouts", followed, len(files))
		}
		time.Sleep(50 * time.Millisecond)
	}
	out := mustHW(t, "import", "--codex", rollouts)
	if !strings.Contains(out, " from 0 rollout files into ") || !strings.Contains(out, "\nNothing new in 7 rollout files: each was read to its end before (") {
		t.Errorf("import after the collector followed the rollouts:\n%s", out)
	}
}

// TestFollowerAfterImportCodex: a collector following the rollouts after
// an import --codex of them reads on from the import's offsets: into a
// database of its own, it stores only what a rollout gained since.
func TestFollowerAfterImportCodex(t *testing.T) {
	dir := t.TempDir()
	rollouts, path, whole, cut := codexRolloutsIn(t, dir)
	home := filepath.Join(dir, "home")
	t.Run("import", func(t *testing.T) {
		collectorIn(t, home, "--codex-rollouts", "off")
		mustHW(t, "import", "--codex", rollouts)
	})
	collectorIn(t, home, "--codex-rollouts", rollouts, "--db", filepath.Join(dir, "other.db"))
	// Appended, as Codex writes: a file rewritten would be seen empty
	// for a moment, and read again from its start.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(whole[len(cut):]); err != nil {
		t.Fatal(err)
	}
	f.Close()
	gained := gainedIDs(t, whole, cut)
	base := os.Getenv("HOOKWATCH_URL")
	deadline := time.Now().Add(30 * time.Second)
	for {
		if off, _ := rolloutOffset(t, home, path); off == int64(len(whole)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the collector did not read the rollout that grew")
		}
		time.Sleep(50 * time.Millisecond)
	}
	var list struct {
		Sessions []struct {
			ID string `json:"id"`
		} `json:"sessions"`
	}
	getJSON(t, base, "/v1/sessions", &list)
	if len(list.Sessions) != 1 || list.Sessions[0].ID != grownSession {
		t.Errorf("the collector stored sessions %v, want only %s's new events", list.Sessions, grownSession)
	}
	var events struct {
		Events []struct {
			ID string `json:"id"`
		} `json:"events"`
	}
	getJSON(t, base, "/v1/sessions/"+grownSession+"/events?limit=1000", &events)
	stored := map[string]bool{}
	for _, e := range events.Events {
		stored[e.ID] = true
	}
	if len(gained) == 0 || !reflect.DeepEqual(stored, gained) {
		t.Errorf("the collector stored events %v of the grown rollout, want those it gained: %v", stored, gained)
	}
}

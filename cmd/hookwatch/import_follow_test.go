package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/codex/rollout"
	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/importer"
	"github.com/hookwatch/hookwatch/ingest"
	"github.com/hookwatch/hookwatch/store/sqlite"
)

// followingCollector starts a collector in process on the SQLite file db,
// for home, following the rollouts under rollouts and the transcripts
// under projects ("" follows none) every interval, and points
// HOOKWATCH_URL at it: import talks to it as it talks to hookwatch serve.
func followingCollector(t *testing.T, home, db, rollouts, projects string, interval time.Duration) *collector.Collector {
	t.Helper()
	st, err := sqlite.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	origin := ingest.LocalOrigin(version)
	c, err := collector.Start(collector.Options{
		Config: collector.Config{Store: st, Version: version},
		Addr:   "127.0.0.1:0", Home: home,
		Rollouts:    collector.RolloutOptions{Dir: rollouts, Host: origin.Host, User: origin.User, Interval: interval},
		Transcripts: collector.TranscriptOptions{Dir: projects, Host: origin.Host, User: origin.User, Interval: interval},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOOKWATCH_URL", c.URL())
	return c
}

// ingestCounts are the events the collector at base stored, and those it
// was given again (already stored): an envelope read by two readers is
// one of the second.
func ingestCounts(t *testing.T, base string) (ingested, duplicates int) {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		name, v, _ := strings.Cut(sc.Text(), " ")
		n, _ := strconv.Atoi(v)
		switch name {
		case "hookwatch_events_ingested_total":
			ingested = n
		case "hookwatch_events_duplicate_total":
			duplicates = n
		}
	}
	return ingested, duplicates
}

// storedEvents are the ids of the events the collector at base stores of
// session sid, each with how many times it is stored, and the message ids
// of its TranscriptUsage events, each with how many of them give its usage.
func storedEvents(t *testing.T, base, sid string) (ids, usage map[string]int) {
	t.Helper()
	var page struct {
		Events []struct {
			ID       string `json:"id"`
			Envelope struct {
				Payload struct {
					Name      string `json:"hook_event_name"`
					MessageID string `json:"message_id"`
				} `json:"payload"`
			} `json:"envelope"`
		} `json:"events"`
	}
	getJSON(t, base, "/v1/sessions/"+sid+"/events?limit=1000", &page)
	ids, usage = map[string]int{}, map[string]int{}
	for _, e := range page.Events {
		ids[e.ID]++
		if p := e.Envelope.Payload; p.Name == event.TranscriptUsage {
			usage[p.MessageID]++
		}
	}
	return ids, usage
}

// offsetWatch reads the offsets the import state at path keeps every
// millisecond until stop, and reports every one that moved back.
type offsetWatch struct {
	stop chan struct{}
	done sync.WaitGroup
	mu   sync.Mutex
	back []string
	// rollouts says which of the state's offsets it watches: the rollouts'
	// (importer.RolloutOffsets) or the transcripts' (importer.Offsets).
	rollouts bool
}

func watchOffsets(t *testing.T, path string, rollouts bool) *offsetWatch {
	w := &offsetWatch{stop: make(chan struct{}), rollouts: rollouts}
	w.done.Add(1)
	go func() {
		defer w.done.Done()
		last := map[string]int64{}
		for {
			read := importer.Offsets
			if w.rollouts {
				read = importer.RolloutOffsets
			}
			offs, err := read(path)
			if err == nil {
				for p, off := range offs {
					if off < last[p] {
						w.mu.Lock()
						w.back = append(w.back, fmt.Sprintf("%s: %d after %d", filepath.Base(p), off, last[p]))
						w.mu.Unlock()
					}
					last[p] = off
				}
			}
			select {
			case <-w.stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() { w.end() })
	return w
}

// end stops the watch and returns the offsets that moved back.
func (w *offsetWatch) end() []string {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	w.done.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.back
}

// appendTo appends b to the file at path, as a client appends its records.
func appendTo(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Error(err)
		return
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		t.Error(err)
	}
}

// linesOf splits b after each newline.
func linesOf(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n') + 1
		if i == 0 {
			i = len(b)
		}
		out = append(out, b[:i])
		b = b[i:]
	}
	return out
}

// waitOffset waits until the import state at home keeps off for the
// rollout at path.
func waitRolloutOffset(t *testing.T, home, path string, off int64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if got, _ := rolloutOffset(t, home, path); got == off {
			return
		}
		if time.Now().After(deadline) {
			got, _ := rolloutOffset(t, home, path)
			t.Fatalf("the offset kept for %s is %d, want %d", filepath.Base(path), got, off)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestImportCodexWhileFollowed: hookwatch import --codex run while the
// collector follows the same rollouts, as they grow, shares the offsets
// with it: each record is read and stored by one of them, once, none is
// missed, and no offset kept moves back — with the follower running
// before the import, the import run while the follower is mid-file, and
// the collector restarted after an import.
func TestImportCodexWhileFollowed(t *testing.T) {
	dir := t.TempDir()
	rollouts, path, whole, _ := codexRolloutsIn(t, dir)
	// The rollout that grows starts with its first 3 lines.
	start := bytes.Join(linesOf(whole)[:3], nil)
	if err := os.WriteFile(path, start, 0o600); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, "home")
	t.Setenv("HOOKWATCH_HOME", home)
	for _, k := range []string{"HOOKWATCH_DB", "HOOKWATCH_TOKEN", "HOOKWATCH_ADDR"} {
		t.Setenv(k, "")
	}
	db := filepath.Join(dir, "hookwatch.db")
	statePath := filepath.Join(home, "import-state.json")
	files, err := codexRollouts([]string{rollouts})
	if err != nil {
		t.Fatal(err)
	}
	watch := watchOffsets(t, statePath, true)

	// The follower first: an import after it reads nothing.
	c := followingCollector(t, home, db, rollouts, "", 5*time.Millisecond)
	for _, f := range files {
		info, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		waitRolloutOffset(t, home, f, info.Size())
	}
	if out := mustHW(t, "import", "--codex", rollouts); importedCount(t, out) != 0 {
		t.Errorf("import after the follower read every rollout:\n%s", out)
	}

	// Imports while the rollout grows and the follower reads it.
	rest := linesOf(whole[len(start):])
	grown := make(chan struct{})
	go func() {
		defer close(grown)
		for _, l := range rest[:8] {
			appendTo(t, path, l)
			time.Sleep(15 * time.Millisecond)
		}
	}()
	imports := 0
	for done := false; !done; imports++ {
		select {
		case <-grown:
			done = true
		default:
		}
		mustHW(t, "import", "--codex", rollouts)
	}
	size := func() int64 {
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return info.Size()
	}
	waitRolloutOffset(t, home, path, size())
	ingested, dups := ingestCounts(t, c.URL())
	if err := c.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}

	// An import under way (its hold of the state, taken first) when the
	// follower, which has read the rollout, looks at it grown, and what
	// the rollout gained after that look read by the import, the
	// collector stopped before its next look.
	const slow = 600 * time.Millisecond
	c = followingCollector(t, home, db, rollouts, "", slow)
	time.Sleep(slow / 6) // its first look: nothing grown
	appendTo(t, path, rest[8])
	time.Sleep(slow) // read by the follower
	held := holdAsImport(t, statePath)
	appendTo(t, path, rest[9])
	time.Sleep(slow) // the follower's next look
	appendTo(t, path, rest[10])
	if err := held.Release(); err != nil {
		t.Fatal(err)
	}
	mustHW(t, "import", "--codex", rollouts)
	inHeld, dupsHeld := ingestCounts(t, c.URL())
	if err := c.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}

	// An import of what the rollout gained after the follower read it,
	// before the follower's next look.
	c = followingCollector(t, home, db, rollouts, "", slow)
	time.Sleep(slow / 6)
	appendTo(t, path, rest[11])
	time.Sleep(slow) // read by the follower
	appendTo(t, path, bytes.Join(rest[12:14], nil))
	mustHW(t, "import", "--codex", rollouts)
	waitRolloutOffset(t, home, path, size())
	time.Sleep(slow) // the follower's next look
	inAfter, dupsAfter := ingestCounts(t, c.URL())
	if err := c.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}

	// The collector restarted after an import of what the rollout gained
	// while none followed it: it reads nothing again.
	appendTo(t, path, bytes.Join(rest[14:], nil))
	c = followingCollector(t, home, db, "", "", time.Second)
	mustHW(t, "import", "--codex", rollouts)
	in2, dups2 := ingestCounts(t, c.URL())
	if err := c.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	c = followingCollector(t, home, db, rollouts, "", 5*time.Millisecond)
	defer c.Stop(context.Background())
	waitRolloutOffset(t, home, path, int64(len(whole)))
	time.Sleep(100 * time.Millisecond) // looks that would read again
	in3, dups3 := ingestCounts(t, c.URL())

	// Every record stored once, none missed.
	want := 0
	for _, f := range files {
		envs, _, err := rollout.Read(f, "h", "u")
		if err != nil {
			t.Fatal(err)
		}
		if len(envs) == 0 {
			continue
		}
		sid := ""
		ids := map[string]bool{}
		for _, e := range envs {
			ids[e.ID] = true
		}
		want += len(ids)
		sum, _, _ := rollout.Summarize(f, func(rollout.Summary) bool { return true })
		sid = sum.Thread
		stored, _ := storedEvents(t, c.URL(), sid)
		for id, n := range stored {
			if n != 1 {
				t.Errorf("session %s: event %s stored %d times", sid, id, n)
			}
			if !ids[id] {
				t.Errorf("session %s: event %s stored, not of the rollout", sid, id)
			}
		}
		for id := range ids {
			if stored[id] == 0 {
				t.Errorf("session %s: event %s of the rollout not stored", sid, id)
			}
		}
	}
	// Each record read and given to the store by one reader: none given
	// twice (the store's duplicates), and the restarted collector reads
	// nothing the import read.
	checkPhases(t, "rollout", imports, want, watch, [5][2]int{{ingested, dups}, {inHeld, dupsHeld}, {inAfter, dupsAfter}, {in2, dups2}, {in3, dups3}})
}

// TestImportWhileFollowingTranscripts: hookwatch import run while the
// collector follows the same transcripts, as they grow, shares the
// offsets with it (each look of the follower is an importer.Run under the
// import state's lock, reading the offsets afresh): each record is read
// and stored by one of them, once, none is missed, and no offset kept
// moves back — with the follower running before the import, imports while
// the transcripts grow, an import under way when the follower looks, one
// between two looks, and the collector restarted after an import.
func TestImportWhileFollowingTranscripts(t *testing.T) {
	dir := t.TempDir()
	projects := filepath.Join(dir, "projects")
	copyDir(t, "../../importer/testdata/parallel/projects", projects)
	home := filepath.Join(dir, "home")
	t.Setenv("HOOKWATCH_HOME", home)
	for _, k := range []string{"HOOKWATCH_DB", "HOOKWATCH_TOKEN", "HOOKWATCH_ADDR"} {
		t.Setenv(k, "")
	}
	db := filepath.Join(dir, "hookwatch.db")
	statePath := filepath.Join(home, "import-state.json")
	files, err := importer.Find([]string{projects})
	if err != nil || len(files) < 2 {
		t.Fatalf("transcripts %v, %v", files, err)
	}

	// What the transcripts hold, read whole: by session, the events' ids
	// (but their usage's) and the messages whose usage they give. A read
	// that ends between two records of one message gives its usage as far
	// as the first (that record's id), and the records read on from there
	// repeat it (the import state keeps what was sent): the id of a
	// message's usage depends on where the read ended inside it, whichever
	// reader read it, but the message's usage is stored once.
	want := map[string]map[string]bool{}
	wantUsage := map[string]map[string]bool{}
	_, err = importer.Run(context.Background(), files, importer.Options{
		Pipeline: &ingest.Pipeline{Origin: ingest.LocalOrigin(version)},
		Deliver: func(_ context.Context, envs []event.Envelope) error {
			for _, e := range envs {
				p, err := event.Decode(e.Payload)
				if err != nil {
					return err
				}
				if want[p.SessionID] == nil {
					want[p.SessionID], wantUsage[p.SessionID] = map[string]bool{}, map[string]bool{}
				}
				if p.HookEventName == event.TranscriptUsage {
					var u struct {
						MessageID string `json:"message_id"`
					}
					json.Unmarshal(e.Payload, &u)
					wantUsage[p.SessionID][u.MessageID] = true
					continue
				}
				want[p.SessionID][e.ID] = true
			}
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}

	// Each transcript starts with its first 3 lines; the others are
	// appended one at a time, the files in turn, as a session's agents
	// write them.
	type line struct {
		path string
		b    []byte
	}
	var rest []line
	left := map[string][][]byte{}
	for _, f := range files {
		lines := linesOf(readFile(t, f.Path))
		if err := os.WriteFile(f.Path, bytes.Join(lines[:3], nil), 0o600); err != nil {
			t.Fatal(err)
		}
		left[f.Path] = lines[3:]
	}
	for more := true; more; {
		more = false
		for _, f := range files {
			if l := left[f.Path]; len(l) > 0 {
				rest = append(rest, line{f.Path, l[0]})
				left[f.Path], more = l[1:], true
			}
		}
	}
	grow := func(ls []line) {
		for _, l := range ls {
			appendTo(t, l.path, l.b)
		}
	}
	// An import's summary says so when it met records the collector had.
	importOnce := func() {
		t.Helper()
		out := mustHW(t, "import", projects)
		if strings.Contains(out, "already had") || strings.Contains(out, "had already") {
			t.Errorf("an import read again what the follower read:\n%s", out)
		}
	}
	waitFollowed := func() {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			offs, err := importer.Offsets(statePath)
			if err != nil {
				t.Fatal(err)
			}
			done := 0
			for _, f := range files {
				if info, err := os.Stat(f.Path); err == nil && offs[f.Path] == info.Size() {
					done++
				}
			}
			if done == len(files) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d of %d transcripts read to their end", done, len(files))
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	watch := watchOffsets(t, statePath, false)
	n := len(rest)
	if n < 12 {
		t.Fatalf("%d lines to grow", n)
	}

	// The follower first: an import after it reads nothing.
	c := followingCollector(t, home, db, "", projects, 5*time.Millisecond)
	waitFollowed()
	importOnce()

	// Imports while the transcripts grow and the follower reads them.
	grown := make(chan struct{})
	go func() {
		defer close(grown)
		for _, l := range rest[:n-8] {
			appendTo(t, l.path, l.b)
			time.Sleep(5 * time.Millisecond)
		}
	}()
	imports := 0
	for done := false; !done; imports++ {
		select {
		case <-grown:
			done = true
		default:
		}
		importOnce()
	}
	waitFollowed()
	ingested, dups := ingestCounts(t, c.URL())
	if err := c.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}

	// An import under way (its hold of the state) when the follower,
	// which has read the transcripts, looks at them grown, and what they
	// gained after that look read by the import, the collector stopped
	// before its next look.
	const slow = 600 * time.Millisecond
	c = followingCollector(t, home, db, "", projects, slow)
	time.Sleep(slow / 6)
	grow(rest[n-8 : n-7])
	time.Sleep(slow)
	held := holdAsImport(t, statePath)
	grow(rest[n-7 : n-6])
	time.Sleep(slow)
	grow(rest[n-6 : n-5])
	if err := held.Release(); err != nil {
		t.Fatal(err)
	}
	importOnce()
	inHeld, dupsHeld := ingestCounts(t, c.URL())
	if err := c.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}

	// An import of what they gained after the follower read them, before
	// the follower's next look.
	c = followingCollector(t, home, db, "", projects, slow)
	time.Sleep(slow / 6)
	grow(rest[n-5 : n-4])
	time.Sleep(slow)
	grow(rest[n-4 : n-3])
	importOnce()
	time.Sleep(slow)
	inAfter, dupsAfter := ingestCounts(t, c.URL())
	if err := c.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}

	// The collector restarted after an import of what they gained while
	// none followed them: it reads nothing again.
	grow(rest[n-3:])
	c = followingCollector(t, home, db, "", "", time.Second)
	importOnce()
	in2, dups2 := ingestCounts(t, c.URL())
	if err := c.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	c = followingCollector(t, home, db, "", projects, 5*time.Millisecond)
	defer c.Stop(context.Background())
	waitFollowed()
	time.Sleep(100 * time.Millisecond) // looks that would read again
	in3, dups3 := ingestCounts(t, c.URL())

	// Every record stored once, none missed.
	total := 0
	for sid, ids := range want {
		stored, usage := storedEvents(t, c.URL(), sid)
		for id, n := range stored {
			total += n
			if n != 1 {
				t.Errorf("session %s: event %s stored %d times", sid, id, n)
			}
		}
		for id := range ids {
			if stored[id] == 0 {
				t.Errorf("session %s: event %s of the transcripts not stored", sid, id)
			}
		}
		usageEvents := 0
		for m, n := range usage {
			usageEvents += n
			if !wantUsage[sid][m] {
				t.Errorf("session %s: the usage of message %s stored, not of the transcripts", sid, m)
			}
			if n != 1 {
				t.Errorf("session %s: the usage of message %s stored %d times", sid, m, n)
			}
		}
		for m := range wantUsage[sid] {
			if usage[m] == 0 {
				t.Errorf("session %s: the usage of message %s not stored", sid, m)
			}
		}
		if len(stored)-usageEvents != len(ids) {
			t.Errorf("session %s: %d events stored besides the usage, want %d", sid, len(stored)-usageEvents, len(ids))
		}
	}
	checkPhases(t, "transcripts", imports, total, watch, [5][2]int{{ingested, dups}, {inHeld, dupsHeld}, {inAfter, dupsAfter}, {in2, dups2}, {in3, dups3}})
}

// checkPhases checks what the five phases of a test of import beside the
// follower stored, counted in phases as {stored, given to the store
// again} in the order: the first collector with the imports while what
// grew, an import while the follower looks, an import between two looks,
// the import with no follower, the restarted collector. Each record is
// read and given to the store by one reader: want events in all, none
// given twice (the store's duplicates), none by the restarted collector,
// and no offset kept moved back.
func checkPhases(t *testing.T, what string, imports, want int, watch *offsetWatch, phases [5][2]int) {
	t.Helper()
	names := [5]string{"the first collector with the imports", "an import while the follower looks", "an import between two looks", "the import with no follower", "the restarted collector"}
	var stored, again int
	var says []string
	for i, p := range phases {
		stored += p[0]
		again += p[1]
		says = append(says, fmt.Sprintf("%s: %d stored, %d again", names[i], p[0], p[1]))
	}
	t.Logf("%d imports while the %s grew; %s", imports, what, strings.Join(says, "; "))
	if stored != want {
		t.Errorf("%d events stored in all, want %d", stored, want)
	}
	if again != 0 {
		t.Errorf("%d events given to the store again (%s): the same records read twice", again, strings.Join(says, "; "))
	}
	if in3 := phases[4][0]; in3 != 0 {
		t.Errorf("the restarted collector stored %d events", in3)
	}
	if back := watch.end(); len(back) > 0 {
		t.Errorf("offsets kept moved back: %v", back)
	}
}

// holdAsImport takes the import state at statePath as an import does,
// waiting while a look of the collector's follower holds it (whenFree).
func holdAsImport(t *testing.T, statePath string) *importer.RolloutState {
	t.Helper()
	var held *importer.RolloutState
	if err := whenFree(context.Background(), io.Discard, "the import state", func() (err error) {
		held, err = importer.HoldRollouts(statePath, "hookwatch import", false)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return held
}

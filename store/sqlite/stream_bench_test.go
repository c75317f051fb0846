package sqlite_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/cputime"
	"github.com/hookwatch/hookwatch/internal/demo"
	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/sqlite"
)

// storeCall is one write the collector made to its store: a batch of
// events (Insert) or a round of the session model (PutModel), At after the
// recording started.
type storeCall struct {
	At     time.Duration
	Events []store.Event
	Model  *store.ModelBatch
}

// BenchmarkModelStream replays into a fresh database the store writes of
// the model benchmark (internal/bench.Model: three sessions of 100,000
// events of internal/demo.Big, 5,000 events/s in all, POSTed to a
// collector), to measure the storage's share of the collector's CPU per
// event without HTTP, admission or the model. The writes are recorded once
// into the file $HOOKWATCH_STREAM (a real collector on SQLite, about 100 s)
// and replayed from it on later runs; the benchmark is skipped without it.
// $HOOKWATCH_STREAM_SPEED paces the replay (1: as recorded, the default; 0:
// as fast as it goes); $HOOKWATCH_STREAM_MERGE=k commits k consecutive
// batches of events as one. It reports the process's CPU per event for
// each slice of 10,000 events (the background checkpoint included) and the
// Insert and PutModel calls' own CPU per event.
//
//	HOOKWATCH_STREAM=/tmp/stream.gob go test ./store/sqlite -run '^$' -bench 'ModelStream$' -benchtime 1x -v
func BenchmarkModelStream(b *testing.B) {
	path := os.Getenv("HOOKWATCH_STREAM")
	if path == "" {
		b.Skip("HOOKWATCH_STREAM is not set")
	}
	speed := 1.0
	if v := os.Getenv("HOOKWATCH_STREAM_SPEED"); v != "" {
		var err error
		if speed, err = strconv.ParseFloat(v, 64); err != nil {
			b.Fatalf("HOOKWATCH_STREAM_SPEED: %v", err)
		}
	}
	merge := 1
	if v := os.Getenv("HOOKWATCH_STREAM_MERGE"); v != "" {
		var err error
		if merge, err = strconv.Atoi(v); err != nil || merge < 1 {
			b.Fatalf("HOOKWATCH_STREAM_MERGE: %q is not a count", v)
		}
	}
	calls, err := readStream(path)
	if errors.Is(err, fs.ErrNotExist) {
		calls, err = recordStream(b, path)
	}
	if err != nil {
		b.Fatal(err)
	}
	calls = mergeInserts(calls, merge)
	for range b.N {
		replayStream(b, calls, speed)
	}
}

// BenchmarkModelStreamPages replays three quarters of the recording of
// BenchmarkModelStream, then 1,000 more calls with every checkpoint held,
// and counts the pages each of those calls' transactions wrote to the WAL,
// by b-tree (dbstat names the b-tree of each page); how many of them the
// insert or round before had written too, and how many distinct pages all the
// frames hold (what a checkpoint would copy of them); and the average size
// of what the rows hold (an event's envelope, a call's and an agent's
// document).
//
//	HOOKWATCH_STREAM=/tmp/stream.gob go test ./store/sqlite -run '^$' -bench ModelStreamPages -benchtime 1x -v
func BenchmarkModelStreamPages(b *testing.B) {
	path := os.Getenv("HOOKWATCH_STREAM")
	if path == "" {
		b.Skip("HOOKWATCH_STREAM is not set")
	}
	calls, err := readStream(path)
	if err != nil {
		b.Fatalf("%v (BenchmarkModelStream records it)", err)
	}
	const counted = 1000
	if len(calls) < 4*counted {
		b.Fatalf("%d calls in %s: too few", len(calls), path)
	}
	for range b.N {
		streamPages(b, calls[:len(calls)*3/4], calls[len(calls)*3/4:][:counted])
	}
}

func streamPages(b *testing.B, before, counted []storeCall) {
	file := filepath.Join(b.TempDir(), "hookwatch.db")
	db, err := sqlite.Open(file)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	put := func(c storeCall) {
		if c.Model != nil {
			err = db.PutModel(ctx, *c.Model)
		} else {
			_, err = db.Insert(ctx, c.Events)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	for _, c := range before {
		put(c)
	}
	if err := db.HoldCheckpointsForTest(); err != nil {
		b.Fatal(err)
	}
	for _, c := range counted {
		put(c)
	}
	// The b-tree of each page, as the transactions left them.
	owner := map[uint32]string{1: "page 1"}
	r, err := sql.Open("sqlite", file)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	rows, err := r.Query(`SELECT name, pageno FROM dbstat`)
	if err != nil {
		b.Fatal(err)
	}
	for rows.Next() {
		var name string
		var page uint32
		if err := rows.Scan(&name, &page); err != nil {
			b.Fatal(err)
		}
		if page != 1 {
			owner[page] = name
		}
	}
	if err := rows.Close(); err != nil {
		b.Fatal(err)
	}
	wal, err := os.ReadFile(file + "-wal")
	if err != nil {
		b.Fatal(err)
	}
	// A WAL is a 32-byte header and frames of a 24-byte header (the page
	// number, and the database's size in pages on a commit's last frame,
	// else 0) and a page.
	const walHeader, frameHeader, pageSize = 32, 24, 4096
	pages := map[bool]map[string]int{false: {}, true: {}} // by model or not
	txs := map[bool]int{}
	tx := 0
	current := map[string]int{}
	// The pages of the last insert and of the last model round, and of
	// the transaction under way.
	again := map[bool]int{} // pages the last transaction of its kind wrote too
	last := map[bool]map[uint32]bool{false: {}, true: {}}
	this := map[uint32]bool{}
	distinct := map[uint32]bool{}
	frames := 0
	for off := walHeader; off+frameHeader+pageSize <= len(wal) && tx < len(counted); off += frameHeader + pageSize {
		page := binary.BigEndian.Uint32(wal[off:])
		name := owner[page]
		if name == "" {
			name = "(free)"
		}
		current[name]++
		this[page], distinct[page] = true, true
		frames++
		if binary.BigEndian.Uint32(wal[off+4:]) == 0 {
			continue
		}
		model := counted[tx].Model != nil
		txs[model]++
		for p := range this {
			if last[model][p] {
				again[model]++
			}
		}
		last[model], this = this, last[model]
		clear(this)
		for n, k := range current {
			pages[model][n] += k
		}
		clear(current)
		tx++
	}
	if tx != len(counted) {
		b.Fatalf("%d transactions in the WAL for %d calls", tx, len(counted))
	}
	for _, model := range []bool{false, true} {
		what := "inserts"
		if model {
			what = "model rounds"
		}
		total := 0
		for _, k := range pages[model] {
			total += k
		}
		names := slices.SortedFunc(maps.Keys(pages[model]), func(x, y string) int { return pages[model][y] - pages[model][x] })
		var s strings.Builder
		for _, n := range names {
			fmt.Fprintf(&s, " %s %.2f,", n, float64(pages[model][n])/float64(txs[model]))
		}
		b.Logf("%d %s: %.1f pages each, %.1f of them written by the one before too:%s", txs[model], what,
			float64(total)/float64(txs[model]), float64(again[model])/float64(txs[model]), strings.TrimSuffix(s.String(), ","))
		b.ReportMetric(float64(total)/float64(txs[model]), "pages/"+strings.ReplaceAll(strings.TrimSuffix(what, "s"), " ", "-"))
	}
	b.Logf("%d frames of %d distinct pages (%.0f %% of the frames write a page an earlier frame of these calls wrote)",
		frames, len(distinct), 100*float64(frames-len(distinct))/float64(frames))
	var envelopes, calls, agents rowBytes
	for _, c := range counted {
		if c.Model == nil {
			for _, e := range c.Events {
				envelopes.add(e.Envelope)
			}
			continue
		}
		for _, r := range c.Model.ToolCalls {
			calls.add(r.Doc)
		}
		for _, r := range c.Model.Agents {
			agents.add(r.Doc)
		}
	}
	b.Logf("average bytes: envelope %s, call doc %s, agent doc %s", envelopes, calls, agents)
}

// rowBytes is the count and total size of one kind of document.
type rowBytes struct{ n, bytes int }

func (r *rowBytes) add(doc []byte) { r.n, r.bytes = r.n+1, r.bytes+len(doc) }

func (r rowBytes) String() string {
	return fmt.Sprintf("%.0f (%d rows)", float64(r.bytes)/float64(max(r.n, 1)), r.n)
}

func readStream(path string) ([]storeCall, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var calls []storeCall
	if err := gob.NewDecoder(f).Decode(&calls); err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", path, err)
	}
	return calls, nil
}

// mergeInserts joins every k consecutive batches of events, in the order
// of the calls, into one.
func mergeInserts(calls []storeCall, k int) []storeCall {
	if k <= 1 {
		return calls
	}
	var out []storeCall
	at, n := -1, 0
	for _, c := range calls {
		if c.Model != nil {
			out = append(out, c)
			continue
		}
		if at < 0 {
			out = append(out, c)
			at, n = len(out)-1, 1
		} else {
			out[at].Events = append(slices.Clip(out[at].Events), c.Events...)
			n++
		}
		if n == k {
			at = -1
		}
	}
	return out
}

func replayStream(b *testing.B, calls []storeCall, speed float64) {
	db, err := sqlite.Open(filepath.Join(b.TempDir(), "hookwatch.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	const slice = 10_000
	var perSlice []float64
	var insertCPU, modelCPU time.Duration
	sent := 0
	start, cpu0 := time.Now(), cputime.Self()
	last := cpu0
	for _, c := range calls {
		if speed > 0 {
			if d := time.Duration(float64(c.At)/speed) - time.Since(start); d > 0 {
				time.Sleep(d)
			}
		}
		t := cputime.Self()
		if c.Model != nil {
			if err := db.PutModel(ctx, *c.Model); err != nil {
				b.Fatal(err)
			}
			modelCPU += cputime.Self() - t
			continue
		}
		if _, err := db.Insert(ctx, c.Events); err != nil {
			b.Fatal(err)
		}
		now := cputime.Self()
		insertCPU += now - t
		before := sent / slice
		sent += len(c.Events)
		if sent/slice > before {
			perSlice = append(perSlice, float64((now-last).Nanoseconds())/1e3/slice)
			last = now
		}
	}
	total := cputime.Self() - cpu0
	if len(perSlice) == 0 {
		b.Fatal("no slice of 10,000 events")
	}
	var s strings.Builder
	for _, us := range perSlice {
		fmt.Fprintf(&s, " %.1f", us)
	}
	sorted := slices.Sorted(slices.Values(perSlice))
	b.Logf("%d events, %d store calls; µs of CPU per event per slice:%s", sent, len(calls), s.String())
	b.Logf("median %.1f µs/event, last/first slice %.2f; Insert %.1f µs/event, PutModel %.1f, all %.1f",
		sorted[len(sorted)/2], perSlice[len(perSlice)-1]/perSlice[0], perEvent(insertCPU, sent), perEvent(modelCPU, sent), perEvent(total, sent))
	b.ReportMetric(perEvent(total, sent), "cpu-µs/event")
	b.ReportMetric(perEvent(insertCPU, sent), "insert-µs/event")
	b.ReportMetric(perEvent(modelCPU, sent), "model-µs/event")
}

func perEvent(d time.Duration, events int) float64 {
	return float64(d.Nanoseconds()) / 1e3 / float64(events)
}

// recordingStore is a collector's store that keeps a copy of every write.
type recordingStore struct {
	*sqlite.DB
	start time.Time
	mu    sync.Mutex
	calls []storeCall
}

func (r *recordingStore) add(c storeCall) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c.At = time.Since(r.start)
	r.calls = append(r.calls, c)
}

func (r *recordingStore) Insert(ctx context.Context, events []store.Event) (int, error) {
	r.add(storeCall{Events: copyEvents(events)})
	return r.DB.Insert(ctx, events)
}

func (r *recordingStore) InsertOwned(ctx context.Context, user string, events []store.Event) (int, error) {
	r.add(storeCall{Events: copyEvents(events)})
	return r.DB.InsertOwned(ctx, user, events)
}

func (r *recordingStore) PutModel(ctx context.Context, m store.ModelBatch) error {
	c := m
	c.Sessions = slices.Clone(m.Sessions)
	for i := range c.Sessions {
		c.Sessions[i].Summary = bytes.Clone(c.Sessions[i].Summary)
	}
	c.Agents = slices.Clone(m.Agents)
	for i := range c.Agents {
		c.Agents[i].Doc = bytes.Clone(c.Agents[i].Doc)
	}
	c.ToolCalls = slices.Clone(m.ToolCalls)
	for i := range c.ToolCalls {
		c.ToolCalls[i].Doc = bytes.Clone(c.ToolCalls[i].Doc)
	}
	r.add(storeCall{Model: &c})
	return r.DB.PutModel(ctx, m)
}

// copyEvents copies what Insert stores of events; the decoded views,
// which it does not store, are left out.
func copyEvents(events []store.Event) []store.Event {
	out := slices.Clone(events)
	for i := range out {
		out[i].Seq = 0
		out[i].Envelope = bytes.Clone(out[i].Envelope)
		out[i].Decoded, out[i].Payload = nil, nil
	}
	return out
}

// recordStream streams the model benchmark's sessions into a collector on
// a recordingStore, as internal/bench.Model does, and writes what the
// store was asked to path.
func recordStream(b *testing.B, path string) ([]storeCall, error) {
	const sessions, events, rate = 3, 100_000, 5000
	start := time.Now()
	streams := make([][]event.Envelope, sessions)
	for i := range streams {
		streams[i] = demo.Big(demo.BigSpec{
			SessionID: fmt.Sprintf("bench-%d-%d", sessions, i), Start: start, Events: events, Agents: 50,
			Project: fmt.Sprint("bench-project-", i), Seed: uint64(i + 1),
		})
	}
	db, err := sqlite.Open(filepath.Join(b.TempDir(), "hookwatch.db"))
	if err != nil {
		return nil, err
	}
	rec := &recordingStore{DB: db, start: time.Now()}
	c, err := collector.Start(collector.Options{
		Config: collector.Config{Store: rec, Logger: slog.New(slog.DiscardHandler)},
		Addr:   "127.0.0.1:0",
		Home:   b.TempDir(),
	})
	if err != nil {
		return nil, err
	}
	defer c.Stop(context.Background())
	client := &http.Client{Timeout: time.Minute}
	const tick = 10 * time.Millisecond
	perTick := rate * int(tick/time.Millisecond) / 1000 / sessions
	var wg sync.WaitGroup
	errs := make(chan error, sessions)
	for _, envs := range streams {
		wg.Go(func() {
			t := time.NewTicker(tick)
			defer t.Stop()
			for i := 0; i < len(envs); i += perTick {
				<-t.C
				batch := demo.Sent(envs[i:min(i+perTick, len(envs))], time.Now().UTC())
				body, err := json.Marshal(map[string]any{"envelopes": batch})
				if err != nil {
					errs <- err
					return
				}
				res, err := client.Post(c.URL()+"/v1/events", "application/json", bytes.NewReader(body))
				if err != nil {
					errs <- err
					return
				}
				res.Body.Close()
				if res.StatusCode != http.StatusOK {
					errs <- fmt.Errorf("POST /v1/events: %s", res.Status)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return nil, err
	}
	time.Sleep(2 * time.Second) // the model's last rounds
	rec.mu.Lock()
	calls := slices.Clone(rec.calls)
	rec.mu.Unlock()
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := gob.NewEncoder(f).Encode(calls); err != nil {
		f.Close()
		return nil, fmt.Errorf("cannot write %s: %w", path, err)
	}
	return calls, f.Close()
}

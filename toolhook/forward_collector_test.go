package toolhook

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/hook"
	"github.com/hookwatch/hookwatch/internal/rejecttest"
	"github.com/hookwatch/hookwatch/spool"
	"github.com/hookwatch/hookwatch/store/sqlite"
	"github.com/hookwatch/hookwatch/store/storetest"
)

// postSeen is a POST /v1/events a collector answered: its body's length,
// the lengths of its envelopes, and the status.
type postSeen struct {
	body, status int
	envelopes    []int
}

// realCollector starts a collector (in process, SQLite) that takes bodies
// of at most maxBody bytes, and returns its URL and the POST /v1/events it
// answered so far. Until gate is closed, the first such request waits
// before the collector reads it; entered is signalled when it arrives. A
// nil gate lets every request through.
func realCollector(t *testing.T, maxBody int64, gate <-chan struct{}, entered chan<- struct{}) (url string, posts func() []postSeen) {
	t.Helper()
	srv, err := collector.New(collector.Config{Store: sqlite.MustOpenDB(t), Version: "test", MaxBodyBytes: maxBody})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []postSeen
	first := true
	h := srv.Handler()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/events" {
			h.ServeHTTP(w, r)
			return
		}
		mu.Lock()
		wait := first && gate != nil
		first = false
		mu.Unlock()
		if wait {
			entered <- struct{}{}
			<-gate
		}
		body, _ := io.ReadAll(r.Body)
		p := postSeen{body: len(body)}
		var b struct{ Envelopes []json.RawMessage }
		if json.Unmarshal(body, &b) == nil {
			for _, e := range b.Envelopes {
				p.envelopes = append(p.envelopes, len(e))
			}
		}
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		r.ContentLength = int64(len(body))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		p.status = rec.Code
		mu.Lock()
		seen = append(seen, p)
		mu.Unlock()
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	}))
	t.Cleanup(func() {
		hs.Close()
		srv.Shutdown(context.Background())
	})
	return hs.URL, func() []postSeen {
		mu.Lock()
		defer mu.Unlock()
		return append([]postSeen(nil), seen...)
	}
}

// storedIDs is the ids of the events the collector at url stores for
// session sid.
func storedIDs(t *testing.T, url, sid string) map[string]bool {
	t.Helper()
	resp, err := http.Get(url + "/v1/sessions/" + sid + "/events?limit=10000")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var page struct {
		Events []struct {
			ID string `json:"id"`
		} `json:"events"`
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("events of %s: %s", sid, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, e := range page.Events {
		ids[e.ID] = true
	}
	return ids
}

// spooled is the records the spool in dir holds, read from a copy of it.
func spooled(t *testing.T, dir string) [][]byte {
	t.Helper()
	cp := filepath.Join(t.TempDir(), "spool")
	if err := os.CopyFS(cp, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	sp, err := spool.Open(cp, spool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var recs [][]byte
	if _, err := sp.Drain(context.Background(), 0, func(batch [][]byte) error {
		recs = append(recs, batch...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return recs
}

// TestForwarderIsolatesRefused sends a batch in which the collector refuses
// one envelope (an id it does not accept, store.ValidateID) and takes the
// others: the good ones are stored, only the bad one is kept in
// rejected.jsonl, and nothing is counted as dropped. The batch is the
// spool's: calls recorded while no collector answered, and a record another
// producer left among them.
func TestForwarderIsolatesRefused(t *testing.T) {
	url, posts := realCollector(t, collector.DefaultMaxBodyBytes, nil, nil)
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close() // its port refuses connections
	dir := t.TempDir()
	record := func(from, to int) {
		fw, err := NewForwarder(ForwardOptions{URL: down.URL, SpoolDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		for i := from; i < to; i++ {
			fw.Record(&Call{SessionID: "s-refused", ToolName: "Read", ToolUseID: fmt.Sprint("t", i), Status: "ok",
				Start: time.Now(), Input: map[string]any{"file_path": "/p/f.txt"}, Output: "ok"})
		}
		if err := fw.Close(); err != nil || fw.Dropped() != 0 {
			t.Fatalf("close with the collector down: %v, %d dropped", err, fw.Dropped())
		}
	}
	record(0, 3)
	bad := event.Envelope{ID: "not an id!", Runtime: event.RuntimeGoSDK, Kind: event.KindHook, ReceivedAt: time.Now().UTC(),
		Payload: json.RawMessage(`{"hook_event_name":"PreToolUse","session_id":"s-refused","tool_name":"Read","tool_use_id":"t-bad"}`)}
	sp, err := spool.Open(dir, spool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := sp.Append(bad.AppendJSON(nil)); err != nil {
		t.Fatal(err)
	}
	record(3, 5)
	good := map[string]bool{}
	for _, r := range spooled(t, dir) {
		var e event.Envelope
		if err := json.Unmarshal(r, &e); err != nil {
			t.Fatal(err)
		}
		if e.ID != bad.ID {
			good[e.ID] = true
		}
	}
	if len(good) != 10 {
		t.Fatalf("%d envelopes spooled besides the bad one, want 10", len(good))
	}

	fw, err := NewForwarder(ForwardOptions{URL: url, SpoolDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	err = fw.Close()
	if err == nil || !strings.Contains(err.Error(), "rejected.jsonl") || !strings.Contains(err.Error(), "1 envelopes") || fw.Dropped() != 0 {
		t.Fatalf("close: %v, %d dropped; want the one rejected envelope said, none dropped", err, fw.Dropped())
	}
	if p := posts(); len(p) == 0 || len(p[0].envelopes) < 2 || p[0].status != http.StatusBadRequest {
		t.Fatalf("the first POST: %+v; want the bad envelope refused with good ones", p)
	}
	stored := storedIDs(t, url, "s-refused")
	for id := range good {
		if !stored[id] {
			t.Errorf("envelope %s not stored", id)
		}
	}
	if len(stored) != len(good) {
		t.Errorf("%d events stored, want %d", len(stored), len(good))
	}
	if lines := readLines(t, filepath.Join(dir, "rejected.jsonl")); len(lines) != 1 || !strings.Contains(lines[0], `"id":"not an id!"`) {
		t.Fatalf("rejected.jsonl: %q; want the bad envelope alone", lines)
	}
	if left := spooled(t, dir); len(left) != 0 {
		t.Fatalf("%d records left in the spool", len(left))
	}
}

// TestForwarderBatchesFit checks the bound on a batch's body against a
// collector that enforces it (MaxBodyBytes) with envelopes near it: a batch
// whose body is exactly the bound goes in one POST, which the collector
// takes; and calls recorded faster than they are sent are gathered in
// batches that each go in one POST, every one of them full but the last: a
// batch never holds more than one POST carries, to be sent in pieces.
func TestForwarderBatchesFit(t *testing.T) {
	const limit = 64 << 10

	// Spooled envelopes whose batch's body is exactly limit bytes.
	url, posts := realCollector(t, limit, nil, nil)
	dir := t.TempDir()
	envelope := func(i, pad int) []byte {
		payload := fmt.Sprintf(`{"hook_event_name":"PreToolUse","session_id":"s-exact","tool_name":"Read","tool_use_id":"t%d","tool_input":{"pad":"%s"}}`, i, strings.Repeat("x", pad))
		e := event.Envelope{ID: event.NewID(time.Now()), Runtime: event.RuntimeGoSDK, Kind: event.KindHook,
			ReceivedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Payload: json.RawMessage(payload)}
		return e.AppendJSON(nil)
	}
	recs := [][]byte{envelope(0, limit/5), envelope(1, limit/5), envelope(2, limit/5), envelope(3, 0)}
	recs[3] = envelope(3, limit-len(hook.BatchBody(recs)))
	if n := len(hook.BatchBody(recs)); n != limit {
		t.Fatalf("the batch's body is %d bytes, want %d", n, limit)
	}
	sp, err := spool.Open(dir, spool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := sp.Append(recs...); err != nil {
		t.Fatal(err)
	}
	fw, err := NewForwarder(ForwardOptions{URL: url, SpoolDir: dir, MaxBatchBytes: limit})
	if err != nil {
		t.Fatal(err)
	}
	if err := fw.Close(); err != nil || fw.Dropped() != 0 {
		t.Fatalf("close: %v, %d dropped", err, fw.Dropped())
	}
	if p := posts(); len(p) != 1 || p[0].body != limit || p[0].status != http.StatusOK {
		t.Fatalf("POSTs %+v; want one of %d bytes, taken", p, limit)
	}
	if n := len(storedIDs(t, url, "s-exact")); n != 4 {
		t.Fatalf("%d events stored, want 4", n)
	}

	// Calls queued while the collector is busy with the first.
	gate, entered := make(chan struct{}), make(chan struct{}, 1)
	url, posts = realCollector(t, limit, gate, entered)
	fw, err = NewForwarder(ForwardOptions{URL: url, MaxBatchBytes: limit})
	if err != nil {
		t.Fatal(err)
	}
	content := strings.Repeat("lorem ipsum ", limit/5/12/2) // envelopes of some 8 KB, several to a batch
	call := func(i int) *Call {
		return &Call{SessionID: "s-gathered", ToolName: "Write", ToolUseID: fmt.Sprint("t", i), Status: "ok", Start: time.Now(),
			Input: map[string]any{"file_path": "/p/f.txt", "content": content}, Output: content}
	}
	const calls = 40
	fw.Record(call(0))
	<-entered
	for i := 1; i < calls; i++ {
		fw.Record(call(i))
	}
	close(gate)
	if err := fw.Close(); err != nil || fw.Dropped() != 0 {
		t.Fatalf("close: %v, %d dropped", err, fw.Dropped())
	}
	p := posts()
	largest := 0
	for _, q := range p {
		for _, n := range q.envelopes {
			largest = max(largest, n)
		}
	}
	for i, q := range p {
		if q.status != http.StatusOK || q.body > limit {
			t.Errorf("POST %d: %d bytes, answered %d", i, q.body, q.status)
		}
		// The first POST is the call recorded alone; the last, what was left.
		if i > 0 && i < len(p)-1 && q.body+1+largest <= limit {
			t.Errorf("POST %d of %d: %d bytes (%d envelopes), room left for another envelope of at most %d", i, len(p), q.body, len(q.envelopes), largest)
		}
	}
	if n := len(storedIDs(t, url, "s-gathered")); n != 2*calls {
		t.Fatalf("%d events stored, want %d", n, 2*calls)
	}
	if _, err := os.Stat(filepath.Join(dir, "rejected.jsonl")); !os.IsNotExist(err) {
		t.Fatalf("rejected.jsonl: %v", err)
	}
}

// TestForwarderRefusedOnceAcrossRetries drains a spooled batch in which the
// collector refuses one envelope, and the connection drops once, while the
// batch is sent one envelope at a time, on an envelope after the refused
// one: the batch stays spooled, and the next Forwarder drains it again.
// The refused envelope is kept in rejected.jsonl once, not once per drain,
// and every other one is stored.
func TestForwarderRefusedOnceAcrossRetries(t *testing.T) {
	recs := rejecttest.Records(t)
	url, db, dropped := rejecttest.Collector(t, recs)
	dir := t.TempDir()
	sp, err := spool.Open(dir, spool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := sp.Append(recs...); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		fw, err := NewForwarder(ForwardOptions{URL: url, SpoolDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		if err := fw.Close(); fw.Dropped() != 0 {
			t.Fatalf("close: %v, %d dropped", err, fw.Dropped())
		}
	}
	if !dropped() {
		t.Fatal("the connection was never dropped")
	}
	if left := spooled(t, dir); len(left) != 0 {
		t.Fatalf("%d records left in the spool", len(left))
	}
	if lines := readLines(t, filepath.Join(dir, "rejected.jsonl")); len(lines) != 1 || lines[0] != string(recs[rejecttest.Refused]) {
		t.Fatalf("rejected.jsonl holds %d lines; want the bad envelope once", len(lines))
	}
	if n := storetest.CountEvents(t, db); n != int64(len(recs)-1) {
		t.Fatalf("stored %d events, want %d", n, len(recs)-1)
	}
}

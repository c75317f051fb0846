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
	"github.com/hookwatch/hookwatch/spool"
	"github.com/hookwatch/hookwatch/store/sqlite"
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

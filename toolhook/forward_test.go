package toolhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/event"
)

// TestForwarderNeverBlocks records calls while the collector is stuck on
// the first batch: the queue fills, further calls are dropped and counted
// at once, and once the collector answers the queued ones arrive, each as
// its PreToolUse and PostToolUse.
func TestForwarderNeverBlocks(t *testing.T) {
	entered, release := make(chan struct{}, 1), make(chan struct{})
	var got atomic.Int64
	var names []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct{ Envelopes []event.Envelope }
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			w.WriteHeader(400)
			return
		}
		select {
		case entered <- struct{}{}:
			<-release
		default:
		}
		for _, e := range body.Envelopes {
			var p struct {
				Name  string `json:"hook_event_name"`
				Agent string `json:"agent_id"`
			}
			json.Unmarshal(e.Payload, &p)
			if e.Runtime != event.RuntimeGoSDK || e.Subagent == nil || e.Subagent.ToolUseID != "spawn-1" || p.Agent != "a1" {
				t.Errorf("envelope %+v %s", e, e.Payload)
			}
			names = append(names, p.Name)
		}
		got.Add(int64(len(body.Envelopes)))
	}))
	defer srv.Close()
	fw, err := NewForwarder(ForwardOptions{URL: srv.URL, QueueSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	call := func() *Call {
		return &Call{SessionID: "s", ToolName: "Read", ToolUseID: "t", AgentID: "a1", AgentType: "w",
			ParentToolUseID: "spawn-1", Depth: 1, Status: "ok", Start: time.Now(), Output: "x"}
	}
	fw.Record(call())
	<-entered
	start := time.Now()
	for range 5 {
		fw.Record(call())
	}
	if d := time.Since(start); d > 100*time.Millisecond {
		t.Fatalf("Record blocked for %v", d)
	}
	if n := fw.Dropped(); n != 3 {
		t.Fatalf("%d dropped, want 3", n)
	}
	close(release)
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	if n := got.Load(); n != 6 || strings.Count(strings.Join(names, " "), event.PostToolUse) != 3 {
		t.Fatalf("%d envelopes: %q", n, names)
	}
}

// TestForwarderRefused keeps a batch the collector refuses for what it is
// in rejected.jsonl, as the hook does, and out of the spool, which it would
// wedge; without a spool directory, it is counted as dropped.
func TestForwarderRefused(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(422) }))
	defer srv.Close()
	dir := t.TempDir()
	fw, err := NewForwarder(ForwardOptions{URL: srv.URL, SpoolDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	fw.Record(&Call{SessionID: "s", ToolName: "Read", ToolUseID: "t", Status: "ok", Start: time.Now()})
	if err := fw.Close(); err == nil || !strings.Contains(err.Error(), "rejected.jsonl") || fw.Dropped() != 0 {
		t.Fatalf("close: %v, %d dropped", err, fw.Dropped())
	}
	if st, err := fw.sp.Stats(); err != nil || st.PendingBytes != 0 {
		t.Fatalf("spooled a refused batch: %+v %v", st, err)
	}
	if lines := readLines(t, filepath.Join(dir, "rejected.jsonl")); len(lines) != 2 {
		t.Fatalf("rejected.jsonl holds %d envelopes, want 2", len(lines))
	}

	fw, err = NewForwarder(ForwardOptions{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	fw.Record(&Call{SessionID: "s", ToolName: "Read", ToolUseID: "t", Status: "ok", Start: time.Now()})
	if err := fw.Close(); err == nil || fw.Dropped() != 2 {
		t.Fatalf("close without a spool: %v, %d dropped", err, fw.Dropped())
	}

	// rejected.jsonl cannot be written: what it would have kept is lost,
	// and counted so.
	dir = t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "rejected.jsonl"), 0o700); err != nil {
		t.Fatal(err)
	}
	fw, err = NewForwarder(ForwardOptions{URL: srv.URL, SpoolDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	fw.Record(&Call{SessionID: "s", ToolName: "Read", ToolUseID: "t", Status: "ok", Start: time.Now()})
	if err := fw.Close(); err == nil || fw.Dropped() != 2 {
		t.Fatalf("close with rejected.jsonl not writable: %v, %d dropped", err, fw.Dropped())
	}
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

// collector413 is a collector that takes bodies up to limit bytes and
// answers 413 to larger ones, as a collector's body limit does.
func collector413(t *testing.T, limit int64) (url string, ids *sync.Map, largest *atomic.Int64) {
	ids, largest = new(sync.Map), new(atomic.Int64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if int64(len(body)) > limit {
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			return
		}
		if n := int64(len(body)); n > largest.Load() {
			largest.Store(n)
		}
		var b struct{ Envelopes []event.Envelope }
		if err := json.Unmarshal(body, &b); err != nil {
			w.WriteHeader(400)
			return
		}
		for _, e := range b.Envelopes {
			ids.Store(e.ID, true)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL, ids, largest
}

func count(m *sync.Map) (n int) {
	m.Range(func(any, any) bool { n++; return true })
	return n
}

// TestForwarderLargeBatches checks that batches are bounded in bytes, that
// a batch the collector finds too large is split and sent again, and that
// an envelope too large on its own is kept in rejected.jsonl: with the
// collector up, nothing is lost.
func TestForwarderLargeBatches(t *testing.T) {
	big := strings.Repeat("lorem ipsum ", 2000) // 24 KB an envelope
	record := func(fw *Forwarder, n int, content string) {
		for i := range n {
			fw.Record(&Call{SessionID: "s", ToolName: "Write", ToolUseID: fmt.Sprint("t", i), Status: "ok", Start: time.Now(),
				Input: map[string]any{"file_path": "/p/f.txt", "content": content}, Output: "ok"})
		}
	}

	// The collector takes 200 KB; batches are capped at 8 MiB: the first
	// ones are refused (413) and split until they fit.
	url, ids, _ := collector413(t, 200<<10)
	dir := t.TempDir()
	fw, err := NewForwarder(ForwardOptions{URL: url, SpoolDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	record(fw, 100, big)
	if err := fw.Close(); err != nil || fw.Dropped() != 0 || count(ids) != 200 {
		t.Fatalf("close: %v, %d dropped, %d envelopes arrived, want 200", err, fw.Dropped(), count(ids))
	}

	// MaxBatchBytes bounds what one POST carries.
	url, ids, largest := collector413(t, 32<<20)
	fw, err = NewForwarder(ForwardOptions{URL: url, MaxBatchBytes: 100 << 10})
	if err != nil {
		t.Fatal(err)
	}
	record(fw, 50, big)
	if err := fw.Close(); err != nil || count(ids) != 100 || largest.Load() > 100<<10 {
		t.Fatalf("close: %v, %d envelopes arrived, largest body %d bytes, want 100, at most %d", err, count(ids), largest.Load(), 100<<10)
	}

	// An envelope larger than the collector takes is kept aside.
	url, ids, _ = collector413(t, 20<<10)
	fw, err = NewForwarder(ForwardOptions{URL: url, SpoolDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	record(fw, 1, big)
	err = fw.Close()
	if err == nil || !strings.Contains(err.Error(), "rejected.jsonl") || fw.Dropped() != 0 {
		t.Fatalf("close: %v, %d dropped", err, fw.Dropped())
	}
	if lines := readLines(t, filepath.Join(dir, "rejected.jsonl")); len(lines) != 2 || count(ids) != 0 {
		t.Fatalf("rejected.jsonl holds %d envelopes, the collector took %d; want 2, 0", len(lines), count(ids))
	}
}

// TestForwarderHangingCollector checks that a collector that takes
// requests and never answers costs one timeout: after it, batches go to the
// spool without waiting on it, and CloseContext returns when its context
// ends, the calls spooled.
func TestForwarderHangingCollector(t *testing.T) {
	var requests atomic.Int64
	hang := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(hang)
	pending := func(fw *Forwarder) int {
		n := 0
		fw.sp.Drain(context.Background(), 0, func(recs [][]byte) error { n += len(recs); return nil })
		return n
	}
	call := func(i int) *Call {
		return &Call{SessionID: "s", ToolName: "Read", ToolUseID: fmt.Sprint("t", i), Status: "ok", Start: time.Now()}
	}

	fw, err := NewForwarder(ForwardOptions{URL: srv.URL, SpoolDir: t.TempDir(), BatchSize: 2,
		Client: &http.Client{Timeout: 200 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		fw.Record(call(i))
		time.Sleep(20 * time.Millisecond)
	}
	start := time.Now()
	err = fw.Close()
	if d := time.Since(start); d > 2*time.Second || requests.Load() != 1 || fw.Dropped() != 0 || pending(fw) != 12 {
		t.Fatalf("close took %v (%v), %d requests, %d dropped, %d spooled; want one request, 12 envelopes spooled",
			d, err, requests.Load(), fw.Dropped(), pending(fw))
	}

	// With the default client (5 s), CloseContext ends the request.
	requests.Store(0)
	fw, err = NewForwarder(ForwardOptions{URL: srv.URL, SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	fw.Record(call(0))
	for requests.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	fw.Record(call(1))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start = time.Now()
	fw.CloseContext(ctx)
	if d := time.Since(start); d > time.Second || fw.Dropped() != 0 || pending(fw) != 4 {
		t.Fatalf("CloseContext took %v, %d dropped, %d spooled; want 4 spooled at once", d, fw.Dropped(), pending(fw))
	}
}

// TestForwarderRedacts sends no secret of a call's input, output or error
// to the collector: they pass through the privacy rules first.
func TestForwarderRedacts(t *testing.T) {
	secret := "sk-ant-" + strings.Repeat("Qw2-Er5tXy7_", 3)
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b strings.Builder
		io.Copy(&b, r.Body)
		bodies = append(bodies, b.String())
	}))
	defer srv.Close()
	fw, err := NewForwarder(ForwardOptions{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	fw.Record(&Call{SessionID: "s", ToolName: "Bash", ToolUseID: "t1", Status: "ok", Start: time.Now(),
		Input: map[string]any{"command": "curl -H 'x-api-key: " + secret + "'"}, Output: "key " + secret})
	fw.Record(&Call{SessionID: "s", ToolName: "Bash", ToolUseID: "t2", Status: "error", Start: time.Now(),
		Err: errors.New("bad key " + secret)})
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	all := strings.Join(bodies, "\n")
	if strings.Count(all, `"tool_use_id":"t`) != 4 || strings.Contains(all, "Qw2-Er5tXy7_") {
		t.Fatalf("sent %s", all)
	}
}

// TestForwarderLinger sends the calls of a trickle in one POST when they
// come within Linger of the first, each in a POST of its own without
// lingering, and has Close send what waits at once rather than after
// Linger.
func TestForwarderLinger(t *testing.T) {
	var mu sync.Mutex
	var posts []int // envelopes per POST
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct{ Envelopes []event.Envelope }
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			w.WriteHeader(400)
			return
		}
		mu.Lock()
		posts = append(posts, len(body.Envelopes))
		mu.Unlock()
	}))
	defer srv.Close()
	trickle := func(linger time.Duration, calls int, last func(*Forwarder)) []int {
		t.Helper()
		mu.Lock()
		posts = nil
		mu.Unlock()
		fw, err := NewForwarder(ForwardOptions{URL: srv.URL, Linger: linger})
		if err != nil {
			t.Fatal(err)
		}
		for i := range calls {
			if i > 0 {
				time.Sleep(20 * time.Millisecond)
			}
			fw.Record(&Call{SessionID: "s", ToolName: "Read", ToolUseID: fmt.Sprint("t", i), Status: "ok", Start: time.Now(), Output: "x"})
		}
		last(fw)
		if err := fw.Close(); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(posts)
	}
	// A trickle of five calls, 20 ms apart, within a linger of 10 s.
	wait := func(fw *Forwarder) {
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			mu.Lock()
			n := len(posts)
			mu.Unlock()
			if n > 0 {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if got := trickle(2*time.Second, 5, wait); !slices.Equal(got, []int{10}) {
		t.Errorf("lingering: envelopes per POST %v, want [10]", got)
	}
	// Without lingering each call goes as it comes.
	if got := trickle(-1, 5, wait); len(got) != 5 {
		t.Errorf("not lingering: envelopes per POST %v, want a POST per call", got)
	}
	// Close does not wait out an hour's linger.
	start := time.Now()
	if got := trickle(time.Hour, 2, func(*Forwarder) {}); !slices.Equal(got, []int{4}) || time.Since(start) > 30*time.Second {
		t.Errorf("closed while lingering: envelopes per POST %v after %v, want [4] at once", got, time.Since(start))
	}
}

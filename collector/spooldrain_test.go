package collector_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/spool"
	"github.com/hookwatch/hookwatch/store"
)

// serverWithSpool is a collector and a spool in a new home, not drained yet.
func serverWithSpool(t *testing.T) (*testServer, string, *spool.Spool) {
	t.Helper()
	home := t.TempDir()
	sp, err := spool.Open(filepath.Join(home, "spool"), spool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return newServer(t, collector.Config{}), home, sp
}

// TestDrainSpool: what hooks spooled is stored once, garbage and refused
// envelopes are set aside in rejected.jsonl, and the spool ends empty.
func TestDrainSpool(t *testing.T) {
	s, home, sp := serverWithSpool(t)
	envs := corpusEnvelopes(t)[:20]
	for _, e := range envs {
		b, _ := json.Marshal(e)
		if err := sp.Append(b); err != nil {
			t.Fatal(err)
		}
	}
	// The same envelope twice (a hook and a drainer raced), one the
	// collector refuses (no id), and JSON that is no envelope.
	dup, _ := json.Marshal(envs[0])
	refused := []byte(`{"id":"","runtime":"claude-code","payload":{"hook_event_name":"Stop"}}`)
	notEnvelopes := [][]byte{[]byte(`[{"id":"x"}]`), []byte(`{"id":["x"]}`), []byte(`null`)}
	if err := sp.Append(append([][]byte{dup, refused}, notEnvelopes...)...); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.DrainSpool(ctx, sp, 20*time.Millisecond) }()
	// Wait for the outcome, not for the spool to look empty: a segment
	// is out of the spool's pending bytes once claimed, before it is
	// delivered.
	deadline := time.Now().Add(10 * time.Second)
	var stored int
	var rej []byte
	var err error
	for {
		st, err := sp.Stats()
		if err != nil {
			t.Fatal(err)
		}
		stored = storedEvents(t, s)
		rej, err = os.ReadFile(filepath.Join(home, "rejected.jsonl"))
		if st.PendingBytes == 0 && stored >= len(envs) && err == nil && strings.Count(string(rej), "\n") >= 1+len(notEnvelopes) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("spool not drained: %+v, stored %d events, rejected.jsonl %q (%v)", st, stored, rej, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	<-done

	if stored := storedEvents(t, s); stored != len(envs) {
		t.Errorf("stored %d events, want %d", stored, len(envs))
	}
	rej, err = os.ReadFile(filepath.Join(home, "rejected.jsonl"))
	if err != nil || strings.Count(string(rej), "\n") != 1+len(notEnvelopes) || !strings.Contains(string(rej), `"id":""`) {
		t.Errorf("rejected.jsonl = %q (%v)", rej, err)
	}
	for _, r := range notEnvelopes {
		if !strings.Contains(string(rej), string(r)+"\n") {
			t.Errorf("rejected.jsonl = %q, want %s set aside", rej, r)
		}
	}
}

// TestSpoolLossesReported: the spool's drops and corrupt lines are on
// /metrics, and /healthz is degraded while some are not acknowledged.
func TestSpoolLossesReported(t *testing.T) {
	s := newServer(t, collector.Config{})
	health := func() (int, map[string]any) {
		t.Helper()
		code, body := s.do(t, "GET", "/healthz", nil)
		var h map[string]any
		if err := json.Unmarshal(body, &h); err != nil {
			t.Fatalf("healthz: %s", body)
		}
		return code, h
	}
	metric := func(name string) string {
		t.Helper()
		_, body := s.do(t, "GET", "/metrics", nil)
		for _, line := range strings.Split(string(body), "\n") {
			if v, ok := strings.CutPrefix(line, name+" "); ok {
				return v
			}
		}
		return "absent"
	}
	if code, h := health(); code != 200 || h["status"] != "ok" || h["spool"] != nil {
		t.Fatalf("healthz without a spool: %d %v", code, h)
	}
	if v := metric("hookwatch_spool_dropped_total"); v != "absent" {
		t.Fatalf("a collector without a spool reports hookwatch_spool_dropped_total %s", v)
	}

	sp, err := spool.Open(filepath.Join(t.TempDir(), "spool"), spool.Options{MaxBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.DrainSpool(ctx, sp, 20*time.Millisecond) }()
	defer func() { cancel(); <-done }()
	deadline := time.Now().Add(5 * time.Second)
	for metric("hookwatch_spool_dropped_total") == "absent" && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if code, h := health(); code != 200 || h["status"] != "ok" {
		t.Fatalf("healthz with a spool and no loss: %d %v", code, h)
	}

	for range 3 {
		sp.Append([]byte(`{"id":"x"}`)) // over the cap: dropped
	}
	if err := os.WriteFile(filepath.Join(sp.Dir(), "corrupt"), []byte("..."), 0o600); err != nil {
		t.Fatal(err)
	}
	code, h := health()
	if code != 200 || h["status"] != "degraded" {
		t.Fatalf("healthz after losses: %d %v", code, h)
	}
	if sh, _ := h["spool"].(map[string]any); sh["dropped"] != 3.0 || sh["corrupt"] != 3.0 || sh["unacknowledged"] != 6.0 {
		t.Fatalf("healthz spool = %v", h["spool"])
	}
	for name, want := range map[string]string{"hookwatch_spool_dropped_total": "3", "hookwatch_spool_corrupt_total": "3", "hookwatch_spool_losses_unacknowledged": "6"} {
		if got := metric(name); got != want {
			t.Errorf("%s = %s, want %s", name, got, want)
		}
	}

	if _, err := sp.Acknowledge(); err != nil {
		t.Fatal(err)
	}
	if code, h := health(); code != 200 || h["status"] != "ok" {
		t.Fatalf("healthz after the losses were acknowledged: %d %v", code, h)
	}
	if got := metric("hookwatch_spool_dropped_total"); got != "3" {
		t.Errorf("hookwatch_spool_dropped_total after acknowledging = %s, want 3: counters keep counting", got)
	}
	if got := metric("hookwatch_spool_losses_unacknowledged"); got != "0" {
		t.Errorf("hookwatch_spool_losses_unacknowledged after acknowledging = %s", got)
	}
}

// TestDrainSpoolAttached: attached to the spool, the collector follows the
// active segment in place — the hooks' appends are stored one by one without
// a claim, so the segment stays the same file — and when it stops, it
// settles the spool, so that the next collector delivers nothing again.
func TestDrainSpoolAttached(t *testing.T) {
	s := newServer(t, collector.Config{})
	sp, err := spool.Open(filepath.Join(t.TempDir(), "spool"), spool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	release, err := sp.Attach("127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.DrainSpool(ctx, sp, 20*time.Millisecond) }()

	current := filepath.Join(sp.Dir(), "current.jsonl")
	var first os.FileInfo
	envs := corpusEnvelopes(t)[:10]
	for i, e := range envs {
		b, _ := json.Marshal(e)
		if err := sp.Append(b); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			if first, err = os.Stat(current); err != nil {
				t.Fatal(err)
			}
		}
		deadline := time.Now().Add(10 * time.Second)
		for storedEvents(t, s) != i+1 {
			if time.Now().After(deadline) {
				t.Fatalf("event %d not stored: %d stored", i+1, storedEvents(t, s))
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	if fi, err := os.Stat(current); err != nil || !os.SameFile(fi, first) {
		t.Errorf("the active segment was claimed while the collector followed it (%v)", err)
	}
	// The drainer publishes its offset (spool/tail) once the delivery
	// returned, a moment after the commit the loop above saw.
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := sp.Stats()
		if err == nil && st.PendingBytes == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("Stats after every event was stored = %+v, %v; want nothing pending", st, err)
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
	release()
	var delivered int
	if _, err := sp.Drain(context.Background(), 0, func(recs [][]byte) error { delivered += len(recs); return nil }); err != nil || delivered != 0 {
		t.Errorf("after the collector stopped, a drain delivered %d records again (%v), want 0", delivered, err)
	}
}

// storedEvents counts the events of every session s stored.
func storedEvents(t *testing.T, s *testServer) int {
	t.Helper()
	stored := 0
	var cursor string
	for {
		page, err := s.db.Sessions(context.Background(), store.SessionFilter{Cursor: cursor, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		for _, ses := range page.Sessions {
			stored += int(ses.EventCount)
		}
		if cursor = page.Next; cursor == "" {
			return stored
		}
	}
}

// TestDrainSpoolSetsAsideTheRefused: in a batch with a record that is no
// envelope, the envelope the collector refuses is the one set aside, and the
// one it stored is not.
func TestDrainSpoolSetsAsideTheRefused(t *testing.T) {
	s, home, sp := serverWithSpool(t)
	good, _ := json.Marshal(corpusEnvelopes(t)[0])
	garbage := []byte(`{"id":5}`)
	refused := []byte(`{"id":"","runtime":"claude-code","payload":{"hook_event_name":"Stop"}}`)
	if err := sp.Append(garbage, good, refused); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.DrainSpool(ctx, sp, 20*time.Millisecond) }()
	deadline := time.Now().Add(10 * time.Second)
	var rej []byte
	var err error
	for {
		rej, err = os.ReadFile(filepath.Join(home, "rejected.jsonl"))
		if err == nil && strings.Count(string(rej), "\n") >= 2 && storedEvents(t, s) >= 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("rejected.jsonl %q (%v), stored %d events", rej, err, storedEvents(t, s))
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	<-done
	if want := string(garbage) + "\n" + string(refused) + "\n"; string(rej) != want {
		t.Errorf("rejected.jsonl = %q, want %q", rej, want)
	}
	if n := storedEvents(t, s); n != 1 {
		t.Errorf("stored %d events, want 1", n)
	}
}

// TestDrainSpoolKeepsWhatCannotBeSetAside: an envelope the collector
// refuses while rejected.jsonl cannot be written stays in the spool, the
// others stored meanwhile, and is set aside once the file can be written.
func TestDrainSpoolKeepsWhatCannotBeSetAside(t *testing.T) {
	s, home, sp := serverWithSpool(t)
	rejected := filepath.Join(home, "rejected.jsonl")
	if err := os.Mkdir(rejected, 0o700); err != nil { // not a file: no append
		t.Fatal(err)
	}
	envs := corpusEnvelopes(t)[:5]
	for _, e := range envs {
		b, _ := json.Marshal(e)
		if err := sp.Append(b); err != nil {
			t.Fatal(err)
		}
	}
	refused := []byte(`{"id":"","runtime":"claude-code","payload":{"hook_event_name":"Stop"}}`)
	if err := sp.Append(refused); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.DrainSpool(ctx, sp, 20*time.Millisecond) }()
	defer func() { cancel(); <-done }()

	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !ok(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: stored %d events", what, storedEvents(t, s))
			}
		}
	}
	waitFor("the envelopes stored", func() bool { return storedEvents(t, s) == len(envs) })
	// Passes go on failing: the refused envelope is still spooled.
	time.Sleep(200 * time.Millisecond)
	if st, err := sp.Stats(); err != nil || st.PendingBytes == 0 {
		t.Fatalf("the spool let go of an envelope it could not set aside: %+v %v", st, err)
	}
	if err := os.Remove(rejected); err != nil {
		t.Fatal(err)
	}
	waitFor("the refused envelope set aside", func() bool {
		b, _ := os.ReadFile(rejected)
		st, _ := sp.Stats()
		return string(b) == string(refused)+"\n" && st.PendingBytes == 0
	})
	if n := storedEvents(t, s); n != len(envs) {
		t.Errorf("stored %d events, want %d", n, len(envs))
	}
}

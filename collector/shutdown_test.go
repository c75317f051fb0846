package collector_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/sqlite"
)

// TestShutdownLosesNothing shuts the server down while clients post as fast
// as they can: every envelope of every 2xx reply must be in the database
// afterwards.
func TestShutdownLosesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hookwatch.db")
	db, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := collector.New(collector.Config{Store: db})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	base := "http://" + ln.Addr().String()

	// A live stream must not hold the shutdown up.
	streamCtx, cancelStream := context.WithCancel(context.Background())
	defer cancelStream()
	req, _ := http.NewRequestWithContext(streamCtx, http.MethodGet, base+"/v1/stream", nil)
	stream, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()

	var (
		mu       sync.Mutex
		accepted []string
		posts    atomic.Int64
		wg       sync.WaitGroup
	)
	for c := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := &http.Client{Timeout: 20 * time.Second}
			for i := 0; ; i++ {
				var envs []event.Envelope
				for j := range 25 {
					envs = append(envs, synth(c*1_000_000+i*100+j, "session_id", "s-shutdown", "hook_event_name", "Notification"))
				}
				body, _ := json.Marshal(map[string]any{"envelopes": envs})
				res, err := client.Post(base+"/v1/events", "application/json", bytes.NewReader(body))
				if err != nil {
					return // the server is gone
				}
				var r collector.IngestResult
				err = json.NewDecoder(res.Body).Decode(&r)
				res.Body.Close()
				if res.StatusCode/100 != 2 {
					if res.StatusCode != http.StatusServiceUnavailable {
						t.Errorf("POST during shutdown: %d", res.StatusCode)
					}
					return
				}
				if err != nil || r.Accepted != len(envs) {
					t.Errorf("2xx reply %+v, %v", r, err)
					return
				}
				mu.Lock()
				for _, e := range envs {
					accepted = append(accepted, e.ID)
				}
				mu.Unlock()
				posts.Add(1)
			}
		}()
	}
	for posts.Load() < 20 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve after Shutdown: %v", err)
	}
	wg.Wait()

	db, err = sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	stored := map[string]bool{}
	f := store.EventFilter{Limit: store.MaxLimit}
	for {
		page, err := db.Events(context.Background(), f)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Events {
			stored[e.ID] = true
		}
		if page.Next == "" {
			break
		}
		f.Cursor = page.Next
	}
	lost := 0
	for _, id := range accepted {
		if !stored[id] {
			lost++
		}
	}
	if lost > 0 || len(accepted) == 0 {
		t.Fatalf("%d of %d acknowledged envelopes are not in the database", lost, len(accepted))
	}
	t.Logf("%d envelopes acknowledged, %d stored", len(accepted), len(stored))
}

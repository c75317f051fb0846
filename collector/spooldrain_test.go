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

// TestDrainSpool: what hooks spooled is stored once, garbage and refused
// envelopes are set aside in rejected.jsonl, and the spool ends empty.
func TestDrainSpool(t *testing.T) {
	s := newServer(t, collector.Config{})
	home := t.TempDir()
	sp, err := spool.Open(filepath.Join(home, "spool"), spool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	envs := corpusEnvelopes(t)[:20]
	for _, e := range envs {
		b, _ := json.Marshal(e)
		if err := sp.Append(b); err != nil {
			t.Fatal(err)
		}
	}
	// The same envelope twice (a hook and a drainer raced) and one the
	// collector refuses (no id).
	dup, _ := json.Marshal(envs[0])
	refused := []byte(`{"id":"","runtime":"claude-code","payload":{"hook_event_name":"Stop"}}`)
	if err := sp.Append(dup, refused); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.DrainSpool(ctx, sp, 20*time.Millisecond) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := sp.Stats()
		if err != nil {
			t.Fatal(err)
		}
		if st.PendingBytes == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("spool not drained: %+v", st)
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	<-done

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
			break
		}
	}
	if stored != len(envs) {
		t.Errorf("stored %d events, want %d", stored, len(envs))
	}
	rej, err := os.ReadFile(filepath.Join(home, "rejected.jsonl"))
	if err != nil || strings.Count(string(rej), "\n") != 1 || !strings.Contains(string(rej), `"id":""`) {
		t.Errorf("rejected.jsonl = %q (%v)", rej, err)
	}
}

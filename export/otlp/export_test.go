package otlp

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/modeled"
	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/sqlite"
)

// storeCapture stores envelopes through a real collector on a SQLite file
// and returns the store once their model is stored.
func storeCapture(t *testing.T, envs []event.Envelope) store.Store {
	t.Helper()
	path := filepath.Join(t.TempDir(), "hookwatch.db")
	if err := modeled.Store(context.Background(), path, envs, time.Minute); err != nil {
		t.Fatal(err)
	}
	db, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestExportSession exports stored sessions of a real capture, read back
// from the model's rows, to the real collector: the receiver holds the
// same spans as the model built in memory gives, each once, in requests of
// at most the batch size.
func TestExportSession(t *testing.T) {
	r := receiver(t)
	envs := captures(t)["public-captures.jsonl"]
	st := storeCapture(t, envs)
	c := &Client{Endpoint: r.Endpoint}
	for _, s := range attribution.Build(envs).Sessions {
		largest := 0
		sent := map[string]*tracepb.Span{}
		send := func(ctx context.Context, rs []*tracepb.ResourceSpans) error {
			n := 0
			for _, r := range rs {
				for _, ss := range r.ScopeSpans {
					n += len(ss.Spans)
					for _, sp := range ss.Spans {
						sent[string(sp.SpanId)] = sp
					}
				}
			}
			largest = max(largest, n)
			return c.Send(ctx, rs)
		}
		want := Spans(sessionOf(s))
		n, err := ExportSession(context.Background(), st, s.SessionID, send, 3)
		if err != nil {
			t.Fatal(err)
		}
		if n != len(want) || largest > 3 {
			t.Fatalf("%s: %d spans sent (largest request %d), want %d in requests of at most 3", s.SessionID, n, largest, len(want))
		}
		// The rows give the very spans the model in memory gives.
		for _, w := range want {
			if !proto.Equal(sent[string(w.SpanId)], w) {
				t.Fatalf("%s: exported\n%v\nthe model gives\n%v", s.SessionID, sent[string(w.SpanId)], w)
			}
		}
		checkReceived(t, r, want)
	}
	if _, err := ExportSession(context.Background(), st, "no-such-session", c.Send, 0); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown session: %v", err)
	}
}

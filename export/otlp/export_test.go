package otlp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/sqlite"
)

// storeCapture stores envelopes through a real collector on a SQLite file
// and returns the store once their model is stored.
func storeCapture(t *testing.T, envs []event.Envelope) store.Store {
	t.Helper()
	db := sqlite.MustOpenDB(t)
	srv, err := collector.New(collector.Config{Store: db, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	base := "http://" + l.Addr().String()
	body, err := json.Marshal(map[string]any{"envelopes": envs})
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.Post(base+"/v1/events", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	// Reading a session waits for its model.
	for _, s := range attribution.Build(envs).Sessions {
		for deadline := time.Now().Add(30 * time.Second); ; {
			var v struct {
				LastSeq    int64 `json:"last_seq"`
				DerivedSeq int64 `json:"derived_seq"`
			}
			r, err := http.Get(base + "/v1/sessions/" + s.SessionID)
			if err != nil {
				t.Fatal(err)
			}
			json.NewDecoder(r.Body).Decode(&v)
			r.Body.Close()
			if v.LastSeq > 0 && v.DerivedSeq == v.LastSeq {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the model of %s was not stored", s.SessionID)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
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

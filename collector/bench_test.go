package collector_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/store/sqlite"
)

// BenchmarkDecodeBatch measures parsing a 500-envelope batch of the real
// corpus.
func BenchmarkDecodeBatch(b *testing.B) {
	envs := corpusEnvelopes(b)
	for len(envs) < 500 {
		envs = append(envs, envs...)
	}
	body := batch(b, envs[:500])
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := collector.DecodeBatch(bytes.NewReader(body)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIngestHTTP measures POST /v1/events with 500-envelope batches
// into SQLite on disk, one client; internal/bench.Ingest measures the
// concurrent case.
func BenchmarkIngestHTTP(b *testing.B) {
	db := sqlite.MustOpenDB(b)
	srv, err := collector.New(collector.Config{Store: db})
	if err != nil {
		b.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	defer func() { hs.Close(); srv.Shutdown(context.Background()) }()
	corpus := corpusEnvelopes(b)
	const size = 500
	envs := make([]event.Envelope, size)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		for j := range envs {
			envs[j] = corpus[(i*size+j)%len(corpus)]
			envs[j].ID = event.NewID(envs[j].ReceivedAt)
		}
		body, _ := json.Marshal(map[string]any{"envelopes": envs})
		b.StartTimer()
		res, err := http.Post(hs.URL+"/v1/events", "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 200 {
			b.Fatal(res.Status)
		}
	}
	b.ReportMetric(float64(b.N*size)/b.Elapsed().Seconds(), "events/s")
}

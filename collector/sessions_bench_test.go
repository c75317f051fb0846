package collector_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/internal/demo"
	"github.com/hookwatch/hookwatch/internal/modeled"
	"github.com/hookwatch/hookwatch/store/sqlite"
)

// BenchmarkSessionPages measures GET /v1/sessions as the dashboard's list
// reads it: every page of 1,000 through the cursors, of 10,000 sessions
// (HW_BENCH_SESSIONS when set) with their model stored, on SQLite on disk.
// HW_BENCH_DB keeps the database at that path between runs (filled when
// missing), as filling 50,000 sessions takes minutes.
func BenchmarkSessionPages(b *testing.B) {
	n := 10000
	if v := os.Getenv("HW_BENCH_SESSIONS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			b.Fatalf("HW_BENCH_SESSIONS=%q: want a number of sessions", v)
		}
	}
	path := os.Getenv("HW_BENCH_DB")
	if path == "" {
		path = filepath.Join(b.TempDir(), "hookwatch.db")
	}
	if _, err := os.Stat(path); err != nil {
		if err := modeled.Store(context.Background(), path, demo.Sessions(n, time.Now().UTC(), 9), 10*time.Minute); err != nil {
			b.Fatal(err)
		}
	}
	db, err := sqlite.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	srv, err := collector.New(collector.Config{Store: db, Version: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	defer func() { hs.Close(); srv.Shutdown(context.Background()) }()
	var pages []time.Duration
	rows := 0
	b.ResetTimer()
	for b.Loop() {
		rows = 0
		for cursor := ""; ; {
			start := time.Now()
			res, err := http.Get(hs.URL + "/v1/sessions?limit=1000&cursor=" + url.QueryEscape(cursor))
			if err != nil {
				b.Fatal(err)
			}
			var page struct {
				Sessions   []json.RawMessage `json:"sessions"`
				NextCursor string            `json:"next_cursor"`
			}
			err = json.NewDecoder(res.Body).Decode(&page)
			res.Body.Close()
			if err != nil || res.StatusCode != http.StatusOK {
				b.Fatalf("GET /v1/sessions: %d %v", res.StatusCode, err)
			}
			pages = append(pages, time.Since(start))
			rows += len(page.Sessions)
			if cursor = page.NextCursor; cursor == "" {
				break
			}
		}
	}
	slices.Sort(pages)
	b.ReportMetric(float64(pages[len(pages)/2].Microseconds())/1000, "ms-page-median")
	b.ReportMetric(float64(pages[len(pages)-1].Microseconds())/1000, "ms-page-max")
	b.ReportMetric(float64(rows), "sessions")
	b.ReportMetric(0, "ns/op")
}

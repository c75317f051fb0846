package collector_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/tidwall/sjson"

	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/spool"
	"github.com/hookwatch/hookwatch/store/sqlite"
	"github.com/hookwatch/hookwatch/store/storetest"
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

// BenchmarkClaudeHook measures POST /v1/hooks/claude as Claude Code's http
// hooks send it during a session: real PreToolUse and PostToolUse payloads
// of one session, one request at a time with a pause between them (a tool
// call's hooks are spaced by the tool and the client's work), to a
// collector brought up as hookwatch serve does (collector.Start, the home's
// spool attached) on SQLite on disk. median-µs is the time the client waits
// for its answer (ns/op counts the pauses); cpu-µs/op is the process's CPU per event
// (collector and client), the pauses included, until every event is stored
// and modelled, so that work the collector does after answering counts too.
func BenchmarkClaudeHook(b *testing.B) {
	c, pre, post := trickleCollector(b)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	const session = "bench-claude-hook"
	var waits []time.Duration
	cpu0 := processCPU()
	n := 0
	for b.Loop() {
		time.Sleep(5 * time.Millisecond)
		payload := trickled(pre, post, session, n)
		n++
		start := time.Now()
		res, err := client.Post(c.URL()+"/v1/hooks/claude", "application/json", bytes.NewReader(payload))
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		waits = append(waits, time.Since(start))
		if res.StatusCode != http.StatusOK {
			b.Fatal(res.Status)
		}
	}
	waitModelled(b, c, session, n)
	slices.Sort(waits)
	b.ReportMetric(float64(waits[len(waits)/2].Microseconds()), "median-µs")
	b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(n), "cpu-µs/op")
}

// BenchmarkSpoolTrickle measures what the collector spends on an event a
// hook hands over through the spool when hooks come one by one, as in an
// agent's session: the events of BenchmarkClaudeHook, wrapped as the hook
// wraps them and appended to the home's spool one at a time with a pause
// between them. cpu-µs/op is the process's CPU per event (the appends are
// ~30 µs of it) until every event is stored and modelled.
func BenchmarkSpoolTrickle(b *testing.B) {
	c, pre, post := trickleCollector(b)
	sp, err := spool.Open(filepath.Join(c.home, "spool"), spool.Options{})
	if err != nil {
		b.Fatal(err)
	}
	const session = "bench-spool-trickle"
	cpu0 := processCPU()
	n := 0
	for b.Loop() {
		time.Sleep(5 * time.Millisecond)
		env := storetest.Envelope(event.RuntimeClaudeCode, time.Now(), trickled(pre, post, session, n))
		n++
		if err := sp.Append(env.AppendJSON(nil)); err != nil {
			b.Fatal(err)
		}
	}
	waitModelled(b, c, session, n)
	b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(n), "cpu-µs/op")
}

// trickleCollector starts a collector as hookwatch serve does, on SQLite
// on disk, and returns it with a real PreToolUse and PostToolUse payload.
func trickleCollector(b *testing.B) (c benchCollector, pre, post []byte) {
	for _, p := range storetest.Corpus(b) {
		switch {
		case p.Runtime != event.RuntimeClaudeCode:
		case pre == nil && bytes.Contains(p.JSON, []byte(`"hook_event_name":"PreToolUse"`)):
			pre = p.JSON
		case post == nil && bytes.Contains(p.JSON, []byte(`"hook_event_name":"PostToolUse"`)):
			post = p.JSON
		}
	}
	if pre == nil || post == nil {
		b.Fatal("no PreToolUse and PostToolUse payloads in the corpus")
	}
	db, err := sqlite.Open(filepath.Join(b.TempDir(), "hookwatch.db"))
	if err != nil {
		b.Fatal(err)
	}
	c.home = b.TempDir()
	c.Collector, err = collector.Start(collector.Options{
		Config: collector.Config{Store: db, Logger: slog.New(slog.DiscardHandler)},
		Addr:   "127.0.0.1:0",
		Home:   c.home,
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Stop(context.Background()) })
	return c, pre, post
}

// benchCollector is a running collector and its home.
type benchCollector struct {
	*collector.Collector
	home string
}

// trickled returns the n-th payload of a trickle into session: pre and
// post in turn, the call's tool_use_id shared by both.
func trickled(pre, post []byte, session string, n int) []byte {
	p := pre
	if n%2 == 1 {
		p = post
	}
	p, _ = sjson.SetBytes(p, "session_id", session)
	p, _ = sjson.SetBytes(p, "tool_use_id", fmt.Sprintf("toolu_bench_%08d", n/2))
	return p
}

// waitModelled waits until the collector has stored n events of session
// and modelled them all.
func waitModelled(b *testing.B, c benchCollector, session string, n int) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		var v collector.SessionView
		res, err := http.Get(c.URL() + "/v1/sessions/" + session)
		if err == nil {
			err = json.NewDecoder(res.Body).Decode(&v)
			res.Body.Close()
		}
		if err == nil && v.EventCount == int64(n) && v.DerivedSeq >= v.LastSeq {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d events stored (%v), modelled up to %d of %d", v.EventCount, n, err, v.DerivedSeq, v.LastSeq)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// processCPU returns the user and system time the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(syscall.TimevalToNsec(ru.Utime) + syscall.TimevalToNsec(ru.Stime))
}

package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/sqlite"
)

// QueryOptions configures Query. Zero values take the defaults.
type QueryOptions struct {
	// Path is the database. An existing file that already holds at least
	// Events events is reused as it is; otherwise it is (re)built. ""
	// builds one in a temporary directory removed after.
	Path string
	// Events and Sessions size the database (default 1,000,000 events
	// across 1,000 sessions).
	Events, Sessions int
	// Samples is the number of timed requests per query (default 300).
	Samples int
	// Queries are the query strings measured on
	// GET /v1/sessions/{id}/events, each on random sessions (default: the
	// plain first page, the main agent's, one tool's, one event's).
	Queries []string
	// Payloads are the payload objects the events are made of (default
	// SamplePayloads).
	Payloads [][]byte
}

// QueryTiming is the latency of one query.
type QueryTiming struct {
	Query          string
	Median, P95    time.Duration
	AvgEvents      float64 // events per response
	AvgBodyBytes   float64
	SamplesPerStat int
}

// QueryResult is what Query measured.
type QueryResult struct {
	Events   int64
	Sessions int
	// Build is how long generating the database took (0 when reused).
	Build   time.Duration
	Timings []QueryTiming
}

// Query measures the latency of the first page of a session's events over
// HTTP (a collector on loopback) on a large database, and prints a table to
// w. The database is generated with direct batched inserts, which is much
// faster than going through HTTP.
func Query(ctx context.Context, w io.Writer, o QueryOptions) (QueryResult, error) {
	if o.Events <= 0 {
		o.Events = 1_000_000
	}
	if o.Sessions <= 0 {
		o.Sessions = 1_000
	}
	if o.Samples <= 0 {
		o.Samples = 300
	}
	if len(o.Queries) == 0 {
		o.Queries = []string{"", "agent_id=", "tool=Bash", "event=PostToolUse"}
	}
	if len(o.Payloads) == 0 {
		o.Payloads = SamplePayloads()
	}
	path := o.Path
	if path == "" {
		tmp, err := os.MkdirTemp("", "hookwatch-bench-query-")
		if err != nil {
			return QueryResult{}, err
		}
		defer os.RemoveAll(tmp)
		path = filepath.Join(tmp, "query.db")
	}

	var res QueryResult
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return res, err
	}
	db, err := sqlite.Open(path)
	if err != nil {
		return res, err
	}
	last, err := db.LastSeq(ctx)
	if err != nil {
		db.Close()
		return res, err
	}
	if last < int64(o.Events) {
		db.Close()
		for _, suffix := range []string{"", "-wal", "-shm"} {
			os.Remove(path + suffix)
		}
		if db, err = sqlite.Open(path); err != nil {
			return res, err
		}
		fmt.Fprintf(w, "query: building %s: %d events across %d sessions…\n", path, o.Events, o.Sessions)
		start := time.Now()
		if err := fill(ctx, db, o); err != nil {
			db.Close()
			return res, err
		}
		res.Build = time.Since(start)
		fmt.Fprintf(w, "query: built in %v (%.0f events/s)\n", res.Build.Round(time.Millisecond), float64(o.Events)/res.Build.Seconds())
	}
	if res.Events, err = db.LastSeq(ctx); err != nil {
		db.Close()
		return res, err
	}
	res.Sessions = o.Sessions

	srv, err := collector.New(collector.Config{Store: db, Version: "bench"})
	if err != nil {
		db.Close()
		return res, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		srv.Shutdown(ctx)
		return res, err
	}
	go srv.Serve(ln)
	defer srv.Shutdown(context.Background())
	base := "http://" + ln.Addr().String()
	transport := &http.Transport{DisableCompression: true}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport, Timeout: time.Minute}

	// The sessions that exist, to pick from.
	var ids []string
	for cursor := ""; ; {
		page, err := db.Sessions(ctx, store.SessionFilter{Cursor: cursor, Limit: store.MaxLimit})
		if err != nil {
			return res, err
		}
		for _, s := range page.Sessions {
			ids = append(ids, s.ID)
		}
		if cursor = page.Next; cursor == "" {
			break
		}
	}
	if len(ids) == 0 {
		return res, fmt.Errorf("database %s has no session", path)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	get := func(id, q string) (int, int, error) {
		u := base + "/v1/sessions/" + url.PathEscape(id) + "/events"
		if q != "" {
			u += "?" + q
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return 0, 0, err
		}
		r, err := client.Do(req)
		if err != nil {
			return 0, 0, err
		}
		defer r.Body.Close()
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return 0, 0, err
		}
		if r.StatusCode != http.StatusOK {
			return 0, 0, fmt.Errorf("GET %s: %d %s", u, r.StatusCode, bytes.TrimSpace(body))
		}
		var page collector.EventsResponse
		if err := json.Unmarshal(body, &page); err != nil {
			return 0, 0, err
		}
		return len(page.Events), len(body), nil
	}
	for _, q := range o.Queries {
		for range 20 { // warm the caches and the connection
			if _, _, err := get(ids[rng.IntN(len(ids))], q); err != nil {
				return res, err
			}
		}
		t := QueryTiming{Query: q, SamplesPerStat: o.Samples}
		samples := make([]time.Duration, 0, o.Samples)
		var events, size int
		for range o.Samples {
			id := ids[rng.IntN(len(ids))]
			start := time.Now()
			n, b, err := get(id, q)
			if err != nil {
				return res, err
			}
			samples = append(samples, time.Since(start))
			events += n
			size += b
		}
		t.Median, t.P95 = quantile(samples, 0.5), quantile(samples, 0.95)
		t.AvgEvents = float64(events) / float64(o.Samples)
		t.AvgBodyBytes = float64(size) / float64(o.Samples)
		res.Timings = append(res.Timings, t)
	}

	fmt.Fprintf(w, "query: GET /v1/sessions/{id}/events, first page, %d random sessions each, on %d events across %d sessions\n",
		o.Samples, res.Events, len(ids))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "query\tmedian\tp95\tevents/page\tKB/page\t")
	for _, t := range res.Timings {
		q := t.Query
		if q == "" {
			q = "(none)"
		}
		fmt.Fprintf(tw, "%s\t%v\t%v\t%.0f\t%.0f\t\n", q, t.Median.Round(10*time.Microsecond), t.P95.Round(10*time.Microsecond), t.AvgEvents, t.AvgBodyBytes/1024)
	}
	return res, tw.Flush()
}

// fill generates the database: events of o.Sessions sessions, interleaved
// in runs as concurrent sessions are, inserted straight into the store in
// large batches. Each event is a payload of o.Payloads wrapped once by
// store.FromEnvelope; only its id, session id and time are patched per copy,
// which is what makes a million events quick to make.
func fill(ctx context.Context, db *sqlite.DB, o QueryOptions) error {
	type tmpl struct {
		e      store.Event
		idAt   int
		sessAt int
		timeAt int
	}
	const placeholderTime = "2026-11-21T15:00:00.123456789Z"
	t0, _ := time.Parse(time.RFC3339Nano, placeholderTime)
	var tmpls []tmpl
	for _, raw := range o.Payloads {
		p, err := event.Decode(raw)
		if err != nil {
			return fmt.Errorf("cannot use payload %.60q: %w", raw, err)
		}
		p.Raw["session_id"] = json.RawMessage(`"` + sessionPlaceholder + `"`)
		payload, err := json.Marshal(p)
		if err != nil {
			return err
		}
		env := event.Envelope{
			ID: event.NewID(t0), Runtime: event.RuntimeClaudeCode, Kind: event.KindHook, ReceivedAt: t0,
			Host: "bench-host", User: "bench", HookwatchVersion: "bench", Payload: payload,
		}
		e, err := store.FromEnvelope(env)
		if err != nil {
			return err
		}
		t := tmpl{
			e:      e,
			idAt:   bytes.Index(e.Envelope, []byte(env.ID)),
			sessAt: bytes.Index(e.Envelope, []byte(sessionPlaceholder)),
			timeAt: bytes.Index(e.Envelope, []byte(placeholderTime)),
		}
		if t.idAt < 0 || t.sessAt < 0 || t.timeAt < 0 {
			return fmt.Errorf("cannot find the fields to patch in %s", e.Envelope)
		}
		tmpls = append(tmpls, t)
	}

	const batch = 5000
	const run = 25 // consecutive events of one session
	start := time.Now().Add(-time.Duration(o.Events) * time.Millisecond).UTC()
	events := make([]store.Event, 0, batch)
	for i := 0; i < o.Events; i++ {
		t := tmpls[i%len(tmpls)]
		e := t.e
		at := start.Add(time.Duration(i) * time.Millisecond)
		e.ID = event.NewID(at)
		e.SessionID = fmt.Sprintf("bench-%02d-%015d", 0, (i/run)%o.Sessions)
		e.Time = at
		env := append([]byte(nil), e.Envelope...)
		copy(env[t.idAt:], e.ID)
		copy(env[t.sessAt:], e.SessionID)
		copy(env[t.timeAt:], at.Format("2006-01-02T15:04:05.000000000Z07:00"))
		e.Envelope = env
		events = append(events, e)
		if len(events) == batch || i == o.Events-1 {
			if err := ctx.Err(); err != nil {
				return err
			}
			if _, err := db.Insert(ctx, events); err != nil {
				return err
			}
			events = events[:0]
		}
	}
	return nil
}

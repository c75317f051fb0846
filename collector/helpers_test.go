package collector_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/sqlite"
	"github.com/hookwatch/hookwatch/store/storetest"
)

// testServer is a collector on a real SQLite file (db) or another store
// behind httptest.
type testServer struct {
	*collector.Server
	db   *sqlite.DB
	http *httptest.Server
	tok  string
	// reads counts the model rows the server read from its PostgreSQL
	// store (holderAndStandby); nil on others.
	reads *rowReads
}

func newServer(t *testing.T, cfg collector.Config) *testServer {
	t.Helper()
	db := sqlite.MustOpenDB(t)
	s := newServerOn(t, cfg, db)
	s.db = db
	return s
}

// newServerOn is a collector on st behind httptest.
func newServerOn(t *testing.T, cfg collector.Config, st store.Store) *testServer {
	t.Helper()
	cfg.Store = st
	if cfg.Version == "" {
		cfg.Version = "test"
	}
	if cfg.Logger == nil && os.Getenv("HOOKWATCH_TEST_LOG") != "" {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	srv, err := collector.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := &testServer{Server: srv, http: httptest.NewServer(srv.Handler()), tok: cfg.Token}
	t.Cleanup(s.stop)
	return s
}

// stop closes the server's HTTP side, then shuts the collector down, its
// store included; the test's cleanup calls it again, which does nothing. A
// test that reads the store's files calls it first: until then the
// collector's goroutines may hold a connection to the database, and the
// last connection to close is the one that removes the write-ahead log.
func (s *testServer) stop() {
	s.http.CloseClientConnections()
	s.http.Close()
	s.Shutdown(context.Background())
}

// do sends a request and returns the status and body.
func (s *testServer) do(t *testing.T, method, path string, body []byte, hdr ...string) (int, []byte) {
	t.Helper()
	res, b := s.send(t, method, path, body, hdr...)
	return res.StatusCode, b
}

// send sends a request as do does and returns the response, its body read
// and closed, and the body.
func (s *testServer) send(t *testing.T, method, path string, body []byte, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, s.http.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
	}
	if s.tok != "" {
		req.Header.Set("Authorization", "Bearer "+s.tok)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] == "" {
			req.Header.Del(hdr[i])
		} else {
			req.Header.Set(hdr[i], hdr[i+1])
		}
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, b
}

// getJSON GETs path, wants 200 and decodes the body into v.
func (s *testServer) getJSON(t *testing.T, path string, v any) {
	t.Helper()
	code, body := s.do(t, http.MethodGet, path, nil)
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, code, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("GET %s: %v in %s", path, err, body)
	}
}

// post sends envelopes and wants 200 with the given counts.
func (s *testServer) post(t *testing.T, envs []event.Envelope, accepted, duplicates int) {
	t.Helper()
	code, body := s.do(t, http.MethodPost, "/v1/events", batch(t, envs))
	if code != http.StatusOK {
		t.Fatalf("POST /v1/events: %d %s", code, body)
	}
	var res collector.IngestResult
	if err := json.Unmarshal(body, &res); err != nil {
		t.Fatal(err)
	}
	if res.Accepted != accepted || res.Duplicates != duplicates {
		t.Fatalf("POST /v1/events: %+v, want accepted %d duplicates %d", res, accepted, duplicates)
	}
}

// listEvents reads every page of the session's events with the query q.
func (s *testServer) listEvents(t *testing.T, id, q string) []collector.EventView {
	t.Helper()
	var out []collector.EventView
	cursor := ""
	for {
		var page collector.EventsResponse
		s.getJSON(t, "/v1/sessions/"+id+"/events?"+q+"&cursor="+url.QueryEscape(cursor), &page)
		out = append(out, page.Events...)
		if cursor = page.NextCursor; cursor == "" {
			return out
		}
	}
}

func batch(t testing.TB, envs []event.Envelope) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"envelopes": envs})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// corpusEnvelopes wraps every real payload in an envelope, 1 ms apart.
func corpusEnvelopes(t testing.TB) []event.Envelope {
	var out []event.Envelope
	for i, p := range storetest.Corpus(t) {
		out = append(out, storetest.Envelope(p.Runtime, storetest.At(i), p.JSON))
	}
	return out
}

func synth(ms int, kv ...any) event.Envelope {
	return storetest.Envelope(event.RuntimeClaudeCode, storetest.At(ms), storetest.P(kv...))
}

// goesOn is a session a that goes on after another session b of its
// project began: a's start, first prompt and a call at 0 ms (before); b's
// start and prompt at gap ms (other); a's second prompt and a call at
// later ms (after). Every session is in /work/p.
func goesOn(a, b string, gap, later int) (before, other, after []event.Envelope) {
	ev := func(ms int, sid string, kv ...any) event.Envelope {
		return synth(ms, append([]any{"session_id", sid, "cwd", "/work/p"}, kv...)...)
	}
	call := func(ms int, id string) []event.Envelope {
		return []event.Envelope{
			ev(ms, a, "hook_event_name", "PreToolUse", "tool_name", "Bash", "tool_use_id", id, "tool_input", map[string]any{"command": "ls"}),
			ev(ms+1, a, "hook_event_name", "PostToolUse", "tool_name", "Bash", "tool_use_id", id, "tool_input", map[string]any{"command": "ls"}, "tool_response", map[string]any{"stdout": "a"}),
		}
	}
	before = append([]event.Envelope{
		ev(0, a, "hook_event_name", "SessionStart", "source", "startup"),
		ev(1, a, "hook_event_name", "UserPromptSubmit", "prompt", "first"),
	}, call(2, "toolu_a1")...)
	other = []event.Envelope{
		ev(gap, b, "hook_event_name", "SessionStart", "source", "startup"),
		ev(gap+1, b, "hook_event_name", "UserPromptSubmit", "prompt", "other"),
	}
	after = append([]event.Envelope{
		ev(later, a, "hook_event_name", "UserPromptSubmit", "prompt", "second"),
	}, call(later+1, "toolu_a2")...)
	return before, other, after
}

// sseReader reads a text/event-stream.
type sseReader struct {
	t    *testing.T
	body io.ReadCloser
	buf  []byte
	// start is the id of the block the stream opens with: the position
	// it starts from.
	start string
}

// sseEvent is one dispatched event, or a comment when Comment is set.
type sseEvent struct {
	// Type is the event: line ("" for a stored event, "model" for a
	// model message).
	Type, ID, Data, Comment string
}

// open connects to /v1/stream; the stream closes when the test ends.
func (s *testServer) openStream(t *testing.T, query string, hdr ...string) *sseReader {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.http.URL+"/v1/stream"+query, nil)
	if s.tok != "" {
		req.Header.Set("Authorization", "Bearer "+s.tok)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(res.Body)
		t.Fatalf("GET /v1/stream: %d %s %s", res.StatusCode, res.Header.Get("Content-Type"), b)
	}
	r := &sseReader{t: t, body: res.Body}
	ev := r.next()
	if ev.Comment != "connected" {
		t.Fatalf("stream did not start with the connected comment: %+v", ev)
	}
	r.start = ev.ID
	return r
}

// next returns the next event or comment block.
func (r *sseReader) next() sseEvent {
	r.t.Helper()
	for {
		if i := bytes.Index(r.buf, []byte("\n\n")); i >= 0 {
			block := string(r.buf[:i])
			r.buf = r.buf[i+2:]
			var ev sseEvent
			var data []string
			for _, line := range strings.Split(block, "\n") {
				switch {
				case strings.HasPrefix(line, ":"):
					ev.Comment = strings.TrimSpace(line[1:])
				case strings.HasPrefix(line, "event: "):
					ev.Type = line[7:]
				case strings.HasPrefix(line, "id: "):
					ev.ID = line[4:]
				case strings.HasPrefix(line, "data: "):
					data = append(data, line[6:])
				}
			}
			ev.Data = strings.Join(data, "\n")
			return ev
		}
		chunk := make([]byte, 64<<10)
		n, err := r.body.Read(chunk)
		r.buf = append(r.buf, chunk[:n]...)
		if err != nil && n == 0 {
			r.t.Fatalf("stream ended: %v (pending %q)", err, r.buf)
		}
	}
}

// nextEvent skips comments and model messages and returns the next
// stored event.
func (r *sseReader) nextEvent() sseEvent {
	r.t.Helper()
	for {
		if ev := r.next(); ev.Comment == "" && ev.Type == "" {
			return ev
		}
	}
}

// nextModel skips comments and events and returns the next model message.
func (r *sseReader) nextModel() (sseEvent, collector.ModelMessage) {
	r.t.Helper()
	for {
		if ev := r.next(); ev.Type == "model" {
			var m collector.ModelMessage
			if err := json.Unmarshal([]byte(ev.Data), &m); err != nil {
				r.t.Fatalf("model message %q: %v", ev.Data, err)
			}
			return ev, m
		}
	}
}

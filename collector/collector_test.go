package collector_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/sqlite"
)

func TestHealthz(t *testing.T) {
	s := newServer(t, collector.Config{Version: "1.2.3", Token: "secret"})
	// /healthz is open even when a token is set: probes carry none. Without
	// the token it says the status only; with it, the details.
	f := func(tok string, wantCode int, want string) {
		t.Helper()
		s.tok = tok
		code, body := s.do(t, http.MethodGet, "/healthz", nil)
		if code != wantCode || !strings.HasPrefix(string(body), want) {
			t.Fatalf("healthz with token %q: %d %s, want %d %s…", tok, code, body, wantCode, want)
		}
	}
	f("", http.StatusOK, `{"status":"ok","version":"1.2.3"}`+"\n")
	f("wrong", http.StatusOK, `{"status":"ok","version":"1.2.3"}`+"\n")
	f("secret", http.StatusOK, `{"status":"ok","version":"1.2.3","db":"ok"}`+"\n")
	if err := s.db.Close(); err != nil {
		t.Fatal(err)
	}
	f("", http.StatusServiceUnavailable, `{"status":"degraded","version":"1.2.3"}`+"\n")
	f("secret", http.StatusServiceUnavailable, `{"status":"degraded","version":"1.2.3","db":"`)
}

// TestSessionsByProject: GET /v1/sessions?project= lists, paged, exactly
// the sessions whose model names that project, the project each session's
// view says; a project no session has lists none.
func TestSessionsByProject(t *testing.T) {
	s := newServer(t, collector.Config{})
	envs := corpusEnvelopes(t)
	s.post(t, envs, len(envs), 0)
	all := s.sessions(t)
	ids := map[string]bool{}
	for _, v := range all {
		ids[v.ID] = true
	}
	waitModeled(t, ids, s)
	byProject := map[string][]string{}
	for _, v := range s.sessions(t) {
		byProject[v.Project] = append(byProject[v.Project], v.ID)
	}
	if len(byProject) < 3 {
		t.Fatalf("the corpus's sessions are in %d projects: %v", len(byProject), byProject)
	}
	for project, want := range byProject {
		if project == "" {
			continue
		}
		var got []string
		cursor := ""
		for {
			var page collector.SessionsResponse
			s.getJSON(t, "/v1/sessions?limit=2&project="+url.QueryEscape(project)+"&cursor="+url.QueryEscape(cursor), &page)
			for _, v := range page.Sessions {
				if v.Project != project {
					t.Errorf("project %q listed %s, of project %q", project, v.ID, v.Project)
				}
				got = append(got, v.ID)
			}
			if page.NextCursor == "" {
				break
			}
			cursor = page.NextCursor
		}
		if !slices.Equal(got, want) {
			t.Errorf("project %q: %v, want %v", project, got, want)
		}
	}
	var none collector.SessionsResponse
	s.getJSON(t, "/v1/sessions?project=no-such-project", &none)
	if len(none.Sessions) != 0 {
		t.Errorf("an unknown project listed %d sessions", len(none.Sessions))
	}
}

func TestIngestAndQuery(t *testing.T) {
	s := newServer(t, collector.Config{})
	envs := corpusEnvelopes(t)
	s.post(t, envs[:100], 100, 0)
	// The spool re-sends, in any order, with new envelopes mixed in.
	replay := slices.Clone(envs[:120])
	slices.Reverse(replay)
	s.post(t, replay, 20, 100)
	s.post(t, envs[120:], len(envs)-120, 0)
	s.post(t, []event.Envelope{}, 0, 0)

	// Sessions, most recently active first, paged.
	var sessions []collector.SessionView
	cursor := ""
	for {
		var page collector.SessionsResponse
		s.getJSON(t, "/v1/sessions?limit=2&cursor="+url.QueryEscape(cursor), &page)
		sessions = append(sessions, page.Sessions...)
		if page.NextCursor == "" {
			break
		}
		cursor = page.NextCursor
	}
	want := map[string]int{}
	for _, e := range envs {
		p, _ := event.Decode(e.Payload)
		if p.SessionID != "" {
			want[p.SessionID]++
		}
	}
	if len(sessions) != len(want) {
		t.Fatalf("%d sessions, want %d", len(sessions), len(want))
	}
	for _, sess := range sessions {
		if sess.EventCount != int64(want[sess.ID]) {
			t.Errorf("session %s: %d events, want %d", sess.ID, sess.EventCount, want[sess.ID])
		}
	}
	var codex collector.SessionsResponse
	s.getJSON(t, "/v1/sessions?runtime=codex", &codex)
	for _, sess := range codex.Sessions {
		if sess.Runtime != event.RuntimeCodex {
			t.Errorf("runtime filter let %s through", sess.Runtime)
		}
	}
	if len(codex.Sessions) == 0 {
		t.Error("no codex session")
	}

	const sid = "0e2e0b5d-7136-4322-8086-c38ed16b10ad"
	var sess store.Session
	s.getJSON(t, "/v1/sessions/"+sid, &sess)
	if sess.ID != sid || sess.EventCount != int64(want[sid]) || sess.CWD != "/home/dev/src/demo" {
		t.Fatalf("session: %+v", sess)
	}

	// Events of the session with each filter, checked against the payloads.
	count := func(match func(p *event.Payload) bool) int {
		n := 0
		for _, e := range envs {
			p, _ := event.Decode(e.Payload)
			if p.SessionID == sid && match(p) {
				n++
			}
		}
		return n
	}
	f := func(query string, want int) {
		t.Helper()
		var got []store.Event
		for _, e := range s.listEvents(t, sid, "limit=7&"+query) {
			got = append(got, e.Stored())
		}
		if len(got) != want {
			t.Errorf("events?%s: %d events, want %d", query, len(got), want)
		}
		for i := 1; i < len(got); i++ {
			if got[i].Seq <= got[i-1].Seq {
				t.Errorf("events?%s: not in seq order", query)
			}
		}
		for _, e := range got {
			if e.SessionID != sid || !json.Valid(e.Envelope) {
				t.Errorf("events?%s: bad event %+v", query, e)
			}
		}
	}
	f("", want[sid])
	f("agent_id=", count(func(p *event.Payload) bool { return p.AgentID == "" }))
	var sub string
	for _, e := range envs {
		if p, _ := event.Decode(e.Payload); p.SessionID == sid && p.AgentID != "" {
			sub = p.AgentID
			break
		}
	}
	if sub == "" {
		t.Fatal("the corpus session has no subagent event")
	}
	f("agent_id="+sub, count(func(p *event.Payload) bool { return p.AgentID == sub }))
	f("event=PreToolUse", count(func(p *event.Payload) bool { return p.Name() == "PreToolUse" }))
	f("tool=Bash", count(func(p *event.Payload) bool { return p.Tool() != nil && p.Tool().ToolName == "Bash" }))
	f("event=PostToolUse&tool=Bash&agent_id=", count(func(p *event.Payload) bool {
		return p.Name() == "PostToolUse" && p.Tool().ToolName == "Bash" && p.AgentID == ""
	}))
	f("event=NoSuchEvent", 0)

	// The stored envelope is the one sent.
	var page collector.EventsResponse
	s.getJSON(t, "/v1/sessions/"+sid+"/events?limit=1", &page)
	var env event.Envelope
	if err := json.Unmarshal(page.Events[0].Envelope, &env); err != nil || env.ID != page.Events[0].ID || env.Host != "devbox" {
		t.Fatalf("envelope read back: %v %+v", err, env)
	}
}

func TestQueryErrors(t *testing.T) {
	s := newServer(t, collector.Config{})
	s.post(t, []event.Envelope{synth(0, "session_id", "s1", "hook_event_name", "Stop")}, 1, 0)
	f := func(path string, wantCode int, wantMsg string) {
		t.Helper()
		code, body := s.do(t, http.MethodGet, path, nil)
		if code != wantCode || !strings.Contains(string(body), wantMsg) {
			t.Errorf("GET %s: %d %s, want %d %q", path, code, body, wantCode, wantMsg)
		}
	}
	f("/v1/sessions/nope", 404, `"error":"session not found"`)
	f("/v1/sessions/nope/events", 404, "session not found")
	f("/v1/sessions/s1/events?event=Nothing", 200, `{"events":[],"next_cursor":""}`)
	f("/v1/sessions?cursor=garbage", 400, "invalid cursor")
	f("/v1/sessions/s1/events?cursor=garbage", 400, "invalid cursor")
	f("/v1/sessions/s1/events?cursor="+store.SessionCursor(time.Time{}, "s1"), 400, "invalid cursor")
	f("/v1/sessions?limit=abc", 400, "limit must be a positive integer")
	f("/v1/sessions?limit=0", 400, "limit")
	f("/v1/sessions/s1/events?limit=-3", 400, "limit")
	f("/v1/sessions?limit=100000", 200, `"sessions":[{`)
	f("/v1/sessions?limit=99999999999999999999", 200, `"sessions":[{`)
	f("/v1/sessions/s1/events?limit=99999999999999999999", 200, `"events":[{`)
	f("/v1/sessions?limit=-99999999999999999999", 400, "limit must be a positive integer")
	f("/v1/nothing", 404, "")
	code, _ := s.do(t, http.MethodDelete, "/v1/sessions", nil)
	if code != http.StatusMethodNotAllowed {
		t.Errorf("DELETE /v1/sessions: %d", code)
	}
	code, _ = s.do(t, http.MethodGet, "/v1/events", nil)
	if code != http.StatusMethodNotAllowed {
		t.Errorf("GET /v1/events: %d", code)
	}
}

// TestQueryParameters: a read endpoint refuses a parameter it does not
// take, one given twice and a query it cannot read, rather than ignore it
// and answer with more, or other, than was asked; what it takes it serves.
func TestQueryParameters(t *testing.T) {
	s := newServer(t, collector.Config{})
	s.post(t, []event.Envelope{
		synth(0, "session_id", "s1", "hook_event_name", "PreToolUse", "tool_name", "Bash", "tool_use_id", "t1", "tool_input", map[string]any{"command": "ls"}),
		synth(1, "session_id", "s1", "hook_event_name", "PostToolUse", "tool_name", "Bash", "tool_use_id", "t1", "tool_input", map[string]any{"command": "ls"}),
		synth(2, "session_id", "s2", "hook_event_name", "Stop"),
	}, 3, 0)
	f := func(path string, wantCode int, wantMsg string) {
		t.Helper()
		code, body := s.do(t, http.MethodGet, path, nil)
		if code != wantCode || !strings.Contains(string(body), wantMsg) {
			t.Errorf("GET %s: %d %s, want %d %q", path, code, body, wantCode, wantMsg)
		}
	}
	f("/v1/sessions?status=ended", 400, `/v1/sessions takes no parameter \"status\": it takes runtime, project, limit, cursor`)
	f("/v1/sessions/s1/events?status=error", 400, `takes no parameter \"status\"`)
	f("/v1/sessions/s1/events?since=2026-01-01T00:00:00Z", 400, `takes no parameter \"since\"`)
	f("/v1/sessions/s1/tool-calls?agentid=x", 400, `takes no parameter \"agentid\"`)
	f("/v1/sessions/s1?limit=1", 400, `/v1/sessions/s1 takes no parameters, got \"limit\"`)
	f("/v1/sessions/s1/tool-calls?status=ok&status=error", 400, "status is given 2 times")
	f("/v1/sessions/s1/tool-calls?status=%zz", 400, "cannot read the query")
	f("/v1/sessions/s1/tool-calls?limit=1;status=error", 400, "cannot read the query")
	// A stream taken would never end: asked with a deadline.
	c := http.Client{Timeout: 10 * time.Second}
	if res, err := c.Get(s.http.URL + "/v1/stream?session=s1"); err != nil || res.StatusCode != 400 {
		t.Errorf("GET /v1/stream?session=s1: %v %v, want 400", res, err)
	} else {
		res.Body.Close()
	}
	// An offset's + unescaped reads as a space: the answer says so.
	f("/v1/sessions/s1/tool-calls?since=2026-05-01T12:00:00+02:00", 400, `got \"2026-05-01T12:00:00 02:00\": write a + in a query as %2B`)
	f("/v1/sessions/s1/tool-calls?since=yesterday", 400, `since must be an RFC 3339 time such as 2026-05-01T12:00:00Z, got \"yesterday\"`)
	f("/v1/sessions/s1/signals?failed_repeat=2", 400, `takes no parameter \"failed_repeat\"`)
	// Every parameter documented is taken.
	f("/v1/sessions?runtime=claude-code&project=&limit=5&cursor=", 200, `"id":"s1"`)
	f("/v1/sessions/s1/events?agent_id=&event=PreToolUse&tool=Bash&copies=include&limit=5&cursor=", 200, `"tool_use_id":"t1"`)
	f("/v1/sessions/s1/agents?limit=5&cursor=", 200, `"agent_id":""`)
	f("/v1/sessions/s1/tool-calls?agent_id=&tool=Bash&status=ok&subtype=list_files&effect=read_only&since=2000-01-01T00:00:00Z&limit=5&cursor=", 200, `"tool_use_id":"t1"`)
	f("/v1/sessions/s1/signals?failed_repeats=2&read_repeats=2&thrash_switches=2&outlier_siblings=2&outlier_calls=2&outlier_factor=2&outlier_duration=1m&stalled_after=1m", 200, `"thresholds"`)
	f("/v1/sessions/s1/compare/s2?unrelated=1", 200, `"baseline"`)
}

// TestToolCallsSinceFarAway: a since before or after the times the store
// can hold lists the calls from it on — every call, or none — rather
// than wrap around to the other end.
func TestToolCallsSinceFarAway(t *testing.T) {
	s := newServer(t, collector.Config{})
	s.post(t, []event.Envelope{
		synth(0, "session_id", "s1", "hook_event_name", "PreToolUse", "tool_name", "Bash", "tool_use_id", "t1", "tool_input", map[string]any{"command": "ls"}),
	}, 1, 0)
	f := func(since string, want int) {
		t.Helper()
		var page collector.ToolCallsResponse
		s.getJSON(t, "/v1/sessions/s1/tool-calls?since="+since, &page)
		if len(page.ToolCalls) != want {
			t.Errorf("since=%s: %d calls, want %d", since, len(page.ToolCalls), want)
		}
	}
	f("2000-01-01T00:00:00Z", 1)
	f("1600-01-01T00:00:00Z", 1)
	f("0002-01-01T00:00:00Z", 1)
	f("2999-01-01T00:00:00Z", 0)
	f("2999-05-01T12:00:00%2B02:00", 0)
	f("9999-12-31T23:59:59Z", 0)
}

func TestMalformedBatches(t *testing.T) {
	s := newServer(t, collector.Config{})
	good := string(batch(t, []event.Envelope{synth(0, "session_id", "s1", "hook_event_name", "Stop")}))
	goodEnv := good[len(`{"envelopes":[`) : len(good)-2]
	f := func(body string, wantCode int, wantMsg string, hdr ...string) {
		t.Helper()
		code, resp := s.do(t, http.MethodPost, "/v1/events", []byte(body), hdr...)
		if code != wantCode || !strings.Contains(string(resp), wantMsg) {
			t.Errorf("POST %.80q: %d %s, want %d %q", body, code, resp, wantCode, wantMsg)
		}
		if code >= 500 {
			t.Errorf("POST %.80q: a 5xx for bad input", body)
		}
		if code != 200 && !json.Valid(resp) {
			t.Errorf("POST %.80q: error body is not JSON: %s", body, resp)
		}
	}
	f("", 400, "empty body")
	f("   \n", 400, "empty body")
	f("{", 400, "malformed JSON")
	f(`{"envelopes":[`, 400, "malformed JSON")
	f(`{"envelopes":[]} trailing`, 400, "malformed JSON")
	f("\xff\xfe", 400, "malformed JSON")
	f("[]", 400, "not a JSON object")
	f("null", 400, "not a JSON object")
	f(`"x"`, 400, "not a JSON object")
	f(`{}`, 400, `missing \"envelopes\"`)
	f(`{"envelopes":null}`, 400, `missing \"envelopes\"`)
	f(`{"envelopes":{}}`, 400, "not an array")
	f(`{"envelopes":"x"}`, 400, "not an array")
	f(`{"envelopes":[1]}`, 400, `"error":"envelope 0: not a JSON object","index":0`)
	f(`{"envelopes":[null]}`, 400, `"index":0`)
	f(`{"envelopes":[`+goodEnv+`,[]]}`, 400, `"error":"envelope 1: not a JSON object","index":1`)
	f(`{"envelopes":[`+goodEnv+`,{"id":7}]}`, 400, `envelope 1: id: want a string, got a JSON number`)
	f(`{"envelopes":[{"id":"x","received_at":"yesterday","payload":{}}]}`, 400, "envelope 0: received_at")
	f(`{"envelopes":[{"id":"","payload":{}}]}`, 400, "envelope 0: id: missing")
	f(`{"envelopes":[{"payload":{}}]}`, 400, "envelope 0: id: missing")
	f(`{"envelopes":[{"id":"a b","payload":{}}]}`, 400, "envelope 0: id: contains")
	f(`{"envelopes":[{"id":"`+strings.Repeat("a", 200)+`","payload":{}}]}`, 400, "longer than")
	f(`{"envelopes":[{"id":"x"}]}`, 400, "envelope 0: payload: missing")
	f(`{"envelopes":[{"id":"x","payload":null}]}`, 400, "envelope 0: payload")
	f(`{"envelopes":[{"id":"x","payload":[1,2]}]}`, 400, "envelope 0: payload: payload is not a JSON object")
	f(`{"envelopes":[{"id":"x","payload":"{}"}]}`, 400, "envelope 0: payload")
	f(`{"envelopes":[{"id":"x","payload":`+strings.Repeat("[", 600)+strings.Repeat("]", 600)+`}]}`, 400, "envelope 0: payload")
	f(`{"envelopes":[{"id":"x","payload":{"a":`+strings.Repeat(`{"a":`, 600)+"1"+strings.Repeat("}", 601)+`}]}`, 400, "nested")
	f(`{"envelopes":[{"id":"x","runtime":["a"],"payload":{}}]}`, 400, "envelope 0: runtime: want a string, got a JSON array")
	f(`{"envelopes":[{"id":"x","subagent":"no","payload":{}}]}`, 400, "envelope 0: subagent")
	f(good, 415, "Content-Type must be application/json", "Content-Type", "text/plain")
	f(good, 415, "Content-Type must be application/json", "Content-Type", "")
	f(good, 415, "Content-Type must be application/json", "Content-Type", "application/x-www-form-urlencoded")
	f(good, 415, "unsupported Content-Encoding", "Content-Encoding", "br")
	f(good, 400, "invalid gzip body", "Content-Encoding", "gzip")
	gz := gzipped(t, []byte(good))
	f(string(gz[:len(gz)/2]), 400, "invalid or truncated body", "Content-Encoding", "gzip")

	// Nothing of any rejected batch was stored, not even its good envelopes.
	if seq, err := s.db.LastSeq(context.Background()); err != nil || seq != 0 {
		t.Fatalf("rejected batches stored events: last seq %d, %v", seq, err)
	}
	// Unknown fields are kept; a missing received_at is the server's time.
	f(`{"envelopes":[{"id":"ok-1","payload":{"session_id":"s9","new_field":[1]},"future":true}],"meta":{}}`, 200, `{"accepted":1,"duplicates":0}`)
	f(good, 200, `{"accepted":1,"duplicates":0}`, "Content-Type", "application/json; charset=utf-8")
	var page collector.EventsResponse
	s.getJSON(t, "/v1/sessions/s9/events", &page)
	if len(page.Events) != 1 || page.Events[0].Time.IsZero() || !strings.Contains(string(page.Events[0].Envelope), `"new_field":[1]`) {
		t.Fatalf("lenient envelope stored as %+v", page.Events)
	}
}

func gzipped(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestGzip(t *testing.T) {
	s := newServer(t, collector.Config{})
	envs := corpusEnvelopes(t)[:50]
	code, body := s.do(t, http.MethodPost, "/v1/events", gzipped(t, batch(t, envs)), "Content-Encoding", "gzip")
	if code != 200 || string(body) != `{"accepted":50,"duplicates":0}`+"\n" {
		t.Fatalf("gzip batch: %d %s", code, body)
	}
}

func TestBodyLimit(t *testing.T) {
	s := newServer(t, collector.Config{MaxBodyBytes: 4096})
	small := batch(t, []event.Envelope{synth(0, "session_id", "s1")})
	big := batch(t, []event.Envelope{synth(0, "session_id", "s1", "prompt", strings.Repeat("x", 5000))})
	f := func(body []byte, wantCode int, hdr ...string) {
		t.Helper()
		code, resp := s.do(t, http.MethodPost, "/v1/events", body, hdr...)
		if code != wantCode {
			t.Errorf("POST of %d bytes: %d %s, want %d", len(body), code, resp, wantCode)
		}
	}
	f(small, 200)
	f(big, 413)
	// A small gzip body that inflates beyond the limit is refused too.
	f(gzipped(t, big), 413, "Content-Encoding", "gzip")
	bomb := gzipped(t, []byte(`{"envelopes":[`+strings.Repeat(" ", 2<<20)+`]}`))
	if len(bomb) > 4096 {
		t.Fatalf("the bomb is %d bytes compressed", len(bomb))
	}
	f(bomb, 413, "Content-Encoding", "gzip")
}

func TestAuth(t *testing.T) {
	s := newServer(t, collector.Config{Token: "s3cret-token"})
	s.tok = ""
	f := func(method, path, auth string, want int) {
		t.Helper()
		var body []byte
		if method == http.MethodPost {
			body = batch(t, []event.Envelope{synth(0, "session_id", "s1")})
		}
		code, resp := s.do(t, method, path, body, "Authorization", auth)
		if code != want {
			t.Errorf("%s %s with %q: %d %s, want %d", method, path, auth, code, resp, want)
		}
		if code == 401 && !strings.Contains(string(resp), "bearer token") {
			t.Errorf("401 body: %s", resp)
		}
	}
	for _, path := range []string{"/v1/sessions", "/v1/sessions/s1", "/v1/sessions/s1/events", "/metrics"} {
		f("GET", path, "", 401)
		f("GET", path, "Bearer wrong", 401)
		f("GET", path, "Bearer s3cret-toke", 401)
		f("GET", path, "Bearer s3cret-token-and-more", 401)
		f("GET", path, "Basic s3cret-token", 401)
		f("GET", path, "s3cret-token", 401)
	}
	f("POST", "/v1/events", "", 401)
	f("POST", "/v1/events", "Bearer s3cret-token", 200)
	f("GET", "/v1/sessions", "Bearer s3cret-token", 200)
	f("GET", "/v1/sessions", "bearer s3cret-token", 200)
	f("GET", "/v1/sessions/s1", "Bearer s3cret-token", 200)
	f("GET", "/metrics", "Bearer s3cret-token", 200)
	f("GET", "/healthz", "", 200)
	code, _ := s.do(t, http.MethodGet, "/v1/stream", nil)
	if code != 401 {
		t.Errorf("stream without token: %d", code)
	}
	s.tok = "s3cret-token"
	s.openStream(t, "")

	// Without a token every endpoint is open.
	open := newServer(t, collector.Config{})
	if code, body := open.do(t, http.MethodGet, "/v1/sessions", nil); code != 200 {
		t.Fatalf("no-token server: %d %s", code, body)
	}
}

func TestStream(t *testing.T) {
	s := newServer(t, collector.Config{})
	s.post(t, []event.Envelope{synth(0, "session_id", "old", "hook_event_name", "Stop")}, 1, 0)

	// Without Last-Event-ID a client sees only what is stored after it came.
	live := s.openStream(t, "")
	env := synth(1, "session_id", "s1", "hook_event_name", "PreToolUse", "tool_name", "Bash")
	s.post(t, []event.Envelope{env}, 1, 0)
	ev := live.nextEvent()
	var got store.Event
	if err := json.Unmarshal([]byte(ev.Data), &got); err != nil {
		t.Fatalf("stream data %q: %v", ev.Data, err)
	}
	if got.ID != env.ID || got.ToolName != "Bash" || !strings.HasPrefix(ev.ID, strconv.FormatInt(got.Seq, 10)+":") || got.Seq != 2 {
		t.Fatalf("stream delivered id %s %+v", ev.ID, got)
	}

	// A client that was away resumes with Last-Event-ID and misses nothing.
	var missed []event.Envelope
	for i := range 5 {
		missed = append(missed, synth(10+i, "session_id", "s1", "hook_event_name", "Notification"))
	}
	s.post(t, missed[:3], 3, 0)
	s.post(t, missed[3:], 2, 0)
	resumed := s.openStream(t, "", "Last-Event-ID", ev.ID)
	for i, want := range missed {
		ev := resumed.nextEvent()
		if err := json.Unmarshal([]byte(ev.Data), &got); err != nil || got.ID != want.ID {
			t.Fatalf("replayed event %d: %v %+v, want %s", i, err, got, want.ID)
		}
	}
	// The first client got the same events live, in order, once.
	for i, want := range missed {
		ev := live.nextEvent()
		if err := json.Unmarshal([]byte(ev.Data), &got); err != nil || got.ID != want.ID {
			t.Fatalf("live event %d: %+v, want %s", i, got, want.ID)
		}
	}
	// From 0 the whole store is replayed; session_id filters.
	all := s.openStream(t, "?session_id=old", "Last-Event-ID", "0")
	if ev := all.nextEvent(); !strings.Contains(ev.Data, `"session_id":"old"`) || !strings.HasPrefix(ev.ID, "1:") {
		t.Fatalf("replay from 0: %+v", ev)
	}
	s.post(t, []event.Envelope{synth(50, "session_id", "s1"), synth(51, "session_id", "old", "hook_event_name", "SessionEnd")}, 2, 0)
	if ev := all.nextEvent(); !strings.Contains(ev.Data, `"event":"SessionEnd"`) {
		t.Fatalf("filtered stream: %+v", ev)
	}

	code, body := s.do(t, http.MethodGet, "/v1/stream", nil, "Last-Event-ID", "abc")
	if code != 400 {
		t.Fatalf("bad Last-Event-ID: %d %s", code, body)
	}
}

// TestStreamResumesPastTheEnd: a Last-Event-ID past the last stored event —
// a client resuming from a collector whose database was since replaced —
// starts the stream at the last event, rather than pass over every event
// until the log reaches the client's id.
func TestStreamResumesPastTheEnd(t *testing.T) {
	old := newServer(t, collector.Config{})
	var envs []event.Envelope
	for i := range 5 {
		envs = append(envs, synth(i, "session_id", "s1", "hook_event_name", "Notification"))
	}
	old.post(t, envs, 5, 0)
	resume := old.openStream(t, "", "Last-Event-ID", "0").nextEvent().ID
	for range 4 {
		resume = old.openStream(t, "", "Last-Event-ID", resume).nextEvent().ID
	}
	if !strings.HasPrefix(resume, "5:") {
		t.Fatalf("last id %q, want 5:…", resume)
	}

	s := newServer(t, collector.Config{})
	s.post(t, []event.Envelope{synth(10, "session_id", "s2", "hook_event_name", "SessionStart")}, 1, 0)
	last := 1 // the last stored event's seq
	for _, query := range []string{"", "?session_id=s2"} {
		st := s.openStream(t, query, "Last-Event-ID", resume)
		if want := strconv.Itoa(last) + ":"; !strings.HasPrefix(st.start, want) {
			t.Errorf("stream%s from %s starts at %q, want %s…", query, resume, st.start, want)
		}
		env := synth(20, "session_id", "s2", "hook_event_name", "Stop")
		s.post(t, []event.Envelope{env}, 1, 0)
		var got store.Event
		if err := json.Unmarshal([]byte(st.nextEvent().Data), &got); err != nil || got.ID != env.ID {
			t.Fatalf("stream%s from %s: %v %+v, want %s", query, resume, err, got, env.ID)
		}
		s.post(t, []event.Envelope{synth(30+len(query), "session_id", "s2", "hook_event_name", "Notification")}, 1, 0)
		if ev := st.nextEvent(); !strings.Contains(ev.Data, `"event":"Notification"`) {
			t.Fatalf("stream%s from %s, next: %+v", query, resume, ev)
		}
		last += 2
	}
}

// TestStreamResumesFromConnect: a stream opens with the id of where it
// starts, so a client that received nothing before it was cut off (an idle
// session's page, a collector restarted) resumes from there: what was
// committed while it was away comes, events and model changes alike, for a
// session's stream and for the list's, from the collector that comes back
// on the same database.
func TestStreamResumesFromConnect(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hookwatch.db")
	open := func() *sqlite.DB {
		db, err := sqlite.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	first := serverOn(t, open(), collector.Config{})
	first.post(t, []event.Envelope{synth(0, "session_id", "s1", "hook_event_name", "UserPromptSubmit", "prompt", "go")}, 1, 0)
	first.settle(t)
	session := first.openStream(t, "?session_id=s1")
	list := first.openStream(t, "")
	for _, r := range []*sseReader{session, list} {
		if _, err := strconv.ParseInt(strings.Split(r.start, ":")[0], 10, 64); err != nil || !strings.Contains(r.start, ":") {
			t.Fatalf("stream opened with id %q, want \"<event seq>:<model seq>\"", r.start)
		}
	}
	if session.start != list.start {
		// Nothing was committed between the two.
		t.Fatalf("streams opened at %q and %q", session.start, list.start)
	}
	first.stop()

	// While no collector runs, nothing reaches the clients; the next one
	// stores a call of s1 and a new session.
	second := serverOn(t, open(), collector.Config{})
	second.post(t, []event.Envelope{
		synth(1, "session_id", "s1", "hook_event_name", "PreToolUse", "tool_name", "Bash", "tool_use_id", "t1", "tool_input", map[string]any{"command": "ls"}),
		synth(2, "session_id", "s2", "hook_event_name", "SessionStart", "source", "startup"),
	}, 2, 0)
	second.settle(t)

	resumed := second.openStream(t, "?session_id=s1", "Last-Event-ID", session.start)
	if ev := resumed.nextEvent(); !strings.Contains(ev.Data, `"tool_use_id":"t1"`) {
		t.Fatalf("resumed session stream's first event: %+v", ev)
	}
	if _, m := resumed.nextModel(); m.SessionID != "s1" || len(m.ToolCalls) != 1 || m.Session == nil || m.Session.Counts.ToolCalls != 1 {
		t.Fatalf("resumed session stream's model: %+v", m)
	}
	all := second.openStream(t, "", "Last-Event-ID", list.start)
	var events []string
	for range 2 {
		var got store.Event
		if err := json.Unmarshal([]byte(all.nextEvent().Data), &got); err != nil {
			t.Fatal(err)
		}
		events = append(events, got.SessionID)
	}
	if !slices.Equal(events, []string{"s1", "s2"}) {
		t.Fatalf("resumed list stream's events: %v", events)
	}
	seen := map[string]bool{}
	for len(seen) < 2 {
		_, m := all.nextModel()
		if m.Session == nil {
			t.Fatalf("list model message without its session: %+v", m)
		}
		seen[m.SessionID] = true
	}
	if !seen["s1"] || !seen["s2"] {
		t.Fatalf("resumed list stream's sessions: %v", seen)
	}
}

// TestStreamModel: a session's stream carries the model as it changes (the
// call started, then ended; the agent; the session's counts), and a client
// resuming from a model message's id gets what changed after it, once.
func TestStreamModel(t *testing.T) {
	s := newServer(t, collector.Config{})
	live := s.openStream(t, "?session_id=s1")
	call := func(ms int, name string) event.Envelope {
		return synth(ms, "session_id", "s1", "hook_event_name", name, "tool_name", "Bash", "tool_use_id", "t1", "tool_input", map[string]any{"command": "ls"})
	}
	s.post(t, []event.Envelope{synth(0, "session_id", "s1", "hook_event_name", "UserPromptSubmit", "prompt", "list"), call(1, "PreToolUse")}, 2, 0)
	status := func(m collector.ModelMessage) string {
		t.Helper()
		if len(m.ToolCalls) != 1 {
			t.Fatalf("model message with %d calls: %+v", len(m.ToolCalls), m)
		}
		var c attribution.ToolCall
		if err := json.Unmarshal(m.ToolCalls[0], &c); err != nil || c.ToolUseID != "t1" {
			t.Fatalf("call %s: %v", m.ToolCalls[0], err)
		}
		return c.Status
	}
	ev, m := live.nextModel()
	if status(m) != attribution.StatusPending || len(m.Agents) != 1 || m.Session == nil || m.Session.Counts.Prompts != 1 || m.Session.Title != "list" {
		t.Fatalf("first model message: %s", ev.Data)
	}
	s.post(t, []event.Envelope{call(2, "PostToolUse")}, 1, 0)
	ev2, m := live.nextModel()
	if status(m) != attribution.StatusOK || m.Session.Counts.ToolCalls != 1 {
		t.Fatalf("second model message: %s", ev2.Data)
	}
	// Resumed after the first message: the call's end comes again, not
	// its start; the events after the first message's come too.
	resumed := s.openStream(t, "?session_id=s1", "Last-Event-ID", ev.ID)
	if e := resumed.nextEvent(); !strings.Contains(e.Data, `"event":"PostToolUse"`) {
		t.Fatalf("resumed stream's first event: %+v", e)
	}
	if _, m := resumed.nextModel(); status(m) != attribution.StatusOK {
		t.Fatalf("resumed model: %+v", m)
	}
	// Without a session filter only sessions are sent.
	all := s.openStream(t, "")
	s.post(t, []event.Envelope{synth(3, "session_id", "s1", "hook_event_name", "Stop")}, 1, 0)
	if _, m := all.nextModel(); m.SessionID != "s1" || m.Session == nil || len(m.ToolCalls) != 0 || len(m.Agents) != 0 {
		t.Fatalf("unfiltered model message: %+v", m)
	}
	if code, _ := s.do(t, http.MethodGet, "/v1/stream", nil, "Last-Event-ID", "3:x"); code != 400 {
		t.Fatalf("bad model position: %d", code)
	}
}

// TestStreamModelOnly: a stream with events=exclude, as the session list
// follows, carries the model messages of the real capture as it is
// ingested and no stored event, with ids whose event seq is the last stored
// at the time: resumed from one after more events, it delivers the model
// changes after it and still no event, and a full stream resumed from it
// starts with the first event stored after it, not the first of the log.
func TestStreamModelOnly(t *testing.T) {
	s := newServer(t, collector.Config{})
	envs := corpusEnvelopes(t)
	half := len(envs) / 2
	// models reads r's model messages until done says so of one, failing
	// on any stored event, and returns their ids.
	models := func(r *sseReader, done func(collector.ModelMessage) bool) []string {
		t.Helper()
		var out []string
		for {
			ev := r.next()
			switch {
			case ev.Comment != "":
				continue
			case ev.Type == "":
				t.Fatalf("events=exclude sent a stored event: %.200s", ev.Data)
			case ev.Type != "model":
				continue
			}
			out = append(out, ev.ID)
			var m collector.ModelMessage
			if err := json.Unmarshal([]byte(ev.Data), &m); err != nil {
				t.Fatalf("model message %q: %v", ev.Data, err)
			}
			if done(m) {
				return out
			}
		}
	}
	// sessionOf is the session an envelope's payload names.
	sessionOf := func(env event.Envelope) string {
		t.Helper()
		var p struct {
			SessionID string `json:"session_id"`
		}
		if err := json.Unmarshal(env.Payload, &p); err != nil {
			t.Fatal(err)
		}
		return p.SessionID
	}
	// latest waits for the model to take what was posted and returns
	// whether a model message is of the newest change of the stored models
	// of the sessions envs name, the last a stream sends of them.
	latest := func() func(collector.ModelMessage) bool {
		t.Helper()
		s.settle(t)
		var ids []string
		for _, env := range envs {
			ids = append(ids, sessionOf(env))
		}
		ms, err := s.db.SessionModels(context.Background(), ids)
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		for _, m := range ms {
			n = max(n, m.UpdatedSeq)
		}
		return func(m collector.ModelMessage) bool { return m.ModelSeq >= n }
	}
	pos := func(id string) (event, model int64) {
		t.Helper()
		e, m, ok := strings.Cut(id, ":")
		event, err1 := strconv.ParseInt(e, 10, 64)
		model, err2 := strconv.ParseInt(m, 10, 64)
		if !ok || err1 != nil || err2 != nil {
			t.Fatalf("id %q, want \"<event seq>:<model seq>\"", id)
		}
		return event, model
	}
	lastSeq := func() int64 {
		t.Helper()
		n, err := s.db.LastSeq(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return n
	}

	// The first half in batches, each read once the model has it: every
	// batch changes the model and comes with none of its events.
	live := s.openStream(t, "?events=exclude")
	var first []string
	for batch := range slices.Chunk(envs[:half], 40) {
		s.post(t, batch, len(batch), 0)
		first = append(first, models(live, latest())...)
	}
	stop := first[len(first)-1]
	if e, _ := pos(stop); e != lastSeq() {
		t.Fatalf("last model message's id %q, want the last stored event's seq %d", stop, lastSeq())
	}

	// Away, then back from the last id: what changed since, and no event.
	s.post(t, envs[half:], len(envs)-half, 0)
	s.settle(t)
	_, after := pos(stop)
	// Every session of the second half changed; the stream, which sends
	// the changes in order, fails the test on the events it would have
	// sent first, or ends it at its deadline if one of them never comes.
	unseen := map[string]bool{}
	for _, env := range envs[half:] {
		unseen[sessionOf(env)] = true
	}
	resumed := s.openStream(t, "?events=exclude", "Last-Event-ID", stop)
	models(resumed, func(m collector.ModelMessage) bool {
		if m.ModelSeq <= after {
			t.Fatalf("resumed from %q, a change of model seq %d came again: %+v", stop, m.ModelSeq, m)
		}
		delete(unseen, m.SessionID)
		return len(unseen) == 0
	})

	// The same id resumes a full stream at the events left out after it.
	full := s.openStream(t, "", "Last-Event-ID", stop)
	var got store.Event
	if err := json.Unmarshal([]byte(full.nextEvent().Data), &got); err != nil {
		t.Fatal(err)
	}
	if e, _ := pos(stop); got.Seq != e+1 || got.ID != envs[half].ID {
		t.Fatalf("full stream resumed from %q starts at seq %d (%s), want %d (%s)", stop, got.Seq, got.ID, e+1, envs[half].ID)
	}

	// A session's stream takes it too: its agents and calls, no event.
	id := ""
	for _, v := range s.settle(t) {
		if v.Counts.ToolCalls > 0 && v.AliasOf == "" {
			id = v.ID
		}
	}
	one := models(s.openStream(t, "?events=exclude&session_id="+url.QueryEscape(id), "Last-Event-ID", "0:0"), func(m collector.ModelMessage) bool {
		if m.SessionID != id || m.Session == nil || len(m.ToolCalls) == 0 || len(m.Agents) == 0 {
			t.Fatalf("session stream's model message: %+v", m)
		}
		return true
	})
	if e, _ := pos(one[0]); e != lastSeq() {
		t.Fatalf("session stream's model message id %q, want the last stored event's seq %d", one[0], lastSeq())
	}

	code, body := s.do(t, http.MethodGet, "/v1/stream?events=none", nil)
	if code != http.StatusBadRequest || !strings.Contains(string(body), `events must be include or exclude`) {
		t.Fatalf("events=none: %d %s, want 400 naming the values", code, body)
	}
}

func TestStreamHeartbeat(t *testing.T) {
	s := newServer(t, collector.Config{Heartbeat: 20 * time.Millisecond})
	r := s.openStream(t, "")
	if ev := r.next(); ev.Comment != "ping" {
		t.Fatalf("want a heartbeat, got %+v", ev)
	}
}

func TestMetrics(t *testing.T) {
	s := newServer(t, collector.Config{})
	envs := corpusEnvelopes(t)[:30]
	s.post(t, envs, 30, 0)
	s.post(t, envs[:10], 0, 10)
	s.openStream(t, "")
	s.do(t, http.MethodGet, "/v1/sessions", nil)
	code, body := s.do(t, http.MethodGet, "/metrics", nil)
	if code != 200 {
		t.Fatalf("metrics: %d", code)
	}
	text := string(body)
	f := func(re string) {
		t.Helper()
		if !regexp.MustCompile(`(?m)` + re).MatchString(text) {
			t.Errorf("metrics lack %s", re)
		}
	}
	f(`^hookwatch_events_ingested_total 30$`)
	f(`^hookwatch_events_duplicate_total 10$`)
	f(`^hookwatch_sse_clients 1$`)
	f(`^hookwatch_ingest_batch_envelopes_count 2$`)
	f(`^hookwatch_commit_events_count 2$`)
	f(`^hookwatch_http_requests_total\{route="POST /v1/events",code="200"\} 2$`)
	f(`^hookwatch_http_request_duration_seconds_bucket\{route="GET /v1/sessions",vmrange=`)
	f(`^process_resident_memory_bytes `)
}

// gateStore holds the first Insert until released, so that requests queue
// behind it, and records the size of every Insert.
type gateStore struct {
	store.Store
	calls   atomic.Int32
	entered chan struct{} // buffered
	release chan struct{}
	sizes   chan int
}

func (g *gateStore) Insert(ctx context.Context, events []store.Event) (int, error) {
	if g.calls.Add(1) == 1 {
		g.entered <- struct{}{}
		<-g.release
	}
	g.sizes <- len(events)
	return g.Store.Insert(ctx, events)
}

func TestGroupCommit(t *testing.T) {
	g := &gateStore{
		Store:   sqlite.MustOpenDB(t),
		entered: make(chan struct{}, 1),
		release: make(chan struct{}),
		sizes:   make(chan int, 100),
	}
	srv, err := collector.New(collector.Config{Store: g})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	ctx := context.Background()
	results := make(chan error, 10)
	ingest := func(n, offset int) {
		var envs []event.Envelope
		for i := range n {
			envs = append(envs, synth(offset+i, "session_id", "s1"))
		}
		res, err := srv.Ingest(ctx, envs)
		if err == nil && res.Accepted != n {
			err = fmt.Errorf("accepted %d of %d", res.Accepted, n)
		}
		results <- err
	}
	go ingest(1, 0)
	<-g.entered // the writer is now inside the first commit
	for i := range 5 {
		go ingest(10, 100*(i+1))
	}
	for srv.QueuedForTest() < 5 {
		time.Sleep(time.Millisecond)
	}
	close(g.release)
	for range 6 {
		if err := <-results; err != nil {
			t.Fatal(err)
		}
	}
	if a, b := <-g.sizes, <-g.sizes; a != 1 || b != 50 {
		t.Fatalf("commits of %d then %d events, want 1 then 50 (five requests in one commit)", a, b)
	}
}

// heldStore holds each of its first Inserts until its gate is closed.
type heldStore struct {
	store.Store
	calls   atomic.Int32
	entered chan int // buffered: the number of the Insert held
	gates   []chan struct{}
}

func (h *heldStore) Insert(ctx context.Context, events []store.Event) (int, error) {
	if n := int(h.calls.Add(1)); n <= len(h.gates) {
		h.entered <- n
		<-h.gates[n-1]
	}
	return h.Store.Insert(ctx, events)
}

// TestGroupCommitAnswersFirst checks that a request is answered once its
// own commit is done, not after the commits of those that queued behind
// it, and that the writer stops only once every queued request is
// committed.
func TestGroupCommitAnswersFirst(t *testing.T) {
	h := &heldStore{Store: sqlite.MustOpenDB(t), entered: make(chan int, 2), gates: []chan struct{}{make(chan struct{}), make(chan struct{})}}
	srv, err := collector.New(collector.Config{Store: h})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	first, rest := make(chan error, 1), make(chan error, 5)
	ingest := func(offset int, results chan<- error) {
		res, err := srv.Ingest(ctx, []event.Envelope{synth(offset, "session_id", "s1")})
		if err == nil && res.Accepted != 1 {
			err = fmt.Errorf("accepted %d of 1", res.Accepted)
		}
		results <- err
	}
	go ingest(0, first)
	<-h.entered // the first commit is held
	for i := range 5 {
		go ingest(i+1, rest)
	}
	for srv.QueuedForTest() < 5 {
		time.Sleep(time.Millisecond)
	}
	close(h.gates[0])
	if n := <-h.entered; n != 2 {
		t.Fatalf("Insert %d held, want 2", n)
	}
	// The second commit, of the five queued, is held: the first request
	// has its answer all the same.
	select {
	case err := <-first:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the first request waits for the commit of the others")
	}
	stopped := make(chan struct{})
	go func() { srv.Shutdown(ctx); close(stopped) }()
	select {
	case <-stopped:
		t.Fatal("Shutdown returned before the queued requests were committed")
	case <-time.After(50 * time.Millisecond):
	}
	close(h.gates[1])
	for range 5 {
		if err := <-rest; err != nil {
			t.Fatal(err)
		}
	}
	<-stopped
	if n := h.calls.Load(); n != 2 {
		t.Fatalf("%d Inserts, want 2 (the five queued requests in one)", n)
	}
}

func TestIngestAPI(t *testing.T) {
	s := newServer(t, collector.Config{})
	ctx := context.Background()
	envs := corpusEnvelopes(t)[:10]
	res, err := s.Ingest(ctx, envs)
	if err != nil || res != (collector.IngestResult{Accepted: 10}) {
		t.Fatalf("Ingest: %+v %v", res, err)
	}
	res, err = s.Ingest(ctx, append(envs[:2:2], envs[0]))
	if err != nil || res != (collector.IngestResult{Duplicates: 3}) {
		t.Fatalf("Ingest of duplicates: %+v %v", res, err)
	}
	bad := slices.Clone(envs)
	bad[4].Payload = json.RawMessage(`[]`)
	_, err = s.Ingest(ctx, bad)
	var be *collector.BatchError
	if !errors.As(err, &be) || be.Index != 4 {
		t.Fatalf("Ingest of a bad batch: %v", err)
	}
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Ingest(ctx, corpusEnvelopes(t)[10:11]); !errors.Is(err, collector.ErrClosed) {
		t.Fatalf("Ingest after Shutdown: %v", err)
	}
	if err := s.Shutdown(ctx); err != nil {
		t.Fatalf("second Shutdown: %v", err)
	}
}

func TestOddSessionIDs(t *testing.T) {
	s := newServer(t, collector.Config{})
	// ("." and ".." cannot be: they are cleaned out of any URL path.)
	for _, id := range []string{"a/b", "100% sure", "ü?x=1#frag", "-"} {
		s.post(t, []event.Envelope{synth(0, "session_id", id, "hook_event_name", "Stop")}, 1, 0)
		var sess store.Session
		s.getJSON(t, "/v1/sessions/"+url.PathEscape(id), &sess)
		if sess.ID != id {
			t.Errorf("session %q read back as %q", id, sess.ID)
		}
		var page collector.EventsResponse
		s.getJSON(t, "/v1/sessions/"+url.PathEscape(id)+"/events", &page)
		if len(page.Events) != 1 || page.Events[0].SessionID != id {
			t.Errorf("events of session %q: %+v", id, page.Events)
		}
	}
}

// TestModelSeqResumes: a page that reads a session's view first and then
// follows its stream from the view's position gets exactly what changed
// after the read.
func TestModelSeqResumes(t *testing.T) {
	s := newServer(t, collector.Config{})
	call := func(ms int, name string) event.Envelope {
		return synth(ms, "session_id", "s1", "hook_event_name", name, "tool_name", "Bash", "tool_use_id", "t1", "tool_input", map[string]any{"command": "ls"})
	}
	s.post(t, []event.Envelope{synth(0, "session_id", "s1", "hook_event_name", "UserPromptSubmit", "prompt", "go"), call(1, "PreToolUse")}, 2, 0)
	var v collector.SessionView
	s.getJSON(t, "/v1/sessions/s1", &v)
	var calls collector.ToolCallsResponse
	s.getJSON(t, "/v1/sessions/s1/tool-calls", &calls)
	if v.ModelSeq == 0 || calls.ModelSeq != v.ModelSeq || len(calls.ToolCalls) != 1 {
		t.Fatalf("model_seq %d, calls' %d, %d calls", v.ModelSeq, calls.ModelSeq, len(calls.ToolCalls))
	}
	st := s.openStream(t, "?session_id=s1", "Last-Event-ID", fmt.Sprintf("%d:%d", v.LastSeq, v.ModelSeq))
	s.post(t, []event.Envelope{call(2, "PostToolUse")}, 1, 0)
	_, m := st.nextModel()
	if len(m.ToolCalls) != 1 || !strings.Contains(string(m.ToolCalls[0]), `"status":"ok"`) || m.ModelSeq <= v.ModelSeq {
		t.Fatalf("first message after the read: %+v", m)
	}
}

// seenStore holds each Insert, while hold is set, after its commit and
// before the writer learns of it, until released: other connections see
// the events by then.
type seenStore struct {
	store.Store
	hold      atomic.Bool
	committed chan struct{} // buffered
	release   chan struct{}
}

func (s *seenStore) Insert(ctx context.Context, events []store.Event) (int, error) {
	n, err := s.Store.Insert(ctx, events)
	if s.hold.Load() {
		s.committed <- struct{}{}
		<-s.release
	}
	return n, err
}

// TestReadWaitsForCommitUnderWay: a reader that finds events stored while
// the writer has not yet handed them to the model (a page polling the
// events, then reading the calls) waits for their model, and does not
// answer one without them: the model of their session, and that of the
// other sessions of their group (a fork's parent lists it).
func TestReadWaitsForCommitUnderWay(t *testing.T) {
	call := func(ms int, name string) event.Envelope {
		return synth(ms, "session_id", "s1", "hook_event_name", name, "tool_name", "Bash", "tool_use_id", "t1", "tool_input", map[string]any{"command": "ls"})
	}
	var before, fork []event.Envelope
	for _, env := range claudeCorpus(t) {
		if strings.Contains(string(env.Payload), corpusFork) {
			fork = append(fork, env)
		} else {
			before = append(before, env)
		}
	}
	for _, c := range []struct {
		name, path string
		envs       []event.Envelope
		want       func(body []byte) bool
	}{
		{"session", "/v1/sessions/s1/tool-calls", []event.Envelope{call(0, "PreToolUse"), call(1, "PostToolUse")}, func(body []byte) bool {
			var calls collector.ToolCallsResponse
			return json.Unmarshal(body, &calls) == nil && len(calls.ToolCalls) == 1 && strings.Contains(string(calls.ToolCalls[0]), `"status":"ok"`)
		}},
		{"group", "/v1/sessions/" + corpusMain, fork, func(body []byte) bool {
			var v collector.SessionView
			return json.Unmarshal(body, &v) == nil && slices.Equal(v.ChildSessionIDs, []string{corpusFork})
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := sqlite.MustOpenDB(t)
			st := &seenStore{Store: db, committed: make(chan struct{}, 1), release: make(chan struct{})}
			s := newServerOn(t, patient, st)
			s.post(t, before, len(before), 0)
			s.settle(t)
			st.hold.Store(true)
			defer close(st.release) // before the server stops
			posted := make(chan error, 1)
			go func() {
				_, err := s.Ingest(context.Background(), c.envs)
				posted <- err
			}()
			<-st.committed
			read := make(chan []byte, 1)
			go func() {
				code, body := s.do(t, http.MethodGet, c.path, nil)
				if code != http.StatusOK {
					body = fmt.Appendf(nil, "%d %s", code, body)
				}
				read <- body
			}()
			select {
			case body := <-read:
				t.Fatalf("answered before the commit was handed to the model: %s", body)
			case <-time.After(200 * time.Millisecond):
			}
			st.release <- struct{}{}
			if err := <-posted; err != nil {
				t.Fatal(err)
			}
			if body := <-read; !c.want(body) {
				t.Fatalf("GET %s: %s", c.path, body)
			}
		})
	}
}

// TestUnmatchedAPIPathsAnswerJSON: a path under /v1/ that no route takes is
// answered with the API's JSON error, 404 or 405 with the methods it allows.
func TestUnmatchedAPIPathsAnswerJSON(t *testing.T) {
	s := newServer(t, collector.Config{})
	s.HandleAssets("GET /", http.NotFoundHandler())
	for _, c := range []struct {
		method, path string
		code         int
		msg, allow   string
	}{
		{http.MethodGet, "/v1/nope", 404, "no such endpoint: /v1/nope", ""},
		{http.MethodGet, "/v1/events", 405, "/v1/events does not take GET (it takes POST)", "POST"},
		{http.MethodPut, "/v1/events", 405, "/v1/events does not take PUT (it takes POST)", "POST"},
		{http.MethodDelete, "/v1/sessions/x", 405, "/v1/sessions/x does not take DELETE (it takes GET, HEAD)", "GET, HEAD"},
		{http.MethodPost, "/v1/sessions/x/nope", 404, "no such endpoint: /v1/sessions/x/nope", ""},
	} {
		req, _ := http.NewRequest(c.method, s.http.URL+c.path, nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		var e struct {
			Error string `json:"error"`
		}
		if res.StatusCode != c.code || json.Unmarshal(body, &e) != nil || !strings.HasPrefix(e.Error, c.msg) || res.Header.Get("Allow") != c.allow {
			t.Errorf("%s %s: %d %s (Allow %q), want %d %q", c.method, c.path, res.StatusCode, body, res.Header.Get("Allow"), c.code, c.msg)
		}
	}
	// Outside the API the assets answer as they do.
	if code, _ := s.do(t, http.MethodGet, "/nope.js", nil); code != 404 {
		t.Errorf("GET /nope.js: %d", code)
	}
}

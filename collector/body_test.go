package collector_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/event"
)

// rawRequest opens a connection to s and sends the head of a POST to path
// with the given headers, then the first part of the body. The caller
// sends the rest (or not) on the returned connection.
func (s *testServer) rawRequest(t *testing.T, path string, hdr map[string]string, part []byte) net.Conn {
	t.Helper()
	u, _ := url.Parse(s.http.URL)
	c, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	var b bytes.Buffer
	fmt.Fprintf(&b, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n", path, u.Host)
	for k, v := range hdr {
		fmt.Fprintf(&b, "%s: %s\r\n", k, v)
	}
	b.WriteString("\r\n")
	b.Write(part)
	if _, err := c.Write(b.Bytes()); err != nil {
		t.Fatal(err)
	}
	return c
}

// readResponse reads the response on c, failing the test when none comes
// within 5 s.
func readResponse(t *testing.T, c net.Conn) (*http.Response, string) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no response: %v", err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

// paddedBatch is a valid batch of one envelope, padded with whitespace to n
// bytes.
func paddedBatch(t *testing.T, n int, ms int) []byte {
	b := batch(t, []event.Envelope{synth(ms, "session_id", "s1")})
	if len(b) > n {
		t.Fatalf("a batch is %d bytes, more than %d", len(b), n)
	}
	return append(b, bytes.Repeat([]byte(" "), n-len(b))...)
}

// TestRefusedByContentLength: a body that declares more than the collector
// accepts is refused before any of it is read. The request below sends no
// body at all: an answer proves that nothing waited for it.
func TestRefusedByContentLength(t *testing.T) {
	s := newServer(t, collector.Config{MaxBodyBytes: 1 << 20})
	f := func(path string) {
		t.Helper()
		c := s.rawRequest(t, path, map[string]string{"Content-Length": "104857600"}, nil)
		res, body := readResponse(t, c)
		if res.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(body, "104857600") {
			t.Errorf("POST %s of a declared 100 MB: %d %s, want 413", path, res.StatusCode, body)
		}
	}
	f("/v1/events")
	s.Handle("POST /v1/hooks/claude", s.HandleClaudeHook(collector.ClaudeHookConfig{Home: t.TempDir()}))
	f("/v1/hooks/claude")
}

// TestInflightBudget: while one request holds the whole in-flight budget,
// others are answered 503 with Retry-After whether they declare their
// length or not, and once it is done the budget is whole again.
func TestInflightBudget(t *testing.T) {
	const limit = 256 << 10
	s := newServer(t, collector.Config{MaxBodyBytes: limit, MaxInflightBytes: limit})
	s.Handle("POST /v1/hooks/claude", s.HandleClaudeHook(collector.ClaudeHookConfig{Home: t.TempDir()}))

	// The first request declares the whole budget and sends half its body.
	full := paddedBatch(t, limit, 0)
	first := s.rawRequest(t, "/v1/events", map[string]string{"Content-Length": fmt.Sprint(limit)}, full[:limit/2])
	time.Sleep(100 * time.Millisecond) // let the server reserve it

	busy := func(path string, hdr map[string]string, body []byte) {
		t.Helper()
		c := s.rawRequest(t, path, hdr, body)
		res, msg := readResponse(t, c)
		if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" {
			t.Fatalf("POST %s while the budget is taken: %d (Retry-After %q) %s, want 503 with Retry-After",
				path, res.StatusCode, res.Header.Get("Retry-After"), msg)
		}
	}
	small := paddedBatch(t, 1024, 1)
	busy("/v1/events", map[string]string{"Content-Length": fmt.Sprint(len(small))}, small)
	busy("/v1/hooks/claude", map[string]string{"Content-Length": "2"}, []byte("{}"))
	// Chunked, no declared length: refused as it reads.
	busy("/v1/events", map[string]string{"Transfer-Encoding": "chunked"}, chunked(small))

	// The first request completes and releases the budget.
	if _, err := first.Write(full[limit/2:]); err != nil {
		t.Fatal(err)
	}
	if res, body := readResponse(t, first); res.StatusCode != http.StatusOK {
		t.Fatalf("the request holding the budget: %d %s", res.StatusCode, body)
	}
	if code, body := s.do(t, http.MethodPost, "/v1/events", small); code != http.StatusOK {
		t.Fatalf("after the budget was released: %d %s", code, body)
	}
	_, metrics := s.do(t, http.MethodGet, "/metrics", nil)
	if !strings.Contains(string(metrics), "hookwatch_requests_busy_total 3") {
		t.Errorf("/metrics does not count the 3 refused requests")
	}
}

// chunked encodes b as one chunk and the last chunk.
func chunked(b []byte) []byte {
	return fmt.Appendf(nil, "%x\r\n%s\r\n0\r\n\r\n", len(b), b)
}

// TestDecodeBatchWhitespace: long runs of whitespace between tokens are
// shortened before decoding (json.Decoder rescans a run each time it reads
// more of it), and nothing inside a string changes.
func TestDecodeBatchWhitespace(t *testing.T) {
	f := func(body string, wantPrompt string) {
		t.Helper()
		envs, err := collector.DecodeBatch(strings.NewReader(body))
		if err != nil {
			t.Fatalf("%.80q: %v", body, err)
		}
		var p struct{ Prompt string }
		if len(envs) != 1 || json.Unmarshal(envs[0].Payload, &p) != nil || p.Prompt != wantPrompt {
			t.Fatalf("%.80q: decoded %d envelopes, prompt %q, want %q", body, len(envs), p.Prompt, wantPrompt)
		}
	}
	spaces := strings.Repeat(" \t\r\n", 1<<20)
	inString := strings.Repeat(" ", 1000)
	f(`{"envelopes":[{"id":"a","payload":{"prompt":"`+inString+`"}}]}`, inString)
	f(spaces+`{`+spaces+`"envelopes"`+spaces+`:`+spaces+`[`+spaces+`{"id":"a","payload":{"prompt":"x"}}`+spaces+`]`+spaces+`}`+spaces, "x")
	f(`{"envelopes":[{"id":"a","payload":{"prompt":"q\"`+inString+`\\"}}]}`, `q"`+inString+`\`)
	f(`{"envelopes":[{"id":"a","payload":{"prompt":"\\\"`+inString+`"}}]}`, `\"`+inString)

	// A run of whitespace still separates tokens.
	_, err := collector.DecodeBatch(strings.NewReader(`{"envelopes":[{"id":"a","payload":{"n":1` + spaces + `2}}]}`))
	if err == nil || !strings.Contains(err.Error(), "malformed JSON") {
		t.Fatalf("1<spaces>2 decoded: %v", err)
	}
}

// TestDecodeBatchSharesStrings: the envelopes of a batch that come from
// the same host, user, client and hook share one string of each, which the
// session model keeps with every envelope.
func TestDecodeBatchSharesStrings(t *testing.T) {
	body := `{"envelopes":[` +
		`{"id":"a","runtime":"claude-code","host":"dev-box","user":"ann","hookwatch_version":"1.2.3","received_at":"2026-11-28T08:00:00Z","payload":{"session_id":"s"}},` +
		`{"id":"b","runtime":"claude-code","host":"dev-box","user":"ann","hookwatch_version":"1.2.3","received_at":"2026-11-28T08:00:01Z","payload":{"session_id":"s"}},` +
		`{"id":"c","runtime":"claude-code","host":"other","user":"ann","hookwatch_version":"1.2.3","received_at":"2026-11-28T08:00:02Z","payload":{"session_id":"s"}}]}`
	envs, err := collector.DecodeBatch(strings.NewReader(body))
	if err != nil || len(envs) != 3 {
		t.Fatalf("DecodeBatch: %d envelopes, %v", len(envs), err)
	}
	same := func(a, b string) bool { return a == b && unsafe.StringData(a) == unsafe.StringData(b) }
	for _, e := range envs[1:] {
		if !same(e.Runtime, envs[0].Runtime) || !same(e.User, envs[0].User) || !same(e.HookwatchVersion, envs[0].HookwatchVersion) {
			t.Errorf("envelope %s does not share the batch's strings", e.ID)
		}
	}
	if !same(envs[1].Host, envs[0].Host) || envs[2].Host != "other" {
		t.Errorf("hosts %q %q %q", envs[0].Host, envs[1].Host, envs[2].Host)
	}
}

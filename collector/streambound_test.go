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
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/event"
)

// TestStreamLargeEventAsReference: an event with a large envelope is
// streamed without its payload, with the address of the whole event; a
// small one is streamed whole.
func TestStreamLargeEventAsReference(t *testing.T) {
	s := newServer(t, collector.Config{})
	st := s.openStream(t, "")
	big := strings.Repeat("x", 100<<10)
	s.post(t, []event.Envelope{synth(0, "session_id", "s1", "prompt", big)}, 1, 0)
	s.post(t, []event.Envelope{synth(1, "session_id", "s1", "prompt", "small")}, 1, 0)

	var ref struct {
		Seq      int64 `json:"seq"`
		Envelope struct {
			ID      string          `json:"id"`
			Payload json.RawMessage `json:"payload"`
		} `json:"envelope"`
		PayloadOmitted *struct {
			EnvelopeBytes int    `json:"envelope_bytes"`
			URL           string `json:"url"`
		} `json:"payload_omitted"`
	}
	ev := st.nextEvent()
	if len(ev.Data) > 4096 {
		t.Fatalf("a %d-byte event is streamed as %d bytes", len(big), len(ev.Data))
	}
	if err := json.Unmarshal([]byte(ev.Data), &ref); err != nil {
		t.Fatal(err)
	}
	if ref.PayloadOmitted == nil || ref.Envelope.Payload != nil || ref.Envelope.ID == "" || ref.PayloadOmitted.EnvelopeBytes < len(big) {
		t.Fatalf("large event streamed as %s", ev.Data)
	}
	var page collector.EventsResponse
	s.getJSON(t, ref.PayloadOmitted.URL, &page)
	if len(page.Events) != 1 || page.Events[0].Seq != ref.Seq || !strings.Contains(string(page.Events[0].Envelope), big) {
		t.Fatalf("GET %s does not return the whole event %d", ref.PayloadOmitted.URL, ref.Seq)
	}

	ev = st.nextEvent()
	if !strings.Contains(ev.Data, `"prompt":"small"`) || strings.Contains(ev.Data, "payload_omitted") {
		t.Fatalf("small event streamed as %s", ev.Data)
	}
}

// TestStreamSlowClientResumes: a client that never reads is disconnected
// once the collector cannot write to it for StreamStall, instead of being
// buffered for; it then reads what reached it and resumes with
// Last-Event-ID without a gap or a repeat.
func TestStreamSlowClientResumes(t *testing.T) {
	s := newServer(t, collector.Config{StreamStall: 300 * time.Millisecond})
	u, _ := url.Parse(s.http.URL)
	c, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET /v1/stream HTTP/1.1\r\nHost: %s\r\n\r\n", u.Host)
	time.Sleep(100 * time.Millisecond) // let the stream start at the empty store

	// 8 MB of events, more than the kernel buffers between the two hold.
	const n = 160
	pad := strings.Repeat("y", 50<<10)
	for i := 0; i < n; i += 20 {
		var envs []event.Envelope
		for j := i; j < i+20; j++ {
			envs = append(envs, synth(j, "session_id", "s1", "prompt", pad))
		}
		s.post(t, envs, 20, 0)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(s.metricsText(t), "hookwatch_sse_stalled_total 1") {
		if time.Now().After(deadline) {
			t.Fatal("the stream of a client that does not read was not disconnected")
		}
		time.Sleep(50 * time.Millisecond)
	}

	// What reached the client before the disconnect, complete events only.
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(res.Body)
	if err == nil || strings.Contains(err.Error(), "timeout") {
		t.Fatalf("the first stream did not end with a cut connection: %v (%d bytes)", err, len(got))
	}
	// An event is dispatched at its blank line: what follows the last one
	// was cut short.
	var seqs []int64
	var lastID string
	complete := got[:bytes.LastIndex(got, []byte("\n\n"))]
	for _, block := range strings.Split(string(complete), "\n\n") {
		lines := strings.Split(block, "\n")
		if slices.Contains(lines, "event: model") || slices.Contains(lines, ": connected") {
			// The model's messages carry the event seq they follow, and
			// the opening block the one the stream starts after.
			continue
		}
		for _, line := range lines {
			if id, ok := strings.CutPrefix(line, "id: "); ok {
				e, _, _ := strings.Cut(id, ":") // "<event seq>:<model seq>"
				seq, err := strconv.ParseInt(e, 10, 64)
				if err != nil {
					t.Fatalf("bad id line %q", line)
				}
				seqs, lastID = append(seqs, seq), id
			}
		}
	}
	if len(seqs) == 0 || len(seqs) >= n {
		t.Fatalf("the first stream delivered %d of %d events before it was cut", len(seqs), n)
	}

	st := s.openStream(t, "", "Last-Event-ID", lastID)
	for seqs[len(seqs)-1] < n {
		var e struct{ Seq int64 }
		if err := json.Unmarshal([]byte(st.nextEvent().Data), &e); err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, e.Seq)
	}
	for i, seq := range seqs {
		if seq != int64(i+1) {
			t.Fatalf("event %d of the two streams has seq %d: lost or repeated (%v)", i, seq, seqs)
		}
	}
}

func (s *testServer) metricsText(t *testing.T) string {
	t.Helper()
	_, b := s.do(t, http.MethodGet, "/metrics", nil)
	return string(b)
}

package collector

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"time"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/store"
)

// What one stream may cost. Every stream reads what is new from the store
// and writes it to its client; a client that stops reading blocks the write
// until DefaultStreamStall passes and is then disconnected (it resumes with
// Last-Event-ID: nothing is lost). Meanwhile the stream must hold little:
//
//   - an event whose envelope is larger than streamInlineMax is sent as a
//     reference (streamRef), not with its payload;
//   - a stream encodes at most streamQueueBytes before writing them, and
//     drops the rest of the page it read (it reads it again next);
//   - at most streamReaders streams hold a page read from the store at
//     once, since a page of large envelopes is large (a read takes
//     milliseconds; with 50 streams woken by four 5 MB events, two readers
//     peaked ~40 MiB higher than one: `go run ./internal/cmd/bench abuse`).
const (
	streamInlineMax  = 64 << 10
	streamQueueBytes = 256 << 10
	streamReaders    = 1
)

// DefaultStreamStall is how long a stream waits for its client to take a
// write before disconnecting it.
const DefaultStreamStall = 30 * time.Second

// streamRef is the stream's form of an event whose envelope is too large to
// send inline: the envelope without its payload, and payload_omitted, which
// says how large the envelope is and where to fetch the whole event.
type streamRef struct {
	*EventView
	Envelope       json.RawMessage `json:"envelope"`
	PayloadOmitted omittedPayload  `json:"payload_omitted"`
}

type omittedPayload struct {
	// EnvelopeBytes is the size of the whole envelope.
	EnvelopeBytes int `json:"envelope_bytes"`
	// URL is GET /v1/sessions/{id}/events with a cursor and limit that
	// return this one event, envelope and payload included.
	URL string `json:"url"`
}

// streamJSON returns the JSON of v as the stream sends it: v itself, or a
// streamRef when its envelope is larger than streamInlineMax.
func streamJSON(v *EventView) ([]byte, error) {
	e := &v.storedEvent
	if len(e.Envelope) <= streamInlineMax {
		return json.Marshal(v)
	}
	// Decoding into a payload that ignores its value skips the payload
	// without copying it.
	var env struct {
		event.Envelope
		Payload *skipJSON `json:"payload,omitempty"`
	}
	if err := json.Unmarshal(e.Envelope, &env); err != nil {
		return nil, err
	}
	env.Payload = nil
	head, err := json.Marshal(&env)
	if err != nil {
		return nil, err
	}
	return json.Marshal(streamRef{
		EventView: v,
		Envelope:  head,
		PayloadOmitted: omittedPayload{
			EnvelopeBytes: len(e.Envelope),
			URL:           "/v1/sessions/" + url.PathEscape(e.SessionID) + "/events?limit=1&cursor=" + store.EventCursor(e.Seq-1),
		},
	})
}

// skipJSON accepts any JSON value and keeps nothing of it.
type skipJSON struct{}

func (*skipJSON) UnmarshalJSON([]byte) error { return nil }

// streamReads lets at most streamReaders streams hold a page read from the
// store at once.
type streamReads chan struct{}

func newStreamReads() streamReads { return make(streamReads, streamReaders) }

// acquire waits for a turn to read, and reports false when ctx or done
// ended first.
func (r streamReads) acquire(ctx context.Context, done <-chan struct{}) bool {
	select {
	case r <- struct{}{}:
		return true
	case <-ctx.Done():
	case <-done:
	}
	return false
}

func (r streamReads) release() { <-r }

// streamWriteFailed counts a stream ended because its client did not take
// a write within StreamStall (not one whose client went away).
func (s *Server) streamWriteFailed(err error) {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		s.metrics.streamsStalled.Inc()
	}
}

package bench

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/store"
)

// TestDeveloperSessionsFollowInTime: a simulated developer's later
// sessions are its first under new session ids and fresh envelope ids,
// each one after the one before in time, as a real developer's are.
func TestDeveloperSessionsFollowInTime(t *testing.T) {
	d, err := newDeveloper(3, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	n := len(d.envs)
	seen := map[string]bool{}
	var last time.Time
	for cycle := range 3 {
		for i := 0; i < n; {
			k := min(97, n-i)
			body, ids, session := d.next(k)
			var b struct {
				Envelopes []event.Envelope `json:"envelopes"`
			}
			if err := json.Unmarshal(body, &b); err != nil {
				t.Fatal(err)
			}
			if len(b.Envelopes) != k || len(ids) != k || session != sessionOf(3, cycle) {
				t.Fatalf("cycle %d: %d envelopes, %d ids, session %s", cycle, len(b.Envelopes), len(ids), session)
			}
			for j, env := range b.Envelopes {
				var p struct {
					SessionID string `json:"session_id"`
				}
				json.Unmarshal(env.Payload, &p)
				if env.ID != ids[j] || seen[env.ID] || p.SessionID != session {
					t.Fatalf("cycle %d: envelope %s (ids %s), session %s", cycle, env.ID, ids[j], p.SessionID)
				}
				seen[env.ID] = true
				if env.ReceivedAt.Before(last) {
					t.Fatalf("cycle %d: received_at %v before %v", cycle, env.ReceivedAt, last)
				}
				if i+j == n-1 && cycle == 0 && !env.ReceivedAt.Equal(d.times[n-1]) {
					t.Fatalf("the first session's times were changed")
				}
				last = env.ReceivedAt
			}
			i += k
		}
	}
}

// TestStreamID: the id of a stream event is read from the front of the
// collector's encoding of a stored event, and decoded from any other shape.
func TestStreamID(t *testing.T) {
	f := func(data, want string) {
		t.Helper()
		if got := streamID(data); got != want {
			t.Fatalf("streamID(%s) = %q, want %q", data, got, want)
		}
	}
	id := event.NewID(time.Now())
	enc, err := json.Marshal(store.Event{Seq: 42, ID: id, SessionID: "s", Envelope: []byte(`{"id":"other"}`)})
	if err != nil {
		t.Fatal(err)
	}
	f(string(enc), id)
	f(`{"id":"a\"b","seq":1}`, `a"b`)
	f(`{"seq":1,"id":"a\"b"}`, `a"b`)
	f(`{"seq":1}`, "")
	f(`not json`, "")
}

package integration

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
)

// storedEvent is one event as GET /v1/sessions/{id}/events returns it.
type storedEvent struct {
	ID        string `json:"id"`
	Runtime   string `json:"runtime"`
	ToolUseID string `json:"tool_use_id"`
	Envelope  struct {
		Decision json.RawMessage            `json:"decision"`
		Payload  map[string]json.RawMessage `json:"payload"`
	} `json:"envelope"`
}

// sessionEvents pages through every stored event of a session. It returns
// nil while the collector does not answer or knows no such session, so
// that tests can poll it.
func sessionEvents(t *testing.T, base, session string) []storedEvent {
	t.Helper()
	var out []storedEvent
	cursor := ""
	for {
		resp, err := http.Get(base + "/v1/sessions/" + url.PathEscape(session) + "/events?limit=1000&cursor=" + url.QueryEscape(cursor))
		if err != nil {
			return nil
		}
		if resp.StatusCode == http.StatusNotFound {
			resp.Body.Close()
			return nil
		}
		var page struct {
			Events     []storedEvent `json:"events"`
			NextCursor string        `json:"next_cursor"`
		}
		err = json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("events of session %q: HTTP %d, %v", session, resp.StatusCode, err)
		}
		out = append(out, page.Events...)
		if cursor = page.NextCursor; cursor == "" {
			return out
		}
	}
}

package collector_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/store/storetest"
)

// TestTaskNotificationMarked: the events API and the stream mark the
// prompts the client submitted itself (2.1.332's <task-notification>), the
// ones the session model counts apart from the user's, so that a view needs
// no rule of its own. The real capture's sessions: as many marked prompts
// as the model's task_notifications, the others as many as its prompts;
// the stream marks the same events, also one sent without its payload.
func TestTaskNotificationMarked(t *testing.T) {
	s := newServer(t, patient)
	envs := fork2332(t, storetest.At(0))
	// A notification whose envelope is too large for the stream to carry
	// inline: the stream's reference to it is marked too.
	big := "<task-notification><task-id>t-big</task-id><status>completed</status></task-notification>\n" + strings.Repeat("x", 70<<10)
	envs = append(envs, storetest.Envelope(event.RuntimeClaudeCode, storetest.At(0).Add(time.Hour),
		storetest.P("hook_event_name", "UserPromptSubmit", "session_id", "s-big", "prompt", big)))
	s.post(t, envs, len(envs), 0)
	views := map[string]collector.SessionView{}
	for _, v := range s.settle(t) {
		views[v.ID] = v
	}

	marked := map[string]bool{} // by event id
	for _, id := range []string{capture2332, capture2332Fork, "s-big"} {
		var notes, prompts int
		cursor := ""
		for {
			var page collector.EventsResponse
			s.getJSON(t, "/v1/sessions/"+id+"/events?limit=50&cursor="+url.QueryEscape(cursor), &page)
			for _, e := range page.Events {
				switch {
				case e.TaskNotification:
					notes++
					marked[e.ID] = true
					if e.Event != event.UserPromptSubmit {
						t.Errorf("%s: a %s marked as a task notification", id, e.Event)
					}
				case e.Event == event.UserPromptSubmit:
					prompts++
				}
			}
			if cursor = page.NextCursor; cursor == "" {
				break
			}
		}
		c := views[id].Counts
		if notes != c.TaskNotifications || prompts != c.Prompts {
			t.Errorf("%s: %d prompts marked and %d not; the model counts %d task notifications and %d prompts",
				id, notes, prompts, c.TaskNotifications, c.Prompts)
		}
	}
	if views[capture2332].Counts.TaskNotifications == 0 {
		t.Fatal("the capture's session has no task notification: the test shows nothing")
	}

	stream := s.openStream(t, "", "Last-Event-ID", "0")
	streamed := map[string]bool{}
	omitted := 0
	for range envs {
		var e struct {
			collector.EventView
			PayloadOmitted *struct{} `json:"payload_omitted"`
		}
		ev := stream.nextEvent()
		if err := json.Unmarshal([]byte(ev.Data), &e); err != nil {
			t.Fatalf("%v in %.200s", err, ev.Data)
		}
		if e.PayloadOmitted != nil {
			omitted++
		}
		if e.TaskNotification {
			streamed[e.ID] = true
		}
	}
	if omitted != 1 || fmt.Sprint(streamed) != fmt.Sprint(marked) {
		t.Errorf("the stream marked %d events, the listing %d (%d sent without payload)", len(streamed), len(marked), omitted)
	}
}

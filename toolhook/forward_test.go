package toolhook

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/event"
)

// TestForwarderNeverBlocks records calls while the collector is stuck on
// the first batch: the queue fills, further calls are dropped and counted
// at once, and once the collector answers the queued ones arrive, each as
// its PreToolUse and PostToolUse.
func TestForwarderNeverBlocks(t *testing.T) {
	entered, release := make(chan struct{}, 1), make(chan struct{})
	var got atomic.Int64
	var names []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct{ Envelopes []event.Envelope }
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			w.WriteHeader(400)
			return
		}
		select {
		case entered <- struct{}{}:
			<-release
		default:
		}
		for _, e := range body.Envelopes {
			var p struct {
				Name  string `json:"hook_event_name"`
				Agent string `json:"agent_id"`
			}
			json.Unmarshal(e.Payload, &p)
			if e.Runtime != event.RuntimeGoSDK || e.Subagent == nil || e.Subagent.ToolUseID != "spawn-1" || p.Agent != "a1" {
				t.Errorf("envelope %+v %s", e, e.Payload)
			}
			names = append(names, p.Name)
		}
		got.Add(int64(len(body.Envelopes)))
	}))
	defer srv.Close()
	fw, err := NewForwarder(ForwardOptions{URL: srv.URL, QueueSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	call := func() *Call {
		return &Call{SessionID: "s", ToolName: "Read", ToolUseID: "t", AgentID: "a1", AgentType: "w",
			ParentToolUseID: "spawn-1", Depth: 1, Status: "ok", Start: time.Now(), Output: "x"}
	}
	fw.Record(call())
	<-entered
	start := time.Now()
	for range 5 {
		fw.Record(call())
	}
	if d := time.Since(start); d > 100*time.Millisecond {
		t.Fatalf("Record blocked for %v", d)
	}
	if n := fw.Dropped(); n != 3 {
		t.Fatalf("%d dropped, want 3", n)
	}
	close(release)
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	if n := got.Load(); n != 6 || strings.Count(strings.Join(names, " "), event.PostToolUse) != 3 {
		t.Fatalf("%d envelopes: %q", n, names)
	}
}

// TestForwarderRefused counts a batch the collector refuses for what it is
// as dropped, and keeps it out of the spool, which it would wedge.
func TestForwarderRefused(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(422) }))
	defer srv.Close()
	fw, err := NewForwarder(ForwardOptions{URL: srv.URL, SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	fw.Record(&Call{SessionID: "s", ToolName: "Read", ToolUseID: "t", Status: "ok", Start: time.Now()})
	if err := fw.Close(); err == nil || fw.Dropped() != 2 {
		t.Fatalf("close: %v, %d dropped", err, fw.Dropped())
	}
	if st, err := fw.sp.Stats(); err != nil || st.PendingBytes != 0 {
		t.Fatalf("spooled a refused batch: %+v %v", st, err)
	}
}

// TestForwarderRedacts sends no secret of a call's input, output or error
// to the collector: they pass through the privacy rules first.
func TestForwarderRedacts(t *testing.T) {
	secret := "sk-ant-" + strings.Repeat("Qw2-Er5tXy7_", 3)
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b strings.Builder
		io.Copy(&b, r.Body)
		bodies = append(bodies, b.String())
	}))
	defer srv.Close()
	fw, err := NewForwarder(ForwardOptions{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	fw.Record(&Call{SessionID: "s", ToolName: "Bash", ToolUseID: "t1", Status: "ok", Start: time.Now(),
		Input: map[string]any{"command": "curl -H 'x-api-key: " + secret + "'"}, Output: "key " + secret})
	fw.Record(&Call{SessionID: "s", ToolName: "Bash", ToolUseID: "t2", Status: "error", Start: time.Now(),
		Err: errors.New("bad key " + secret)})
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	all := strings.Join(bodies, "\n")
	if strings.Count(all, `"tool_use_id":"t`) != 4 || strings.Contains(all, "Qw2-Er5tXy7_") {
		t.Fatalf("sent %s", all)
	}
}

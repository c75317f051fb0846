package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/internal/fakeclaude"
	"github.com/hookwatch/hookwatch/internal/promtest"
)

// recorderDir holds the recorder binary, built once per test binary.
var (
	recorderOnce sync.Once
	recorderPath string
	recorderErr  error
	recorderDir  string
)

func TestMain(m *testing.M) {
	stopReceiver := startReceiver()
	code := m.Run()
	promtest.Stop()
	stopReceiver()
	if recorderDir != "" {
		os.RemoveAll(recorderDir)
	}
	os.Exit(code)
}

// recorder returns the recorder hook, building it on first use.
func recorder(t *testing.T) Hook {
	t.Helper()
	recorderOnce.Do(func() {
		recorderDir, recorderErr = os.MkdirTemp("", "e2e-recorder-")
		if recorderErr != nil {
			return
		}
		recorderPath = filepath.Join(recorderDir, "recorder")
		out, err := exec.Command("go", "build", "-o", recorderPath, "./testdata/recorder").CombinedOutput()
		if err != nil {
			recorderErr = fmt.Errorf("cannot build the recorder: %w\n%s", err, out)
		}
	})
	if recorderErr != nil {
		t.Fatal(recorderErr)
	}
	return Hook{Command: recorderPath, Args: []string{"hook"}}
}

// recorded is an Env whose hook records every payload.
type recorded struct {
	*Env
	t        *testing.T
	path     string // payloads, one per line
	sidecars string // per subagent event: did the .meta.json exist
}

// newRecorded returns an Env of client c with the recorder registered for
// every event.
func newRecorded(t *testing.T, c Client) *recorded {
	t.Helper()
	dir := t.TempDir()
	r := &recorded{t: t, path: filepath.Join(dir, "events.jsonl"), sidecars: filepath.Join(dir, "sidecars.jsonl")}
	r.Env = New(t, c, recorder(t), "HOOKWATCH_E2E_RECORD="+r.path, "HOOKWATCH_E2E_SIDECARS="+r.sidecars)
	return r
}

// event is one recorded hook payload.
type event map[string]any

func (ev event) str(key string) string {
	s, _ := ev[key].(string)
	return s
}

func (ev event) has(key string) bool {
	_, ok := ev[key]
	return ok
}

func (ev event) name() string { return ev.str("hook_event_name") }

// input returns a string field of tool_input.
func (ev event) input(key string) string {
	m, _ := ev["tool_input"].(map[string]any)
	s, _ := m[key].(string)
	return s
}

func (ev event) String() string {
	b, _ := json.Marshal(map[string]any(ev))
	if len(b) > 600 {
		b = append(b[:600], "…"...)
	}
	return string(b)
}

// events returns the payloads recorded so far, in arrival order.
func (r *recorded) events() []event {
	r.t.Helper()
	return r.read(r.path)
}

// settle waits up to 10 s for done to report true. The client does not
// wait for the hooks of an event whose output it ignores (StopFailure)
// before it exits: what they record may land after the run returned.
func settle(done func() bool) {
	for deadline := time.Now().Add(10 * time.Second); !done() && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
}

// sidecarSeen is what the recorder saw of a subagent's .meta.json.
type sidecarSeen struct {
	Event      string `json:"hook_event_name"`
	AgentID    string `json:"agent_id"`
	MetaExists bool   `json:"meta_exists"`
}

// sidecarsSeen returns, per event from inside a subagent, whether the
// subagent's sidecar existed when the hook ran.
func (r *recorded) sidecarsSeen() []sidecarSeen {
	r.t.Helper()
	var out []sidecarSeen
	for _, ev := range r.read(r.sidecars) {
		b, _ := json.Marshal(ev)
		var s sidecarSeen
		_ = json.Unmarshal(b, &s)
		out = append(out, s)
	}
	return out
}

func (r *recorded) read(path string) []event {
	r.t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		r.t.Fatal(err)
	}
	var out []event
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var ev event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			r.t.Fatalf("recorded line is not JSON: %s: %q", err, sc.Text())
		}
		if ev.has("recorder_invalid_payload") {
			r.t.Fatalf("a hook got a payload that is not JSON: %q", ev.str("recorder_invalid_payload"))
		}
		out = append(out, ev)
	}
	return out
}

// reset forgets the payloads recorded so far.
func (r *recorded) reset() {
	r.t.Helper()
	if err := os.Remove(r.path); err != nil && !os.IsNotExist(err) {
		r.t.Fatal(err)
	}
}

// dump logs the recorded events and model requests, for failing tests.
func (r *recorded) dump() {
	r.t.Helper()
	var b strings.Builder
	for i, ev := range r.events() {
		fmt.Fprintf(&b, "%3d %-18s agent=%q type=%q tool=%s %s\n", i, ev.name(), ev.str("agent_id"),
			ev.str("agent_type"), ev.str("tool_name"), ev.str("session_id"))
	}
	for _, q := range r.Model.Requests() {
		fmt.Fprintf(&b, "request %d %s %s kind=%s conv=%q turn=%d tools=%d reply=%v\n", q.Seq, q.Method, q.Path,
			q.Kind, q.Conversation, q.Turn, len(q.Tools), q.Reply)
	}
	r.t.Log("\n" + b.String())
}

// filter returns the events named name (all if empty) that satisfy keep
// (all if nil).
func filter(evs []event, name string, keep func(event) bool) []event {
	var out []event
	for _, ev := range evs {
		if (name == "" || ev.name() == name) && (keep == nil || keep(ev)) {
			out = append(out, ev)
		}
	}
	return out
}

// names returns the event names in order.
func names(evs []event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = ev.name()
	}
	return out
}

// turnRequests returns the model requests of scripted conversation key.
func turnRequests(reqs []fakeclaude.Request, key string) []fakeclaude.Request {
	var out []fakeclaude.Request
	for _, q := range reqs {
		if q.Kind == fakeclaude.KindTurn && q.Conversation == key {
			out = append(out, q)
		}
	}
	return out
}

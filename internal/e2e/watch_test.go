package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/internal/testbin"
)

// storedEvent is an event as the API lists it, with its envelope whole.
type storedEvent struct {
	Envelope json.RawMessage `json:"envelope"`
	kind     string
	payload  map[string]any
}

// storedEvents returns every stored event of session id (hook and
// transcript alike), each with its kind and payload decoded.
func (c *collectorProc) storedEvents(t *testing.T, id string) []storedEvent {
	t.Helper()
	var out []storedEvent
	cursor := ""
	for range 1000 {
		var page struct {
			Events     []storedEvent `json:"events"`
			NextCursor string        `json:"next_cursor"`
		}
		if code := c.get(t, "/v1/sessions/"+url.PathEscape(id)+"/events?limit=1000&cursor="+url.QueryEscape(cursor), &page); code == http.StatusNotFound {
			return nil
		} else if code != http.StatusOK {
			t.Fatalf("events of %s: %d", id, code)
		}
		for _, e := range page.Events {
			var env struct {
				Kind    string         `json:"kind"`
				Payload map[string]any `json:"payload"`
			}
			if err := json.Unmarshal(e.Envelope, &env); err != nil {
				t.Fatal(err)
			}
			e.kind, e.payload = env.Kind, env.Payload
			out = append(out, e)
		}
		if page.NextCursor == "" {
			return out
		}
		cursor = page.NextCursor
	}
	t.Fatal("event paging never ended")
	return nil
}

// agentTokens returns the input and output tokens of each agent of session
// id, keyed as transcriptTokens keys them.
func (c *collectorProc) agentTokens(t *testing.T, id string) map[string][2]int64 {
	t.Helper()
	var body struct {
		Agents []struct {
			AgentID string `json:"agent_id"`
			Usage   *struct {
				In  int64 `json:"input_tokens"`
				Out int64 `json:"output_tokens"`
			} `json:"usage"`
		} `json:"agents"`
	}
	out := map[string][2]int64{}
	if c.get(t, "/v1/sessions/"+url.PathEscape(id)+"/agents", &body) != http.StatusOK {
		return out
	}
	for _, a := range body.Agents {
		if a.Usage != nil {
			out[id+"/"+a.AgentID] = [2]int64{a.Usage.In, a.Usage.Out}
		}
	}
	return out
}

// sessionTokens is the part of want (transcriptTokens) of session id.
func sessionTokens(want map[string][2]int64, id string) map[string][2]int64 {
	out := map[string][2]int64{}
	for k, v := range want {
		if strings.HasPrefix(k, id+"/") {
			out[k] = v
		}
	}
	return out
}

// TestWatchTranscripts runs the real client with hookwatch's hooks
// installed, delivering to a collector that also follows the client's
// transcripts (serve --watch-transcripts): each session has the agents and
// calls its hooks alone give, and each agent the tokens its transcripts
// record, nothing counted twice. With no hook installed at all, the
// session appears from its transcripts alone.
func TestWatchTranscripts(t *testing.T) {
	Clients(t) // skip (or fail in CI) before building anything
	EachClient(t, func(t *testing.T, cl Client) {
		scenarios := map[string]func(a *attrEnv){
			"ParallelSubagents": func(a *attrEnv) { a.Play(ParallelSubagents(a.Project)) },
			"NestedSubagents":   func(a *attrEnv) { a.Play(NestedSubagents()) },
			"Lifecycle":         func(a *attrEnv) { a.PlayLifecycle(Lifecycle()) },
		}
		for name, play := range scenarios {
			t.Run("Hooks/"+name, func(t *testing.T) { t.Parallel(); testWatchWithHooks(t, cl, play) })
		}
		t.Run("NoHooks", func(t *testing.T) { t.Parallel(); testWatchWithoutHooks(t, cl) })
	})
}

// watchedEnv is a client installation whose transcripts a collector of its
// own follows; with hooks, they deliver to it (and to the recorder).
func watchedEnv(t *testing.T, cl Client, hooks bool) (*attrEnv, *collectorProc) {
	t.Helper()
	rec := filepath.Join(t.TempDir(), "events.jsonl")
	a := &attrEnv{t: t, rec: rec}
	a.Env = New(t, cl, Hook{Command: testbin.Build(t, "./cmd/hookwatch-hook")}, "HOOKWATCH_AUTOSTART=0", "HOOKWATCH_E2E_RECORD="+rec)
	if hooks {
		addRecorder(t, a.Settings)
	} else {
		writeFile(t, a.Settings, `{"skipWebFetchPreflight": true}`)
	}
	c := startCollector(t, "--watch-transcripts", filepath.Join(a.Home, ".claude", "projects"))
	a.c = c
	a.Vars = append(a.Vars, "HOOKWATCH_URL="+c.url, "HOOKWATCH_HOME="+c.home)
	return a, c
}

func testWatchWithHooks(t *testing.T, cl Client, play func(a *attrEnv)) {
	a, w := watchedEnv(t, cl, true)
	play(a)
	want := transcriptTokens(t, filepath.Join(a.Home, ".claude", "projects"))

	// Wait until the collector holds every payload the hooks sent, and
	// every agent the tokens its transcripts record.
	deadline := time.Now().Add(60 * time.Second)
	var ids []string
	var hookEnvs []json.RawMessage
	for {
		recorded := map[string]int{}
		ids = ids[:0]
		for _, ev := range a.recorded() {
			recorded[hookKey(ev)]++
			if id := ev.str("session_id"); !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
		stored := map[string]int{}
		hookEnvs = hookEnvs[:0]
		diff := ""
		for _, id := range ids {
			for _, e := range w.storedEvents(t, id) {
				if e.kind != "transcript" {
					stored[hookKey(e.payload)]++
					hookEnvs = append(hookEnvs, e.Envelope)
				}
			}
			if s := w.session(t, id); s.DerivedSeq != s.LastSeq {
				diff = "derived state not current"
			}
			if got, want := w.agentTokens(t, id), sessionTokens(want, id); fmt.Sprint(got) != fmt.Sprint(want) && w.session(t, id).AliasOf == "" {
				diff = fmt.Sprintf("session %s: tokens %v, the transcripts say %v", id, got, want)
			}
		}
		if d := multisetDiff(recorded, stored); d != "" {
			diff = d
		}
		if diff == "" && len(ids) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 60 s the collector still differs from what the client sent and wrote:\n%s", diff)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// The same hook events alone, in a collector that follows nothing.
	ref := startCollector(t, "--watch-transcripts", "off")
	body, err := json.Marshal(map[string]any{"envelopes": hookEnvs})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(ref.url+"/v1/events", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /v1/events: %d", resp.StatusCode)
	}
	for _, id := range ids {
		for time.Now().Before(deadline) {
			if s := ref.session(t, id); s.DerivedSeq == s.LastSeq {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		got, hooksOnly := w.session(t, id), ref.session(t, id)
		for _, k := range []string{"events", "prompts", "tool_calls", "agents", "subagents", "failures", "denials"} {
			if got.Counts[k] != hooksOnly.Counts[k] {
				t.Errorf("session %s: %s %d with the transcripts followed, %d from the hooks alone", id, k, got.Counts[k], hooksOnly.Counts[k])
			}
		}
		diffKeys(t, id+" agents", keys(ref.agents(t, id), agentKey), keys(w.agents(t, id), agentKey))
		diffKeys(t, id+" tool calls", keys(ref.toolCalls(t, id), callKey), keys(w.toolCalls(t, id), callKey))
	}
}

func testWatchWithoutHooks(t *testing.T, cl Client) {
	a, w := watchedEnv(t, cl, false)
	a.Play(ParallelSubagents(a.Project))
	projects := filepath.Join(a.Home, ".claude", "projects")
	want := transcriptTokens(t, projects)
	if len(a.recorded()) != 0 {
		t.Fatal("a hook ran with no hook installed")
	}
	mains, err := filepath.Glob(filepath.Join(projects, "*", "*.jsonl"))
	if err != nil || len(mains) != 1 {
		t.Fatalf("main transcripts %v %v", mains, err)
	}
	id := strings.TrimSuffix(filepath.Base(mains[0]), ".jsonl")
	wantCalls := len(toolUseIDs(t, projects))
	deadline := time.Now().Add(60 * time.Second)
	for {
		var s apiSession
		code := w.get(t, "/v1/sessions/"+url.PathEscape(id), &s)
		got := w.agentTokens(t, id)
		if code == http.StatusOK && s.DerivedSeq == s.LastSeq && s.Counts["tool_calls"] == wantCalls && s.Counts["subagents"] == 3 &&
			fmt.Sprint(got) == fmt.Sprint(sessionTokens(want, id)) {
			if s.Counts["events"] != 0 || s.Counts["prompts"] != 1 || s.Status != "running" {
				t.Errorf("session from the transcripts alone: counts %v, status %s", s.Counts, s.Status)
			}
			for _, c := range w.toolCalls(t, id) {
				if c.Status != "ok" {
					t.Errorf("%v", c)
				}
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 60 s: session %s answers %d, counts %v, tokens %v (the transcripts say %v, %d calls)",
				id, code, s.Counts, got, sessionTokens(want, id), wantCalls)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// toolUseIDs returns the ids of the tool_use blocks of the assistant
// records in the transcripts under dir, each once.
func toolUseIDs(t *testing.T, dir string) []string {
	t.Helper()
	var ids []string
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() || !strings.HasSuffix(p, ".jsonl") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range bytes.Split(b, []byte("\n")) {
			var rec struct {
				Type    string `json:"type"`
				Message struct {
					Content []struct {
						Type string `json:"type"`
						ID   string `json:"id"`
					} `json:"content"`
				} `json:"message"`
			}
			if json.Unmarshal(line, &rec) != nil || rec.Type != "assistant" {
				continue
			}
			for _, c := range rec.Message.Content {
				if c.Type == "tool_use" && !slices.Contains(ids, c.ID) {
					ids = append(ids, c.ID)
				}
			}
		}
		return nil
	})
	return ids
}

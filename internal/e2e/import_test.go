package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/internal/testbin"
)

// importInto runs `hookwatch import` of a's transcripts into the
// collector c, in the client's environment (the host and user its hooks
// stamp), and returns its output.
func (a *attrEnv) importInto(t *testing.T, c *collectorProc) string {
	t.Helper()
	bin := testbin.Build(t, "./cmd/hookwatch")
	if keep := os.Getenv("HOOKWATCH_E2E_KEEP"); keep != "" {
		exec.Command("cp", "-r", filepath.Join(a.Home, ".claude", "projects"), keep).Run()
	}
	cmd := exec.Command(bin, "import", "--no-start", filepath.Join(a.Home, ".claude", "projects"))
	cmd.Env = append(a.Environ(), "HOOKWATCH_URL="+c.url, "HOOKWATCH_HOME="+c.home)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("hookwatch import: %v\n%s", err, out)
	}
	return string(out)
}

// agentKey and callKey are what import must reproduce of an agent and a
// call: identity, place in the tree, outcome.
func agentKey(a apiAgent) string {
	typ := "<none>"
	if a.AgentType != nil {
		typ = *a.AgentType
	}
	parent := "<none>"
	if a.ParentAgentID != nil {
		parent = *a.ParentAgentID
	}
	// A transcript does not record the end of a run (SessionEnd): the
	// main agent's stop is the hooks' alone.
	return fmt.Sprintf("%q type %q parent %q spawn %q depth %d role %s stopped %v", a.AgentID, typ, parent, a.SpawnToolUseID, a.Depth, a.Role, a.StoppedAt != nil && a.AgentID != "")
}

func callKey(c apiCall) string {
	return fmt.Sprintf("%s %s agent %q parent %q depth %d status %s spawned %q", c.ToolUseID, c.ToolName, c.AgentID, c.ParentToolUseID, c.Depth, c.Status, c.SpawnedAgentID)
}

// transcriptTokens sums the usage records of the transcripts under dir per
// session and agent, one response per message id, each kind the largest
// any of its lines reports; the records a fork copied from its parent
// (same uuid in an earlier file) count for the parent only.
func transcriptTokens(t *testing.T, dir string) map[string][2]int64 {
	t.Helper()
	out := map[string][2]int64{}
	var files []string
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() && strings.HasSuffix(p, ".jsonl") {
			files = append(files, p)
		}
		return nil
	})
	type msg struct {
		key     string
		in, out int64
	}
	msgs := map[string]*msg{}
	for _, p := range files {
		// A fork's copies of its parent's records keep their timestamps,
		// older than the file's first line.
		var start time.Time
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			var r struct {
				Timestamp time.Time `json:"timestamp"`
				Type      string    `json:"type"`
				UUID      string    `json:"uuid"`
				SessionID string    `json:"sessionId"`
				AgentID   string    `json:"agentId"`
				Message   struct {
					ID    string `json:"id"`
					Usage *struct {
						In  int64 `json:"input_tokens"`
						Out int64 `json:"output_tokens"`
					} `json:"usage"`
				} `json:"message"`
			}
			if json.Unmarshal(sc.Bytes(), &r) != nil {
				continue
			}
			if start.IsZero() {
				start = r.Timestamp
			}
			if r.Type != "assistant" || r.Message.Usage == nil || r.Timestamp.Before(start) {
				continue
			}
			session := strings.TrimSuffix(filepath.Base(p), ".jsonl")
			if r.AgentID != "" {
				session = filepath.Base(filepath.Dir(filepath.Dir(p)))
			}
			k := session + "/" + r.AgentID + "/" + r.Message.ID
			m := msgs[k]
			if m == nil {
				m = &msg{key: session + "/" + r.AgentID}
				msgs[k] = m
			}
			m.in, m.out = max(m.in, r.Message.Usage.In), max(m.out, r.Message.Usage.Out)
		}
		f.Close()
	}
	for _, m := range msgs {
		s := out[m.key]
		s[0] += m.in
		s[1] += m.out
		out[m.key] = s
	}
	return out
}

// TestImportMatchesHooks plays the real client's scenarios (parallel
// subagents, the 3-deep chain, resume, fork, compact) with hooks into one
// collector, imports the transcripts they left into another, and finds the
// same agents and tool calls in both through the API; importing into the
// collector that captured them live adds no event, and gives every agent
// the tokens its transcripts record.
func TestImportMatchesHooks(t *testing.T) {
	Clients(t) // skip (or fail in CI) before building anything
	live := startCollector(t)
	EachClient(t, func(t *testing.T, cl Client) { testImportMatchesHooks(t, live, cl) })
}

func testImportMatchesHooks(t *testing.T, live *collectorProc, cl Client) {
	scenarios := map[string]func(a *attrEnv){
		"ParallelSubagents": func(a *attrEnv) { a.Play(ParallelSubagents(a.Project)) },
		"NestedSubagents":   func(a *attrEnv) { a.Play(NestedSubagents()) },
		"Lifecycle":         func(a *attrEnv) { a.PlayLifecycle(Lifecycle()) },
	}
	for name, play := range scenarios {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			a := live.newEnv(t, cl)
			play(a)
			ids := a.settle()
			slices.Sort(ids)

			imported := startCollector(t)
			a.importInto(t, imported)
			for _, id := range ids {
				if imported.get(t, "/v1/sessions/"+id, nil) != 200 {
					if live.session(t, id).Counts["tool_calls"] == 0 && live.session(t, id).Counts["prompts"] == 0 {
						continue // a throwaway id, or a session without a transcript record
					}
					t.Errorf("session %s: not imported", id)
					continue
				}
				// The compaction agent leaves no transcript: only its hook
				// names it.
				notCompaction := func(as []apiAgent) []apiAgent {
					return slices.DeleteFunc(as, func(a apiAgent) bool { return a.Role == "compaction" })
				}
				diffKeys(t, id+" agents", keys(notCompaction(live.agents(t, id)), agentKey), keys(imported.agents(t, id), agentKey))
				diffKeys(t, id+" tool calls", keys(live.toolCalls(t, id), callKey), keys(imported.toolCalls(t, id), callKey))
				// A fork's transcript names its parent as its hooks do.
				if l := live.session(t, id); l.Lineage == "fork" {
					if im := imported.session(t, id); im.Lineage != l.Lineage || im.ParentSessionID != l.ParentSessionID {
						t.Errorf("session %s: imported as %q of %q, its hooks say %q of %q", id, im.Lineage, im.ParentSessionID, l.Lineage, l.ParentSessionID)
					}
				}
			}

			// Into the collector that saw it live: nothing twice.
			before := map[string]apiSession{}
			for _, id := range ids {
				before[id] = live.session(t, id)
			}
			a.importInto(t, live)
			want := transcriptTokens(t, filepath.Join(a.Home, ".claude", "projects"))
			for _, id := range ids {
				after := live.session(t, id)
				for _, k := range []string{"events", "prompts", "tool_calls", "agents", "failures"} {
					if after.Counts[k] != before[id].Counts[k] {
						t.Errorf("session %s: %s %d after import, %d before", id, k, after.Counts[k], before[id].Counts[k])
					}
				}
				var body struct {
					Agents []struct {
						AgentID string `json:"agent_id"`
						Usage   *struct {
							In  int64 `json:"input_tokens"`
							Out int64 `json:"output_tokens"`
						} `json:"usage"`
					} `json:"agents"`
				}
				if after.AliasOf != "" {
					continue // a continue's throwaway id: its agents are the continued session's
				}
				live.mustGet(t, "/v1/sessions/"+id+"/agents", &body)
				for _, ag := range body.Agents {
					w, ok := want[id+"/"+ag.AgentID]
					var got [2]int64
					if ag.Usage != nil {
						got = [2]int64{ag.Usage.In, ag.Usage.Out}
					}
					if got != w {
						t.Errorf("session %s agent %q: tokens %v, the transcripts say %v (%v)", id, ag.AgentID, got, w, ok)
					}
				}
			}
		})
	}
}

func keys[T any](xs []T, key func(T) string) []string {
	out := make([]string, 0, len(xs))
	for _, x := range xs {
		out = append(out, key(x))
	}
	slices.Sort(out)
	return out
}

// diffKeys fails when two sorted lists differ, naming what each lacks.
func diffKeys(t *testing.T, what string, live, imported []string) {
	t.Helper()
	var d []string
	for _, k := range live {
		if !slices.Contains(imported, k) {
			d = append(d, "- "+k)
		}
	}
	for _, k := range imported {
		if !slices.Contains(live, k) {
			d = append(d, "+ "+k)
		}
	}
	if len(d) > 0 {
		t.Errorf("%s differ (- hooks only, + import only):\n%s", what, strings.Join(d, "\n"))
	}
}

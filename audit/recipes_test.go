package audit_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/audit"
)

// recipes returns the jq recipes of docs/audit.md by name: the sh block
// after each "<!-- recipe: NAME -->", without its AGENT= line (the test
// sets AGENT itself).
func recipes(t *testing.T) map[string]string {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "audit.md"))
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile("(?s)<!-- recipe: ([a-z-]+) -->\n```sh\n(.*?)```")
	out := map[string]string{}
	for _, m := range re.FindAllSubmatch(doc, -1) {
		var keep []string
		for _, l := range strings.Split(string(m[2]), "\n") {
			if !strings.HasPrefix(l, "AGENT=") && strings.TrimSpace(l) != "" {
				keep = append(keep, l)
			}
		}
		out[string(m[1])] = strings.Join(keep, "\n")
	}
	for _, name := range []string{"slowest", "failures", "subagent-calls", "subagent-events"} {
		if out[name] == "" {
			t.Fatalf("no recipe %q in docs/audit.md", name)
		}
	}
	return out
}

// jq finds jq: a skip without it, a failure in CI (.ci/run installs it).
func jq(t *testing.T) {
	if _, err := exec.LookPath("jq"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("jq is not installed (.ci/run installs Debian's jq)")
		}
		t.Skip("jq is not installed: apt-get install jq")
	}
}

// runRecipe runs a recipe in dir and returns its output lines.
func runRecipe(t *testing.T, recipe, dir string, env ...string) []string {
	t.Helper()
	cmd := exec.Command("sh", "-c", recipe)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s in %s: %v\n%s", recipe, dir, err, stderr.String())
	}
	s := strings.TrimSuffix(string(out), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// TestRecipes runs every recipe of docs/audit.md on the trail of every
// session of the real captures and checks the answers against the model
// the trail was written from.
func TestRecipes(t *testing.T) {
	jq(t)
	rs := recipes(t)
	subagents := 0
	for _, c := range loadCaptures(t) {
		root := t.TempDir()
		writeTrail(t, c, root, audit.WriterOptions{})
		for _, s := range c.model.Sessions {
			dir := filepath.Join(root, audit.SessionDir(s.SessionID))
			if _, err := os.Stat(dir); err != nil {
				continue // a session id only aliased
			}
			where := c.name + "/" + s.SessionID

			// The five slowest, longest first; pending calls last.
			calls := slices.Clone(s.ToolCalls)
			slices.SortStableFunc(calls, func(a, b *attribution.ToolCall) int { return int(ms(b) - ms(a)) })
			var want []string
			for _, tc := range calls[:min(5, len(calls))] {
				want = append(want, tc.ToolUseID)
			}
			if got := field(t, runRecipe(t, rs["slowest"], dir), "tool_use_id"); !slices.Equal(got, want) {
				t.Errorf("%s: slowest %v, want %v", where, got, want)
			}

			// Failures per agent, by agent id.
			want = nil
			agents := slices.Clone(s.Agents)
			slices.SortFunc(agents, func(a, b *attribution.Agent) int { return strings.Compare(a.AgentID, b.AgentID) })
			for _, a := range agents {
				if a.Failures > 0 {
					want = append(want, fmt.Sprintf("%s=%d", a.AgentID, a.Failures))
				}
			}
			var got []string
			for _, l := range runRecipe(t, rs["failures"], dir) {
				var r struct {
					AgentID  string `json:"agent_id"`
					Failures int    `json:"failures"`
				}
				if err := json.Unmarshal([]byte(l), &r); err != nil {
					t.Fatal(err)
				}
				got = append(got, fmt.Sprintf("%s=%d", r.AgentID, r.Failures))
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s: failures %v, want %v", where, got, want)
			}

			// What each subagent did.
			for _, a := range s.Agents {
				if a.AgentID == "" {
					continue
				}
				subagents++
				want = nil
				for _, tc := range s.ToolCalls {
					if tc.AgentID == a.AgentID {
						want = append(want, tc.ToolName)
					}
				}
				if got := field(t, runRecipe(t, rs["subagent-calls"], dir, "AGENT="+a.AgentID), "tool_name"); !slices.Equal(got, want) || len(got) != a.ToolCount {
					t.Errorf("%s: agent %s called %v, want %v (%d calls)", where, a.AgentID, got, want, a.ToolCount)
				}
				events := runRecipe(t, rs["subagent-events"], dir, "AGENT="+a.AgentID)
				fired := 0
				for i := range c.events {
					if e := &c.events[i]; e.SessionID == s.SessionID && e.AgentID == a.AgentID {
						fired++
					}
				}
				if len(events) != fired || fired == 0 {
					t.Errorf("%s: agent %s fired %d events by the recipe, %d in the log", where, a.AgentID, len(events), fired)
				}
			}
		}
	}
	if subagents < 4 {
		t.Fatalf("only %d subagents in the captures", subagents)
	}
}

// ms is a call's duration for sorting, -1 while it has none.
func ms(c *attribution.ToolCall) int64 {
	if c.DurationMS == nil {
		return -1
	}
	return *c.DurationMS
}

// field returns one string member of each JSON line.
func field(t *testing.T, lines []string, name string) []string {
	var out []string
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		s, _ := m[name].(string)
		out = append(out, s)
	}
	return out
}

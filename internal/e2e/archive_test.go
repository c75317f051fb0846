package e2e

import (
	"os"
	"strings"
	"testing"

	"github.com/hookwatch/hookwatch/internal/fakeclaude"
)

// TestCompactArchive: a /compact of a session whose turn ran subagents
// leaves, in the home the hook shares with the collector, the transcript
// as it was before the compaction — the prompt, and the subagents'
// answers the summary folds away — with the PostCompact summary beside
// it, and the collector lists it for the session.
func TestCompactArchive(t *testing.T) {
	Clients(t) // skip (or fail in CI) before building anything
	c := startCollector(t)
	EachClient(t, func(t *testing.T, cl Client) {
		a := c.newEnv(t, cl)
		sc := ParallelSubagents(a.Project)
		after := fakeclaude.Reply(fakeclaude.Text(ContinuedText))
		sc.Script[fakeclaude.CompactedKey] = []fakeclaude.Turn{after, after, after}
		id := a.Play(sc).SessionID
		a.Compact(id, CompactInstruction)
		a.settle()

		var resp struct {
			Archives []struct {
				Agent, Path string
				SummaryPath string `json:"summary_path"`
				Cut         bool
			}
		}
		c.mustGet(t, "/v1/sessions/"+id+"/archives", &resp)
		if len(resp.Archives) != 1 || resp.Archives[0].Agent != "main" || resp.Archives[0].Cut {
			t.Fatalf("archives of %s: %+v", id, resp.Archives)
		}
		ar := resp.Archives[0]
		b, err := os.ReadFile(ar.Path)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"[e2e:parallel] split the review in three", "subagent alpha finished", "subagent gamma finished"} {
			if !strings.Contains(string(b), want) {
				t.Errorf("the archive %s does not hold %q", ar.Path, want)
			}
		}
		if st, err := os.Stat(ar.Path); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("the archive's mode: %v %v", st.Mode(), err)
		}
		summary, err := os.ReadFile(ar.SummaryPath)
		if err != nil || !strings.Contains(string(summary), fakeclaude.CompactedKey) {
			t.Errorf("the summary beside the archive (%q): %s %v", ar.SummaryPath, summary, err)
		}
	})
}

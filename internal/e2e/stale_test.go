package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookwatch/hookwatch/internal/fakeclaude"
	"github.com/hookwatch/hookwatch/stale"
)

// staleRun plays a session that reads two files of the project, lets
// change alter the files on disk, resumes the session (forks it, with
// fork), and returns the two files and the text of the stale-context guard
// the model's first request after the resume carries ("" for none).
func staleRun(t *testing.T, c *collectorProc, cl Client, fork bool, change func(kept, changed string)) (kept, changed, warning string) {
	t.Helper()
	a := c.newEnv(t, cl)
	kept, changed = filepath.Join(a.Project, "kept.txt"), filepath.Join(a.Project, "changed.txt")
	writeFile(t, kept, "this file stays as it was read\n")
	writeFile(t, changed, "the first version of this file\n")
	const key, resume = "[e2e:stale-guard]", "[e2e:stale-guard-resume] go on"
	a.Model.SetScript(fakeclaude.Script{key: {
		fakeclaude.Reply(fakeclaude.ToolUse("Read", input{"file_path": kept}), fakeclaude.ToolUse("Read", input{"file_path": changed})),
		fakeclaude.Reply(fakeclaude.Text("Both files read.")),
		fakeclaude.Reply(fakeclaude.Text("Resumed.")),
	}})
	res := a.Run(key + " read the two files")
	if res.Text != "Both files read." {
		t.Fatalf("the first run ended with %q", res.Text)
	}
	a.settle() // the reads' recorded states are in the collector's model
	change(kept, changed)
	a.Model.Reset()
	again := a.Resume
	if fork {
		again = a.Fork
	}
	if r := again(res.SessionID, resume); r.Text != "Resumed." {
		t.Fatalf("the resumed run ended with %q", r.Text)
	}
	var first *fakeclaude.Request
	reqs := a.Model.Requests()
	for i := range reqs {
		if strings.Contains(reqs[i].AllText(), resume) {
			first = &reqs[i]
			break
		}
	}
	if first == nil {
		t.Fatalf("no model request after the resume holds its prompt (%d requests)", len(reqs))
	}
	// The guard's text, from its header to the end of its block.
	for _, text := range []string{first.AllText(), first.System} {
		if i := strings.Index(text, stale.ContextHeader); i >= 0 {
			warning = text[i:]
			if j := strings.Index(warning, "</system-reminder>"); j >= 0 {
				warning = warning[:j]
			}
			break
		}
	}
	if b, err := os.ReadFile(filepath.Join(c.home, "hook.log")); err == nil && strings.Contains(string(b), "stale-context guard") {
		t.Errorf("the guard failed in a hook:\n%s", b)
	}
	return kept, changed, warning
}

// TestStaleGuard: a session reads two files, one of them changes on disk,
// and `claude --resume` starts with the guard's warning in the model's
// first request, naming the changed file and not the other, and so does
// `--resume --fork-session` where the client reports it as a resume of the
// parent (2.1.197); without a change the resumed
// session hears nothing. Run on every client version, it also shows that
// each accepts the guard's SessionStart answer: the text reaches the model.
func TestStaleGuard(t *testing.T) {
	Clients(t)
	c := startCollector(t)
	EachClient(t, func(t *testing.T, cl Client) {
		changedRun := func(t *testing.T, fork bool) {
			kept, changed, warning := staleRun(t, c, cl, fork, func(_, changed string) {
				writeFile(t, changed, "the second version, written after the read\n")
			})
			if warning == "" {
				t.Fatal("the model's first request after the resume has no stale-context warning")
			}
			t.Logf("the warning the model read:\n%s", warning)
			if !strings.Contains(warning, changed) || strings.Contains(warning, kept) {
				t.Errorf("the warning does not name exactly the changed file %s:\n%s", changed, warning)
			}
			if !strings.Contains(warning, "re-read them before relying on their earlier contents") {
				t.Errorf("the warning does not ask to re-read:\n%s", warning)
			}
		}
		t.Run("changed", func(t *testing.T) { changedRun(t, false) })
		if !cl.ForksAsNewSession() {
			// From 2.1.332 a fork starts under a new id with
			// SessionStart(fork), and its parent is known only from its
			// transcript, written after the first answer: too late for
			// the guard (README).
			t.Run("fork", func(t *testing.T) { changedRun(t, true) })
		}
		t.Run("unchanged", func(t *testing.T) {
			if _, _, warning := staleRun(t, c, cl, false, func(string, string) {}); warning != "" {
				t.Errorf("a warning though no file changed:\n%s", warning)
			}
		})
	})
}

package e2ecodex

import (
	"net/http"
	"net/url"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	fo "github.com/hookwatch/hookwatch/internal/fakeopenai"
	"github.com/hookwatch/hookwatch/internal/testbin"
)

// TestImport: a session captured by hooks and then imported from its
// rollout (twice: the second reads nothing, and says so) has each call
// once, with the exit code; a session that ran with no hook installed gets
// its calls from the rollout alone, the first one's rollout not read again.
func TestImport(t *testing.T) {
	c := startCollector(t)
	e := c.newEnv(t, ModelClassic, fo.Script{
		"Run two commands": {{fo.Exec("echo hi")}, {fo.Exec("echo bad; exit 3")}, {fo.Text("One failed.")}},
		"Unwatched":        {{fo.Exec("echo unseen")}, {fo.Text("Done.")}},
	})
	if run := e.Exec("Run two commands"); run.Err != nil {
		t.Fatalf("codex exec: %v\n%s", run.Err, run.Stderr)
	}
	id := sessionOf(e.Rollouts()[0])
	want, total := fired(e, id)
	c.waitEvents(t, id, total)
	before := c.toolCalls(t, id)

	importAll := func() string { t.Helper(); return hookwatch(t, e, "import", "--codex") }
	if out := importAll(); !strings.Contains(out, "Imported 4 tool events, 2 session events and 3 token usage records from 1 rollout") {
		t.Fatalf("import: %s", out)
	}
	// Again: read on from where the first stopped, at the rollout's end.
	if out := importAll(); !strings.Contains(out, " from 0 rollout files ") || !strings.Contains(out, "Nothing new in 1 rollout file: ") {
		t.Fatalf("import again: %s", out)
	}
	// The import is applied once the collector has it: wait for its events.
	evs := c.waitEvents(t, id, total+4+2+3)
	sameCounts(t, "stored hook events", countEvents(evs), want)
	if tools, session, usage := rolloutEvents(evs); len(evs) != total+4+2+3 || tools != 4 || session != 2 || usage != 3 {
		t.Errorf("%d events stored, %d tool events, %d session events and %d usage records imported; want %d hook events, 4, 2 (the prompt, exec's end) and 3 (one a model response)",
			len(evs), tools, session, usage, total)
	}
	after := c.toolCalls(t, id)
	if len(before) != 2 || len(after) != 2 {
		t.Fatalf("calls before the import %v, after %v", before, after)
	}
	for i := range after {
		b, a := before[i], after[i]
		if a.ToolUseID != b.ToolUseID || !a.StartedAt.Equal(b.StartedAt) || a.Status != b.Status || *a.ExitCode != *b.ExitCode {
			t.Errorf("call %d: before %v, after %v", i, b, a)
		}
	}
	if after[1].Status != "error" || *after[1].ExitCode != 3 {
		t.Errorf("exit 3: %v", after[1])
	}

	// No hooks at all: the rollout is all there is.
	id2 := execUnwatched(t, e, "Unwatched", id)
	if out := importAll(); !strings.Contains(out, " from 1 rollout file ") || !strings.Contains(out, "\n1 rollout file had nothing new since last read to the end ") {
		t.Fatalf("import of a new session beside one imported: %s", out)
	}
	c.waitEvents(t, id2, 2+2+2)
	calls := c.toolCalls(t, id2)
	if len(calls) != 1 || calls[0].ToolName != "Bash" || calls[0].Status != "ok" || calls[0].ExitCode == nil || *calls[0].ExitCode != 0 {
		t.Errorf("unwatched session's calls %v", calls)
	}
	checkUnwatched(t, c.session(t, id2), "Unwatched")
}

// TestImportFork: a thread forked through the app-server while no hook
// was installed, known from its rollouts alone (import --codex), is linked
// to the session it was forked from, as its hooks link it
// (TestAppServerFork): the fork's rollout names its parent.
func TestImportFork(t *testing.T) {
	c := startCollector(t)
	e := New(t, ModelClassic, forkScript, c.vars...)
	parent, fork := runFork(e)

	if out := hookwatch(t, e, "import", "--codex"); !strings.Contains(out, "from 2 rollout files") {
		t.Fatalf("import: %s", out)
	}
	var s apiSession
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if c.get(t, "/v1/sessions/"+url.PathEscape(fork), &s) == http.StatusOK && s.Lineage == "fork" && s.DerivedSeq == s.LastSeq {
			break
		}
	}
	if s.ParentSessionID != parent || s.Lineage != "fork" || s.Title != "Second thing" || s.Counts["events"] != 0 {
		t.Errorf("fork %+v, want parent %s", s, parent)
	}
	if p := c.session(t, parent); !slices.Equal(p.ChildSessionIDs, []string{fork}) || p.ParentSessionID != "" {
		t.Errorf("parent %+v, want child %s", p, fork)
	}
}

// TestImportRuns: a real `codex exec` session, then `codex exec resume`,
// has the same runs whether a collector knows it from its hooks alone or
// from its rollout alone (serve --codex-rollouts=off, then import
// --codex): a startup run and a resume, each ended with its turn.
func TestImportRuns(t *testing.T) {
	hooked := startCollector(t, "HOOKWATCH_CODEX_ROLLOUTS=off")
	e := hooked.newEnv(t, ModelClassic, fo.Script{
		"First":    {{fo.Exec("echo hi")}, {fo.Text("Done.")}},
		"Carry on": {{fo.Text("Carried on.")}},
	})
	if run := e.Exec("First"); run.Err != nil {
		t.Fatalf("codex exec: %v\n%s", run.Err, run.Stderr)
	}
	if run := e.Resume("Carry on"); run.Err != nil {
		t.Fatalf("codex exec resume: %v\n%s", run.Err, run.Stderr)
	}
	id := sessionOf(e.Rollouts()[0])
	_, total := fired(e, id)
	hooked.waitEvents(t, id, total)

	imported := startCollector(t, "HOOKWATCH_CODEX_ROLLOUTS=off")
	cmd := exec.Command(testbin.Build(t, "./cmd/hookwatch"), "import", "--codex")
	cmd.Dir, cmd.Env = e.Project, append(e.Environ(), imported.vars...) // the last of a variable wins
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("import --codex: %v\n%s", err, out)
	}
	type run struct{ Source, Ended string }
	runsOf := func(c *collector) (runs []run, source string) {
		var s struct {
			apiSession
			Source string `json:"source"`
			Runs   []struct {
				Source    string     `json:"source"`
				EndedAt   *time.Time `json:"ended_at"`
				EndReason string     `json:"end_reason"`
			} `json:"runs"`
		}
		for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if c.get(t, "/v1/sessions/"+url.PathEscape(id), &s) == http.StatusOK && s.DerivedSeq == s.LastSeq && len(s.Runs) == 2 {
				break
			}
		}
		for _, r := range s.Runs {
			ended := "running"
			if r.EndedAt != nil {
				ended = "ended " + r.EndReason
			}
			runs = append(runs, run{r.Source, ended})
		}
		return runs, s.Source
	}
	fromHooks, hookSource := runsOf(hooked)
	fromRollout, rolloutSource := runsOf(imported)
	if want := []run{{"startup", "ended other"}, {"resume", "ended other"}}; !slices.Equal(fromHooks, want) {
		t.Fatalf("runs the hooks reported %v, want %v", fromHooks, want)
	}
	if !slices.Equal(fromRollout, fromHooks) || rolloutSource != hookSource || hookSource != "resume" {
		t.Errorf("runs read from the rollout %v (source %q), the hooks' %v (source %q)", fromRollout, rolloutSource, fromHooks, hookSource)
	}
}

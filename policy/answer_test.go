package policy

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestEvaluatorAnswerProject: a caller that located the project policy
// itself gets the answer Answer gives for the same cwd, the Evaluator
// notices edits, and a path that cannot be a project policy is never read
// as one.
func TestEvaluatorAnswerProject(t *testing.T) {
	home, proj := t.TempDir(), t.TempDir()
	write := func(path, rules string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("rules:\n"+rules), 0o600); err != nil {
			t.Fatal(err)
		}
		// Older than the Evaluator's "just edited" window, so it is cached.
		old := time.Now().Add(-time.Minute)
		if err := os.Chtimes(path, old, old); err != nil {
			t.Fatal(err)
		}
	}
	projectPolicy := filepath.Join(proj, ".hookwatch", "policy.yaml")
	write(projectPolicy, `  - {id: no-curl, tool: Bash, when: 'tool_input.command contains "curl"', action: deny, reason: no network}
`)
	write(filepath.Join(home, "policy.yaml"), `  - {id: no-rm, tool: Bash, when: 'tool_input.command contains "rm -rf"', action: deny, reason: no deletes}
`)
	elsewhere := filepath.Join(proj, "rules.yaml") // rules, but not where a project keeps them
	write(elsewhere, `  - {id: deny-all, tool: Bash, action: deny, reason: everything}
`)
	payload := func(cmd string) []byte {
		b, _ := json.Marshal(map[string]any{"session_id": "s", "hook_event_name": "PreToolUse", "cwd": proj,
			"tool_name": "Bash", "tool_input": map[string]any{"command": cmd}, "tool_use_id": "t"})
		return b
	}
	e := NewEvaluator(home)
	ctx := context.Background()
	for _, c := range []struct {
		project, cmd, want string
	}{
		{projectPolicy, "curl example.com", "no network"},
		{projectPolicy, "rm -rf /", "no deletes"},
		{projectPolicy, "ls", ""},
		{"", "curl example.com", ""},   // no project: the user file only
		{"", "rm -rf /", "no deletes"}, //
		{elsewhere, "ls", ""},          // not a project policy path: ignored
		{"relative/.hookwatch/policy.yaml", "curl example.com", ""},
		{proj + "/x/../.hookwatch/policy.yaml", "curl example.com", ""}, // not clean
	} {
		out, code, _ := e.AnswerProject(ctx, c.project, payload(c.cmd))
		if code != 0 || (c.want == "") != (len(out) == 0) || !strings.Contains(string(out), c.want) {
			t.Errorf("AnswerProject(%q, %q) = %s, %d; want %q", c.project, c.cmd, out, code, c.want)
		}
		if c.project == projectPolicy {
			if ref, _, _ := e.Answer(ctx, proj, "", payload(c.cmd)); string(ref) != string(out) {
				t.Errorf("Answer for cwd %s = %s, AnswerProject = %s", proj, ref, out)
			}
		}
	}
	// An edit is seen at once, though the old rules were compiled.
	write(projectPolicy, `  - {id: no-ls, tool: Bash, when: 'tool_input.command == "ls"', action: deny, reason: no listing}
`)
	if out, _, _ := e.AnswerProject(ctx, projectPolicy, payload("ls")); !strings.Contains(string(out), "no listing") {
		t.Errorf("after the edit: %s", out)
	}
}

// TestEvaluatorOnProblems: the problems of the files in force are told
// once when first met — a condition that does not compile included, though
// no event reached its rule — not again while the files stay as they are,
// again when they change, and not at all for valid files.
func TestEvaluatorOnProblems(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, "policy.yaml")
	write := func(content string, age time.Duration) {
		t.Helper()
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		at := time.Now().Add(-age)
		if err := os.Chtimes(path, at, at); err != nil {
			t.Fatal(err)
		}
	}
	var told []string
	e := NewEvaluator(home)
	e.OnProblems = func(problems []Problem) {
		var s []string
		for _, p := range problems {
			s = append(s, strings.TrimPrefix(p.Error(), path))
		}
		told = append(told, strings.Join(s, "; "))
	}
	prompt := []byte(`{"session_id":"s","hook_event_name":"UserPromptSubmit","cwd":"/p","prompt":"hi"}`)
	answer := func(want ...string) {
		t.Helper()
		told = nil
		e.Answer(context.Background(), "/p", "", prompt)
		if strings.Join(told, "|") != strings.Join(want, "|") {
			t.Fatalf("told %q, want %q", told, want)
		}
	}
	write("rules:\n  - id: a\n    tool: Bash\n    when: 'tool_input.command matches \"(\"'\n    action: deny\n", time.Minute)
	answer(`:4: rule "a": cannot compile when: error parsing regexp: missing closing ): ` + "`(`" + ` (column 20)`)
	answer() // the same files: told already
	// Just written, the file is loaded afresh on every answer: still told once.
	write("rules:\n  - id: a\n    whne: x\n", 0)
	answer(`:3: rule "a": unknown key "whne"; did you mean "when"?; :2: rule "a": a rule needs an action, context, system_message, update_input or transform`)
	answer()
	write("rules:\n  - {id: a, tool: Bash, action: deny}\n", time.Minute)
	answer()
}

// answerProblems returns a check that Answer, for a prompt in proj with
// home as HOOKWATCH_HOME, reports the problems want, each as short makes
// it of its text.
func answerProblems(t *testing.T, home, proj string, short func(string) string) func(want ...string) {
	prompt := []byte(`{"session_id":"s","hook_event_name":"UserPromptSubmit","cwd":"` + proj + `","prompt":"hi"}`)
	return func(want ...string) {
		t.Helper()
		_, _, _, problems := Answer(context.Background(), home, proj, "", prompt)
		var got []string
		for _, p := range problems {
			got = append(got, short(p.Error()))
		}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Fatalf("problems %q, want %q", got, want)
		}
	}
}

// TestAnswerProblemsOncePerChange: a process per event learns the problems
// of the files only on the call that rebuilt their parse cache entry (a
// project file's too); the calls after it, reading the cache, are told
// nothing, and neither is any call while the files are valid.
func TestAnswerProblemsOncePerChange(t *testing.T) {
	home, proj := t.TempDir(), t.TempDir()
	user, project := filepath.Join(home, "policy.yaml"), filepath.Join(proj, ".hookwatch", "policy.yaml")
	write := func(path, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	answer := answerProblems(t, home, proj, func(p string) string { return filepath.Base(filepath.Dir(p)) + "/" + filepath.Base(p) })
	write(user, "rules:\n  - {id: a, tool: Bash, when: 'tool_input.command matches \"(\"', action: deny}\n")
	// A person explaining the policy first leaves the change the hook's
	// to report.
	if err := Explain(io.Discard, home, proj, Project{Dir: proj}, CheckOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := ExplainCommand(io.Discard, home, proj, Project{Dir: proj}, "ls", false, CheckOptions{}); err != nil {
		t.Fatal(err)
	}
	answer(filepath.Base(home) + `/policy.yaml:2: rule "a": cannot compile when: error parsing regexp: missing closing ): ` + "`(`" + ` (column 20)`)
	answer()
	write(project, "rules:\n  - {id: b, tool: Bash}\n")
	// The files' problems first, then those of the conditions.
	answer(
		`.hookwatch/policy.yaml:2: rule "b": a rule needs an action, context, system_message, update_input or transform`,
		filepath.Base(home)+`/policy.yaml:2: rule "a": cannot compile when: error parsing regexp: missing closing ): `+"`(`"+` (column 20)`)
	answer()
	write(user, "rules: []\n")
	write(project, "rules: []\n")
	answer()
	answer()
}

// TestAnswerProblemsOnceAtOnce: hooks that run at the same moment (those
// of parallel tool calls), each finding the same change of a file in
// force, report it once between them, whichever file changed: the user's,
// the project's or the managed one. Goroutines stand for the processes:
// each run opens the files itself, and a flock belongs to an open file.
func TestAnswerProblemsOnceAtOnce(t *testing.T) {
	home, proj := t.TempDir(), t.TempDir()
	old := managedPath
	managedPath = filepath.Join(t.TempDir(), "etc", "hookwatch", "policy.yaml")
	defer func() { managedPath = old }()
	prompt := []byte(`{"session_id":"s","hook_event_name":"UserPromptSubmit","cwd":"` + proj + `","prompt":"hi"}`)
	const runs = 8
	for _, path := range []string{filepath.Join(home, "policy.yaml"), filepath.Join(proj, ".hookwatch", "policy.yaml"), managedPath} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		for change := range 5 {
			// A rule without an action: a problem every change reports.
			rule := fmt.Sprintf("rules:\n  - {id: %s%d, tool: Bash}\n", filepath.Base(filepath.Dir(path)), change)
			if err := os.WriteFile(path, []byte(rule), 0o644); err != nil {
				t.Fatal(err)
			}
			var told atomic.Int32
			var ready, done sync.WaitGroup
			ready.Add(1)
			for range runs {
				done.Add(1)
				go func() {
					defer done.Done()
					ready.Wait()
					if _, _, _, problems := Answer(context.Background(), home, proj, "", prompt); len(problems) > 0 {
						told.Add(1)
					}
				}()
			}
			ready.Done()
			done.Wait()
			if n := told.Load(); n != 1 {
				t.Errorf("change %d of %s: %d of %d runs at once reported it, want 1", change, path, n, runs)
			}
		}
	}
}

// TestAnswerProblemsOncePerManagedChange: the managed file, never cached,
// is a file in force like the others: a change to it alone is reported
// once, its first sight too, and nothing while it stays as it is.
func TestAnswerProblemsOncePerManagedChange(t *testing.T) {
	home, proj := t.TempDir(), t.TempDir()
	old := managedPath
	managedPath = filepath.Join(t.TempDir(), "etc", "hookwatch", "policy.yaml")
	defer func() { managedPath = old }()
	write := func(content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(managedPath), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(managedPath, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	answer := answerProblems(t, home, proj, filepath.Base)
	// A valid user file, parsed and cached once: not what is reported.
	if err := os.WriteFile(filepath.Join(home, "policy.yaml"), []byte("rules: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	answer()
	write("rules:\n  - {id: m, tool: Bash}\n")
	answer(`policy.yaml:2: rule "m": a rule needs an action, context, system_message, update_input or transform`)
	answer()
	write("rules:\n  - {id: m, tool: Bash, action: deny}\n  - {id: n, tool: Bash}\n")
	answer(`policy.yaml:3: rule "n": a rule needs an action, context, system_message, update_input or transform`)
	answer()
	write("rules: []\n")
	answer()
	answer()
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookwatch/hookwatch/claudecode"
)

// TestSessions lists the sessions of a real transcript tree (the client's
// parallel-subagents session, moved to a project directory made here), and
// points a user in a neighbouring directory — parent, child, symlink — to
// the right cd.
func TestSessions(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	project := filepath.Join(root, "work", "demo")
	os.MkdirAll(filepath.Join(project, "sub"), 0o755)
	config := filepath.Join(root, "config")
	t.Setenv("CLAUDE_CONFIG_DIR", config)
	// The fixture's transcripts, as if recorded in project.
	src := "../../importer/testdata/parallel/projects/-tmp-hc-1665870347-c-demo"
	dst := filepath.Join(config, "projects", claudecode.Slug(project))
	filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(src, p)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, _ := os.ReadFile(p)
		return os.WriteFile(filepath.Join(dst, rel), []byte(strings.ReplaceAll(string(b), "/tmp/hc-1665870347/c/demo", project)), 0o600)
	})
	const id = "04c54c49-9580-4ffd-ac42-925d83960a3b"

	out := mustHW(t, "sessions", "--cwd", project)
	for _, want := range []string{id, "[e2e:session] work through the project", "2 subagents", "1 prompts",
		"claude --resume " + id, "claude --resume " + id + " --fork-session"} {
		if !strings.Contains(out, want) {
			t.Errorf("sessions --cwd %s lacks %q:\n%s", project, want, out)
		}
	}
	link := filepath.Join(root, "link")
	if err := os.Symlink(project, link); err != nil {
		t.Fatal(err)
	}
	f := func(cwd, why string) {
		t.Helper()
		out := mustHW(t, "sessions", "--cwd", cwd)
		if !strings.Contains(out, "No Claude Code session was started in "+cwd) || !strings.Contains(out, why) ||
			!strings.Contains(out, "cd "+project) || strings.Contains(out, "claude --resume") {
			t.Errorf("sessions --cwd %s:\n%s", cwd, out)
		}
	}
	f(filepath.Dir(project), "a child directory")
	f(filepath.Join(project, "sub"), "a parent directory")
	f(link, "a symlink")

	other := filepath.Join(root, "other")
	os.Mkdir(other, 0o755)
	if out := mustHW(t, "sessions", "--cwd", other); strings.Contains(out, "cd ") {
		t.Errorf("an unrelated directory is pointed somewhere:\n%s", out)
	}
	if out := mustHW(t, "sessions", "--all"); !strings.Contains(out, project) || !strings.Contains(out, id) {
		t.Errorf("sessions --all:\n%s", out)
	}
}

package claudecode

import (
	"os"
	"path/filepath"
	"testing"
)

// TestProjects reads a projects directory holding one real transcript
// (the client's parallel-subagents session), an empty project, and a stray
// file: only the project with a session is listed, with that session.
func TestProjects(t *testing.T) {
	const id = "04c54c49-9580-4ffd-ac42-925d83960a3b"
	b, err := os.ReadFile("../importer/testdata/parallel/projects/-tmp-hc-1665870347-c-demo/" + id + ".jsonl")
	if err != nil {
		t.Fatal(err)
	}
	projects := t.TempDir()
	for _, dir := range []string{"-work-demo", "-work-empty"} {
		if err := os.Mkdir(filepath.Join(projects, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	main := filepath.Join(projects, "-work-demo", id+".jsonl")
	if err := os.WriteFile(main, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(projects, "stray.jsonl"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	got := Projects(projects)
	if len(got) != 1 || got[0].Name != "-work-demo" || len(got[0].Sessions) != 1 || got[0].Sessions[0].ID != id || got[0].Sessions[0].CWD == "" {
		t.Fatalf("Projects = %+v, want -work-demo with session %s", got, id)
	}
	if p := SessionTranscript(main, "other"); p != filepath.Join(projects, "-work-demo", "other.jsonl") {
		t.Errorf("SessionTranscript = %s", p)
	}
	if got := Projects(filepath.Join(projects, "missing")); got != nil {
		t.Errorf("Projects of a missing directory = %+v", got)
	}
}

// TestPluginName reads the repository's own plugin manifest, and none
// where there is none.
func TestPluginName(t *testing.T) {
	if got := PluginName(".."); got != Plugin {
		t.Errorf("PluginName of the repository = %q, want %q", got, Plugin)
	}
	if got := PluginName(t.TempDir()); got != "" {
		t.Errorf("PluginName of an empty directory = %q", got)
	}
}

// TestIsOurPlugin: an enabledPlugins key names the plugin, then its
// marketplace.
func TestIsOurPlugin(t *testing.T) {
	for key, want := range map[string]bool{
		"hookwatch@hookwatch": true, "hookwatch@local-dev": true, "hookwatch@": true,
		"hookwatch": false, "hookwatch-extra@m": false, "my-hookwatch@m": false, "other@hookwatch": false, "": false,
	} {
		if got := IsOurPlugin(key); got != want {
			t.Errorf("IsOurPlugin(%q) = %v, want %v", key, got, want)
		}
	}
}

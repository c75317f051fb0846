package policyfile

import (
	"os"
	"path/filepath"
	"testing"
)

// TestInForce: InForce finds what Locate finds and says whether any of it
// exists, for every arrangement of managed, user and project files.
func TestInForce(t *testing.T) {
	root := t.TempDir()
	managed := filepath.Join(root, "etc", "policy.yaml")
	home := filepath.Join(root, "home")
	proj := filepath.Join(root, "src", "proj")
	sub := filepath.Join(proj, "a", "b")
	outside := filepath.Join(root, "elsewhere")
	for _, d := range []string{filepath.Dir(managed), home, sub, outside} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	touch := func(p string) func() {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("rules: []\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return func() { os.Remove(p) }
	}
	f := func(name, cwd, projectDir string, want bool, wantProject string) {
		t.Helper()
		srcs, got := InForce(managed, home, cwd, projectDir)
		if got != want {
			t.Errorf("%s: InForce = %v, want %v", name, got, want)
		}
		// Anything at a located path counts, but a directory is no file.
		if any := anyExists(Locate(managed, home, cwd, projectDir)); any != got && !isDir(wantProject) {
			t.Errorf("%s: InForce says %v, a stat of each located path %v", name, got, any)
		}
		project := ""
		for _, s := range srcs {
			if s.Scope == ScopeProject {
				project = s.Path
			}
		}
		if project != wantProject {
			t.Errorf("%s: project file %q, want %q", name, project, wantProject)
		}
	}
	projFile := filepath.Join(proj, ".hookwatch", "policy.yaml")
	f("nothing", sub, proj, false, projFile)
	f("nothing, cwd outside the project", outside, proj, false, projFile)
	f("nothing, no project dir", sub, "", false, filepath.Join(sub, ".hookwatch", "policy.yaml"))
	f("relative cwd, no project dir", "rel", "", false, "")

	undo := touch(managed)
	f("managed", sub, proj, true, projFile)
	undo()
	undo = touch(filepath.Join(home, "policy.yaml"))
	f("user", sub, proj, true, projFile)
	undo()
	undo = touch(projFile)
	f("project, cwd below it", sub, proj, true, projFile)
	f("project, cwd outside it", outside, proj, true, projFile)
	f("project, no project dir", sub, "", true, projFile)
	undo()
	mid := filepath.Join(proj, "a", ".hookwatch", "policy.yaml")
	undo = touch(mid)
	f("nearest from cwd", sub, proj, true, mid)
	undo()
	// A directory where the file would be is not a policy file, even
	// where Locate names it.
	if err := os.MkdirAll(projFile, 0o700); err != nil {
		t.Fatal(err)
	}
	f("a directory, cwd below it", sub, proj, false, projFile)
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

func anyExists(srcs []Source) bool {
	for _, s := range srcs {
		if _, err := os.Stat(s.Path); err == nil {
			return true
		}
	}
	return false
}

// TestProjectFile: a project file has the shape .hookwatch/policy.yaml,
// but the user's file, ~/.hookwatch/policy.yaml by default, has it too,
// and is the user's.
func TestProjectFile(t *testing.T) {
	const managed, user = "/etc/hookwatch/policy.yaml", "/home/u/.hookwatch/policy.yaml"
	for path, want := range map[string]bool{
		"/home/u/proj/.hookwatch/policy.yaml": true,
		user:                                  false,
		managed:                               false,
		"/home/u/proj/policy.yaml":            false,
		"relative/.hookwatch/policy.yaml":     false,
		"/home/u/proj/../x/.hookwatch/policy.yaml": false, // not clean
	} {
		if got := ProjectFile(managed, user, path); got != want {
			t.Errorf("ProjectFile(%s) = %v, want %v", path, got, want)
		}
	}
	if !ProjectFile(managed, "", "/home/u/.hookwatch/policy.yaml") {
		t.Error("with no user file, a home's .hookwatch/policy.yaml is a project's")
	}
}

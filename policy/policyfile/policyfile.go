// Package policyfile finds the policy files that apply to a directory. It
// is the part of the policy engine the hook needs on every event — "is any
// policy in force here?" costs a few stat calls — kept apart so that the
// lean hook binary can ask without linking the engine (YAML, expr), whose
// package initialisation alone would cost every agent event.
package policyfile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ManagedPath is where the managed (organisation) policy lives.
const ManagedPath = "/etc/hookwatch/policy.yaml"

// Scope is where a rule comes from. Lower values take precedence.
type Scope uint8

// The scopes, strongest first.
const (
	ScopeManaged Scope = iota
	ScopeUser
	ScopeProject
)

// String returns "managed", "user" or "project".
func (s Scope) String() string {
	switch s {
	case ScopeManaged:
		return "managed"
	case ScopeUser:
		return "user"
	case ScopeProject:
		return "project"
	}
	return fmt.Sprintf("Scope(%d)", uint8(s))
}

// Source is one policy file and the scope it is loaded with.
type Source struct {
	Path  string
	Scope Scope
}

// Locate returns the policy files that apply to a directory, whether or not
// they exist: managed (at managed), user (home/policy.yaml, when home is set)
// and project.
//
// The project file is <dir>/.hookwatch/policy.yaml for the nearest dir from
// cwd upwards; when cwd is inside projectDir (CLAUDE_PROJECT_DIR) the search
// stops there, so a parent of the project never contributes rules. When
// nothing is found it is projectDir's (or cwd's) path, reported as not found.
// The user and managed files are never taken as a project file.
func Locate(managed, home, cwd, projectDir string) []Source {
	srcs, _ := locate(managed, home, cwd, projectDir)
	return srcs
}

// InForce is Locate that also reports whether any of the files exists —
// whether a policy may apply at all — with one stat per candidate: the
// question every hook event asks.
func InForce(managed, home, cwd, projectDir string) (srcs []Source, any bool) {
	srcs, projectFound := locate(managed, home, cwd, projectDir)
	if projectFound {
		return srcs, true
	}
	for _, s := range srcs {
		if s.Scope != ScopeProject && exists(s.Path) {
			return srcs, true
		}
	}
	return srcs, false
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// locate is Locate, also reporting whether the project file it returns was
// found to exist.
func locate(managed, home, cwd, projectDir string) (srcs []Source, projectFound bool) {
	srcs = []Source{{Path: managed, Scope: ScopeManaged}}
	userPath := ""
	if home != "" {
		userPath = filepath.Join(home, "policy.yaml")
		srcs = append(srcs, Source{Path: userPath, Scope: ScopeUser})
	}
	if p, found := findProject(managed, cwd, projectDir, userPath); p != "" {
		srcs = append(srcs, Source{Path: p, Scope: ScopeProject})
		projectFound = found
	}
	return srcs, projectFound
}

// findProject returns the project file's path and whether it exists. When
// the search from cwd stops at projectDir, the fallback path is the one
// just found missing, so it is not looked at again.
func findProject(managed, cwd, projectDir, userPath string) (path string, found bool) {
	skip := func(p string) bool { return !ProjectFile(managed, userPath, p) }
	candidate := func(dir string) string { return filepath.Join(dir, ".hookwatch", "policy.yaml") }
	base := projectDir
	if base == "" {
		base = cwd
	}
	base = filepath.Clean(base)
	searchedBase := false // its candidate was found missing (or a directory)
	if cwd != "" && filepath.IsAbs(cwd) {
		dir := filepath.Clean(cwd)
		stop := ""
		if projectDir != "" && Under(dir, projectDir) {
			stop = filepath.Clean(projectDir)
		}
		for i := 0; i < 256; i++ {
			if p := candidate(dir); !skip(p) {
				if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
					return p, true
				}
				searchedBase = searchedBase || dir == base
			}
			parent := filepath.Dir(dir)
			if dir == stop || parent == dir {
				break
			}
			dir = parent
		}
	}
	if base == "." || !filepath.IsAbs(base) {
		return "", false
	}
	if p := candidate(base); !skip(p) {
		return p, !searchedBase && exists(p)
	}
	return "", false
}

// ProjectFile reports whether path, absolute and clean, names a project
// policy file: <dir>/.hookwatch/policy.yaml, and neither the managed file
// nor userPath, the user's ($HOOKWATCH_HOME/policy.yaml, which is
// ~/.hookwatch/policy.yaml by default and so has a project file's shape).
// It is the one rule of which scope a file found or named has.
func ProjectFile(managed, userPath, path string) bool {
	return filepath.IsAbs(path) && filepath.Clean(path) == path &&
		filepath.Base(path) == "policy.yaml" && filepath.Base(filepath.Dir(path)) == ".hookwatch" &&
		path != filepath.Clean(managed) && (userPath == "" || path != filepath.Clean(userPath))
}

// Under reports whether path p is dir or inside it, lexically (so
// "/proj/../etc/passwd" is not under "/proj"). A relative p is never under
// an absolute dir: join it with cwd first.
func Under(p, dir string) bool {
	if p == "" || dir == "" {
		return false
	}
	p, dir = filepath.Clean(p), filepath.Clean(dir)
	if filepath.IsAbs(p) != filepath.IsAbs(dir) {
		return false
	}
	if p == dir || dir == string(filepath.Separator) {
		return true
	}
	return strings.HasPrefix(p, dir+string(filepath.Separator))
}

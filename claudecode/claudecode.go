// Package claudecode knows Claude Code's side of the integration: where its
// settings files are (one per scope), which of their hook handlers and which
// statusLine are hookwatch's, how a command written into them is quoted,
// the names of hookwatch's binaries those handlers run, and where the client
// keeps its transcripts and the sidecar files of its subagents.
//
// install writes settings files and doctor reads them through this package,
// so that both tell hookwatch's entries apart by the same rule; the hook and
// the session model find files and name projects through it.
//
// The hook links this package, so it holds no package-level state built at
// init (no regexps, no tables) and imports only what the hook links anyway.
package claudecode

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"unicode/utf8"
)

// Names of hookwatch's binaries. The lean hook binary exists because the hook
// starts once per agent event, and a binary without the server's
// dependencies starts faster.
const (
	BinaryName     = "hookwatch"
	HookBinaryName = "hookwatch-hook"
)

// Scopes name Claude Code's settings files, weakest first. Hooks are merged
// across all of them; hookwatch's install writes the first three.
const (
	ScopeUser    = "user"    // ~/.claude/settings.json, or $CLAUDE_CONFIG_DIR/settings.json
	ScopeProject = "project" // <project>/.claude/settings.json, committed with the project
	ScopeLocal   = "local"   // <project>/.claude/settings.local.json, personal and git-ignored
	ScopeManaged = "managed" // the organisation's managed-settings.json, set by an administrator
)

// UserConfigDir returns Claude Code's configuration directory:
// $CLAUDE_CONFIG_DIR when set, else <home>/.claude. An empty home is
// $HOME, else the user's home directory as os.UserHomeDir finds it.
func UserConfigDir(getenv func(string) string, home string) (string, error) {
	if d := getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return d, nil
	}
	if home == "" {
		home = getenv("HOME")
	}
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("cannot find the home directory: %w", err)
		}
		home = h
	}
	return filepath.Join(home, ".claude"), nil
}

// ProjectsDir returns the directory Claude Code keeps its transcripts in,
// one directory per project: <UserConfigDir>/projects.
func ProjectsDir(getenv func(string) string) (string, error) {
	dir, err := UserConfigDir(getenv, "")
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "projects"), nil
}

// ManagedSettingsPath returns where Claude Code reads the organisation's
// managed settings file on this operating system. The client also reads
// managed settings from a drop-in directory beside it, MDM profiles, the
// Windows registry and the claude.ai console, which hookwatch does not.
func ManagedSettingsPath() string {
	switch runtime.GOOS {
	case "darwin":
		return "/Library/Application Support/ClaudeCode/managed-settings.json"
	case "windows":
		return `C:\Program Files\ClaudeCode\managed-settings.json`
	}
	return "/etc/claude-code/managed-settings.json"
}

// SettingsPath returns the settings file of scope: configDir is the user's
// configuration directory (UserConfigDir), projectDir the project's root.
func SettingsPath(scope, configDir, projectDir string) (string, error) {
	switch scope {
	case ScopeUser:
		return filepath.Join(configDir, "settings.json"), nil
	case ScopeProject:
		return filepath.Join(projectDir, ".claude", "settings.json"), nil
	case ScopeLocal:
		return filepath.Join(projectDir, ".claude", "settings.local.json"), nil
	case ScopeManaged:
		return ManagedSettingsPath(), nil
	}
	return "", fmt.Errorf("unknown scope %q: want %s, %s or %s", scope, ScopeUser, ScopeProject, ScopeLocal)
}

// maxSlug is the length beyond which Claude Code cuts a project slug and
// appends a hash of the path.
const maxSlug = 200

// Slug returns the name Claude Code gives the project directory of cwd under
// ~/.claude/projects/: every character outside [A-Za-z0-9] becomes "-"
// (one per UTF-16 code unit, as the client's JavaScript replace does, so a
// character outside the BMP becomes "--"). Beyond 200 characters the client
// appends "-" and a Bun.hash of the path that cannot be reproduced here;
// Slug then returns the 200-character prefix, which is how long paths are
// matched.
func Slug(cwd string) string {
	var b strings.Builder
	b.Grow(min(len(cwd), maxSlug+1))
	for _, r := range cwd {
		switch {
		case r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'):
			b.WriteRune(r)
		case r > 0xFFFF:
			b.WriteString("--")
		default:
			b.WriteByte('-')
		}
		if b.Len() >= maxSlug {
			break
		}
	}
	s := b.String()
	if len(s) > maxSlug {
		s = s[:maxSlug]
	}
	return s
}

// TranscriptPath returns where Claude Code keeps the transcript of session
// id started in cwd: <configDir>/projects/<Slug(cwd)>/<id>.jsonl. Resuming
// from another cwd looks in another directory, which is the usual reason a
// resume silently starts afresh. For a cwd longer than the slug limit the
// client's directory name carries a hash this path lacks.
func TranscriptPath(configDir, cwd, id string) string {
	return filepath.Join(configDir, "projects", Slug(cwd), id+".jsonl")
}

// Project returns the project a payload's transcript_path and cwd belong
// to: the directory name of a transcript path …/projects/<project>/<file>,
// else Slug(cwd), else "". The path wins because it is exact (the client
// resolves symlinks and may override the name). Sessions of one project on
// one host are the ones that can resume or fork each other.
func Project(transcriptPath, cwd string) string {
	if transcriptPath != "" {
		dir, _ := splitPath(transcriptPath)
		parent, project := splitPath(dir)
		if _, p := splitPath(parent); p == "projects" && project != "" {
			return project
		}
	}
	if cwd == "" {
		return ""
	}
	return Slug(cwd)
}

// ProjectName is a project's name for people: the last element of cwd
// when the project is cwd's own directory under projects/ (Project of
// cwd: its Slug, or that slug cut with the client's hash appended, for a
// long path), else the project as given.
func ProjectName(project, cwd string) string {
	_, base := splitPath(strings.TrimRight(cwd, `/\`))
	if project == "" || project == cwd {
		return cmp.Or(base, project)
	}
	if cwd != "" {
		s := Slug(cwd)
		if project == s || len(s) >= maxSlug && strings.HasPrefix(project, s) {
			return cmp.Or(base, project)
		}
	}
	return project
}

// splitPath returns the directory and the last element of a slash or
// backslash separated path: transcripts of another machine's OS arrive too.
func splitPath(p string) (dir, base string) {
	i := strings.LastIndexAny(p, `/\`)
	if i < 0 {
		return "", p
	}
	return p[:i], p[i+1:]
}

// SubagentTranscriptPath returns where Claude Code keeps the transcript of
// the subagent agentID of the session whose transcript is transcriptPath:
// <dir>/<sessionID>/subagents/agent-<agentID>.jsonl, written with the path's
// own separators (its events may come from another operating system). It
// returns "" when transcriptPath is not the client's layout,
// …/projects/<project>/<sessionID>.jsonl, and for ids SubagentMetaPath
// refuses.
func SubagentTranscriptPath(transcriptPath, sessionID, agentID string) string {
	if _, base := splitPath(transcriptPath); base != sessionID+".jsonl" || Project(transcriptPath, "") == "" || !safeName(sessionID) || !safeName(agentID) {
		return ""
	}
	return subagentFile(transcriptPath, sessionID, agentID, ".jsonl")
}

// SubagentMetaPath returns the sidecar file Claude Code writes next to a
// subagent's transcript, <dir>/<sessionID>/subagents/agent-<agentID>.meta.json,
// which names the Agent tool call that spawned the subagent. The hook reads
// it on the machine the client runs on, so transcriptPath is a path of this
// machine. ok is false for a transcriptPath without a directory and for ids
// that could walk out of the transcript's directory: the payload they come
// from is hostile input.
func SubagentMetaPath(transcriptPath, sessionID, agentID string) (path string, ok bool) {
	dir := filepath.Dir(transcriptPath)
	if dir == "." || !safeName(sessionID) || !safeName(agentID) {
		return "", false
	}
	return filepath.Join(dir, sessionID, "subagents", "agent-"+agentID+".meta.json"), true
}

// subagentFile is <dir(transcriptPath)>/<sessionID>/subagents/agent-<agentID><ext>,
// in transcriptPath's separators.
func subagentFile(transcriptPath, sessionID, agentID, ext string) string {
	dir, _ := splitPath(transcriptPath)
	sep := "/"
	if strings.Contains(transcriptPath, `\`) && !strings.Contains(transcriptPath, "/") {
		sep = `\`
	}
	return strings.Join([]string{dir, sessionID, "subagents", "agent-" + agentID + ext}, sep)
}

// safeName reports whether s is a non-empty file name that stays in its
// directory.
func safeName(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, "/\\\x00")
}

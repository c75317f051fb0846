package claudecode

import (
	"cmp"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hookwatch/hookwatch/internal/regfile"
)

// SessionFile is what a project directory's transcripts say of one
// session: hookwatch sessions lists them.
type SessionFile struct {
	ID, Path string
	// Project is the directory's name (the slug of the session's cwd).
	Project string
	// CWD is the first working directory the transcript records.
	CWD string
	// FirstPrompt is the user's first prompt, its first maxKept bytes: a
	// listing makes its title with the session model's rule
	// (attribution.Title).
	FirstPrompt string
	// LastActivity is when the transcript was last written.
	LastActivity time.Time
	// ForkedFrom is the session a fork was copied from ("" for none);
	// Compactions counts the compactions the transcript records, and
	// Prompts the user's prompts.
	ForkedFrom  string
	Compactions int
	Prompts     int
	// Subagents counts the subagents' transcripts beside it.
	Subagents int
	// LastAnswer is the main agent's latest answer, its first maxKept
	// bytes.
	LastAnswer string
}

// ProjectDir is one directory of the client's projects directory
// (ProjectsDir): its name, the slug of its sessions' cwd, and its sessions
// as ProjectSessions reads them.
type ProjectDir struct {
	Name     string
	Sessions []SessionFile
}

// Projects reads the projects under projectsDir (ProjectsDir) that hold a
// session, in the order of their names; a directory it cannot read holds
// none.
func Projects(projectsDir string) []ProjectDir {
	dirs, _ := os.ReadDir(projectsDir)
	var out []ProjectDir
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		ss, err := ProjectSessions(filepath.Join(projectsDir, d.Name()))
		if err != nil || len(ss) == 0 {
			continue
		}
		out = append(out, ProjectDir{Name: d.Name(), Sessions: ss})
	}
	return out
}

// ProjectSessions reads the sessions of one project directory,
// <configDir>/projects/<project>, newest first. A missing directory has
// none.
func ProjectSessions(dir string) ([]SessionFile, error) {
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []SessionFile
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if !ok || !safeName(id) || !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		s := SessionFile{ID: id, Path: filepath.Join(dir, e.Name()), Project: filepath.Base(dir), LastActivity: info.ModTime()}
		readSession(&s)
		if subs, err := os.ReadDir(filepath.Join(dir, id, "subagents")); err == nil {
			for _, f := range subs {
				if strings.HasPrefix(f.Name(), "agent-") && strings.HasSuffix(f.Name(), ".jsonl") {
					s.Subagents++
				}
			}
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b SessionFile) int {
		if c := b.LastActivity.Compare(a.LastActivity); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return out, nil
}

// readSession fills in what the transcript itself says.
func readSession(s *SessionFile) {
	f, _, err := regfile.Open(s.Path)
	if err != nil {
		return
	}
	defer f.Close()
	s.ForkedFrom = ForkParent(s.Path, s.ID)
	ReadTranscript(f, func(r *TranscriptRecord) error {
		if s.CWD == "" {
			s.CWD = r.CWD
		}
		if r.Type == "system" && r.Subtype == "compact_boundary" {
			s.Compactions++
		}
		if text, ok := r.Prompt(); ok && !strings.HasPrefix(text, "<") {
			s.Prompts++
			if s.FirstPrompt == "" {
				s.FirstPrompt = cut(text, maxKept)
			}
		}
		if r.Type == "assistant" {
			for _, b := range r.Blocks() {
				if b.Type == "text" && b.Text != "" {
					s.LastAnswer = cut(b.Text, maxKept)
				}
			}
		}
		return nil
	})
}

// maxKept bounds the text a SessionFile keeps of a prompt or an answer,
// which may hold whole pasted files: far more than a title shows.
const maxKept = 4096

// cut shortens s to about n bytes on a rune boundary, marking the cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

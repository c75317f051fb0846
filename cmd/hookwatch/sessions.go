package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/claudecode"
)

func init() {
	register(command{
		name:    "sessions",
		summary: "list this directory's Claude Code sessions and how to resume or fork one",
		run:     runSessions,
	})
}

const sessionsSynopsis = `sessions [--cwd DIR] [--all]
       hookwatch sessions diff [--json] [--unrelated] A B

Lists the Claude Code sessions of a directory (default: the current one),
newest first, from the client's transcripts: Claude Code keeps them under
$CLAUDE_CONFIG_DIR/projects (else ~/.claude/projects) in a directory named
after the directory's real path (symlinks followed) with every character
other than A-Z, a-z and 0-9 replaced by "-", and resumes only sessions of
the directory it runs in.
Each session shows its title, last activity, lineage (forked from,
compactions), subagents and last answer, and the commands that continue
it. When the directory has none but a neighbouring one does (the same
directory recorded by another path, a parent or a child directory), it
says where to cd. Where the collector
($HOOKWATCH_URL) knows a session, it adds its decomposition shape and
outcome. "sessions diff A B" compares two sessions (see sessions diff -h).

Flags:`

// runSessions is `hookwatch sessions`.
func runSessions(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "diff" {
		return runSessionsDiff(ctx, args[1:], stdout, stderr)
	}
	fs := newFlagSet("sessions", sessionsSynopsis, stdout, stderr)
	cwdFlag := fs.String("cwd", "", "the directory whose sessions to list (default: the current one)")
	all := fs.Bool("all", false, "list the sessions of every project")
	if err := parseFlagsNoArgs(fs, args); err != nil {
		return err
	}
	projects, err := claudecode.ProjectsDir(os.Getenv)
	if err != nil {
		return err
	}
	known := collectorModels(ctx)
	if *all {
		ps := claudecode.Projects(projects)
		if len(ps) == 0 {
			fmt.Fprintf(stdout, "No Claude Code session found in %s.\n", projects)
		}
		for _, p := range ps {
			fmt.Fprintf(stdout, "%s (%s)\n", cmpOr(p.Sessions[0].CWD, p.Name), p.Name)
			printSessions(stdout, p.Sessions, known)
		}
		return nil
	}
	cwd := *cwdFlag
	if cwd == "" {
		if cwd, err = os.Getwd(); err != nil {
			return err
		}
	}
	if cwd, err = filepath.Abs(cwd); err != nil {
		return err
	}
	// Claude Code names a project by the directory's real path (getcwd, as
	// the shell's $PWD may be a symlink's): so does the listing. A
	// directory gone since keeps its sessions, under the path given.
	real, rerr := filepath.EvalSymlinks(cwd)
	if rerr == nil {
		cwd = real
	}
	slug := claudecode.Slug(cwd)
	ss, err := claudecode.ProjectSessions(filepath.Join(projects, slug))
	if err != nil {
		return fmt.Errorf("cannot read the sessions of %s: %w", cwd, err)
	}
	if len(ss) > 0 {
		fmt.Fprintf(stdout, "%s (%s)\n", cwd, slug)
		printSessions(stdout, ss, known)
		return nil
	}
	fmt.Fprintf(stdout, "No Claude Code session was started in %s (looked in %s).\n", cwd, filepath.Join(projects, slug))
	if errors.Is(rerr, os.ErrNotExist) {
		fmt.Fprintf(stdout, "%s does not exist.\n", cwd)
	}
	if near := neighbours(projects, cwd); len(near) > 0 {
		fmt.Fprintf(stdout, "Resuming here starts a fresh session: the client looks only at this directory's sessions. Sessions exist for:\n")
		for _, n := range near {
			fmt.Fprintf(stdout, "  %s (%s, %s, last %s): cd %s\n", n.cwd, n.why, counted(n.count, "session"), n.last.Local().Format(time.DateTime), claudecode.ShellQuote(n.cwd))
		}
	}
	return nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// printSessions prints sessions with the commands that continue them, and
// what known (collectorModels) says of them.
func printSessions(w io.Writer, ss []claudecode.SessionFile, known func(id string) *sessionFacts) {
	for _, s := range ss {
		// What the collector's model says wins over what the transcript
		// alone tells: its title and counts are those of the dashboard.
		m := known(s.ID)
		title, prompts, subagents := s.Title, s.Prompts, s.Subagents
		if m != nil {
			title, prompts = cmpOr(m.Title, title), m.Counts.Prompts
			if m.Shape != nil {
				subagents = m.Shape.Subagents
			}
		}
		fmt.Fprintf(w, "  %s  %s  %s\n", s.ID, s.LastActivity.Local().Format(time.DateTime), cmpOr(title, "(no prompt)"))
		var facts []string
		if s.ForkedFrom != "" {
			facts = append(facts, "forked from "+s.ForkedFrom)
		}
		if s.Compactions > 0 {
			facts = append(facts, fmt.Sprintf("compacted %d×", s.Compactions))
		}
		facts = append(facts, counted(prompts, "prompt"), counted(subagents, "subagent"))
		if m != nil {
			if m.Shape != nil {
				facts = append(facts, m.Shape.String())
			}
			facts = append(facts, m.Status)
		}
		fmt.Fprintf(w, "      %s\n", strings.Join(facts, ", "))
		if s.LastMessage != "" {
			fmt.Fprintf(w, "      last answer: %s\n", s.LastMessage)
		}
		fmt.Fprintf(w, "      continue: claude --resume %s    fork: claude --resume %s --fork-session\n", s.ID, s.ID)
	}
}

// neighbour is a project directory whose sessions ran in a directory
// near the one asked about.
type neighbour struct {
	cwd, why string
	count    int
	last     time.Time
}

// neighbours finds the projects whose sessions' cwd is the asked one by
// another name (a symlink, a trailing slash), a parent or a child of it:
// the usual reason a resume finds nothing.
func neighbours(projects, cwd string) []neighbour {
	real, _ := filepath.EvalSymlinks(cwd)
	var out []neighbour
	for _, p := range claudecode.Projects(projects) {
		ss := p.Sessions
		if ss[0].CWD == "" {
			continue
		}
		other := filepath.Clean(ss[0].CWD)
		otherReal, _ := filepath.EvalSymlinks(other)
		why := ""
		switch {
		case other == cwd:
			why = "the same directory under another project name"
		case real != "" && (otherReal == real || other == real):
			why = "the same directory by another path (a symlink)"
		case strings.HasPrefix(cwd, other+string(filepath.Separator)):
			why = "a parent directory"
		case strings.HasPrefix(other, cwd+string(filepath.Separator)):
			why = "a child directory"
		default:
			continue
		}
		out = append(out, neighbour{cwd: other, why: why, count: len(ss), last: ss[0].LastActivity})
	}
	slices.SortFunc(out, func(a, b neighbour) int { return b.last.Compare(a.last) })
	return out
}

// sessionFacts is what the listing shows of a session the collector knows.
type sessionFacts struct {
	Title  string             `json:"title"`
	Status string             `json:"status"`
	Counts attribution.Counts `json:"counts"`
	Shape  *attribution.Shape `json:"shape"`
}

// collectorModels returns a lookup of sessions in the collector at
// $HOOKWATCH_URL (GET /v1/sessions/{id}, with $HOOKWATCH_TOKEN): nil for a
// session it does not know. A collector that does not answer within a
// second is asked nothing more, so the listing never waits on one that is
// down.
func collectorModels(ctx context.Context) func(id string) *sessionFacts {
	base, token := collectorURL()
	down := false
	return func(id string) *sessionFacts {
		if down {
			return nil
		}
		ctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		body, err := apiGet(ctx, base, token, base+"/v1/sessions/"+url.PathEscape(id))
		var f sessionFacts
		switch {
		case errors.Is(err, errUnreachable):
			down = true
			return nil
		case err != nil, json.Unmarshal(body, &f) != nil:
			return nil
		}
		return &f
	}
}

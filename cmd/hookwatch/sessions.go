package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
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
		summary: "list this directory's Claude Code (or, with --codex, Codex) sessions and how to resume or fork one",
		run:     runSessions,
	})
}

const sessionsSynopsis = `sessions [--codex] [--project DIR | --all]
       hookwatch sessions diff [--json] [--unrelated] A B

Lists the Claude Code sessions of a directory (--project DIR, or --cwd DIR,
its other name; default: the current one), newest first, from the client's
transcripts: Claude Code keeps them under $CLAUDE_CONFIG_DIR/projects
(else ~/.claude/projects) in a directory named after the directory's real
path (symlinks followed) with every character other than A-Z, a-z and 0-9
replaced by "-", and resumes only sessions of the directory it runs in.
Each session shows its title, last activity, lineage (forked from,
compactions), subagents and last answer, and the commands that continue
it. When the directory has none but a neighbouring one does (the same
directory recorded by another path, a parent or a child directory), it
says where to cd. Where the collector the hooks send to ($HOOKWATCH_URL,
else the URL 'hookwatch install --url' kept) knows a session, it adds its
decomposition shape and outcome, and the calls denied (by a policy) and
failed. When the directory has Codex sessions too, it says how many and
that --codex lists them.

With --codex it lists the directory's Codex sessions instead, newest first,
from Codex's rollout files ($CODEX_HOME/sessions, else ~/.codex/sessions:
each session's own rollout, and its subagents' beside it): the first prompt
as title, last activity, model, subagents and last answer, and the commands
that continue it (codex resume ID) or fork it (codex fork ID). A session
belongs to the directory its rollout records (symlinks followed); when the
directory has none, parent and child directories that do are named, as for
Claude Code. What the collector knows of a session is added the same way.

"sessions diff A B" compares two sessions (see sessions diff -h).

Exit status: 0 a listing, of no session too (Claude Code or Codex never
having run here: it says where it looked); 1 files that cannot be read;
2 a usage error.

Flags:`

// sessionsFlags are the values of the flags of sessions (not of sessions
// diff: sessionsDiffFlagSet).
type sessionsFlags struct {
	codex, all *bool
	project    *string
}

// sessionsFlagSet defines the flags of sessions: the one definition
// runSessions parses and the docs' command lines are checked against.
func sessionsFlagSet(stdout, stderr io.Writer) (*flag.FlagSet, sessionsFlags) {
	fs := newFlagSet("sessions", sessionsSynopsis, stdout, stderr)
	var f sessionsFlags
	f.codex = fs.Bool("codex", false, "list Codex's sessions (its rollouts under $CODEX_HOME/sessions) instead of Claude Code's")
	// --project as install and doctor name a directory; --cwd, its first
	// name, stays.
	f.project = fs.String("project", "", "the directory whose sessions to list (default: the current one)")
	fs.StringVar(f.project, "cwd", "", "the same as --project")
	f.all = fs.Bool("all", false, "list the sessions of every project")
	return fs, f
}

// runSessions is `hookwatch sessions`.
func runSessions(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "diff" {
		return runSessionsDiff(ctx, args[1:], stdout, stderr)
	}
	fs, f := sessionsFlagSet(stdout, stderr)
	isCodex, cwdFlag, all := f.codex, f.project, f.all
	if err := parseFlagsNoArgs(fs, args); err != nil {
		return err
	}
	if *all && *cwdFlag != "" {
		return fmt.Errorf("%w: --project and --all go one at a time: one directory's sessions, or every project's", errUsage)
	}
	known := collectorModels(ctx, stderr)
	var cwd string
	var gone bool
	if !*all {
		var err error
		if cwd, gone, err = sessionsDir(*cwdFlag); err != nil {
			return err
		}
	}
	if *isCodex {
		return listCodexSessions(cwd, gone, *all, known, stdout, stderr)
	}
	projects, err := claudecode.ProjectsDir(os.Getenv)
	if err != nil {
		return err
	}
	// The command that lists the Codex sessions of the same place.
	codexCmd := "hookwatch sessions --codex"
	switch {
	case *all:
		codexCmd += " --all"
	case *cwdFlag != "":
		codexCmd += " --project " + claudecode.ShellQuote(cwd)
	}
	if *all {
		ps := claudecode.Projects(projects)
		if len(ps) == 0 {
			fmt.Fprintf(stdout, "No Claude Code session found in %s.\n", projects)
		}
		for _, p := range ps {
			fmt.Fprintf(stdout, "%s (%s)\n", cmp.Or(p.Sessions[0].CWD, p.Name), p.Name)
			printSessions(stdout, p.Sessions, known)
		}
		codexHint(stdout, "", codexCmd)
		return nil
	}
	slug := claudecode.Slug(cwd)
	ss, err := claudecode.ProjectSessions(filepath.Join(projects, slug))
	if err != nil {
		return fmt.Errorf("cannot read the sessions of %s: %w", cwd, err)
	}
	if len(ss) > 0 {
		fmt.Fprintf(stdout, "%s (%s)\n", cwd, slug)
		printSessions(stdout, ss, known)
		codexHint(stdout, cwd, codexCmd)
		return nil
	}
	fmt.Fprintf(stdout, "No Claude Code session was started in %s (looked in %s).\n", cwd, filepath.Join(projects, slug))
	if gone {
		fmt.Fprintf(stdout, "%s does not exist.\n", cwd)
	}
	var places []place
	for _, p := range claudecode.Projects(projects) {
		if ss := p.Sessions; ss[0].CWD != "" {
			places = append(places, place{cwd: filepath.Clean(ss[0].CWD), count: len(ss), last: ss[0].LastActivity})
		}
	}
	printNeighbours(stdout, "Resuming here starts a fresh session: the client looks only at this directory's sessions.", neighbours(cwd, places))
	codexHint(stdout, cwd, codexCmd)
	return nil
}

// sessionsDir returns the directory whose sessions to list: dir, default
// the current one, absolute, by its real path; gone says it does not exist.
func sessionsDir(dir string) (cwd string, gone bool, err error) {
	if cwd = dir; cwd == "" {
		if cwd, err = os.Getwd(); err != nil {
			return "", false, err
		}
	}
	if cwd, err = filepath.Abs(cwd); err != nil {
		return "", false, err
	}
	// Claude Code names a project by the directory's real path (getcwd, as
	// the shell's $PWD may be a symlink's), and Codex records that path as
	// a session's cwd: so does the listing. A directory gone since keeps
	// its sessions, under the path given.
	real, err := filepath.EvalSymlinks(cwd)
	if err == nil {
		cwd = real
		if info, err := os.Stat(cwd); err == nil && !info.IsDir() {
			return "", false, fmt.Errorf("%s is not a directory: --project takes the directory the sessions ran in", dir)
		}
	}
	return cwd, errors.Is(err, os.ErrNotExist), nil
}

// printSessions prints Claude Code's sessions with the commands that
// continue them, and what known (collectorModels) says of them.
func printSessions(w io.Writer, ss []claudecode.SessionFile, known func(id string) *sessionFacts) {
	for _, s := range ss {
		l := listedSession{id: s.ID, last: s.LastActivity, title: attribution.Title(s.FirstPrompt), prompts: s.Prompts, subagents: s.Subagents, answer: attribution.Title(s.LastAnswer),
			commands: fmt.Sprintf("continue: claude --resume %s    fork: claude --resume %s --fork-session", s.ID, s.ID)}
		if s.ForkedFrom != "" {
			l.facts = append(l.facts, "forked from "+s.ForkedFrom)
		}
		if s.Compactions > 0 {
			l.facts = append(l.facts, fmt.Sprintf("compacted %d×", s.Compactions))
		}
		printListed(w, l, known(s.ID))
	}
}

// listedSession is one session as a listing shows it, whichever client's files
// told it.
type listedSession struct {
	id    string
	last  time.Time
	title string
	// facts are what the client's files say before the counts (lineage,
	// model).
	facts              []string
	prompts, subagents int
	answer             string
	// commands is the line of commands that continue the session.
	commands string
}

// printListed prints a session and what the collector's model says of it
// (m, nil when it does not know it).
func printListed(w io.Writer, l listedSession, m *sessionFacts) {
	// What the collector's model says wins over what the client's files
	// alone tell: its title and counts are those of the dashboard.
	title, prompts, subagents := l.title, l.prompts, l.subagents
	if m != nil {
		title, prompts = cmp.Or(m.Title, title), m.Counts.Prompts
		if m.Shape != nil {
			subagents = m.Shape.Subagents
		}
	}
	fmt.Fprintf(w, "  %s  %s  %s\n", l.id, l.last.Local().Format(time.DateTime), cmp.Or(title, "(no prompt)"))
	facts := append(slices.Clip(l.facts), counted(prompts, "prompt"), counted(subagents, "subagent"))
	if m != nil {
		if m.Shape != nil {
			facts = append(facts, m.Shape.String())
		}
		facts = append(facts, m.Status)
		// What went wrong is the first thing looked for in a session: a
		// policy's denial, or a tool that failed, shows in the listing,
		// not only in the dashboard.
		if n := m.Counts.Denials; n > 0 {
			facts = append(facts, counted(n, "call")+" denied")
		}
		if n := m.Counts.Failures; n > 0 {
			facts = append(facts, counted(n, "call")+" failed")
		}
	}
	fmt.Fprintf(w, "      %s\n", strings.Join(facts, ", "))
	if l.answer != "" {
		fmt.Fprintf(w, "      last answer: %s\n", l.answer)
	}
	fmt.Fprintf(w, "      %s\n", l.commands)
}

// place is a directory sessions ran in: how many, and the latest
// activity of any.
type place struct {
	cwd   string
	count int
	last  time.Time
}

// neighbour is a place near the directory asked about, and why.
type neighbour struct {
	place
	why string
}

// How the directory of other sessions relates to the one asked about
// (relation).
const (
	sameProjectName = "the same directory under another project name"
	sameBySymlink   = "the same directory by another path (a symlink)"
	parentDir       = "a parent directory"
	childDir        = "a child directory"
)

// relation says how other, a directory sessions ran in, relates to cwd
// (real: its real path, "" when it has none): the same directory (by
// name or through a symlink), a parent or a child; "" when unrelated.
func relation(cwd, real, other string) string {
	other = filepath.Clean(other)
	otherReal, _ := filepath.EvalSymlinks(other)
	switch {
	case other == cwd:
		return sameProjectName
	case real != "" && (otherReal == real || other == real):
		return sameBySymlink
	case strings.HasPrefix(cwd, other+string(filepath.Separator)):
		return parentDir
	case strings.HasPrefix(other, cwd+string(filepath.Separator)):
		return childDir
	}
	return ""
}

// neighbours returns the places whose directory is the asked one by
// another name (a symlink, a trailing slash), a parent or a child of it,
// newest first: the usual reason a resume finds nothing.
func neighbours(cwd string, places []place) []neighbour {
	real, _ := filepath.EvalSymlinks(cwd)
	var out []neighbour
	for _, p := range places {
		if why := relation(cwd, real, p.cwd); why != "" {
			out = append(out, neighbour{place: p, why: why})
		}
	}
	slices.SortFunc(out, func(a, b neighbour) int { return b.last.Compare(a.last) })
	return out
}

// printNeighbours prints the neighbours, if any, after lead, with the cd
// to each.
func printNeighbours(w io.Writer, lead string, near []neighbour) {
	if len(near) == 0 {
		return
	}
	fmt.Fprintf(w, "%s Sessions exist for:\n", lead)
	for _, n := range near {
		fmt.Fprintf(w, "  %s (%s, %s, last %s): cd %s\n", n.cwd, n.why, counted(n.count, "session"), n.last.Local().Format(time.DateTime), claudecode.ShellQuote(n.cwd))
	}
}

// sessionFacts is what the listing shows of a session the collector knows.
type sessionFacts struct {
	Title  string             `json:"title"`
	Status string             `json:"status"`
	Counts attribution.Counts `json:"counts"`
	Shape  *attribution.Shape `json:"shape"`
}

// collectorModels returns a lookup of sessions in the collector the hooks
// send to (collectorURL: GET /v1/sessions/{id}, with the hooks' token):
// nil for a session it does not know. A collector that does not answer
// within a second is asked nothing more, so the listing never waits on one
// that is down; nor is one at a URL that is no collector URL, which stderr
// is told.
func collectorModels(ctx context.Context, stderr io.Writer) func(id string) *sessionFacts {
	base, token, err := collectorURL()
	down := err != nil
	if down {
		// The listing is the client's files': it goes on without.
		fmt.Fprintf(stderr, "hookwatch sessions: %v: listing without what the collector knows\n", err)
	}
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

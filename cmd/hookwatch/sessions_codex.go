package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/claudecode"
	"github.com/hookwatch/hookwatch/codex"
	"github.com/hookwatch/hookwatch/codex/rollout"
	"github.com/hookwatch/hookwatch/internal/patherr"
)

// codexSession is one Codex session as its rollouts tell it: its own
// rollout's summary, how many subagent threads it spawned (their rollouts
// name its session), and the latest activity of any of them.
type codexSession struct {
	rollout.Summary
	subagents int
}

// sameDir reports whether a relation is the asked directory itself, by
// its name or another path to it.
func sameDir(why string) bool { return why == sameProjectName || why == sameBySymlink }

// readCodexSessions reads the sessions of the rollout files whose cwd
// keep accepts — of the others only the session_meta record is read —,
// newest first. A file that is not a rollout is skipped, and said so on
// stderr; a subagent's rollout whose session's own is not among files
// counts nowhere.
func readCodexSessions(files []string, keep func(cwd string) bool, stderr io.Writer) []codexSession {
	roots := map[string]*codexSession{}
	var subs []rollout.Summary
	for _, f := range files {
		s, ok, err := rollout.Summarize(f, func(s rollout.Summary) bool { return keep(s.CWD) })
		switch {
		case err != nil:
			fmt.Fprintf(stderr, "hookwatch sessions: skipping %s: %v\n", f, patherr.Strip(err, f))
		case !ok:
		case s.Thread != s.Session:
			subs = append(subs, s)
		case roots[s.Thread] == nil || roots[s.Thread].LastActivity.Before(s.LastActivity):
			roots[s.Thread] = &codexSession{Summary: s}
		}
	}
	for _, s := range subs {
		if r := roots[s.Session]; r != nil {
			r.subagents++
			if s.LastActivity.After(r.LastActivity) {
				r.LastActivity = s.LastActivity
			}
		}
	}
	out := make([]codexSession, 0, len(roots))
	for _, r := range roots {
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b codexSession) int {
		return cmp.Or(b.LastActivity.Compare(a.LastActivity), cmp.Compare(a.Thread, b.Thread))
	})
	return out
}

// listCodexSessions is `hookwatch sessions --codex`: the Codex sessions
// of cwd (gone: it does not exist), or of every directory. No sessions —
// and no $CODEX_HOME/sessions at all, Codex never having run — is a
// listing of none, as for Claude Code's, saying where it looked; a
// directory that cannot be read is an error.
func listCodexSessions(cwd string, gone, all bool, known func(id string) *sessionFacts, stdout, stderr io.Writer) error {
	dir, err := codex.SessionsDir(os.Getenv)
	if err != nil {
		return err
	}
	files, err := codexRollouts(nil)
	looked := dir
	if errors.Is(err, errNoCodexSessions) {
		looked = fmt.Sprintf("%s, which does not exist: Codex has not run as this user, or keeps its files elsewhere: set %s", dir, codex.HomeEnv)
	} else if err != nil {
		return err
	}
	if all {
		ss := readCodexSessions(files, func(string) bool { return true }, stderr)
		if len(ss) == 0 {
			fmt.Fprintf(stdout, "No Codex session found (looked in %s).\n", looked)
		}
		// One heading per directory, the most recently active first.
		var order []string
		byDir := map[string][]codexSession{}
		for _, s := range ss {
			d := filepath.Clean(s.CWD)
			if byDir[d] == nil {
				order = append(order, d)
			}
			byDir[d] = append(byDir[d], s)
		}
		for _, d := range order {
			fmt.Fprintf(stdout, "%s (Codex)\n", d)
			printCodexSessions(stdout, byDir[d], known)
		}
		return nil
	}
	real, _ := filepath.EvalSymlinks(cwd)
	ss := readCodexSessions(files, func(other string) bool { return relation(cwd, real, other) != "" }, stderr)
	var here []codexSession
	var places []place
	for _, s := range ss {
		if sameDir(relation(cwd, real, s.CWD)) {
			here = append(here, s)
			continue
		}
		d := filepath.Clean(s.CWD)
		i := slices.IndexFunc(places, func(p place) bool { return p.cwd == d })
		if i < 0 {
			// ss is newest first: the first of a directory is its latest.
			places = append(places, place{cwd: d, last: s.LastActivity})
			i = len(places) - 1
		}
		places[i].count++
	}
	if len(here) > 0 {
		fmt.Fprintf(stdout, "%s (Codex)\n", cwd)
		printCodexSessions(stdout, here, known)
		return nil
	}
	fmt.Fprintf(stdout, "No Codex session was started in %s (looked in %s).\n", cwd, looked)
	if gone {
		fmt.Fprintf(stdout, "%s does not exist.\n", cwd)
	}
	printNeighbours(stdout, "codex resume without a session id (its picker, --last) looks only at this directory's sessions.", neighbours(cwd, places))
	return nil
}

// printCodexSessions prints Codex sessions with the commands that
// continue and fork them, and what known says of them.
func printCodexSessions(w io.Writer, ss []codexSession, known func(id string) *sessionFacts) {
	for _, s := range ss {
		// The id is the rollout's: quoted, as any text a file gives a
		// command line.
		id := claudecode.ShellQuote(s.Thread)
		l := listedSession{id: s.Thread, last: s.LastActivity, title: attribution.Title(s.FirstPrompt),
			prompts: s.Prompts, subagents: s.subagents, answer: attribution.Title(s.LastAnswer),
			commands: fmt.Sprintf("continue: codex resume %s    fork: codex fork %s", id, id)}
		if s.ForkedFrom != "" {
			l.facts = append(l.facts, "forked from "+s.ForkedFrom)
		}
		if s.Model != "" {
			l.facts = append(l.facts, "model "+s.Model)
		}
		if s.Source == "exec" {
			// codex resume's picker and --last leave these out.
			l.facts = append(l.facts, "codex exec")
		}
		printListed(w, l, known(s.Thread))
	}
}

// codexHint says, after a listing of Claude Code's sessions, how many
// Codex sessions ran in cwd ("" for anywhere) and that cmd lists them;
// nothing when there are none or no rollouts to read. Only each rollout's
// session_meta record is read.
func codexHint(w io.Writer, cwd, cmd string) {
	files, err := codexRollouts(nil)
	if err != nil {
		return
	}
	real, _ := filepath.EvalSymlinks(cwd)
	n := 0
	for _, f := range files {
		_, _, _ = rollout.Summarize(f, func(s rollout.Summary) bool {
			if s.Thread == s.Session && (cwd == "" || sameDir(relation(cwd, real, s.CWD))) {
				n++
			}
			return false
		})
	}
	switch {
	case n == 0:
	case cwd == "":
		fmt.Fprintf(w, "Codex: %s (%s lists them).\n", counted(n, "session"), cmd)
	default:
		fmt.Fprintf(w, "Codex: %s in %s (%s lists them).\n", counted(n, "session"), cwd, cmd)
	}
}

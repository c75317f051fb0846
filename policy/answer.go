package policy

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hookwatch/hookwatch/decision"
	"github.com/hookwatch/hookwatch/policy/policyfile"
)

// Answer evaluates the policies in force for one hook payload (data, its
// JSON; cwd, the payload's cwd; projectDir, CLAUDE_PROJECT_DIR if known) and
// returns what to answer on stdout, the exit code, and the audit record for
// the envelope (nil when no rule had an opinion). home holds the user
// policy, the parse cache and the quota state. It loads the files afresh,
// as a one-shot hook process must; a long-lived process uses an Evaluator.
// It sees the payload as the agent sent it, before redaction, because a
// rule about a secret must see the secret.
//
// problems are what an Evaluator tells OnProblems — the problems of the
// files in force, conditions that do not compile included — for the one
// call that saw a file in force changed — a user or project file parsed
// afresh, its parse cache entry rebuilt, or the managed file (never
// cached, always parsed) unlike the content the cache last noted — and nil
// for every call after it: a process per event (the hook) reports each
// change once, at no cost to an unchanged policy.
func Answer(ctx context.Context, home, cwd, projectDir string, data []byte) (stdout []byte, code int, audit json.RawMessage, problems []error) {
	set := Discover(home, cwd, projectDir)
	if set.rebuilt {
		for _, p := range set.allProblems() {
			problems = append(problems, p)
		}
	}
	stdout, code, audit = answer(ctx, set, OpenState(stateDir(home)), nil, data)
	return stdout, code, audit, problems
}

func stateDir(home string) string { return filepath.Join(home, "state") }

func answer(ctx context.Context, set *Set, st *State, src SignalSource, data []byte) (stdout []byte, code int, audit json.RawMessage) {
	if len(set.Rules) == 0 && len(set.Problems) == 0 {
		return nil, 0, nil
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil || m == nil {
		return nil, 0, nil // not an object: nothing to decide, stay observe-only
	}
	d := set.evaluate(ctx, m, st, src)
	stdout, code = decision.Render(d)
	if a := d.Audit(); a != nil {
		audit, _ = json.Marshal(a)
	}
	return stdout, code, audit
}

// Evaluator answers hook events for a long-lived process (the collector),
// keeping each combination of policy files loaded and its rules compiled
// for as long as the files are unchanged on disk. It is safe for
// concurrent use.
type Evaluator struct {
	home  string
	state *State
	// Signals, when set, tells conditions the signals of the event's
	// session. Set it before the first answer.
	Signals SignalSource
	// OnProblems, when set, is told the problems of the policy files an
	// answer is made with (invalid rules left out, fail-open) when they
	// are first met, and again only when they change: the collector logs
	// them. The hook's systemMessage reaches a person only in an
	// interactive session; a headless run (claude -p, codex exec) shows
	// it to no one. Set it before the first answer.
	OnProblems func([]Problem)

	mu       sync.Mutex
	sets     map[string]*Set // by the located files' identity and modification
	reported map[string]bool // the problems told OnProblems, by their text
}

// NewEvaluator returns an Evaluator whose user policy, parse cache and
// quota state live in home, as for the hook.
func NewEvaluator(home string) *Evaluator {
	return &Evaluator{home: home, state: OpenState(stateDir(home)), sets: map[string]*Set{}}
}

// maxCachedSets bounds the Evaluator's cache: one set per project directory
// in use, so a handful in practice.
const maxCachedSets = 64

// Answer is Answer with the files' parse and compilation kept warm.
func (e *Evaluator) Answer(ctx context.Context, cwd, projectDir string, data []byte) (stdout []byte, code int, audit json.RawMessage) {
	return e.answerSources(ctx, Locate(e.home, cwd, projectDir), data)
}

// AnswerProject is Answer for a caller that has located the project policy
// file already (a hook, with policyfile.Locate): project is its path,
// whether or not it exists, or "" for none. The managed and user files are
// the Evaluator's. A path that cannot be a project policy file
// (<dir>/.hookwatch/policy.yaml, absolute and clean) is ignored, so a
// confused caller cannot have any file read as rules.
func (e *Evaluator) AnswerProject(ctx context.Context, project string, data []byte) (stdout []byte, code int, audit json.RawMessage) {
	srcs := []Source{{Path: managedPath, Scope: ScopeManaged}, {Path: filepath.Join(e.home, "policy.yaml"), Scope: ScopeUser}}
	if policyfile.ProjectFile(srcs[0].Path, srcs[1].Path, project) {
		srcs = append(srcs, Source{Path: project, Scope: ScopeProject})
	}
	return e.answerSources(ctx, srcs, data)
}

func (e *Evaluator) answerSources(ctx context.Context, srcs []Source, data []byte) (stdout []byte, code int, audit json.RawMessage) {
	var key strings.Builder
	for _, s := range srcs {
		fmt.Fprintf(&key, "%d:%s", s.Scope, s.Path)
		if fi, err := os.Stat(s.Path); err == nil {
			fmt.Fprintf(&key, "@%d/%d", fi.ModTime().UnixNano(), fi.Size())
		}
		key.WriteByte('|')
	}
	// A file changed within the clock's resolution of its last load could
	// keep its mtime and size; loading recent files afresh costs little.
	k := key.String()
	e.mu.Lock()
	set, ok := e.sets[k]
	e.mu.Unlock()
	if !ok {
		set = loadSources(filepath.Join(e.home, "cache"), srcs)
		if e.OnProblems != nil {
			e.report(set)
		}
		if !recentlyModified(srcs, 2*time.Second) {
			e.mu.Lock()
			if len(e.sets) >= maxCachedSets {
				clear(e.sets)
			}
			e.sets[k] = set
			e.mu.Unlock()
		}
	}
	return answer(ctx, set, e.state, e.Signals, data)
}

// report tells OnProblems the problems of a set just loaded, all of them
// (the rules are compiled now, not on their first event, which may never
// come), unless the same were told already: a file reloaded unchanged, or
// within two seconds of its change, is not reported again.
func (e *Evaluator) report(set *Set) {
	problems := set.allProblems()
	if len(problems) == 0 {
		return
	}
	var text strings.Builder
	for _, p := range problems {
		text.WriteString(p.Error())
		text.WriteByte('\n')
	}
	e.mu.Lock()
	seen := e.reported[text.String()]
	if !seen {
		if e.reported == nil || len(e.reported) >= maxCachedSets {
			e.reported = map[string]bool{}
		}
		e.reported[text.String()] = true
	}
	e.mu.Unlock()
	if !seen {
		e.OnProblems(problems)
	}
}

// allProblems returns the set's problems and those of every rule's
// condition and other expressions, all compiled now (Evaluate compiles
// lazily, and a rule's event may never come): what a log is told.
func (s *Set) allProblems() []Problem {
	return append(slices.Clip(s.Problems), s.compileAll()...)
}

func recentlyModified(srcs []Source, d time.Duration) bool {
	for _, s := range srcs {
		if fi, err := os.Stat(s.Path); err == nil && time.Since(fi.ModTime()) < d {
			return true
		}
	}
	return false
}

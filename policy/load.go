package policy

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/hookwatch/hookwatch/policy/policyfile"
)

// Load reads the given policy files as user-scope policies, in order. The
// returned Set is always usable: invalid rules are left out (fail-open) and
// listed in Set.Problems; the error joins those problems (nil if none) and
// also reports a file that does not exist.
//
// A file named again — the same path twice, or the same file reached by
// another path (./a.yaml, a symbolic link) — is read once, where first
// named: its rules are not a second definition of themselves. Its later
// names are listed in Set.Files with SameAs set, and no rules. Two
// different files that define the same rule id are still a problem.
func Load(paths ...string) (*Set, error) {
	var srcs []Source
	var again []FileStatus
	type named struct {
		path string
		fi   os.FileInfo
	}
	var seen []named // the files read, where first named
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err == nil {
			if i := slices.IndexFunc(seen, func(n named) bool { return os.SameFile(n.fi, fi) }); i >= 0 {
				again = append(again, FileStatus{Source: Source{Path: p, Scope: ScopeUser}, Found: true, SameAs: seen[i].path})
				continue
			}
			seen = append(seen, named{p, fi})
		}
		srcs = append(srcs, Source{Path: p, Scope: ScopeUser})
	}
	set := LoadSources(srcs...)
	for _, f := range set.Files {
		if !f.Found {
			set.Problems = append(set.Problems, Problem{File: f.Path, Msg: "no such policy file"})
		}
	}
	set.Files = append(set.Files, again...)
	return set, set.Err()
}

// Err joins the set's problems into one error, nil if there are none.
func (s *Set) Err() error {
	errs := make([]error, len(s.Problems))
	for i, p := range s.Problems {
		errs[i] = p
	}
	return errors.Join(errs...)
}

// LoadSources reads policy files with explicit scopes. Sources are taken
// strongest scope first whatever their order (managed, user, project; files
// of one scope in the given order). A missing file is not a problem (its
// FileStatus says Found: false). A rule id already defined by an earlier rule
// is rejected: the first definition, in the strongest scope, stays in force.
func LoadSources(srcs ...Source) *Set { return loadSources("", srcs) }

// loadSources is LoadSources with a parse cache in cacheDir ("" = none).
func loadSources(cacheDir string, srcs []Source) *Set {
	srcs = append([]Source(nil), srcs...)
	sort.SliceStable(srcs, func(i, j int) bool { return srcs[i].Scope < srcs[j].Scope })
	set := &Set{byEvent: map[string][]*Rule{}, order: map[string][]*Rule{}}
	defined := map[string]*Rule{}
	for _, src := range srcs {
		st := FileStatus{Source: src, Found: true}
		if src.Scope == ScopeProject {
			if why := policyfile.Foreign(src.Path); why != "" {
				set.Problems = append(set.Problems, Problem{File: src.Path, Msg: why})
				st.Problems++
				set.Files = append(set.Files, st)
				continue
			}
		}
		pf, err := readFileCached(src, cacheDir)
		if err != nil {
			st.Found = false
			set.Files = append(set.Files, st)
			continue
		}
		st.Problems = len(pf.problems)
		set.rebuilt = set.rebuilt || pf.rebuilt
		set.Problems = append(set.Problems, pf.problems...)
		for _, r := range pf.rules {
			if prev := defined[r.ID]; prev != nil {
				set.Problems = append(set.Problems, Problem{
					File: r.File, Line: r.Line, RuleID: r.ID, Events: r.Events,
					Msg: fmt.Sprintf("id already defined by the %s policy at %s:%d; a rule cannot be redefined", prev.Scope, prev.File, prev.Line),
				})
				st.Problems++
				continue
			}
			defined[r.ID] = r
			set.Rules = append(set.Rules, r)
			st.Rules++
		}
		set.Files = append(set.Files, st)
	}
	for _, r := range set.Rules {
		for _, e := range r.Events {
			if !ruleIn(set.byEvent[e], r) { // an event listed twice
				set.byEvent[e] = append(set.byEvent[e], r)
			}
		}
	}
	for e, rules := range set.byEvent {
		var rewriters, others []*Rule
		for _, r := range rules {
			if len(r.UpdateInput) > 0 || len(r.Transforms) > 0 {
				rewriters = append(rewriters, r)
			} else {
				others = append(others, r)
			}
		}
		sort.SliceStable(rewriters, func(i, j int) bool { return rewriters[i].Scope > rewriters[j].Scope })
		set.order[e] = append(rewriters, others...)
	}
	return set
}

func ruleIn(rules []*Rule, r *Rule) bool {
	for _, x := range rules {
		if x == r {
			return true
		}
	}
	return false
}

// Discover loads the policy in force for a hook event: the managed file
// (ManagedPath), the user file ($HOOKWATCH_HOME/policy.yaml, home being
// HOOKWATCH_HOME) and the project file found from cwd and projectDir (see
// Locate). It never fails: problems are in the Set (and become warnings).
// Parses of the user and project files are cached under home/cache.
func Discover(home, cwd, projectDir string) *Set {
	cacheDir := ""
	if home != "" {
		cacheDir = filepath.Join(home, "cache")
	}
	return loadSources(cacheDir, Locate(home, cwd, projectDir))
}

// Locate returns the policy files that apply to a directory, whether or not
// they exist: managed, user (when home is set) and project; see
// policyfile.Locate.
func Locate(home, cwd, projectDir string) []Source {
	return policyfile.Locate(managedPath, home, cwd, projectDir)
}

// describeEvents formats a rule's event list for tables.
func describeEvents(events []string) string { return strings.Join(events, ",") }

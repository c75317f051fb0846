package attribution

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"
)

// A comparison puts two sessions side by side, typically two forks of one
// baseline that tried two ways of doing the same thing: what each did
// (tools, subtypes, files), how it went (status, failures, denials), what
// it cost (tokens) and how it split its work (Shape, agents). Everything in
// it is read from the two sessions' models; nothing is derived again.

// Bounds of what lists names: a session's calls can name any number of
// tools and files, and a model and a comparison are each one document.
const (
	// maxNames bounds a list of names (Session.Tools, a comparison's
	// tools, subtypes and agent types): the rest are summed under
	// OtherNames.
	maxNames        = 200
	maxCompareFiles = 2000
	// maxLineageSteps bounds the walk from a session to its ancestors.
	maxLineageSteps = 100
)

// OtherNames is the row that sums the names a list leaves out: a side's
// subtypes or agent types beyond the first 200 distinct names, a
// session's tools beyond its 200 most used (Session.Tools).
const OtherNames = "(others)"

// Comparison is two sessions, A and B, side by side.
type Comparison struct {
	// Baseline is the session both continue; nil when they share none
	// (a comparison of unrelated sessions, which a caller must ask for).
	Baseline *Baseline `json:"baseline"`
	// A and B are the two sessions' summaries (Session.Summary): status,
	// shape, counts (turns are Counts.Prompts), usage, lineage.
	A *Session `json:"a"`
	B *Session `json:"b"`
	// Tools are the calls per tool name, Subtypes per classify subtype,
	// AgentTypes the subagents per agent type: every name either side
	// has, most used (A + B) first, then by name.
	Tools      []CountRow `json:"tools"`
	Subtypes   []CountRow `json:"subtypes"`
	AgentTypes []CountRow `json:"agent_types"`
	// Files are the files either side's calls read or wrote, by path.
	// A side lists at most 2,000 files; FilesOmitted counts the paths of
	// calls left out beyond them (a path as often as calls touched it).
	Files        []FileRow `json:"files"`
	FilesOmitted int       `json:"files_omitted,omitempty"`
}

// CountRow is one name's count on each side.
type CountRow struct {
	Name string `json:"name"`
	A    int    `json:"a"`
	B    int    `json:"b"`
}

// FileRow is one file and what each side's calls did with it.
type FileRow struct {
	Path string  `json:"path"`
	A    FileUse `json:"a"`
	B    FileUse `json:"b"`
}

// FileUse says whether a side's calls read and wrote a file
// (classify.Meta.FilesRead, FilesWritten).
type FileUse struct {
	Read    bool `json:"read"`
	Written bool `json:"written"`
}

// Baseline is the nearest session both compared sessions continue, and
// the way from it to each.
type Baseline struct {
	SessionID string `json:"session_id"`
	Title     string `json:"title"`
	A         Branch `json:"a"`
	B         Branch `json:"b"`
}

// Branch is the way from a baseline to one compared session.
type Branch struct {
	// Via are the sessions from the baseline to the compared one: the
	// baseline's child first, the compared session last; empty when the
	// compared session is the baseline itself.
	Via []string `json:"via"`
	// Lineage is how Via[0] continues the baseline (LineageFork,
	// LineageCompact), and ForkedAt when: the start of Via[0], the fork
	// point. Both are zero for the baseline itself.
	Lineage  string     `json:"lineage,omitempty"`
	ForkedAt *time.Time `json:"forked_at"`
}

// Side gathers one session for Compare: NewSide takes the session's
// summary, Agent and Call each of its agents and calls, in any order.
// Its memory is bounded by the names and files it keeps, not by the calls.
type Side struct {
	session  *Session
	tools    map[string]int
	subtypes map[string]int
	types    map[string]int
	files    map[string]FileUse
	omitted  int
}

// NewSide starts the side of session s (a summary: its agents and calls
// are not read; its calls per tool are its Tools).
func NewSide(s *Session) *Side {
	d := &Side{
		session: s.Summary(),
		tools:   map[string]int{}, subtypes: map[string]int{}, types: map[string]int{}, files: map[string]FileUse{},
	}
	for _, t := range s.Tools {
		d.tools[t.ToolName] += t.Calls
	}
	return d
}

// SideOf is the side of a session with its agents and calls (a Result's).
func SideOf(s *Session) *Side {
	d := NewSide(s)
	for _, a := range s.Agents {
		d.Agent(a)
	}
	for _, c := range s.ToolCalls {
		d.Call(c)
	}
	return d
}

// Agent counts a subagent by its type; the main and compaction agents
// are not counted.
func (d *Side) Agent(a *Agent) {
	if a.Role != RoleSubagent {
		return
	}
	t := "(no type)"
	if a.AgentType != nil {
		t = *a.AgentType
	}
	bump(d.types, t)
}

// Call counts a call by subtype, and the files it touched (by tool, the
// session's Tools count it).
func (d *Side) Call(c *ToolCall) {
	bump(d.subtypes, c.Subtype)
	use := func(paths []string, f func(*FileUse)) {
		for _, p := range paths {
			u, ok := d.files[p]
			if !ok && len(d.files) >= maxCompareFiles {
				d.omitted++
				continue
			}
			f(&u)
			d.files[p] = u
		}
	}
	use(c.FilesRead, func(u *FileUse) { u.Read = true })
	use(c.FilesWritten, func(u *FileUse) { u.Written = true })
}

// bump counts name in m, under OtherNames once m has its fill of names.
func bump(m map[string]int, name string) {
	if _, ok := m[name]; !ok && len(m) >= maxNames {
		name = OtherNames
	}
	m[name]++
}

// Compare puts sides a and b side by side; base is their baseline (nil
// for none).
func Compare(a, b *Side, base *Baseline) *Comparison {
	c := &Comparison{
		Baseline: base, A: a.session, B: b.session,
		Tools: rows(a.tools, b.tools), Subtypes: rows(a.subtypes, b.subtypes), AgentTypes: rows(a.types, b.types),
		Files: []FileRow{}, FilesOmitted: a.omitted + b.omitted,
	}
	for p, u := range a.files {
		c.Files = append(c.Files, FileRow{Path: p, A: u, B: b.files[p]})
	}
	for p, u := range b.files {
		if _, ok := a.files[p]; !ok {
			c.Files = append(c.Files, FileRow{Path: p, B: u})
		}
	}
	slices.SortFunc(c.Files, func(x, y FileRow) int { return cmp.Compare(x.Path, y.Path) })
	return c
}

// rows merges two sides' counts into rows, most first, then by name.
func rows(a, b map[string]int) []CountRow {
	out := []CountRow{}
	for n, k := range a {
		out = append(out, CountRow{Name: n, A: k, B: b[n]})
	}
	for n, k := range b {
		if _, ok := a[n]; !ok {
			out = append(out, CountRow{Name: n, B: k})
		}
	}
	slices.SortFunc(out, func(x, y CountRow) int {
		return cmp.Or(cmp.Compare(y.A+y.B, x.A+x.B), cmp.Compare(x.Name, y.Name))
	})
	return out
}

// ErrLineageTooLong is returned by FindBaseline for a lineage longer than
// it follows (only hostile input makes one).
var ErrLineageTooLong = errors.New("lineage too long")

// carriesConversation reports whether a session of lineage kind continues
// its parent's conversation: a fork copies it, a compaction under a new id
// summarises it; a clear starts afresh, so its parent is no baseline.
func carriesConversation(kind string) bool { return kind == LineageFork || kind == LineageCompact }

// FindBaseline returns the nearest session that a and b both continue,
// following ParentSessionID through forks and compactions (not clears: a
// cleared session shares no conversation with its parent): one of them
// when the other descends from it, else their nearest common ancestor.
// It returns nil when they share none. session looks up a session's
// summary by id (nil, nil when it is not known).
func FindBaseline(a, b *Session, session func(id string) (*Session, error)) (*Baseline, error) {
	// chain returns s and its ancestors, s first.
	chain := func(s *Session) ([]*Session, error) {
		out := []*Session{s}
		for carriesConversation(s.Lineage) && s.ParentSessionID != "" {
			if len(out) > maxLineageSteps {
				return nil, fmt.Errorf("cannot follow the lineage of session %q: %w", out[0].SessionID, ErrLineageTooLong)
			}
			p, err := session(s.ParentSessionID)
			if err != nil {
				return nil, fmt.Errorf("cannot read session %q: %w", s.ParentSessionID, err)
			}
			if p == nil {
				// A parent whose events were not captured is still the
				// baseline of its forks.
				out = append(out, &Session{SessionID: s.ParentSessionID})
				break
			}
			if slices.ContainsFunc(out, func(x *Session) bool { return x.SessionID == p.SessionID }) {
				break
			}
			out = append(out, p)
			s = p
		}
		return out, nil
	}
	ca, err := chain(a)
	if err != nil {
		return nil, err
	}
	cb, err := chain(b)
	if err != nil {
		return nil, err
	}
	for i, x := range ca {
		j := slices.IndexFunc(cb, func(y *Session) bool { return y.SessionID == x.SessionID })
		if j < 0 {
			continue
		}
		return &Baseline{SessionID: x.SessionID, Title: x.Title, A: branch(ca[:i]), B: branch(cb[:j])}, nil
	}
	return nil, nil
}

// branch is the way down to a compared session: path holds it and its
// ancestors below the baseline, the compared session first.
func branch(path []*Session) Branch {
	br := Branch{Via: []string{}}
	for i := len(path) - 1; i >= 0; i-- {
		br.Via = append(br.Via, path[i].SessionID)
	}
	if n := len(path); n > 0 {
		first := path[n-1]
		at := first.StartedAt
		br.Lineage, br.ForkedAt = first.Lineage, &at
	}
	return br
}

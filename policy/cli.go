package policy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hookwatch/hookwatch/decision"
	hookevent "github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/lines"
	"github.com/hookwatch/hookwatch/policy/policyfile"
)

// Check validates and compiles the given policy files as they would be in
// force together (duplicate ids across files are reported), writing one line
// per file and one per problem ("file:line: rule "id": message") to w. It
// returns an error when any file has a problem. It is CheckWith with no
// options.
func Check(w io.Writer, files ...string) error { return CheckWith(w, CheckOptions{}, files...) }

// CheckOptions say what Check, Test and Explain are to know of the machine
// the files are in force on, which decides what they warn about, and where
// to warn beside output in JSON.
type CheckOptions struct {
	// Codex is true when Codex's hooks run hookwatch there: a rule for both
	// runtimes is then warned about for each action or effect Codex does
	// not carry out (on Codex it does nothing). Without it, a user of
	// Claude Code alone is told nothing of Codex.
	Codex bool
	// Stderr is where Test and ExplainCommand write the warnings when their
	// output is JSON, which holds results only (nil: not written). Text
	// output holds them, as Check's does.
	Stderr io.Writer
}

// CheckWith is Check with the options o. Warnings are printed after the
// problems and never make it fail.
func CheckWith(w io.Writer, o CheckOptions, files ...string) error {
	if len(files) == 0 {
		return errors.New("cannot check policy: no files given")
	}
	set, _ := Load(files...)
	problems := append(set.Problems, set.compileAll()...)
	perFile := map[string]int{}
	for _, p := range problems {
		perFile[p.File]++
	}
	warnings := set.warnings(o)
	warnedFile := map[string]int{}
	for _, w := range warnings {
		warnedFile[w.File]++
	}
	for _, f := range set.Files {
		switch {
		case !f.Found:
			// Reported as a problem below.
		case f.SameAs != "":
			fmt.Fprintf(w, "%s: the same file as %s, checked once\n", f.Path, f.SameAs)
		case perFile[f.Path] == 0 && warnedFile[f.Path] > 0:
			n := warnedFile[f.Path]
			fmt.Fprintf(w, "%s: ok, %d rule%s, %d warning%s\n", f.Path, f.Rules, plural(f.Rules), n, plural(n))
		case perFile[f.Path] == 0:
			fmt.Fprintf(w, "%s: ok, %d rule%s\n", f.Path, f.Rules, plural(f.Rules))
		default:
			fmt.Fprintf(w, "%s: %d problem%s\n", f.Path, perFile[f.Path], plural(perFile[f.Path]))
		}
	}
	sort.SliceStable(problems, func(i, j int) bool {
		if problems[i].File != problems[j].File {
			return problems[i].File < problems[j].File
		}
		return problems[i].Line < problems[j].Line
	})
	for _, p := range problems {
		fmt.Fprintln(w, p.Error())
	}
	writeWarnings(w, "", warnings)
	if len(problems) > 0 {
		return fmt.Errorf("policy check failed: %d problem%s", len(problems), plural(len(problems)))
	}
	return nil
}

// warnings returns what Check, Test and Explain warn about the set's rules,
// rule by rule: conditions on fields their tools never send
// (fieldWarnings) and, with o.Codex, what Codex does not carry out
// (codexWarnings). Warnings never fail a command: a tool may gain the
// field, and a rule may be meant to hold on Claude Code alone.
func (s *Set) warnings(o CheckOptions) []Problem {
	var out []Problem
	for _, r := range s.Rules {
		out = append(out, r.fieldWarnings()...)
		if o.Codex {
			out = append(out, r.codexWarnings()...)
		}
	}
	return out
}

// writeWarnings writes each warning on a line of its own, after indent:
// file:line: rule "id": warning: message. Nothing is written to a nil w.
func writeWarnings(w io.Writer, indent string, warnings []Problem) {
	if w == nil {
		return
	}
	for _, p := range warnings {
		fmt.Fprintf(w, "%s%s\n", indent, p.Error())
	}
}

// warningsSection writes the warnings, if any, as a section of explain's
// text output.
func warningsSection(w io.Writer, warnings []Problem) {
	if len(warnings) == 0 {
		return
	}
	fmt.Fprintln(w, "\nWarnings (these rules are in force, but may not do what is meant):")
	writeWarnings(w, "  ", warnings)
}

// compileAll compiles every rule (Evaluate compiles lazily, per event) and
// returns the problems found.
func (s *Set) compileAll() []Problem {
	var out []Problem
	for _, r := range s.Rules {
		if r.invalid != nil {
			continue // already reported when loading
		}
		out = append(out, r.compiled().problems...)
	}
	return out
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// TestResult is one line of a dry run (Test with JSON output).
type TestResult struct {
	Line      int    `json:"line"`
	Event     string `json:"event,omitempty"`
	ToolName  string `json:"tool_name,omitempty"`
	AgentID   string `json:"agent_id,omitempty"`
	AgentType string `json:"agent_type,omitempty"`
	// Decision is the audit record (nil: no opinion).
	Decision *decision.Audit `json:"decision"`
	// Stdout and ExitCode are what the hook would answer.
	Stdout   string `json:"stdout"`
	ExitCode int    `json:"exit_code"`
	// Error is set for a line that is not a hook payload.
	Error string `json:"error,omitempty"`
}

// Test dry-runs policyFile over recorded events: one JSON object per line,
// either a raw hook payload or an object wrapping it under "payload" (the
// corpus files, envelopes, `hookwatch export` and audit event lines). Only
// what a hook sent is evaluated: wrapped records of another "kind"
// (statusline, transcript, rollout) are passed over and counted in the
// summary. Quotas count in memory, from zero, at the wrapper's
// "received_at" or "time" when present (else the wall clock). It writes a
// table of what each rule would decide and the merged answer per event, or,
// with jsonOut, one TestResult per line (JSON Lines). The warnings Check
// would print (see CheckOptions) come before the table, or go to o.Stderr
// beside JSON, and do not fail it. It returns an error if the policy has
// problems (after the dry run of its valid rules) or reading events fails.
func Test(w io.Writer, home, policyFile string, events io.Reader, jsonOut bool, o CheckOptions) error {
	set, _ := Load(policyFile)
	if abs, err := filepath.Abs(policyFile); err == nil && policyfile.ProjectFile(managedPath, filepath.Join(home, "policy.yaml"), abs) {
		// A project's file is dry-run as the project's: its relative glob
		// patterns start from the project's directory, as in the hook.
		set = LoadSources(Source{Path: abs, Scope: ScopeProject})
		for _, f := range set.Files {
			if !f.Found {
				set.Problems = append(set.Problems, Problem{File: f.Path, Msg: "no such policy file"})
			}
		}
	}
	problems := append(set.Problems, set.compileAll()...)
	warnings := set.warnings(o)
	var clock time.Time
	st := MemoryState()
	st.Clock = func() time.Time {
		if clock.IsZero() {
			return time.Now()
		}
		return clock
	}

	var tw *tabwriter.Writer
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if jsonOut {
		writeWarnings(o.Stderr, "", warnings)
	} else {
		for _, p := range problems {
			fmt.Fprintf(w, "problem: %s\n", p.Error())
		}
		writeWarnings(w, "", warnings)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "LINE\tEVENT\tTOOL\tAGENT\tRULE\tACTION\tENFORCED\tREASON")
	}
	var total, decided, denied, unreadable int
	over := map[passedOver]int{}
	// one tests a line that is not blank.
	one := func(lineNo int, line []byte) error {
		payload, at, perr := payloadOf(line)
		var po passedOver
		if errors.As(perr, &po) {
			// An export holds them beside the hook events: passed over.
			over[po]++
			return nil
		}
		res := TestResult{Line: lineNo}
		if perr != nil {
			res.Error = perr.Error()
			unreadable++
		} else {
			total++
			clock = at
			d := set.Evaluate(context.Background(), payload, st)
			res.Event = asString(payload["hook_event_name"])
			res.ToolName = asString(payload["tool_name"])
			res.AgentID = asString(payload["agent_id"])
			res.AgentType = asString(payload["agent_type"])
			res.Decision = d.Audit()
			out, code := decision.Render(d)
			res.Stdout, res.ExitCode = string(out), code
			if res.Decision != nil {
				decided++
				if res.Decision.Enforced && (res.Decision.Action == decision.ActionDeny || res.Decision.Action == decision.ActionBlock) {
					denied++
				}
			}
		}
		if jsonOut {
			if err := enc.Encode(res); err != nil {
				return fmt.Errorf("cannot write result: %w", err)
			}
			return nil
		}
		writeRows(tw, res)
		return nil
	}
	lr := lines.NewReader(events, 64<<10, lines.Unbounded) // payloads carry whole files
	for lineNo := 1; ; lineNo++ {
		line, f, err := lr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("cannot read events: %w", err)
		}
		line = lines.TrimCR(line, f)
		if len(bytes.TrimSpace(line)) > 0 {
			if err := one(lineNo, line); err != nil {
				return err
			}
		}
	}
	if tw != nil {
		if err := tw.Flush(); err != nil {
			return fmt.Errorf("cannot write table: %w", err)
		}
		fmt.Fprintf(w, "%d event%s, %d with a decision, %d denied or blocked", total, plural(total), decided, denied)
		var notes []string
		if unreadable > 0 {
			// Their rows are lost among the events' in a long replay.
			see := "see its row"
			if unreadable > 1 {
				see = "see their rows"
			}
			notes = append(notes, fmt.Sprintf("%d unreadable line%s not replayed, %s", unreadable, plural(unreadable), see))
		}
		for _, po := range []passedOver{overStatusLine, overTranscript, overRollout, overUsage, overOther} {
			if n := over[po]; n > 0 {
				what, why, _ := strings.Cut(string(po), "|")
				notes = append(notes, fmt.Sprintf("%d %s%s passed over: %s", n, what, plural(n), why))
			}
		}
		if len(notes) > 0 {
			fmt.Fprintf(w, " (%s)", strings.Join(notes, "; "))
		}
		fmt.Fprintln(w)
	}
	if len(problems) > 0 {
		return fmt.Errorf("policy %s has %d problem%s (invalid rules were left out of the dry run)", policyFile, len(problems), plural(len(problems)))
	}
	return nil
}

// passedOver is payloadOf's answer for a line that holds no hook event: a
// record of an export that no hook sent. Its text names what it is and why
// it is passed over, for the summary.
type passedOver string

func (p passedOver) Error() string { return string(p) }

// What an export holds besides hook events.
const (
	overStatusLine = passedOver("statusLine payload|no rule applies to them")
	overTranscript = passedOver("transcript record|read from Claude Code's transcript, not sent by a hook: replaying them would count calls twice")
	overRollout    = passedOver("rollout record|read from Codex's rollout, not sent by a hook: replaying them would count calls twice")
	overOther      = passedOver("record of another kind|not sent by a hook")
	overUsage      = passedOver("TranscriptUsage record|token usage read from a transcript, no hook event")
)

// payloadOf extracts the hook payload from a line: the object itself when
// it has hook_event_name (a raw payload), else its "payload" object (an
// envelope, an audit or export event line, a corpus line). Only what a hook
// sent is a hook event: a wrapper whose "kind" is not "hook" (statusline,
// transcript, rollout) is passed over (a passedOver error). at is the
// wrapper's time: "received_at" (an envelope) or "time" (an audit or export
// event line), zero when it has none.
func payloadOf(line []byte) (map[string]any, time.Time, error) {
	raw, kind, at, err := hookevent.RecordedPayload(line)
	if err != nil {
		return nil, time.Time{}, err
	}
	switch kind {
	case hookevent.KindHook:
	case hookevent.KindStatusLine:
		return nil, time.Time{}, overStatusLine
	case hookevent.KindTranscript:
		return nil, time.Time{}, overTranscript
	case hookevent.KindRollout:
		return nil, time.Time{}, overRollout
	default:
		return nil, time.Time{}, overOther
	}
	var p map[string]any
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, time.Time{}, fmt.Errorf("not a JSON object: %v", err)
	}
	name, ok := p["hook_event_name"].(string)
	if !ok {
		return nil, time.Time{}, errors.New(`the "payload" object has no "hook_event_name"`)
	}
	if name == rolloutUsageEvent {
		return nil, time.Time{}, overUsage
	}
	return p, at, nil
}

// rolloutUsageEvent is the event name of token usage read from a
// transcript or rollout (codex/rollout.UsageEvent), which no hook sends.
const rolloutUsageEvent = "TranscriptUsage"

func writeRows(tw *tabwriter.Writer, res TestResult) {
	agent := "main"
	if res.AgentID != "" {
		agent = res.AgentType
		if agent == "" {
			agent = res.AgentID
		}
	}
	if res.Error != "" {
		fmt.Fprintf(tw, "%d\t-\t-\t-\t-\t-\t-\t%s\n", res.Line, oneLine(res.Error))
		return
	}
	tool := dash(res.ToolName)
	if res.Decision == nil {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t-\tno opinion\t-\t\n", res.Line, res.Event, tool, agent)
		return
	}
	a := res.Decision
	for _, n := range a.Rules {
		reason := n.Reason
		if n.Error != "" {
			reason = "error: " + n.Error
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", res.Line, res.Event, tool, agent, dash(n.RuleID), n.Action, yesNo(n.Enforced), oneLine(reason))
	}
	// The merged row, unless it only repeats the one rule's row.
	if len(a.Rules) == 1 && len(a.RuleIDs) == 1 && a.Rules[0].RuleID == a.RuleIDs[0] &&
		a.Rules[0].Action == a.Action && a.Rules[0].Enforced == a.Enforced && a.Rules[0].Reason == a.Reason {
		return
	}
	fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t=> %s\t%s\t%s\t%s\n", res.Line, res.Event, tool, agent,
		dash(strings.Join(res.Decision.RuleIDs, ",")), res.Decision.Action, yesNo(res.Decision.Enforced), oneLine(res.Decision.Reason))
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// oneLine flattens and shortens text for a table cell.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 100 {
		s = string(r[:99]) + "…"
	}
	return s
}

// Project is the project directory the command line takes for a
// directory, and how it was found (see GuessProject).
type Project struct {
	Dir string
	// Why says how Dir was found, for the output: "CLAUDE_PROJECT_DIR",
	// "the repository root", …
	Why string
	// FromEnv is set when Dir is CLAUDE_PROJECT_DIR.
	FromEnv bool
}

// String is the project directory and how it was found.
func (p Project) String() string { return p.Dir + " (" + p.Why + ")" }

// GuessProject returns the project directory a session working in dir most
// likely has, for a command run outside any session. The hook looks for a
// project policy from the event's cwd up to CLAUDE_PROJECT_DIR, which
// Claude Code sets to the directory it was started in; so:
//
//   - claudeProjectDir (the command's CLAUDE_PROJECT_DIR) when dir is inside
//     it, as the hook would see it;
//   - else the nearest directory from dir upwards that holds a project
//     policy file (.hookwatch/policy.yaml, not the user's) or a repository
//     (.git): where a session of the project is commonly started, so that
//     dir is a working directory within it;
//   - else dir itself.
func GuessProject(home, dir, claudeProjectDir string) Project {
	dir = filepath.Clean(dir)
	if claudeProjectDir != "" && filepath.IsAbs(claudeProjectDir) && policyfile.Under(dir, claudeProjectDir) {
		return Project{Dir: filepath.Clean(claudeProjectDir), Why: "CLAUDE_PROJECT_DIR", FromEnv: true}
	}
	userFile := ""
	if home != "" {
		userFile = filepath.Clean(filepath.Join(home, "policy.yaml"))
	}
	for d, i := dir, 0; i < 256; i++ {
		if p := filepath.Join(d, ".hookwatch", "policy.yaml"); policyfile.ProjectFile(managedPath, userFile, p) {
			if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
				why := "the nearest directory with a project policy; CLAUDE_PROJECT_DIR is not set"
				if d == dir {
					why = "the directory itself holds a project policy; CLAUDE_PROJECT_DIR is not set"
				}
				return Project{Dir: d, Why: why}
			}
		}
		if isRepoRoot(d) {
			return Project{Dir: d, Why: "the repository root; CLAUDE_PROJECT_DIR is not set"}
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	return Project{Dir: dir, Why: "the directory itself: no project policy or repository above it; CLAUDE_PROJECT_DIR is not set"}
}

// isRepoRoot reports whether dir is the top of a git work tree: its .git is
// a file (a linked worktree, a submodule) or a directory with a HEAD (an
// empty .git directory is no repository, for git either).
func isRepoRoot(dir string) bool {
	fi, err := os.Lstat(filepath.Join(dir, ".git"))
	if err != nil {
		return false
	}
	if fi.Mode().IsRegular() {
		return true
	}
	_, err = os.Stat(filepath.Join(dir, ".git", "HEAD"))
	return fi.IsDir() && err == nil
}

// projectNote warns, when the project file in force lies above dir and the
// project directory was assumed rather than given, that a session started
// in dir itself would not apply it: Claude Code's CLAUDE_PROJECT_DIR is
// the directory it is started in, and the search stops there.
func projectNote(w io.Writer, set *Set, dir string, proj Project) {
	if proj.FromEnv {
		return
	}
	for _, f := range set.Files {
		if f.Scope != ScopeProject || !f.Found {
			continue
		}
		root := filepath.Dir(filepath.Dir(f.Path))
		if root != dir && policyfile.Under(dir, root) {
			fmt.Fprintf(w, "Note: %s applies to sessions started in %s (or above it); Claude Code started in %s itself would not apply it (CLAUDE_PROJECT_DIR is where Claude Code starts, and the search stops there).\n",
				f.Path, root, dir)
		}
	}
}

// discoverUncached is Discover without its parse cache, for a person's
// look at the policy: the cache is the hook's record of what it has seen,
// and a change read here must still be one the hook reports (Answer).
func discoverUncached(home, cwd, projectDir string) *Set {
	return loadSources("", Locate(home, cwd, projectDir))
}

// Explain writes which policy files apply to dir (with home as
// HOOKWATCH_HOME, and proj as the project directory: see GuessProject),
// which rules are in force in evaluation order, which parts are invalid
// and left out, and what Check would warn about them (see CheckOptions).
func Explain(w io.Writer, home, dir string, proj Project, o CheckOptions) error {
	set := discoverUncached(home, dir, proj.Dir)
	problems := append(set.Problems, set.compileAll()...)
	fmt.Fprintf(w, "Policy in force for %s\nProject directory: %s\n", dir, proj)
	projectNote(w, set, dir, proj)
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCOPE\tFILE\tSTATUS")
	for _, f := range set.Files {
		status := "not found"
		if f.Found {
			status = fmt.Sprintf("%d rule%s", f.Rules, plural(f.Rules))
			if f.Problems > 0 {
				status += fmt.Sprintf(", %d problem%s", f.Problems, plural(f.Problems))
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", f.Scope, f.Path, status)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("cannot write files table: %w", err)
	}
	// A rule that does not compile is not in force (it fails open) unless
	// it is a managed fail-closed rule, which then denies what it selects:
	// only those appear in the table, marked.
	var rules []*Rule
	leftOut := 0
	for _, r := range set.Rules {
		if r.compiled().err != nil && !r.failsClosedWhenInvalid() {
			leftOut++
			continue
		}
		rules = append(rules, r)
	}
	if len(rules) == 0 {
		fmt.Fprintln(w, "\nNo rules in force.")
	} else {
		fmt.Fprintln(w, "\nRules (all matching rules are evaluated; deny > defer > ask > allow; managed rules cannot be redefined):")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "SCOPE\tID\tEVENTS\tMATCHER\tAGENT\tACTION\tMODE\tON_ERROR\tDESCRIPTION")
		for _, r := range rules {
			agent := dash(r.Agent)
			if r.AgentType != "" {
				agent += " type=" + r.AgentType
			}
			mode, onErr := "enforce", "open"
			if r.AuditOnly {
				mode = "audit"
			}
			if r.OnErrorClosed {
				onErr = "closed"
			}
			if r.compiled().err != nil {
				mode = "INVALID: denies"
			}
			// What selects the calls: the tool, the subtype, the condition.
			matcher := dash(r.Matcher)
			if r.Subtype != "" {
				matcher += " subtype=" + r.Subtype
			}
			if r.When != "" {
				matcher += " when " + oneLine(r.When)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Scope, r.ID, describeEvents(r.Events), matcher,
				agent, describeAction(r), mode, onErr, oneLine(r.Description))
		}
		if err := tw.Flush(); err != nil {
			return fmt.Errorf("cannot write rules table: %w", err)
		}
	}
	if leftOut > 0 {
		fmt.Fprintf(w, "\n%d invalid rule%s left out of the table: not in force (see Problems).\n", leftOut, plural(leftOut))
	}
	if len(problems) > 0 {
		fmt.Fprintln(w, "\nProblems (these parts are NOT in force: they fail open, except that an invalid managed on_error: closed rule denies what it selects):")
		for _, p := range problems {
			fmt.Fprintf(w, "  %s\n", p.Error())
		}
	}
	warningsSection(w, set.warnings(o))
	return nil
}

// describeAction summarises a rule's action and effects.
func describeAction(r *Rule) string {
	var parts []string
	if r.Action != "" {
		parts = append(parts, r.Action)
	}
	if r.Quota != nil {
		q := fmt.Sprintf("quota %d", r.Quota.Limit)
		if len(r.Quota.Per) > 0 {
			q += "/" + strings.Join(r.Quota.Per, "+")
		}
		if r.Quota.Window > 0 {
			q += "/" + r.Quota.Window.String()
		}
		parts = append(parts, q)
	}
	if len(r.UpdateInput) > 0 {
		parts = append(parts, "update_input")
	}
	for _, t := range r.Transforms {
		parts = append(parts, t.Kind)
	}
	if r.Context != "" {
		parts = append(parts, "context")
	}
	if r.SystemMessage != "" {
		parts = append(parts, "system_message")
	}
	return strings.Join(parts, "+")
}

// ExplainCommand shows how the policy sees a shell command run in dir:
// its analysis (the variable `command` of conditions, and `subtype`),
// step by step, and what the rules in force for dir (proj being the
// project directory, see GuessProject) answer to a Bash call of it
// (PreToolUse), then what Check would warn about those rules (see
// CheckOptions; beside JSON, to o.Stderr). With asJSON it writes the
// variables as JSON.
func ExplainCommand(w io.Writer, home, dir string, proj Project, command string, asJSON bool, o CheckOptions) error {
	payload := CommandPayload(dir, command)
	set := discoverUncached(home, dir, proj.Dir)
	ev := &evaluation{set: set, ctx: context.Background(), name: "PreToolUse", payload: payload}
	m := ev.meaning()
	d := set.Evaluate(context.Background(), payload, MemoryState())
	if asJSON {
		// The decision as the audit records it (nil: no rule had an opinion).
		b, err := json.MarshalIndent(map[string]any{"command": m.command, "subtype": m.subtype, "decision": d.Audit(),
			"project_dir": proj.Dir, "policy_files": foundFiles(set)}, "", "  ")
		if err != nil {
			return fmt.Errorf("cannot encode the analysis: %w", err)
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		writeWarnings(o.Stderr, "", set.warnings(o))
		return err
	}
	c := m.command
	fmt.Fprintf(w, "Command: %s\nEffect:  %s\nSubtype: %s\n", oneLine(command), c["effect"], m.subtype)
	if c["unknown"] == true {
		fmt.Fprintf(w, "Unknown: %s (counted destructive)\n", c["reason"])
	}
	for _, k := range []string{"writes", "reads", "hosts"} {
		if l, _ := c[k].([]string); len(l) > 0 {
			fmt.Fprintf(w, "%-8s %s\n", strings.ToUpper(k[:1])+k[1:]+":", strings.Join(l, " "))
		}
	}
	fmt.Fprintln(w, "\nSteps (command.steps):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tPROGRAM\tARGS\tVIA\tEFFECT\tSUBTYPE\tWRITES\tREADS\tHOSTS")
	steps, _ := c["steps"].([]any)
	for i, s := range steps {
		st := s.(map[string]any)
		list := func(k string) string {
			l, _ := st[k].([]string)
			return dash(oneLine(strings.Join(l, " ")))
		}
		prog, _ := st["program"].(string)
		if prog == "" {
			prog = "(dynamic)"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", i+1, prog, cutText(list("args"), 40), list("via"),
			st["effect"], st["subtype"], list("writes"), list("reads"), list("hosts"))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("cannot write steps table: %w", err)
	}
	fmt.Fprintf(w, "\nProject directory: %s\n", proj)
	fmt.Fprintf(w, "Policy files: %s\n", dash(strings.Join(foundFiles(set), ", ")))
	projectNote(w, set, dir, proj)
	fmt.Fprintf(w, "Policy in force for %s answers a Bash call of it (PreToolUse): ", dir)
	switch {
	case d.Verdict != decision.None:
		fmt.Fprintf(w, "%s", d.Verdict)
	case len(set.Rules) == 0:
		fmt.Fprint(w, "nothing (no rules in force)")
	default:
		fmt.Fprint(w, "nothing (no rule fires)")
	}
	fmt.Fprintln(w)
	for _, n := range d.Notes {
		fmt.Fprintf(w, "  rule %q: %s", n.RuleID, n.Action)
		if n.Reason != "" {
			fmt.Fprintf(w, " — %s", oneLine(n.Reason))
		}
		fmt.Fprintln(w)
	}
	warningsSection(w, set.warnings(o))
	return nil
}

// CommandPayload is the PreToolUse payload of a Bash call of command run
// in dir, as Claude Code sends it (less the ids of a real session): what
// explain --command and test --command evaluate.
func CommandPayload(dir, command string) map[string]any {
	return map[string]any{
		"hook_event_name": "PreToolUse", "session_id": "policy-explain", "cwd": dir, "tool_name": "Bash",
		"tool_use_id": "toolu_explain", "tool_input": map[string]any{"command": command},
	}
}

// foundFiles lists the set's files that exist.
func foundFiles(set *Set) []string {
	var out []string
	for _, f := range set.Files {
		if f.Found {
			out = append(out, f.Path)
		}
	}
	return out
}

func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// Package policy is hookwatch's deterministic control engine: rules written in
// YAML, matched with Claude Code's matcher semantics, conditioned by expr
// expressions over the hook payload, and answered through package decision.
//
// A fresh `hookwatch hook` process runs it once per event, so the package does
// no work at init, parses only the policy files in force, and compiles a rule
// (its regular expressions and expressions) only when the rule's event list
// names the event being answered and its matchers pass.
//
// Scopes and "cannot be overridden". Policies come from three files, loaded in
// this order: managed (/etc/hookwatch/policy.yaml), user
// ($HOOKWATCH_HOME/policy.yaml) and project (<project>/.hookwatch/policy.yaml).
// Managed rules cannot be overridden, which means:
//
//   - a rule id is defined once: a user or project rule reusing an id already
//     in force is rejected (reported, not loaded), so no lower file can replace
//     or switch off a managed rule (and a project cannot replace a user rule);
//   - answers only get stricter: every matching rule is evaluated and verdicts
//     merge as deny > defer > ask > allow, so no rule can turn another's deny
//     into anything else, nor an ask into an allow;
//   - input and output rewrites apply project first, then user, then managed,
//     so a managed rewrite (or redaction) has the last word, and every
//     allow/ask/deny rule is evaluated against the final, rewritten input;
//   - lower files cannot change a managed rule's mode or on_error.
//
// Failure. An invalid file or rule never stops the hook: it is left out
// (fail-open) and every answer for an event it would have covered carries a
// systemMessage warning. The exception is a managed rule declared
// on_error: closed, which, when invalid, denies (or blocks) every event its
// event list and matchers still select. A rule whose condition fails at run
// time follows its own on_error (default open).
package policy

import (
	"fmt"
	"sync"

	"github.com/expr-lang/expr/vm"

	"github.com/hookwatch/hookwatch/decision"
	"github.com/hookwatch/hookwatch/matcher"
	"github.com/hookwatch/hookwatch/policy/policyfile"
)

// ManagedPath is where the managed (organisation) policy lives.
const ManagedPath = policyfile.ManagedPath

// managedPath is ManagedPath, replaceable by tests only: an environment
// variable would let anyone bypass the organisation's policy.
var managedPath = ManagedPath

// Scope is where a rule comes from. Lower values take precedence.
type Scope = policyfile.Scope

// The scopes, strongest first.
const (
	ScopeManaged = policyfile.ScopeManaged
	ScopeUser    = policyfile.ScopeUser
	ScopeProject = policyfile.ScopeProject
)

// Source is one policy file and the scope it is loaded with.
type Source = policyfile.Source

// Rule is one policy rule as written in a file. Fields are read-only after
// loading; the compiled form is built on first use and cached, so a Rule is
// safe for concurrent use.
type Rule struct {
	ID          string
	Description string
	// Events the rule answers (default PreToolUse).
	Events []string
	// Matcher is tested against the event's matcher field (tool_name for tool
	// events, source for SessionStart, …) with Claude Code's semantics. Written
	// as "tool" or "matcher"; "" matches everything.
	Matcher string
	// Agent selects the main agent ("main": no agent_id), subagents
	// ("subagent": agent_id present) or both ("").
	Agent string
	// Runtime selects the events of Claude Code ("claude-code"), of Codex
	// ("codex") or of both (""; written runtime: both). The rule is checked
	// against that runtime's hook contract (see Rule.contract).
	Runtime string
	// AgentType is a matcher tested against agent_type ("" when absent).
	AgentType string
	// Subtype is a matcher tested against the tool call's subtype
	// (package classify: run_test, delete_file, modify_file …), in place
	// of or beside the tool name; "" matches every call.
	Subtype string
	// When is an expr condition over the payload; "" is always true.
	When string
	// Quota, if set, makes the rule fire only once its count is exhausted.
	Quota *Quota

	// Action is the verdict as written: allow, deny, ask, defer, block, stop
	// or "" (effects only).
	Action      string
	Verdict     decision.Verdict
	Stop        bool
	Reason      string
	Alternative string
	Context     string
	// SystemMessage is shown to the user when the rule fires.
	SystemMessage string
	// UpdateInput maps tool_input fields to expr expressions giving their new
	// values (nil removes the field).
	UpdateInput []FieldUpdate
	// Transforms rewrite the tool output the model sees (PostToolUse).
	Transforms []Transform
	// Interrupt stops Claude after a PermissionRequest deny.
	Interrupt bool
	// OnErrorClosed is on_error: closed.
	OnErrorClosed bool
	// AuditOnly is mode: audit — decisions are recorded, never enforced.
	AuditOnly bool

	Scope Scope
	File  string
	Line  int

	// keyLines is the line of each key's value, for error messages.
	keyLines map[string]int

	// invalid is the load or compile error of a managed fail-closed rule
	// that is kept to deny what it selects.
	invalid error

	once sync.Once
	c    *compiled
}

// FieldUpdate sets one tool_input field to the value of an expression.
type FieldUpdate struct {
	Field string
	Expr  string
	Line  int
}

// Quota limits how often a rule's selection may happen. The rule fires (its
// action applies) when Limit selected calls have already been let through in
// the current bucket. Calls are counted only when the merged answer lets them
// through (not denied, deferred or stopped).
type Quota struct {
	Limit int
	// Per lists the dimensions a bucket is keyed by: session, tool,
	// agent_type, agent (agent_id). Empty = one bucket for everything.
	Per []string
	// Window, if non-zero, is a sliding window: only calls within it count.
	Window Duration
}

// compiled is a rule's lazily compiled form.
type compiled struct {
	// err is the first of problems, or the rule's invalid: what makes a
	// fail-closed rule fail.
	err error
	// problems are every matcher and expression that did not compile.
	problems  []Problem
	matcher   matcher.Matcher
	narrow    matcher.Matcher // for FileChanged / StopFailure
	agentType matcher.Matcher
	subtype   matcher.Matcher
	// meaning: the rule reads the call's classification (subtype:, or
	// command/subtype in a condition or an update).
	meaning bool
	// signals: the rule reads session or agent (the signals).
	signals   bool
	when      *vm.Program
	updates   []*vm.Program
	redactors []*redactor
}

// Problem is an invalid file or rule: reported by Check and Explain, turned
// into a systemMessage warning by Evaluate.
type Problem struct {
	File   string
	Line   int
	RuleID string
	Msg    string
	// Events the broken rule would have answered (nil: the whole file is
	// broken, so the warning goes with every answer).
	Events []string
}

// Error formats the problem as "file:line: rule "id": msg".
func (p Problem) Error() string {
	loc := p.File
	if p.Line > 0 {
		loc = fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	if p.RuleID != "" {
		return fmt.Sprintf("%s: rule %q: %s", loc, p.RuleID, p.Msg)
	}
	return fmt.Sprintf("%s: %s", loc, p.Msg)
}

// FileStatus is what happened to one policy file when loading.
type FileStatus struct {
	Source
	// Found is false when the file does not exist (not an error).
	Found bool
	// Rules is the number of rules loaded from it.
	Rules int
	// Problems counts the invalid parts of the file.
	Problems int
	// SameAs is the path under which this file was already read when
	// Load was given it twice (see Load); "" otherwise.
	SameAs string
}

// Set is the policy in force: rules in precedence order (managed, user,
// project; file order within a file). Build it with Load, LoadSources or
// Discover. A Set is safe for concurrent use.
type Set struct {
	Files    []FileStatus
	Rules    []*Rule
	Problems []Problem

	// rebuilt: a user or project file was parsed afresh, its parse
	// cache entry rebuilt, or the managed file's content is not what the
	// cache last noted (loadSources with a cache): the files changed since
	// the cache last saw them.
	rebuilt bool

	byEvent map[string][]*Rule
	// order is byEvent with rewrite rules first, project → user → managed,
	// so that managed rewrites have the last word.
	order map[string][]*Rule
}

// RulesFor returns the rules whose event list names event, in evaluation
// order. The caller must not modify the slice.
func (s *Set) RulesFor(event string) []*Rule { return s.byEvent[event] }

package toolhook

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"

	"github.com/hookwatch/hookwatch/decision"
	"github.com/hookwatch/hookwatch/matcher"
)

// Action is what a hook tells the Executor to do next.
type Action uint8

const (
	// Continue runs the next hook, then the tool (the zero Action).
	Continue Action = iota
	// Skip ends the pre hooks and does not run the tool: the call returns
	// PreResult.Output and no error, and post hooks do not run — once the
	// merged decision of the hooks so far (the skipping one's included)
	// lets the call through; a deny, a defer or an unapproved ask refuses
	// it as it would have refused the tool (DeniedError). A post hook
	// cannot skip (the tool has run); Skip there means Continue.
	Skip
	// Abort ends the call: no further hook runs, the tool does not run (from
	// a pre hook) and the call returns an *AbortError with the hook's Reason.
	Abort
)

// String returns the action's lower-case name.
func (a Action) String() string {
	switch a {
	case Continue:
		return "continue"
	case Skip:
		return "skip"
	case Abort:
		return "abort"
	}
	return fmt.Sprintf("action(%d)", uint8(a))
}

// PreResult is a pre hook's answer. The zero PreResult is "continue,
// unchanged, no opinion".
type PreResult struct {
	// Action is Continue, Skip or Abort.
	Action Action
	// Reason explains an Abort (the AbortError's message).
	Reason string
	// Input, when not nil, replaces the call's input for the hooks after
	// this one and for the tool: rewrites compose in hook order.
	Input map[string]any
	// Output is what a Skip returns in place of the tool's output.
	Output any
	// Decision is the hook's permission opinion (Verdict and Reasons; the
	// other fields are kept on the call for the record). Decisions of all
	// pre hooks are merged with decision.Merge: deny > defer > ask > allow.
	Decision decision.Decision
	// Metadata is merged into Call.Metadata (later hooks win per key).
	Metadata map[string]any
}

// PostResult is a post hook's answer. The zero PostResult is "continue,
// unchanged".
type PostResult struct {
	// Action is Continue or Abort (Skip counts as Continue).
	Action Action
	// Reason explains an Abort.
	Reason string
	// Output, when not nil, replaces the output the call returns and the
	// later post hooks see. To return a nil output, use a typed nil.
	Output any
	// Metadata is merged into Call.Metadata.
	Metadata map[string]any
}

// PreHook runs before a tool. It may read c (the call so far: Input as
// rewritten by the hooks before it) but must not keep or change it: answer
// through the PreResult.
type PreHook func(ctx context.Context, c *Call) PreResult

// PostHook runs after a tool that ran (also when it failed: c.Err is its
// error, c.Output its output as rewritten by the post hooks before it).
type PostHook func(ctx context.Context, c *Call) PostResult

// Option refines a hook's registration.
type Option func(*entry)

// InPhase limits a hook to calls made in the named phase (see WithPhase).
func InPhase(phase string) Option {
	return func(e *entry) { e.phase, e.hasPhase = phase, true }
}

type entry struct {
	m        matcher.Matcher
	phase    string
	hasPhase bool
	pre      PreHook
	post     PostHook
}

func (e *entry) matches(tool, phase string) bool {
	return (!e.hasPhase || e.phase == phase) && e.m.Match(tool)
}

// Registry holds hooks, each behind a matcher in Claude Code's syntax (see
// package matcher: "Bash", "Edit|Write", "mcp__.*", "*") and optionally a
// phase. Hooks run in registration order. A Registry is safe for concurrent
// use; registering while calls run is allowed (a call sees the hooks
// registered when it started). The zero Registry is empty and ready.
type Registry struct {
	mu  sync.Mutex // serialises writers; calls read tab
	tab atomic.Pointer[table]
}

// table is one registration state: the hooks and, per tool name and phase,
// which of them match. Matching depends only on those two strings, so it is
// done once per pair rather than once per call (a regular expression costs
// hundreds of nanoseconds).
type table struct {
	entries []entry
	mu      sync.Mutex // serialises additions to plans
	plans   atomic.Pointer[map[planKey]*plan]
}

type planKey struct{ tool, phase string }

// plan is the hooks that match one tool name in one phase, in order.
type plan struct {
	pre  []PreHook
	post []PostHook
}

// maxPlans bounds the plans a table keeps: tool names come from a model and
// need not be a small set. Past it, plans are computed per call.
const maxPlans = 1024

// Pre registers a pre hook for the tools pattern matches. It fails only for
// a pattern that does not compile (see matcher.Compile).
func (r *Registry) Pre(pattern string, h PreHook, opts ...Option) error {
	return r.add(pattern, entry{pre: h}, opts)
}

// Post registers a post hook for the tools pattern matches. It fails only for
// a pattern that does not compile.
func (r *Registry) Post(pattern string, h PostHook, opts ...Option) error {
	return r.add(pattern, entry{post: h}, opts)
}

func (r *Registry) add(pattern string, e entry, opts []Option) error {
	m, err := matcher.Compile(pattern)
	if err != nil {
		return fmt.Errorf("cannot register hook for %q: %w", pattern, err)
	}
	e.m = m
	for _, o := range opts {
		o(&e)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var old []entry
	if t := r.tab.Load(); t != nil {
		old = t.entries
	}
	// Copy on write: calls in flight keep the table they loaded.
	next := &table{entries: append(old[:len(old):len(old)], e)}
	r.tab.Store(next)
	return nil
}

var noPlan plan

// plan returns the hooks for a call of tool in phase.
func (r *Registry) plan(tool, phase string) *plan {
	if r == nil {
		return &noPlan
	}
	t := r.tab.Load()
	if t == nil {
		return &noPlan
	}
	k := planKey{tool, phase}
	if m := t.plans.Load(); m != nil {
		if p, ok := (*m)[k]; ok {
			return p
		}
	}
	p := &plan{}
	for i := range t.entries {
		e := &t.entries[i]
		if !e.matches(tool, phase) {
			continue
		}
		if e.pre != nil {
			p.pre = append(p.pre, e.pre)
		}
		if e.post != nil {
			p.post = append(p.post, e.post)
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	var old map[planKey]*plan
	if m := t.plans.Load(); m != nil {
		old = *m
	}
	if len(old) < maxPlans {
		next := make(map[planKey]*plan, len(old)+1)
		maps.Copy(next, old)
		next[k] = p
		t.plans.Store(&next)
	}
	return p
}

package toolhook

import (
	"context"
	"os"
	"path/filepath"

	"github.com/hookwatch/hookwatch/decision"
	"github.com/hookwatch/hookwatch/hook"
	"github.com/hookwatch/hookwatch/policy"
	"github.com/hookwatch/hookwatch/policy/policyfile"
)

// UsePolicy registers the PreToolUse and PostToolUse rules of set as a pre
// and a post hook matching every tool, so that an agent in Go enforces the
// very rules a team wrote for Claude Code (see package policy for the
// file format, scopes and precedence). Each call is presented to the
// engine as the payload Claude Code would send: hook_event_name, session_id,
// cwd (Executor.Dir, else the process's working directory), tool_name,
// tool_input, tool_use_id, agent_id and agent_type (for a sub-agent),
// permission_mode and transcript_path (Executor.PermissionMode and
// TranscriptPath, when set: rules reading them see "" otherwise), and
// tool_response after the tool.
//
// Before the tool, the engine's decision becomes the hook's: its verdict
// merges with the other hooks', its updated input rewrites the call, a stop
// aborts it. After the tool, a transform rewrites the output, and a block
// or a stop aborts the call with the reason (the tool has run; the caller
// gets the reason as Claude Code's model would). st keeps quota counts
// (policy.MemoryState for a process, policy.OpenState to share them with
// hooks); nil fails quota rules per their on_error.
//
// The rules are evaluated under the call's context values but not its
// cancellation, within PolicyBudget: a caller's deadline does not turn
// the policy off (a call whose context is done does not run at all).
func (r *Registry) UsePolicy(set *policy.Set, st *policy.State) {
	// "*" always compiles.
	_ = r.Pre("*", func(ctx context.Context, c *Call) PreResult {
		ctx, cancel := policyContext(ctx)
		defer cancel()
		d := set.Evaluate(ctx, payload(c, "PreToolUse", false), st)
		return PreResult{Decision: d, Input: d.UpdatedInput}
	})
	_ = r.Post("*", func(ctx context.Context, c *Call) PostResult {
		ctx, cancel := policyContext(ctx)
		defer cancel()
		d := set.Evaluate(ctx, payload(c, "PostToolUse", true), st)
		res := PostResult{Output: d.UpdatedToolOutput}
		switch {
		case d.Stop:
			res.Action, res.Reason = Abort, decision.DefaultStopReason
			if len(d.StopReasons) > 0 {
				res.Reason = d.StopReasons[0]
			}
		case d.Verdict == decision.Deny:
			res.Action, res.Reason = Abort, d.Reason()
		}
		return res
	})
}

// PolicyBudget bounds the time the policy engine takes for one event of a
// call, as the hook's budget (hook.DefaultBudget) bounds it for Claude
// Code: rules not reached by then are not applied (and the decision says
// so in a system message).
const PolicyBudget = hook.DefaultBudget

// policyContext is the context rules are evaluated in: the call's values,
// but not its cancellation — an engine that stops at the first rule when
// the caller's deadline has passed answers nothing, and a policy must not
// turn off because a caller was late (the Executor does not run the tool
// of a call whose context is done) — and the engine's own budget.
func policyContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), PolicyBudget)
}

// LoadPolicy loads policy files and registers them with UsePolicy and an
// in-memory quota state. Each file has the scope it has for the hook: a
// <dir>/.hookwatch/policy.yaml is a project policy of the project <dir>
// (its relative globs are taken from <dir>), policy.ManagedPath the
// managed policy (its on_error: closed rules deny when they cannot be
// applied), any other file a user policy; rules apply strongest scope
// first, as policy.LoadSources orders them. With Executor.Dir set to the
// project's directory (or the process running in it), a call is answered
// as `hookwatch hook` answers Claude Code's call of the same tool and
// input. Invalid rules are left out, as in the hook; the error lists them
// (and a missing file), and the valid rules are registered all the same.
func (r *Registry) LoadPolicy(paths ...string) error {
	srcs := make([]policy.Source, len(paths))
	for i, p := range paths {
		srcs[i] = policySource(p)
	}
	set := policy.LoadSources(srcs...)
	for _, f := range set.Files {
		if !f.Found {
			set.Problems = append(set.Problems, policy.Problem{File: f.Path, Msg: "no such policy file"})
		}
	}
	r.UsePolicy(set, policy.MemoryState())
	return set.Err()
}

// policySource is the file at path with the scope the hook gives it.
func policySource(path string) policy.Source {
	abs, err := filepath.Abs(path)
	if err != nil {
		return policy.Source{Path: path, Scope: policy.ScopeUser}
	}
	switch {
	case abs == policy.ManagedPath:
		return policy.Source{Path: abs, Scope: policy.ScopeManaged}
	case policyfile.ProjectFile(policy.ManagedPath, filepath.Join(hook.Home(os.Getenv), "policy.yaml"), abs):
		return policy.Source{Path: abs, Scope: policy.ScopeProject}
	}
	return policy.Source{Path: path, Scope: policy.ScopeUser}
}

// payload is the hook payload Claude Code would send for c.
func payload(c *Call, event string, post bool) map[string]any {
	p := map[string]any{
		"cwd":             c.Cwd,
		"hook_event_name": event,
		"session_id":      c.SessionID,
		"tool_name":       c.ToolName,
		"tool_input":      c.Input,
		"tool_use_id":     c.ToolUseID,
	}
	if c.AgentID != "" {
		p["agent_id"] = c.AgentID
	}
	if c.AgentType != "" {
		p["agent_type"] = c.AgentType
	}
	if c.PermissionMode != "" {
		p["permission_mode"] = c.PermissionMode
	}
	if c.TranscriptPath != "" {
		p["transcript_path"] = c.TranscriptPath
	}
	if post {
		p["tool_response"] = c.Output
	}
	return p
}

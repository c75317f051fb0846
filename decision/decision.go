// Package decision is hookwatch's side of Claude Code's hook output contract
// (spec §1.7): what a hook may answer for each event, how several answers
// combine, and the exact stdout JSON and exit code that carry the answer.
//
// A Decision is built by the policy engine (or any other producer), merged
// with Merge when several rules answer, and turned into bytes by Render. The
// zero Decision is "no opinion": it renders nothing and exits 0, which Claude
// Code treats as observe-only.
package decision

import (
	"fmt"
	"strings"
)

// Verdict is a permission-style answer. Verdicts are ordered by precedence:
// when decisions merge, the larger Verdict wins (deny > defer > ask > allow,
// spec §1.7.5).
//
// On PreToolUse a Verdict is the permissionDecision. On PermissionRequest
// Allow and Deny are the decision's behavior. On the events that can block
// (UserPromptSubmit, PostToolUse, Stop, …) Deny renders as decision:"block";
// Allow there means "no objection" and renders nothing.
type Verdict uint8

// The verdicts, lowest precedence first.
const (
	None Verdict = iota
	Allow
	Ask
	Defer
	Deny
)

// String returns the verdict as Claude Code spells it ("" for None).
func (v Verdict) String() string {
	switch v {
	case None:
		return ""
	case Allow:
		return "allow"
	case Ask:
		return "ask"
	case Defer:
		return "defer"
	case Deny:
		return "deny"
	}
	return fmt.Sprintf("Verdict(%d)", uint8(v))
}

// ParseVerdict returns the verdict spelt s ("allow", "ask", "defer", "deny";
// "block" is accepted as Deny). The empty string is None.
func ParseVerdict(s string) (Verdict, error) {
	switch s {
	case "":
		return None, nil
	case "allow":
		return Allow, nil
	case "ask":
		return Ask, nil
	case "defer":
		return Defer, nil
	case "deny", "block":
		return Deny, nil
	}
	return None, fmt.Errorf("cannot parse verdict %q: want allow, ask, defer, deny or block", s)
}

// Decision is one hook answer for one event, before rendering. Fields that
// the event does not honour are ignored by Render (see Supports); the policy
// engine validates rules against Supports so that this never drops a rule's
// intent silently.
type Decision struct {
	// Event is the hook_event_name the decision answers. Render needs it for
	// hookSpecificOutput.hookEventName; a Decision without Event renders
	// nothing.
	Event string
	// Runtime is the agent runtime whose contract the answer is rendered
	// in ("codex", or Claude Code's for anything else): see EffectsFor.
	Runtime string

	// Verdict is the permission answer (see Verdict for its meaning per event).
	Verdict Verdict
	// Reasons explain Verdict; they belong to the verdict, so Merge keeps the
	// reasons of every input whose verdict won and drops the others. Rendered
	// joined by newlines as permissionDecisionReason (PreToolUse), the deny
	// message (PermissionRequest) or the block reason (other events).
	Reasons []string

	// UpdatedInput replaces the whole tool input (PreToolUse with allow or
	// ask; PermissionRequest with allow). nil means unchanged.
	UpdatedInput map[string]any
	// UpdatedPermissions are PermissionUpdate entries applied with a
	// PermissionRequest allow (spec §1.7.4).
	UpdatedPermissions []any
	// Interrupt stops Claude after a PermissionRequest deny.
	Interrupt bool

	// AdditionalContext is text added to the model's context; Merge
	// concatenates, Render joins the parts with blank lines.
	AdditionalContext []string

	// UpdatedToolOutput replaces what the model sees of a tool's result
	// (PostToolUse, any tool since Claude Code 2.1.121). nil means unchanged.
	UpdatedToolOutput any
	// UpdatedMCPToolOutput is the older, MCP-only form of UpdatedToolOutput
	// (deprecated in Claude Code, still read by clients before 2.1.121).
	UpdatedMCPToolOutput any

	// SystemMessages are warnings shown to the user (not the model).
	SystemMessages []string

	// Stop asks Claude Code to stop entirely after the hook (continue:false),
	// beating every event decision. StopReasons are shown to the user. On
	// PreToolUse and PermissionRequest a stop also denies the call, with
	// StopReasons as the deny reason unless a deny gave its own: Claude Code
	// would otherwise run the call before stopping.
	Stop        bool
	StopReasons []string

	// Notes record, per rule, what was decided and whether it was enforced.
	// They are not rendered; Audit summarises them for the event record.
	Notes []Note
}

// Merge combines decisions for the same event into one, as Claude Code
// combines several hooks' answers (spec §1.7.5), but deterministically:
//
//   - Verdict: the highest precedence wins (deny > defer > ask > allow);
//     Reasons are those of every input with the winning verdict, in order
//     (so every denying rule's reason is kept);
//   - AdditionalContext, SystemMessages, StopReasons, UpdatedPermissions and
//     Notes are concatenated in order;
//   - UpdatedInput, UpdatedToolOutput and UpdatedMCPToolOutput: the last
//     non-nil value wins (the caller orders inputs so that the strongest
//     source comes last);
//   - Stop and Interrupt: true if any input says so.
//
// Event and Runtime are the first non-empty ones. Merge of nothing is the
// zero Decision.
func Merge(ds ...Decision) Decision {
	var out Decision
	for _, d := range ds {
		if out.Event == "" {
			out.Event = d.Event
		}
		if out.Runtime == "" {
			out.Runtime = d.Runtime
		}
		if d.Verdict > out.Verdict {
			out.Verdict = d.Verdict
		}
	}
	for _, d := range ds {
		if d.Verdict == out.Verdict && out.Verdict != None {
			out.Reasons = append(out.Reasons, d.Reasons...)
		}
		if d.UpdatedInput != nil {
			out.UpdatedInput = d.UpdatedInput
		}
		if d.UpdatedToolOutput != nil {
			out.UpdatedToolOutput = d.UpdatedToolOutput
		}
		if d.UpdatedMCPToolOutput != nil {
			out.UpdatedMCPToolOutput = d.UpdatedMCPToolOutput
		}
		out.UpdatedPermissions = append(out.UpdatedPermissions, d.UpdatedPermissions...)
		out.Interrupt = out.Interrupt || d.Interrupt
		out.AdditionalContext = append(out.AdditionalContext, d.AdditionalContext...)
		out.SystemMessages = append(out.SystemMessages, d.SystemMessages...)
		out.Stop = out.Stop || d.Stop
		out.StopReasons = append(out.StopReasons, d.StopReasons...)
		out.Notes = append(out.Notes, d.Notes...)
	}
	return out
}

// IsZero reports whether d is "no opinion": nothing that Render could emit
// for any event. Notes do not count: a decision recorded but not enforced is
// still no opinion for Claude Code.
func (d Decision) IsZero() bool {
	return d.Verdict == None && d.UpdatedInput == nil && len(d.UpdatedPermissions) == 0 &&
		!d.Interrupt && len(d.AdditionalContext) == 0 && d.UpdatedToolOutput == nil &&
		d.UpdatedMCPToolOutput == nil && len(d.SystemMessages) == 0 && !d.Stop
}

// Reason returns the verdict's reasons joined as Render joins them.
func (d Decision) Reason() string { return strings.Join(d.Reasons, "\n") }

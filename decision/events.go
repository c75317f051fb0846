package decision

import "strings"

// Effect is a set of things a hook answer can do; Effects tells which ones an
// event honours (spec §1.7.3–1.7.4).
type Effect uint16

// The effects a Decision can carry.
const (
	// EffectAllow is Verdict Allow: permissionDecision "allow" (PreToolUse) or
	// behavior "allow" (PermissionRequest).
	EffectAllow Effect = 1 << iota
	// EffectDeny is Verdict Deny: permissionDecision "deny", behavior "deny",
	// or decision:"block" on the events that can block.
	EffectDeny
	// EffectAsk is Verdict Ask (PreToolUse only).
	EffectAsk
	// EffectDefer is Verdict Defer (PreToolUse only; honoured in -p mode).
	EffectDefer
	// EffectUpdateInput is UpdatedInput (with allow or ask).
	EffectUpdateInput
	// EffectUpdatePermissions is UpdatedPermissions (PermissionRequest allow).
	EffectUpdatePermissions
	// EffectContext is AdditionalContext.
	EffectContext
	// EffectUpdateOutput is UpdatedToolOutput / UpdatedMCPToolOutput.
	EffectUpdateOutput
	// EffectSystemMessage is a systemMessage shown to the user.
	EffectSystemMessage
	// EffectStop is continue:false with a stopReason.
	EffectStop
)

var effectNames = []string{"allow", "deny", "ask", "defer", "update_input", "update_permissions", "context", "update_output", "system_message", "stop"}

// String lists the effects in e, separated by '|'.
func (e Effect) String() string {
	var parts []string
	for i, n := range effectNames {
		if e&(1<<i) != 0 {
			parts = append(parts, n)
		}
	}
	return strings.Join(parts, "|")
}

const (
	common   = EffectSystemMessage | EffectStop
	blocking = EffectDeny | EffectContext | common
)

// Effects returns what the named event honours. Unknown events honour
// nothing: hookwatch never answers an event it does not know the contract of.
func Effects(event string) Effect {
	switch event {
	case "PreToolUse":
		return EffectAllow | EffectDeny | EffectAsk | EffectDefer | EffectUpdateInput | EffectContext | common
	case "PermissionRequest":
		return EffectAllow | EffectDeny | EffectUpdateInput | EffectUpdatePermissions | common
	case "PostToolUse":
		return blocking | EffectUpdateOutput
	case "PostToolUseFailure", "PostToolBatch", "UserPromptSubmit", "UserPromptExpansion", "Stop", "SubagentStop":
		return blocking
	case "TaskCreated":
		// continue:false is ignored on TaskCreated.
		return EffectDeny | EffectSystemMessage
	case "ConfigChange", "PreCompact":
		// Both discard systemMessage and continue.
		return EffectDeny
	case "SessionStart", "Setup", "SubagentStart":
		return EffectContext | common
	case "PermissionDenied", "TeammateIdle", "TaskCompleted":
		return common
	case "CwdChanged", "FileChanged", "DirectoryAdded":
		return EffectSystemMessage
	}
	// Notification, StopFailure, InstructionsLoaded, SessionEnd, PostCompact,
	// MessageDisplay, WorktreeCreate, WorktreeRemove, Elicitation,
	// ElicitationResult discard everything hookwatch could say.
	return 0
}

// Supports reports whether the named event honours every effect in e.
func Supports(event string, e Effect) bool { return Effects(event)&e == e }

// Runtimes whose contract differs (event.RuntimeCodex; any other runtime
// is Claude Code's).
const runtimeCodex = "codex"

// EffectsFor returns what the named event honours in runtime's contract:
// Effects for Claude Code; for Codex (0.169 and its documented schemas)
// only what it applies and never a field it would answer by failing the
// hook, which drops the whole answer (fail-open): a PreToolUse deny with a
// reason and nothing else (Codex has no allow: an allow is no output; ask,
// defer, updatedInput, continue:false fail the hook), a PermissionRequest
// allow or deny, a block with context on PostToolUse and UserPromptSubmit,
// a Stop or SubagentStop block, context at SessionStart and SubagentStart,
// a systemMessage on Interrupt, and continue:false where Codex reads it.
func EffectsFor(runtime, event string) Effect {
	if runtime != runtimeCodex {
		return Effects(event)
	}
	switch event {
	case "PreToolUse":
		return EffectDeny
	case "PermissionRequest":
		return EffectAllow | EffectDeny
	case "PostToolUse":
		return EffectDeny | EffectContext | EffectStop
	case "UserPromptSubmit":
		return EffectDeny | EffectContext
	case "Stop", "SubagentStop":
		return EffectDeny | EffectStop
	case "SessionStart", "SubagentStart":
		return EffectContext
	case "Interrupt":
		return EffectSystemMessage
	}
	return 0
}

// SupportsFor reports whether the named event honours every effect in e in
// runtime's contract.
func SupportsFor(runtime, event string, e Effect) bool { return EffectsFor(runtime, event)&e == e }

// isPermissionEvent reports whether a Deny renders as a permission decision
// (deny) rather than decision:"block".
func isPermissionEvent(event string) bool {
	return event == "PreToolUse" || event == "PermissionRequest"
}

// VerdictEffect returns the Effect that carries v (0 for None).
func VerdictEffect(v Verdict) Effect {
	switch v {
	case Allow:
		return EffectAllow
	case Ask:
		return EffectAsk
	case Defer:
		return EffectDefer
	case Deny:
		return EffectDeny
	}
	return 0
}

// effective returns d without what its event ignores, applying the per-event
// field rules of spec §1.7.4 (updatedInput only with allow or ask, nothing but
// the verdict with defer, …). Render and Audit both work from it, so the
// audit record says "enforced" exactly when something reaches Claude Code.
func effective(d Decision) Decision {
	caps := EffectsFor(d.Runtime, d.Event)
	e := Decision{Event: d.Event, Runtime: d.Runtime, Notes: d.Notes}
	if caps&VerdictEffect(d.Verdict) != 0 {
		e.Verdict = d.Verdict
		e.Reasons = d.Reasons
	}
	if d.Stop && isPermissionEvent(d.Event) && e.Verdict != Deny {
		// continue:false alone does not stop the call it answers: Claude
		// Code 2.1.197 runs the tool and stops only afterwards (seen by
		// internal/e2e). A stop must mean that nothing more happens, so on
		// the permission events it also denies the call, with the stop's
		// reason (and drops any rewrite, which only goes with allow or ask).
		e.Verdict = Deny
		e.Reasons = nonEmpty(d.StopReasons)
		if len(e.Reasons) == 0 {
			e.Reasons = []string{DefaultStopReason}
		}
	}
	if caps&EffectUpdateInput != 0 && d.UpdatedInput != nil && (e.Verdict == Allow || (e.Verdict == Ask && d.Event == "PreToolUse")) {
		e.UpdatedInput = d.UpdatedInput
	}
	if caps&EffectUpdatePermissions != 0 && e.Verdict == Allow {
		e.UpdatedPermissions = d.UpdatedPermissions
	}
	if d.Event == "PermissionRequest" && e.Verdict == Deny && d.Runtime != runtimeCodex {
		e.Interrupt = d.Interrupt // Codex fails closed on interrupt
	}
	if caps&EffectContext != 0 && e.Verdict != Defer {
		e.AdditionalContext = nonEmpty(d.AdditionalContext)
	}
	if caps&EffectUpdateOutput != 0 {
		e.UpdatedToolOutput = d.UpdatedToolOutput
		e.UpdatedMCPToolOutput = d.UpdatedMCPToolOutput
	}
	if caps&EffectSystemMessage != 0 {
		e.SystemMessages = nonEmpty(d.SystemMessages)
	}
	if caps&EffectStop != 0 && d.Stop {
		e.Stop = true
		e.StopReasons = d.StopReasons
	}
	return e
}

func nonEmpty(ss []string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

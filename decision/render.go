package decision

import (
	"bytes"
	"encoding/json"
	"strings"
)

// DefaultBlockReason is the reason rendered for a block that came without
// one on Stop and SubagentStop, where Claude Code requires a reason (it
// becomes the agent's next instruction).
const DefaultBlockReason = "Blocked by hookwatch policy."

// DefaultStopReason is the deny reason rendered for a stop without a reason
// on PreToolUse and PermissionRequest, where a stop also denies the call.
const DefaultStopReason = "Stopped by hookwatch policy."

// output is the top-level stdout object; field order is the rendering order.
type output struct {
	Continue           *bool     `json:"continue,omitempty"`
	StopReason         string    `json:"stopReason,omitempty"`
	SystemMessage      string    `json:"systemMessage,omitempty"`
	Decision           string    `json:"decision,omitempty"`
	Reason             string    `json:"reason,omitempty"`
	HookSpecificOutput *specific `json:"hookSpecificOutput,omitempty"`
}

// specific is hookSpecificOutput. Values typed any are omitted only when nil,
// so an explicit empty object still renders.
type specific struct {
	HookEventName            string              `json:"hookEventName"`
	PermissionDecision       string              `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string              `json:"permissionDecisionReason,omitempty"`
	Decision                 *permissionDecision `json:"decision,omitempty"`
	UpdatedInput             any                 `json:"updatedInput,omitempty"`
	AdditionalContext        string              `json:"additionalContext,omitempty"`
	UpdatedToolOutput        any                 `json:"updatedToolOutput,omitempty"`
	UpdatedMCPToolOutput     any                 `json:"updatedMCPToolOutput,omitempty"`
}

// permissionDecision is PermissionRequest's hookSpecificOutput.decision.
type permissionDecision struct {
	Behavior           string `json:"behavior"`
	UpdatedInput       any    `json:"updatedInput,omitempty"`
	UpdatedPermissions []any  `json:"updatedPermissions,omitempty"`
	Message            string `json:"message,omitempty"`
	Interrupt          bool   `json:"interrupt,omitempty"`
}

// Render returns the stdout bytes and exit code that carry d to Claude Code
// (or to Codex, by d.Runtime: the same shapes, fewer of them, see
// EffectsFor), in exactly the JSON shape d.Event honours (spec §1.7.4). Fields the event
// ignores are left out; a decision with nothing to say for its event ("no
// opinion") renders as no output and exit 0.
//
// The exit code is always 0: every answer hookwatch gives has a JSON form,
// and exit 0 with JSON is the documented, schema-checked channel (exit 2
// would surface as a hook error to the user and hide the structured reason).
// It is returned so that callers never hard-code that choice.
func Render(d Decision) (stdout []byte, exitCode int) {
	e := effective(d)
	if e.IsZero() {
		return nil, 0
	}
	var o output
	h := &specific{HookEventName: e.Event}
	reason := e.Reason()

	switch {
	case e.Event == "PreToolUse":
		if e.Verdict != None {
			h.PermissionDecision = e.Verdict.String()
			h.PermissionDecisionReason = reason
			if e.Runtime == runtimeCodex {
				// Codex shows "Command blocked by PreToolUse hook:
				// <reason>. Command: <cmd>" to the model and the user:
				// its own period follows the reason.
				h.PermissionDecisionReason = strings.TrimSuffix(reason, ".")
			}
		}
		if e.UpdatedInput != nil {
			h.UpdatedInput = e.UpdatedInput
		}
	case e.Event == "PermissionRequest":
		switch e.Verdict {
		case Allow:
			pd := &permissionDecision{Behavior: "allow", UpdatedPermissions: e.UpdatedPermissions}
			if e.UpdatedInput != nil {
				pd.UpdatedInput = e.UpdatedInput
			}
			h.Decision = pd
		case Deny:
			h.Decision = &permissionDecision{Behavior: "deny", Message: reason, Interrupt: e.Interrupt}
		}
	case e.Verdict == Deny:
		o.Decision = "block"
		o.Reason = reason
		if o.Reason == "" && (e.Event == "Stop" || e.Event == "SubagentStop") {
			o.Reason = DefaultBlockReason
		}
	}
	if len(e.AdditionalContext) > 0 {
		h.AdditionalContext = strings.Join(e.AdditionalContext, "\n\n")
	}
	if e.UpdatedToolOutput != nil {
		h.UpdatedToolOutput = e.UpdatedToolOutput
	}
	if e.UpdatedMCPToolOutput != nil {
		h.UpdatedMCPToolOutput = e.UpdatedMCPToolOutput
	}
	if len(e.SystemMessages) > 0 {
		o.SystemMessage = strings.Join(e.SystemMessages, "\n")
	}
	if e.Stop {
		f := false
		o.Continue = &f
		o.StopReason = strings.Join(nonEmpty(e.StopReasons), "\n")
	}
	if h.PermissionDecision != "" || h.Decision != nil || h.UpdatedInput != nil ||
		h.AdditionalContext != "" || h.UpdatedToolOutput != nil || h.UpdatedMCPToolOutput != nil {
		o.HookSpecificOutput = h
	}
	if o == (output{}) {
		return nil, 0
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	// Reasons and context are read by people and models: keep <, > and &
	// as they are rather than \u003c escapes.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(o); err != nil {
		// Only an unencodable value in a rewrite (a NaN, a function) gets
		// here. Never emit half an answer: an allow without its rewrite would
		// approve the original input. Keep what needs no rewrite (a deny, a
		// stop, the warnings) and drop the rest.
		return Render(Decision{
			Event:          d.Event,
			Runtime:        d.Runtime,
			Verdict:        keepDeny(e.Verdict),
			Reasons:        e.Reasons,
			SystemMessages: e.SystemMessages,
			Stop:           e.Stop,
			StopReasons:    e.StopReasons,
		})
	}
	return buf.Bytes(), 0
}

func keepDeny(v Verdict) Verdict {
	if v == Deny {
		return Deny
	}
	return None
}

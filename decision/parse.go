package decision

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Parse reads stdout that Render wrote for event (and runtime) back into
// a Decision, so that an answer rendered elsewhere — the collector's, or
// the full binary's, on the hook's behalf — can be merged with one made
// here (Merge) and rendered once: a hook prints one JSON object. Render of
// the result renders the same answer; notes are not rendered, so none come
// back. Empty stdout is the zero Decision.
func Parse(event, runtime string, stdout []byte) (Decision, error) {
	d := Decision{Event: event, Runtime: runtime}
	if len(bytes.TrimSpace(stdout)) == 0 {
		return Decision{}, nil
	}
	var o output
	if err := json.Unmarshal(stdout, &o); err != nil {
		return Decision{}, fmt.Errorf("cannot parse a hook answer: %w", err)
	}
	if o.Continue != nil && !*o.Continue {
		d.Stop = true
		d.StopReasons = nonEmpty([]string{o.StopReason})
	}
	d.SystemMessages = nonEmpty([]string{o.SystemMessage})
	if o.Decision == "block" {
		d.Verdict, d.Reasons = Deny, nonEmpty([]string{o.Reason})
	}
	h := o.HookSpecificOutput
	if h == nil {
		return d, nil
	}
	d.AdditionalContext = nonEmpty([]string{h.AdditionalContext})
	d.UpdatedToolOutput, d.UpdatedMCPToolOutput = h.UpdatedToolOutput, h.UpdatedMCPToolOutput
	if m, ok := h.UpdatedInput.(map[string]any); ok {
		d.UpdatedInput = m
	}
	if h.PermissionDecision != "" {
		v, err := ParseVerdict(h.PermissionDecision)
		if err != nil {
			return Decision{}, fmt.Errorf("cannot parse a hook answer: %w", err)
		}
		d.Verdict, d.Reasons = v, nonEmpty([]string{h.PermissionDecisionReason})
	}
	if pd := h.Decision; pd != nil {
		switch pd.Behavior {
		case "allow":
			d.Verdict, d.UpdatedPermissions = Allow, pd.UpdatedPermissions
			if m, ok := pd.UpdatedInput.(map[string]any); ok {
				d.UpdatedInput = m
			}
		case "deny":
			d.Verdict, d.Reasons, d.Interrupt = Deny, nonEmpty([]string{pd.Message}), pd.Interrupt
		}
	}
	return d, nil
}

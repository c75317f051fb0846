package decision

import (
	"strconv"
	"strings"

	"github.com/hookwatch/hookwatch/internal/jsonstr"
)

// Actions named in audit records and notes.
const (
	ActionAllow         = "allow"
	ActionDeny          = "deny"  // a permission deny (PreToolUse, PermissionRequest)
	ActionBlock         = "block" // decision:"block" on the other events
	ActionAsk           = "ask"
	ActionDefer         = "defer"
	ActionStop          = "stop"           // continue:false
	ActionRewriteInput  = "rewrite_input"  // updatedInput
	ActionRewriteOutput = "rewrite_output" // updatedToolOutput / updatedMCPToolOutput
	ActionContext       = "context"        // additionalContext
	ActionWarn          = "warn"           // systemMessage only
)

// actionRank orders actions for the audit summary: the strictest highest.
func actionRank(action string) int {
	switch action {
	case ActionDeny, ActionBlock:
		return 9
	case ActionStop:
		return 8
	case ActionDefer:
		return 7
	case ActionAsk:
		return 6
	case ActionAllow:
		return 5
	case ActionRewriteInput:
		return 4
	case ActionRewriteOutput:
		return 3
	case ActionContext:
		return 2
	case ActionWarn:
		return 1
	}
	return 0
}

// VerdictAction names the action of verdict v on event: "deny" is spelt
// "block" on the events where it renders as decision:"block".
func VerdictAction(event string, v Verdict) string {
	if v == Deny && !isPermissionEvent(event) {
		return ActionBlock
	}
	return v.String()
}

// Note is what one rule decided for one event.
type Note struct {
	// RuleID is the id of the rule ("" for the engine's own warnings).
	RuleID string `json:"rule_id"`
	// Action is one of the Action constants.
	Action string `json:"action"`
	// Reason is the rule's reason, if it gave one.
	Reason string `json:"reason,omitempty"`
	// Enforced is false when the decision was only recorded: a rule in
	// audit mode, a Stop block suppressed because stop_hook_active was set,
	// or an action the event cannot carry.
	Enforced bool `json:"enforced"`
	// Error is set when the rule could not be evaluated (the action is then
	// what its on_error setting chose, or empty for fail-open).
	Error string `json:"error,omitempty"`
}

// Audit is the JSON record of a decision that the hook stores with the event
// (envelope field "decision") and that shows on the tool call.
type Audit struct {
	// Action is the decision's main action: the strictest one that reached
	// Claude Code, or, when nothing did, the strictest one only recorded.
	Action string `json:"action"`
	// RuleIDs are the rules that produced Action (every denying rule for a
	// deny). Never null in JSON.
	RuleIDs []string `json:"rule_ids"`
	// Reason is the reason given to Claude Code, or the recorded rules'
	// reasons when nothing was enforced.
	Reason string `json:"reason,omitempty"`
	// Enforced reports whether Action reached Claude Code.
	Enforced bool `json:"enforced"`
	// Rules is every rule's note, enforced or not.
	Rules []Note `json:"rules,omitempty"`
}

// Audit summarises d for the event record. It returns nil for "no opinion":
// nothing rendered and no rule recorded anything.
func (d Decision) Audit() *Audit {
	e := effective(d)
	if !e.IsZero() {
		a := &Audit{Action: mainAction(e), Enforced: true, Rules: d.Notes, RuleIDs: []string{}}
		switch a.Action {
		case ActionStop:
			a.Reason = strings.Join(nonEmpty(e.StopReasons), "\n")
		case ActionDeny, ActionBlock, ActionAsk, ActionDefer, ActionAllow:
			a.Reason = e.Reason()
		case ActionWarn:
			a.Reason = strings.Join(e.SystemMessages, "\n")
		}
		for _, n := range d.Notes {
			// A stop on a permission event denies the call too (see effective).
			if n.Enforced && (n.Action == a.Action || (a.Action == ActionDeny && e.Stop && n.Action == ActionStop)) {
				a.RuleIDs = appendUnique(a.RuleIDs, n.RuleID)
			}
		}
		if len(a.RuleIDs) == 0 {
			for _, n := range d.Notes {
				if n.Enforced {
					a.RuleIDs = appendUnique(a.RuleIDs, n.RuleID)
				}
			}
		}
		return a
	}
	if len(d.Notes) == 0 {
		return nil
	}
	best := -1
	for _, n := range d.Notes {
		if r := actionRank(n.Action); r > best {
			best = r
		}
	}
	a := &Audit{Enforced: false, Rules: d.Notes, RuleIDs: []string{}}
	var reasons []string
	for _, n := range d.Notes {
		if actionRank(n.Action) != best {
			continue
		}
		if a.Action == "" {
			a.Action = n.Action
		}
		a.RuleIDs = appendUnique(a.RuleIDs, n.RuleID)
		if n.Reason != "" {
			reasons = append(reasons, n.Reason)
		} else if n.Error != "" {
			reasons = append(reasons, n.Error)
		}
	}
	a.Reason = strings.Join(reasons, "\n")
	return a
}

// mainAction names the strictest effect of an effective decision.
func mainAction(e Decision) string {
	switch {
	case e.Verdict == Deny:
		return VerdictAction(e.Event, Deny)
	case e.Stop:
		return ActionStop
	case e.Verdict != None:
		return e.Verdict.String()
	case e.UpdatedInput != nil:
		return ActionRewriteInput
	case e.UpdatedToolOutput != nil || e.UpdatedMCPToolOutput != nil:
		return ActionRewriteOutput
	case len(e.AdditionalContext) > 0:
		return ActionContext
	}
	return ActionWarn
}

func appendUnique(ss []string, s string) []string {
	if s == "" {
		return ss
	}
	for _, x := range ss {
		if x == s {
			return ss
		}
	}
	return append(ss, s)
}

// AppendJSON appends a as JSON: the members and bytes of encoding/json's,
// but that '<', '>' and '&' are not escaped (package jsonstr), without
// reflection, for a producer that records a decision with every call.
func (a *Audit) AppendJSON(b []byte) []byte {
	b = append(b, `{"action":`...)
	b = jsonstr.AppendQuoted(b, a.Action)
	b = append(b, `,"rule_ids":[`...)
	for i, id := range a.RuleIDs {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonstr.AppendQuoted(b, id)
	}
	b = append(b, ']')
	if a.Reason != "" {
		b = append(b, `,"reason":`...)
		b = jsonstr.AppendQuoted(b, a.Reason)
	}
	b = append(b, `,"enforced":`...)
	b = strconv.AppendBool(b, a.Enforced)
	if len(a.Rules) > 0 {
		b = append(b, `,"rules":[`...)
		for i, n := range a.Rules {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"rule_id":`...)
			b = jsonstr.AppendQuoted(b, n.RuleID)
			b = append(b, `,"action":`...)
			b = jsonstr.AppendQuoted(b, n.Action)
			if n.Reason != "" {
				b = append(b, `,"reason":`...)
				b = jsonstr.AppendQuoted(b, n.Reason)
			}
			b = append(b, `,"enforced":`...)
			b = strconv.AppendBool(b, n.Enforced)
			if n.Error != "" {
				b = append(b, `,"error":`...)
				b = jsonstr.AppendQuoted(b, n.Error)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

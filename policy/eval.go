package policy

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/vm"

	"github.com/hookwatch/hookwatch/decision"
	hookevent "github.com/hookwatch/hookwatch/event"
)

// Evaluate answers one hook event. event is the decoded payload (the JSON
// object Claude Code wrote on the hook's stdin); st keeps quota counts and
// may be nil when no rule has a quota (a quota rule then fails per its
// on_error).
//
// Every rule whose event list names the event, whose matchers select it and
// whose condition holds contributes a decision; the contributions are merged
// with decision.Merge (deny > defer > ask > allow, every deny reason kept).
// Rewrite rules (update_input, transform) run first, project before user
// before managed, and the other rules see the rewritten input and output.
// Invalid policy files and rules add a systemMessage warning.
//
// Evaluate never panics and never returns an error: whatever goes wrong
// fails open (no opinion plus a warning), except managed rules declared
// on_error: closed and rules whose own on_error is closed.
func (s *Set) Evaluate(ctx context.Context, event map[string]any, st *State) (d decision.Decision) {
	return s.evaluate(ctx, event, st, nil)
}

// EvaluateWithSignals is Evaluate for a caller that knows the signals of
// the event's session (see SignalSource): conditions on session and agent
// read them.
func (s *Set) EvaluateWithSignals(ctx context.Context, event map[string]any, st *State, src SignalSource) decision.Decision {
	return s.evaluate(ctx, event, st, src)
}

func (s *Set) evaluate(ctx context.Context, event map[string]any, st *State, src SignalSource) (d decision.Decision) {
	name, _ := event["hook_event_name"].(string)
	if s == nil || name == "" {
		return decision.Decision{}
	}
	if ctx == nil {
		ctx = context.Background()
	}
	path, _ := event["transcript_path"].(string)
	ev := &evaluation{set: s, ctx: ctx, name: name, payload: event, st: st, signalSrc: src, runtime: hookevent.DetectRuntime(path)}
	defer func() {
		if r := recover(); r != nil {
			ev.finishQuota(false)
			d = decision.Decision{Event: name, SystemMessages: []string{fmt.Sprintf("hookwatch policy: internal error, policy not applied (fail-open): %v", r)}}
		}
	}()
	frags := ev.run()
	d = decision.Merge(frags...)
	d.Event, d.Runtime = name, ev.runtime
	if w := s.warning(name, ev.warnings); w != "" {
		d.SystemMessages = append([]string{w}, d.SystemMessages...)
	}
	if ev.cutShort != nil {
		d.SystemMessages = append(d.SystemMessages, fmt.Sprintf("hookwatch: policy evaluation cut short (%v): the rules not reached were not applied (fail-open)", ev.cutShort))
	}
	ev.finishQuota(d.Verdict != decision.Deny && d.Verdict != decision.Defer && !d.Stop)
	return ev.carryStops(d)
}

// evaluation is the state of one Evaluate call.
type evaluation struct {
	set     *Set
	ctx     context.Context
	name    string
	runtime string // of the payload (event.DetectRuntime)
	payload map[string]any
	st      *State

	envMap   map[string]any
	input    map[string]any // tool_input after rewrites (nil: unchanged)
	output   any            // tool_response after transforms (nil: unchanged)
	warnings []string
	cutShort error // the context's error, when it ended the evaluation

	mean *meaning // the call's classification, once a rule needs it

	signalSrc   SignalSource
	signalsRead bool // session and agent are set

	quotaOpen bool
	now       time.Time
	hits      []quotaHit
}

func (ev *evaluation) env() map[string]any {
	if ev.envMap == nil {
		ev.envMap = newEnv(ev.payload)
	}
	return ev.envMap
}

func (ev *evaluation) run() []decision.Decision {
	var frags []decision.Decision
	for _, r := range ev.set.order[ev.name] {
		if err := ev.ctx.Err(); err != nil {
			// Not a problem of the policy: the caller's time ran out.
			ev.cutShort = err
			break
		}
		if d, ok := ev.rule(r); ok {
			frags = append(frags, d)
		}
	}
	return frags
}

// rule evaluates one rule; ok is false when the rule has nothing to say.
func (ev *evaluation) rule(r *Rule) (decision.Decision, bool) {
	c := r.compiled()
	if c.err != nil {
		if !r.failsClosedWhenInvalid() {
			ev.warnings = append(ev.warnings, c.err.Error())
			return decision.Decision{}, false
		}
		if !ev.selects(r, c) {
			return decision.Decision{}, false
		}
		return ev.failClosed(r, fmt.Errorf("managed rule is invalid: %v", c.err))
	}
	if !ev.selects(r, c) {
		return decision.Decision{}, false
	}
	if c.meaning {
		ev.meaning()
	}
	if c.signals {
		ev.signals()
	}
	if r.Subtype != "" && !c.subtype.Match(ev.mean.subtype) {
		return decision.Decision{}, false
	}
	if c.when != nil {
		ok, err := ev.cond(c.when)
		if err != nil {
			return ev.onError(r, fmt.Errorf("cannot evaluate when: %w", err))
		}
		if !ok {
			return decision.Decision{}, false
		}
	}
	if r.Quota != nil {
		exceeded, err := ev.quota(r)
		if err != nil {
			return ev.onError(r, err)
		}
		if !exceeded {
			return decision.Decision{}, false
		}
	}
	var newInput map[string]any
	if len(c.updates) > 0 {
		in, err := ev.updateInput(r, c)
		if err != nil {
			return ev.onError(r, err)
		}
		newInput = in
	}
	var newOutput any
	if len(r.Transforms) > 0 {
		out, changed := ev.transform(r, c)
		if changed {
			newOutput = out
		} else if r.Action == "" && r.Context == "" && r.SystemMessage == "" && len(r.UpdateInput) == 0 {
			return decision.Decision{}, false // nothing to rewrite: no opinion
		}
	}
	return ev.fire(r, newInput, newOutput)
}

// failsClosedWhenInvalid: only managed rules declared closed deny when they
// cannot even be compiled; a broken user or project rule must never lock its
// author out of the agent.
func (r *Rule) failsClosedWhenInvalid() bool {
	return r.Scope == ScopeManaged && r.OnErrorClosed
}

// selects applies the rule's runtime, event matcher and agent filters.
func (ev *evaluation) selects(r *Rule, c *compiled) bool {
	if r.Runtime != "" && r.Runtime != ev.runtime {
		return false
	}
	if field, ok := matcherFieldOf(ev.name); ok {
		v := asString(ev.payload[field])
		if ev.name == "FileChanged" {
			v = filepath.Base(v)
		}
		m := c.matcher
		if ev.name == "FileChanged" || ev.name == "StopFailure" {
			m = c.narrow
		}
		if !m.Match(v) {
			return false
		}
	}
	sub := asString(ev.payload["agent_id"]) != ""
	switch r.Agent {
	case "main":
		if sub {
			return false
		}
	case "subagent":
		if !sub {
			return false
		}
	}
	return c.agentType.Match(asString(ev.payload["agent_type"]))
}

// matcherFieldOf names the payload field each event's matcher is tested
// against (spec §1.1); events without one ignore the matcher. A switch, not
// a map: package-level maps cost every hook process init time.
func matcherFieldOf(event string) (string, bool) {
	switch event {
	case "PreToolUse", "PermissionRequest", "PermissionDenied", "PostToolUse", "PostToolUseFailure":
		return "tool_name", true
	case "SessionStart", "ConfigChange", "DirectoryAdded":
		return "source", true
	case "Setup", "PreCompact", "PostCompact":
		return "trigger", true
	case "InstructionsLoaded":
		return "load_reason", true
	case "UserPromptExpansion":
		return "command_name", true
	case "Notification":
		return "notification_type", true
	case "SubagentStart", "SubagentStop":
		return "agent_type", true
	case "StopFailure":
		return "error", true
	case "FileChanged":
		return "file_path", true
	case "SessionEnd":
		return "reason", true
	case "Elicitation", "ElicitationResult":
		return "mcp_server_name", true
	}
	return "", false
}

func (ev *evaluation) cond(prog *vm.Program) (bool, error) {
	out, err := expr.Run(prog, ev.env())
	if err != nil {
		return false, err
	}
	b, ok := out.(bool)
	if !ok {
		return false, fmt.Errorf("condition gave %T, not a boolean", out)
	}
	return b, nil
}

// updateInput computes the rule's rewrite of tool_input on top of the
// rewrites before it, and makes it what later rules see.
func (ev *evaluation) updateInput(r *Rule, c *compiled) (map[string]any, error) {
	env := ev.env()
	cur, _ := env["tool_input"].(map[string]any)
	next := make(map[string]any, len(cur)+len(c.updates))
	for k, v := range cur {
		next[k] = v
	}
	for i, prog := range c.updates {
		v, err := expr.Run(prog, env)
		if err != nil {
			return nil, fmt.Errorf("cannot evaluate update_input.%s: %w", r.UpdateInput[i].Field, err)
		}
		if v == nil {
			delete(next, r.UpdateInput[i].Field)
		} else {
			next[r.UpdateInput[i].Field] = v
		}
	}
	if !r.AuditOnly {
		ev.input = next
		env["tool_input"] = next
	}
	return next, nil
}

// transform applies the rule's transforms to the tool output.
func (ev *evaluation) transform(r *Rule, c *compiled) (any, bool) {
	env := ev.env()
	out := env["tool_response"]
	changed := false
	for i, t := range r.Transforms {
		var ch bool
		switch t.Kind {
		case "timestamps":
			out, ch = NormalizeTimestamps(out, t.Timestamps)
		case "redact":
			out, ch = c.redactors[i].Redact(out)
		}
		changed = changed || ch
	}
	if changed && !r.AuditOnly {
		ev.output = out
		env["tool_response"] = out
	}
	return out, changed
}

// ruleAction names what the rule does on the event, for notes.
func ruleAction(r *Rule, event string) string {
	switch {
	case r.Verdict != decision.None:
		return decision.VerdictAction(event, r.Verdict)
	case r.Stop:
		return decision.ActionStop
	case len(r.UpdateInput) > 0:
		return decision.ActionRewriteInput
	case len(r.Transforms) > 0:
		return decision.ActionRewriteOutput
	case r.Context != "":
		return decision.ActionContext
	}
	return decision.ActionWarn
}

// reasonText is the reason given to Claude Code: the rule's reason, or its
// id, followed by the alternative the model should use instead.
func (r *Rule) reasonText() string {
	reason := strings.TrimSpace(r.Reason)
	if reason == "" {
		reason = fmt.Sprintf("Blocked by hookwatch policy rule %q.", r.ID)
		if r.Verdict != decision.Deny && !r.Stop {
			reason = fmt.Sprintf("hookwatch policy rule %q.", r.ID)
		}
	}
	if alt := strings.TrimSpace(r.Alternative); alt != "" {
		reason += " Use instead: " + alt
	}
	return reason
}

// fire turns a selected rule into its decision.
func (ev *evaluation) fire(r *Rule, newInput map[string]any, newOutput any) (decision.Decision, bool) {
	reason := r.reasonText()
	note := decision.Note{RuleID: r.ID, Action: ruleAction(r, ev.name), Enforced: !r.AuditOnly}
	if r.Verdict != decision.None || r.Stop {
		note.Reason = reason
	}
	d := decision.Decision{Event: ev.name}
	if r.AuditOnly {
		d.Notes = []decision.Note{note}
		return d, true
	}
	if (ev.name == "Stop" || ev.name == "SubagentStop") && (r.Verdict == decision.Deny || r.Context != "") {
		if active, _ := ev.payload["stop_hook_active"].(bool); active {
			// A Stop hook already kept the agent going once; blocking (or
			// feeding context, which also continues the turn) again could
			// loop forever. Record, do not enforce.
			note.Enforced = false
			note.Reason = strings.TrimSpace(note.Reason + " (not enforced: stop_hook_active is set, blocking again could loop)")
			d.Notes = []decision.Note{note}
			return d, true
		}
	}
	d.Verdict = r.Verdict
	if r.Verdict != decision.None {
		d.Reasons = []string{reason}
	}
	if r.Stop {
		d.Stop = true
		d.StopReasons = []string{reason}
	}
	if r.Context != "" {
		d.AdditionalContext = []string{r.Context}
	}
	if r.SystemMessage != "" {
		d.SystemMessages = []string{r.SystemMessage}
	}
	d.UpdatedInput = newInput
	if newOutput != nil {
		d.UpdatedToolOutput = newOutput
		if strings.HasPrefix(asString(ev.payload["tool_name"]), "mcp__") {
			// Clients before 2.1.121 read only the MCP-specific field.
			d.UpdatedMCPToolOutput = newOutput
		}
	}
	d.Interrupt = r.Interrupt
	d.Notes = []decision.Note{note}
	return d, true
}

// onError applies the rule's on_error to a failure at run time.
func (ev *evaluation) onError(r *Rule, err error) (decision.Decision, bool) {
	if r.OnErrorClosed {
		return ev.failClosed(r, err)
	}
	note := decision.Note{RuleID: r.ID, Action: ruleAction(r, ev.name), Enforced: false, Error: err.Error() + " (on_error: open)"}
	return decision.Decision{Event: ev.name, Notes: []decision.Note{note}}, true
}

// failClosed denies (or blocks) because a rule could not be evaluated.
func (ev *evaluation) failClosed(r *Rule, err error) (decision.Decision, bool) {
	reason := fmt.Sprintf("hookwatch policy rule %q could not be evaluated and fails closed: %v", r.ID, err)
	note := decision.Note{RuleID: r.ID, Action: decision.VerdictAction(ev.name, decision.Deny), Reason: reason, Enforced: !r.AuditOnly, Error: err.Error()}
	d := decision.Decision{Event: ev.name, Notes: []decision.Note{note}}
	if !decision.Supports(ev.name, decision.EffectDeny) {
		d.Notes[0].Enforced = false
		return d, true
	}
	if !r.AuditOnly {
		d.Verdict = decision.Deny
		d.Reasons = []string{reason}
	}
	return d, true
}

// warning composes the systemMessage for invalid policy parts that concern
// this event: problems of rules naming it, whole-file problems, and every
// problem on SessionStart and UserPromptSubmit so that the user hears about
// them even when the broken rule's events never fire.
func (s *Set) warning(event string, runtime []string) string {
	var msgs []string
	for _, p := range s.Problems {
		if p.Events == nil || event == "SessionStart" || event == "UserPromptSubmit" || contains(p.Events, event) {
			msgs = append(msgs, p.Error())
		}
	}
	msgs = append(msgs, runtime...)
	if len(msgs) == 0 {
		return ""
	}
	const show = 5
	var b strings.Builder
	b.WriteString("hookwatch: invalid policy ignored (fail-open); fix it and run `hookwatch policy check`:")
	for i, m := range msgs {
		if i == show {
			fmt.Fprintf(&b, "\n- … and %d more", len(msgs)-show)
			break
		}
		b.WriteString("\n- ")
		b.WriteString(m)
	}
	return b.String()
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

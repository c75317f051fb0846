package policy

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/vm"

	"github.com/hookwatch/hookwatch/classify"
	"github.com/hookwatch/hookwatch/decision"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/matcher"
	"github.com/hookwatch/hookwatch/shell"
)

// compiled returns the rule's compiled form, compiling it on first use.
func (r *Rule) compiled() *compiled {
	r.once.Do(func() { r.c = r.compile() })
	return r.c
}

// compile builds the matchers and programs of a rule. An error is reported
// as a Problem with the line of the offending key. Matchers are compiled even
// when the rule is invalid, so that a fail-closed rule still selects only
// what it names when it can.
func (r *Rule) compile() *compiled {
	c := &compiled{}
	fail := func(line int, format string, args ...any) {
		p := Problem{File: r.File, Line: line, RuleID: r.ID, Msg: fmt.Sprintf(format, args...), Events: r.Events}
		c.problems = append(c.problems, p)
		if c.err == nil {
			c.err = p
		}
	}
	var err error
	if c.matcher, err = matcher.Compile(r.Matcher); err != nil {
		fail(r.line("matcher"), "%v", err)
		c.matcher = matcher.Matcher{} // fail-closed selection: everything
	}
	for _, e := range r.Events {
		if matcher.UsesNarrowSet(e) {
			if c.narrow, err = matcher.Compile(r.Matcher, matcher.Narrow()); err != nil {
				fail(r.line("matcher"), "%v", err)
				c.narrow = matcher.Matcher{}
			}
			break
		}
	}
	if c.matcher.Kind() == matcher.Exact && r.matchesToolNames() {
		// A tool's name in another case is a typo that would never
		// match: tool names are compared exactly, as the client does.
		for _, n := range c.matcher.Names() {
			if k := toolNameFolded(n); k != "" && k != n {
				fail(r.line("matcher"), "tool %q matches no call: tool names are case-sensitive; did you mean %q?", n, k)
			}
		}
	}
	if c.agentType, err = matcher.Compile(r.AgentType); err != nil {
		fail(r.line("agent_type"), "agent_type: %v", err)
		c.agentType = matcher.Matcher{}
	}
	if c.subtype, err = matcher.Compile(r.Subtype); err != nil {
		fail(r.line("subtype"), "subtype: %v", err)
		c.subtype = matcher.Matcher{}
	} else if c.subtype.Kind() == matcher.Exact {
		// A name no call can have is a typo that would never match.
		for _, n := range c.subtype.Names() {
			if !slices.Contains(classify.Subtypes(), n) {
				fail(r.line("subtype"), "subtype %q is none of %s", n, strings.Join(classify.Subtypes(), ", "))
			}
		}
	}
	c.meaning = r.Subtype != ""
	if r.invalid != nil {
		if c.err == nil {
			c.err = r.invalid
		}
		return c
	}
	if r.When != "" {
		c.when, err = exprs.compile(r.When, true, r.globBase())
		if err != nil {
			fail(r.line("when")+exprLine(err), "cannot compile when: %s", conditionMessage(err))
		}
		c.meaning = c.meaning || usesMeaning(c.when)
		c.signals = usesSignals(c.when)
		for _, msg := range unknownValues(c.when) {
			fail(r.line("when"), "%s", msg)
		}
	}
	for _, u := range r.UpdateInput {
		prog, err := exprs.compile(u.Expr, false, r.globBase())
		if err != nil {
			fail(u.Line+exprLine(err), "cannot compile update_input.%s: %s", u.Field, exprMessage(err))
			continue
		}
		c.updates = append(c.updates, prog)
		c.meaning = c.meaning || usesMeaning(prog)
		c.signals = c.signals || usesSignals(prog)
	}
	for _, t := range r.Transforms {
		if t.Kind != "redact" {
			c.redactors = append(c.redactors, nil)
			continue
		}
		rd, err := NewRedactor(t.Redact)
		if err != nil {
			fail(r.line("transform"), "%v", err)
		}
		c.redactors = append(c.redactors, rd)
	}
	return c
}

// matchesToolNames reports whether the rule's matcher is tested against
// tool names: one of its events (or every event, when it names none) is a
// tool event.
func (r *Rule) matchesToolNames() bool {
	if len(r.Events) == 0 {
		return true
	}
	for _, e := range r.Events {
		if f, ok := matcherFieldOf(e); ok && f == "tool_name" {
			return true
		}
	}
	return false
}

// toolNameFolded returns the tool classify knows whose name is n in
// another case ("Bash" for "bash"), n itself for a known tool, "" for a
// name it does not know (an MCP tool's, another client's).
func toolNameFolded(n string) string {
	known := ""
	for _, k := range classify.ToolNames() {
		if k == n {
			return n
		}
		if known == "" && strings.EqualFold(k, n) {
			known = k
		}
	}
	return known
}

// unknownValues returns what a condition compares the effect or the
// subtype of a command with that none can have: `command.effect ==
// "destrucive"` is a typo that would never match, as a subtype: key naming
// no subtype is.
func unknownValues(prog *vm.Program) []string {
	if prog == nil {
		return nil
	}
	var out []string
	check := func(field string, values []string) {
		known := classify.Subtypes()
		if field == "effect" {
			known = known[:0:0]
			for _, e := range shell.Effects() {
				known = append(known, string(e))
			}
		}
		for _, v := range values {
			if !slices.Contains(known, v) {
				out = append(out, fmt.Sprintf("%s %q is none of %s", field, v, strings.Join(known, ", ")))
			}
		}
	}
	ast.Find(prog.Node(), func(n ast.Node) bool {
		b, ok := n.(*ast.BinaryNode)
		if !ok {
			return false
		}
		switch b.Operator {
		case "==", "!=":
			if f := meaningField(b.Left); f != "" {
				check(f, stringsOf(b.Right))
			} else if f := meaningField(b.Right); f != "" {
				check(f, stringsOf(b.Left))
			}
		case "in", "not in":
			if f := meaningField(b.Left); f != "" {
				check(f, stringsOf(b.Right))
			}
		}
		return false
	})
	return out
}

// meaningField returns "effect" or "subtype" when n reads a command's or
// a step's effect or subtype (command.effect, #.subtype, subtype), else "".
func meaningField(n ast.Node) string {
	switch n := n.(type) {
	case *ast.IdentifierNode:
		if n.Value == "subtype" {
			return "subtype"
		}
	case *ast.MemberNode:
		if p, ok := n.Property.(*ast.StringNode); ok && (p.Value == "effect" || p.Value == "subtype") {
			return p.Value
		}
	}
	return ""
}

// stringsOf returns the string literals n is: one, or an array's (as
// written, or as the optimizer folded it).
func stringsOf(n ast.Node) []string {
	switch n := n.(type) {
	case *ast.StringNode:
		return []string{n.Value}
	case *ast.ArrayNode:
		var out []string
		for _, e := range n.Nodes {
			if s, ok := e.(*ast.StringNode); ok {
				out = append(out, s.Value)
			}
		}
		return out
	case *ast.ConstantNode:
		switch v := n.Value.(type) {
		case string:
			return []string{v}
		case []string:
			return v
		case []any:
			var out []string
			for _, e := range v {
				if s, ok := e.(string); ok {
					out = append(out, s)
				}
			}
			return out
		case map[string]struct{}:
			var out []string
			for s := range v {
				out = append(out, s)
			}
			slices.Sort(out)
			return out
		}
	}
	return nil
}

// line returns the line of a rule key, or the rule's own line.
func (r *Rule) line(key string) int {
	if l, ok := r.keyLines[key]; ok {
		return l
	}
	return r.Line
}

// exprLine is the 0-based line within a multi-line expression.
func exprLine(err error) int {
	var fe *file.Error
	if errors.As(err, &fe) && fe.Line > 1 {
		return fe.Line - 1
	}
	return 0
}

// conditionMessage is exprMessage for a condition, saying what to do when
// its type is not boolean.
func conditionMessage(err error) string {
	msg := exprMessage(err)
	if got, ok := strings.CutPrefix(msg, "expected bool, but got "); ok {
		if i := strings.Index(got, " (column"); i >= 0 {
			got = got[:i]
		}
		if got == "interface {}" || got == "unknown" {
			got = "a value of any type"
		}
		return fmt.Sprintf("a condition must be a boolean, and this gives %s: compare it (== true, != \"\", matches \"…\")", got)
	}
	return msg
}

// exprMessage is expr's message without its source excerpt (the excerpt is
// multi-line and the caller reports the line itself).
func exprMessage(err error) string {
	var fe *file.Error
	if errors.As(err, &fe) {
		hint := listHint(fe.Message)
		var ne *nameError
		if errors.As(err, &ne) {
			hint = ne.hint
		}
		return fmt.Sprintf("%s (column %d)%s", fe.Message, fe.Column+1, hint)
	}
	return err.Error()
}

// listHint is what to write instead when msg is expr refusing a string
// operator on a list — command.reads contains ".env", a natural reading
// of the lists the policy language gives (docs/policy.md) —; "" for any
// other message.
func listHint(msg string) string {
	for _, op := range []string{"contains", "startsWith", "endsWith", "matches"} {
		if strings.HasPrefix(msg, "invalid operation: "+op+" (mismatched types []") {
			return fmt.Sprintf(`: %s tests a string; of a list, write "X" in LIST for a member, or any(LIST, {# %s "X"})`, op, op)
		}
	}
	return ""
}

// fieldWarnings returns what Check warns about the rule, without failing:
// each field of tool_input its condition reads that none of the tools it
// names sends (classify.InputFields, the one list of them), a condition
// that can never hold. Nothing is said when the rule's tools are not named
// exactly, or one of them is a tool InputFields does not know (an MCP
// tool's arguments are its own): it may send anything.
func (r *Rule) fieldWarnings() []Problem {
	c := r.compiled()
	if c.err != nil || c.when == nil || !r.matchesToolNames() || c.matcher.Kind() != matcher.Exact {
		return nil
	}
	tools := c.matcher.Names()
	sent := make([][]string, len(tools))
	for i, tool := range tools {
		fields, known := classify.InputFields(tool)
		if !known {
			return nil
		}
		sent[i] = fields
	}
	var read []string
	ast.Find(c.when.Node(), func(n ast.Node) bool {
		m, ok := n.(*ast.MemberNode)
		if !ok {
			return false
		}
		if v, ok := m.Node.(*ast.IdentifierNode); ok && v.Value == "tool_input" {
			if p, ok := m.Property.(*ast.StringNode); ok && !slices.Contains(read, p.Value) {
				read = append(read, p.Value)
			}
		}
		return false
	})
	var out []Problem
	for _, field := range read {
		if slices.ContainsFunc(sent, func(fields []string) bool { return slices.Contains(fields, field) }) {
			continue
		}
		var msg strings.Builder
		hint := didYouMean(field, func(yield func(string) bool) {
			for _, fields := range sent {
				for _, f := range fields {
					if !yield(f) {
						return
					}
				}
			}
		})
		run := 0 // tools in a row that send the same fields (Agent, Task): listed once
		for i, tool := range tools {
			if i == 0 {
				fmt.Fprintf(&msg, "warning: %s's tool_input has no field %s", tool, field)
			} else if hint == "" {
				fmt.Fprintf(&msg, ", nor %s's", tool)
			}
			if run++; hint != "" || i+1 < len(tools) && slices.Equal(sent[i], sent[i+1]) {
				continue
			}
			if run == 1 {
				fmt.Fprintf(&msg, " (it has %s)", strings.Join(sent[i], ", "))
			} else {
				fmt.Fprintf(&msg, " (they have %s)", strings.Join(sent[i], ", "))
			}
			run = 0
		}
		if hint != "" {
			msg.WriteString(hint)
		} else {
			msg.WriteString(": the condition reads it from no call")
		}
		out = append(out, Problem{File: r.File, Line: r.line("when"), RuleID: r.ID, Msg: msg.String(), Events: r.Events})
	}
	return out
}

// codexWarnings returns what Check warns about the rule where Codex's
// hooks run hookwatch, without failing: each action or effect of a rule
// for both runtimes that Codex does not carry out on one of its events
// (decision.EffectsFor, the one contract of it), which hookwatch leaves
// out of its answer to Codex, so the rule does nothing there. A rule
// for both runtimes is checked against Claude Code's contract alone (see
// contract), and a user of both should not learn of the gap from an agent
// that ran what the rule was meant to hold. An allow is not warned about:
// on Codex it is no answer, which goes ahead.
func (r *Rule) codexWarnings() []Problem {
	if r.Runtime != "" || r.invalid != nil {
		return nil
	}
	var out []Problem
	for _, ev := range r.Events {
		if !slices.Contains(event.CodexEvents, ev) || r.contract(ev) == event.RuntimeCodex {
			continue
		}
		caps := decision.EffectsFor(event.RuntimeCodex, ev)
		for _, a := range r.asks() {
			if caps&a.effect == a.effect || a.effect == decision.EffectAllow && ev == event.PreToolUse {
				continue
			}
			msg := fmt.Sprintf("warning: Codex has no %s on %s: on Codex %s; add `runtime: %s` if that is meant", a.what, ev, codexDrops(a.effect, ev), event.RuntimeClaudeCode)
			out = append(out, Problem{File: r.File, Line: r.line(a.key), RuleID: r.ID, Msg: msg, Events: r.Events})
		}
	}
	return out
}

// codexDrops says what happens on Codex's event ev when a rule's effect e
// is left out of the answer.
func codexDrops(e decision.Effect, ev string) string {
	switch e {
	case decision.EffectAsk, decision.EffectDefer:
		return "the call runs"
	case decision.EffectUpdateInput:
		return "the call runs with its input unchanged"
	case decision.EffectUpdateOutput:
		return "the model sees the output unchanged"
	case decision.EffectContext:
		return "the model is not told"
	case decision.EffectSystemMessage:
		return "no one is shown it"
	case decision.EffectStop:
		if ev == event.PreToolUse || ev == event.PermissionRequest {
			// decision denies the call a stop answers (see effective).
			return "the call is denied and the session goes on"
		}
		return "the session goes on"
	}
	return "the rule does nothing"
}

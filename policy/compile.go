package policy

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/expr-lang/expr/file"

	"github.com/hookwatch/hookwatch/classify"
	"github.com/hookwatch/hookwatch/matcher"
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
		return fmt.Sprintf("%s (column %d)", fe.Message, fe.Column+1)
	}
	return err.Error()
}

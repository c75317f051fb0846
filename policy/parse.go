package policy

import (
	"errors"
	"fmt"
	"iter"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/hookwatch/hookwatch/decision"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/nearest"
	"github.com/hookwatch/hookwatch/internal/patherr"
	"github.com/hookwatch/hookwatch/internal/regfile"
)

// maxFileSize bounds a policy file: policies are small, and a runaway file
// must not cost the hook its time budget.
const maxFileSize = 1 << 20

// Duration is a time.Duration written as Go durations ("90s", "1h30m") or
// whole days ("7d").
type Duration time.Duration

// String formats d like time.Duration.
func (d Duration) String() string { return time.Duration(d).String() }

func parseDuration(s string) (Duration, error) {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.Atoi(n)
		if err != nil || days <= 0 || days > 3650 {
			return 0, fmt.Errorf("invalid duration %q", s)
		}
		return Duration(time.Duration(days) * 24 * time.Hour), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("invalid duration %q: want e.g. 90s, 10m, 1h or 7d", s)
	}
	return Duration(d), nil
}

// parsedFile is the result of reading one policy file.
type parsedFile struct {
	rules    []*Rule
	problems []Problem
	// rebuilt: the file was parsed afresh and its parse cache entry
	// written (the managed file's, its note: see readManaged), which
	// happens once per change of the file's content.
	rebuilt bool
}

// readFile parses the policy file at src.Path. A missing file is reported
// through os.ErrNotExist; every other failure becomes a Problem.
func readFile(src Source) (parsedFile, error) {
	data, err := readPolicy(src.Path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return parsedFile{}, err
		}
		return parsedFile{problems: []Problem{{File: src.Path, Msg: fmt.Sprintf("cannot read policy file: %v", patherr.Strip(err, src.Path))}}}, nil
	}
	if len(data) > maxFileSize {
		return parsedFile{problems: []Problem{{File: src.Path, Msg: fmt.Sprintf("policy file is larger than %d bytes", maxFileSize)}}}, nil
	}
	return parse(src, data), nil
}

// readPolicy reads the policy file at path, up to one byte more than
// maxFileSize (a larger file is refused whole). A project's file is found
// from the payload's cwd, in a repository whoever wrote it may have made it
// a link to a FIFO or to /dev/zero: regfile refuses those without blocking,
// and the read is bounded.
func readPolicy(path string) ([]byte, error) {
	return regfile.ReadHead(path, maxFileSize+1)
}

// yamlError describes a YAML syntax error: the line it is on and yaml.v3's
// message without its own "line N:", which is often wrong: for errors of
// the parser (not the scanner) yaml.v3 names the line, counted from 0, where
// the enclosing structure started, so a bad indent deep in a file points at
// line 1. The broken line is instead found by bisection as the first line
// whose addition makes the document unparseable. It costs a few parses, on
// a broken file only.
func yamlError(data []byte, err error) (int, string) {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if i := strings.Index(rest, ": "); i > 0 {
			if _, err := strconv.Atoi(rest[:i]); err == nil {
				msg = rest[i+2:]
			}
		}
	}
	var ends []int // ends[i] is the length of the first i+1 lines
	for i, b := range data {
		if b == '\n' {
			ends = append(ends, i+1)
		}
	}
	if len(ends) == 0 || ends[len(ends)-1] != len(data) {
		ends = append(ends, len(data))
	}
	var node yaml.Node
	fails := func(lines int) bool { return yaml.Unmarshal(data[:ends[lines-1]], &node) != nil }
	// Invariant: the first lo lines parse, the first hi lines do not.
	lo, hi := 0, len(ends)
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if fails(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	start := 0
	if hi > 1 {
		start = ends[hi-2]
	}
	return hi, msg + yamlHint(msg, data[start:ends[hi-1]])
}

// yamlHint says what to do about the two YAML errors a policy's author
// makes most, whose messages name the symptom, not the cause: a regular
// expression in double quotes, where YAML reads "\s" as an escape it does
// not know, and a tab in the indentation, which YAML forbids.
func yamlHint(msg string, line []byte) string {
	switch {
	case strings.Contains(msg, "unknown escape character"):
		return ` (in a "double-quoted" YAML string a backslash starts an escape: put the condition in 'single quotes', where YAML keeps every backslash, and write \s as \\s in the condition's own "strings", as the examples of docs/policy.md do)`
	case strings.HasPrefix(strings.TrimLeft(string(line), " "), "\t") && !strings.Contains(msg, "tab"):
		return " (the line is indented with a tab: YAML indents with spaces only)"
	}
	return ""
}

// parse reads a policy document. It never fails as a whole unless the YAML
// itself is broken: each invalid rule becomes a Problem and the others load.
func parse(src Source, data []byte) (pf parsedFile) {
	defer func() {
		// yaml.v3 is not known to panic, but a policy file is input the hook
		// does not control: a panic here must not take the hook down.
		if r := recover(); r != nil {
			pf = parsedFile{problems: []Problem{{File: src.Path, Msg: fmt.Sprintf("cannot parse policy file: %v", r)}}}
		}
	}()
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		line, msg := yamlError(data, err)
		return parsedFile{problems: []Problem{{File: src.Path, Line: line, Msg: "invalid YAML: " + msg}}}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return parsedFile{} // empty file: no rules
	}
	root := resolve(doc.Content[0])
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return parsedFile{}
	}
	p := &parser{src: src}
	if root.Kind != yaml.MappingNode {
		p.fileProblem(root, "a policy file is a mapping with a \"rules\" list")
		return parsedFile{problems: p.problems}
	}
	var rulesNode *yaml.Node
	fileClosed := false
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], resolve(root.Content[i+1])
		switch k.Value {
		case "version":
			if v.Value != "1" {
				p.fileProblem(v, fmt.Sprintf("unsupported version %q (want 1)", v.Value))
				return parsedFile{problems: p.problems}
			}
		case "on_error":
			switch v.Value {
			case "open":
			case "closed":
				fileClosed = true
			default:
				p.fileProblem(v, fmt.Sprintf("on_error must be open or closed, not %q", v.Value))
			}
		case "rules":
			rulesNode = v
		default:
			p.fileProblem(k, fmt.Sprintf("unknown key %q (want version, on_error, rules)", k.Value))
		}
	}
	if rulesNode == nil {
		return parsedFile{problems: p.problems}
	}
	if rulesNode.Kind == yaml.ScalarNode && rulesNode.Tag == "!!null" {
		return parsedFile{problems: p.problems}
	}
	if rulesNode.Kind != yaml.SequenceNode {
		p.fileProblem(rulesNode, "rules must be a list")
		return parsedFile{problems: p.problems}
	}
	var rules []*Rule
	for i, n := range rulesNode.Content {
		if r := p.rule(i, resolve(n), fileClosed); r != nil {
			rules = append(rules, r)
		}
	}
	return parsedFile{rules: rules, problems: p.problems}
}

// valueLine is the line where a scalar's text starts: block scalars (| and >)
// start on the line after their indicator.
func valueLine(v *yaml.Node) int {
	if v.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		return v.Line + 1
	}
	return v.Line
}

// resolve follows YAML aliases.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && n.Alias != nil && i < 16; i++ {
		n = n.Alias
	}
	return n
}

type parser struct {
	src      Source
	problems []Problem
}

func (p *parser) fileProblem(n *yaml.Node, msg string) {
	p.problems = append(p.problems, Problem{File: p.src.Path, Line: n.Line, Msg: msg})
}

// ruleErr is a problem found in one rule, with the line it is at.
type ruleErr struct {
	line int
	msg  string
}

var idChars = func(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("_.:/-", c) >= 0) {
			return false
		}
	}
	return true
}

// rule reads one rule. It returns nil (and records a Problem) for an invalid
// rule, except a managed fail-closed one, which is returned with invalid set
// so that Evaluate can deny what it selects.
func (p *parser) rule(idx int, n *yaml.Node, fileClosed bool) *Rule {
	r := &Rule{Scope: p.src.Scope, File: p.src.Path, Line: n.Line, OnErrorClosed: fileClosed, keyLines: map[string]int{}}
	var errs []ruleErr
	bad := func(at *yaml.Node, format string, args ...any) {
		errs = append(errs, ruleErr{at.Line, fmt.Sprintf(format, args...)})
	}
	if n.Kind != yaml.MappingNode {
		p.problems = append(p.problems, Problem{File: p.src.Path, Line: n.Line, RuleID: fmt.Sprintf("#%d", idx+1), Msg: "a rule is a mapping"})
		return nil
	}
	var quotaNode, transformNode, updateNode *yaml.Node
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], resolve(n.Content[i+1])
		key := k.Value
		if key == "tool" {
			key = "matcher"
		}
		if key == "event" {
			key = "events"
		}
		if key == "transforms" {
			key = "transform"
		}
		if seen[key] {
			bad(k, "%q given twice", k.Value)
			continue
		}
		seen[key] = true
		r.keyLines[key] = valueLine(v)
		str := func() string {
			if v.Kind != yaml.ScalarNode {
				bad(v, "%s must be a string", k.Value)
				return ""
			}
			return v.Value
		}
		switch key {
		case "id":
			r.ID = str()
		case "description":
			r.Description = str()
		case "events":
			switch v.Kind {
			case yaml.ScalarNode:
				r.Events = []string{v.Value}
			case yaml.SequenceNode:
				for _, e := range v.Content {
					e = resolve(e)
					if e.Kind != yaml.ScalarNode {
						bad(e, "events must be a list of event names")
						continue
					}
					r.Events = append(r.Events, e.Value)
				}
			default:
				bad(v, "events must be an event name or a list of them")
			}
			for _, e := range r.Events {
				if !knownEvent(e) {
					bad(v, "unknown event %q%s", e, didYouMean(e, hookEvents))
				}
			}
		case "matcher":
			r.Matcher = str()
		case "agent":
			r.Agent = str()
			switch r.Agent {
			case "main", "subagent":
			case "any", "":
				r.Agent = ""
			default:
				bad(v, "agent must be main, subagent or any, not %q", r.Agent)
			}
		case "runtime":
			r.Runtime = str()
			switch r.Runtime {
			case event.RuntimeClaudeCode, event.RuntimeCodex:
			case "both", "any", "":
				r.Runtime = ""
			default:
				bad(v, "runtime must be claude-code, codex or both, not %q", r.Runtime)
			}
		case "agent_type":
			r.AgentType = str()
		case "subtype":
			r.Subtype = str()
		case "when":
			r.When = str()
		case "action":
			r.Action = str()
		case "reason":
			r.Reason = str()
		case "alternative":
			r.Alternative = str()
		case "context":
			r.Context = str()
		case "system_message":
			r.SystemMessage = str()
		case "interrupt":
			if err := v.Decode(&r.Interrupt); err != nil {
				bad(v, "interrupt must be true or false")
			}
		case "on_error":
			switch str() {
			case "open":
				r.OnErrorClosed = false
			case "closed":
				r.OnErrorClosed = true
			default:
				bad(v, "on_error must be open or closed, not %q", v.Value)
			}
		case "mode":
			switch str() {
			case "enforce":
			case "audit":
				r.AuditOnly = true
			default:
				bad(v, "mode must be enforce or audit, not %q", v.Value)
			}
		case "quota":
			quotaNode = v
		case "transform":
			transformNode = v
		case "update_input":
			updateNode = v
		default:
			bad(k, "unknown key %q%s", k.Value, didYouMean(k.Value, slices.Values(ruleKeys)))
		}
	}
	if !seen["id"] {
		bad(n, "missing id")
	} else if !idChars(r.ID) {
		bad(n, "id %q must be 1-128 characters of letters, digits and _ . : / -", r.ID)
	}
	if len(r.Events) == 0 && !seen["events"] {
		r.Events = []string{"PreToolUse"}
	}
	if quotaNode != nil {
		q, err := parseQuota(quotaNode)
		if err != nil {
			errs = append(errs, *err)
		}
		r.Quota = q
	}
	if transformNode != nil {
		ts, terrs := parseTransforms(transformNode)
		errs = append(errs, terrs...)
		r.Transforms = ts
	}
	if updateNode != nil {
		if updateNode.Kind != yaml.MappingNode {
			bad(updateNode, "update_input must map tool_input fields to expressions")
		}
		for i := 0; updateNode.Kind == yaml.MappingNode && i+1 < len(updateNode.Content); i += 2 {
			k, v := updateNode.Content[i], resolve(updateNode.Content[i+1])
			if v.Kind != yaml.ScalarNode {
				bad(v, "update_input.%s must be an expression (a string)", k.Value)
				continue
			}
			r.UpdateInput = append(r.UpdateInput, FieldUpdate{Field: k.Value, Expr: v.Value, Line: valueLine(v)})
		}
	}
	hasEffect := seen["action"] || seen["context"] || seen["system_message"] || seen["update_input"] || seen["transform"]
	for _, e := range r.validate(n, hasEffect) {
		errs = append(errs, e)
	}
	if len(errs) == 0 {
		return r
	}
	id := r.ID
	if id == "" {
		id = fmt.Sprintf("#%d", idx+1)
	}
	for _, e := range errs {
		p.problems = append(p.problems, Problem{File: p.src.Path, Line: e.line, RuleID: id, Msg: e.msg, Events: r.Events})
	}
	// Its matchers and expressions are checked as well, so that one check
	// says everything wrong with the rule.
	for _, cp := range r.compile().problems {
		cp.RuleID = id
		p.problems = append(p.problems, cp)
	}
	if r.Scope == ScopeManaged && r.OnErrorClosed && r.ID != "" {
		r.invalid = errors.New(errs[0].msg)
		return r
	}
	return nil
}

func parseQuota(n *yaml.Node) (*Quota, *ruleErr) {
	if n.Kind != yaml.MappingNode {
		return nil, &ruleErr{n.Line, "quota must be a mapping with limit, per and window"}
	}
	q := &Quota{Limit: -1}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], resolve(n.Content[i+1])
		switch k.Value {
		case "limit":
			if err := v.Decode(&q.Limit); err != nil || q.Limit < 0 {
				return nil, &ruleErr{v.Line, "quota.limit must be a whole number ≥ 0"}
			}
		case "per":
			var per []string
			if v.Kind == yaml.ScalarNode {
				per = []string{v.Value}
			} else if err := v.Decode(&per); err != nil {
				return nil, &ruleErr{v.Line, "quota.per must be a list of session, tool, agent_type, agent"}
			}
			for _, d := range per {
				switch d {
				case "session", "tool", "agent_type", "agent":
				default:
					return nil, &ruleErr{v.Line, fmt.Sprintf("quota.per: unknown dimension %q (want session, tool, agent_type, agent)", d)}
				}
			}
			q.Per = per
		case "window":
			d, err := parseDuration(v.Value)
			if err != nil {
				return nil, &ruleErr{v.Line, "quota.window: " + err.Error()}
			}
			q.Window = d
		default:
			return nil, &ruleErr{k.Line, fmt.Sprintf("quota: unknown key %q (want limit, per, window)", k.Value)}
		}
	}
	if q.Limit < 0 {
		return nil, &ruleErr{n.Line, "quota.limit is required"}
	}
	return q, nil
}

// contract is the runtime whose hook contract a rule is checked against on
// an event: the rule's runtime when it names one; else Codex for its own
// event (Interrupt) and Claude Code for the rest. A rule for both runtimes
// is held to Claude Code's contract, the richer one: on Codex what Codex
// does not apply is left out of the answer (an allow is no output there,
// which Codex reads as going ahead).
func (r *Rule) contract(ev string) string {
	switch {
	case r.Runtime != "":
		return r.Runtime
	case ev == "Interrupt":
		return event.RuntimeCodex
	}
	return event.RuntimeClaudeCode
}

// contractNote names Codex in a problem found against its contract.
func (r *Rule) contractNote(ev string) string {
	if r.contract(ev) == event.RuntimeCodex {
		return " by Codex"
	}
	return ""
}

// ask is one thing a rule asks of the hook's answer: the key it is
// written under, the effect that carries it, and its name in a message.
type ask struct {
	key, what string
	effect    decision.Effect
}

// asks lists what the rule asks of the answer (its action and effects,
// validated), in the order of a rule's keys: the one list validate checks
// against the rule's contract and codexWarnings against Codex's.
func (r *Rule) asks() []ask {
	var out []ask
	if r.Verdict != decision.None {
		out = append(out, ask{"action", r.Action, decision.VerdictEffect(r.Verdict)})
	}
	if r.Stop {
		out = append(out, ask{"action", "stop", decision.EffectStop})
	}
	if r.Context != "" {
		out = append(out, ask{"context", "context", decision.EffectContext})
	}
	if r.SystemMessage != "" {
		out = append(out, ask{"system_message", "system_message", decision.EffectSystemMessage})
	}
	if len(r.UpdateInput) > 0 {
		out = append(out, ask{"update_input", "update_input", decision.EffectUpdateInput})
	}
	if len(r.Transforms) > 0 {
		out = append(out, ask{"transform", "transform", decision.EffectUpdateOutput})
	}
	return out
}

// validate checks a rule's action and effects against what its events
// honour (decision.EffectsFor the rule's runtime), so that a rule never
// silently does nothing.
// hasEffect tells whether the rule names an effect at all (even an invalid
// one, already reported).
func (r *Rule) validate(at *yaml.Node, hasEffect bool) []ruleErr {
	var errs []ruleErr
	// bad reports at the line of the key the problem is about.
	bad := func(key, format string, args ...any) {
		line := at.Line
		if l, ok := r.keyLines[key]; ok {
			line = l
		}
		errs = append(errs, ruleErr{line, fmt.Sprintf(format, args...)})
	}
	switch r.Action {
	case "":
	case "stop":
		r.Stop = true
	default:
		v, err := decision.ParseVerdict(r.Action)
		if err != nil {
			bad("action", "action must be allow, deny, ask, defer, block or stop, not %q", r.Action)
			return errs
		}
		r.Verdict = v
	}
	if !hasEffect {
		bad("", "a rule needs an action, context, system_message, update_input or transform")
	}
	if r.Action == "" && (r.Reason != "" || r.Alternative != "") {
		bad("reason", "reason and alternative need an action")
	}
	for _, ev := range r.Events {
		if knownEvent(ev) && decision.EffectsFor(r.contract(ev), ev) == 0 {
			bad("events", "event %q ignores every hook answer%s: a rule there can do nothing", ev, r.contractNote(ev))
		}
	}
	need := func(key string, e decision.Effect, what string) {
		for _, ev := range r.Events {
			if knownEvent(ev) && !decision.SupportsFor(r.contract(ev), ev, e) { // unknown events are reported already
				bad(key, "%s is not honoured on %s%s", what, ev, r.contractNote(ev))
			}
		}
	}
	for _, a := range r.asks() {
		what := a.what
		if a.key == "action" {
			what = "action " + what
		}
		need(a.key, a.effect, what)
	}
	if len(r.UpdateInput) > 0 {
		// Claude Code applies updatedInput only together with allow or ask
		// (PermissionRequest: allow); anything else would silently drop it.
		ok := r.Verdict == decision.Allow || r.Verdict == decision.Ask
		for _, ev := range r.Events {
			if ev == "PermissionRequest" && r.Verdict != decision.Allow {
				ok = false
			}
		}
		if !ok {
			bad("update_input", "update_input needs action allow or ask (PermissionRequest: allow)")
		}
	}
	if r.Interrupt {
		for _, ev := range r.Events {
			if ev != "PermissionRequest" {
				bad("interrupt", "interrupt is only honoured on PermissionRequest")
			}
		}
		if r.Verdict != decision.Deny {
			bad("interrupt", "interrupt needs action deny")
		}
	}
	return errs
}

// knownEvent reports whether name is a hook event: Claude Code's, or
// Codex's (whose only event of its own is Interrupt).
func knownEvent(name string) bool {
	return slices.Contains(event.ClaudeCodeEvents, name) || slices.Contains(event.CodexEvents, name)
}

// hookEvents yields the hook events knownEvent knows, for the one a
// misspelt name was meant to be.
func hookEvents(yield func(string) bool) {
	for _, e := range event.ClaudeCodeEvents {
		if !yield(e) {
			return
		}
	}
	yield(event.Interrupt)
}

// ruleKeys are the keys of a rule, as rule reads them (aliases included),
// for the one a misspelt key was meant to be.
var ruleKeys = []string{
	"id", "description", "events", "event", "tool", "matcher", "agent", "runtime", "agent_type",
	"subtype", "when", "action", "reason", "alternative", "context", "system_message", "interrupt",
	"on_error", "mode", "quota", "transform", "transforms", "update_input",
}

// didYouMean is `; did you mean "X"?` for the one of cands that name is a
// slip of, or "" when none is near: a typo reported with what was meant is
// fixed at once.
func didYouMean(name string, cands iter.Seq[string]) string {
	if near := nearest.Name(name, cands); near != "" {
		return fmt.Sprintf("; did you mean %q?", near)
	}
	return ""
}

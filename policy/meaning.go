package policy

import (
	"slices"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/types"
	"github.com/expr-lang/expr/vm"

	"github.com/hookwatch/hookwatch/classify"
	"github.com/hookwatch/hookwatch/shell"
)

// commandType is the type of the variable `command` of a condition: the
// analysis of a shell call's command (package shell), empty for other
// calls. Its keys are declared so that `command.efect` is a compile error,
// not a rule that never fires. (A struct type would read better, but expr
// 1.17.8 cannot compile a member of a struct declared in a types.Map.)
func commandType() types.Type {
	list := types.Array(types.String)
	return types.Map{
		"text": types.String, "effect": types.String, "subtype": types.String, "unknown": types.Bool,
		"reason": types.String, "reads": list, "writes": list, "hosts": list,
		"steps": types.Array(types.Map{
			"program": types.String, "args": list, "via": list, "reads": list, "writes": list,
			"hosts": list, "effect": types.String, "subtype": types.String,
		}),
	}
}

// emptyCommand is `command` for a call that is not a shell command.
func emptyCommand() map[string]any {
	return map[string]any{
		"text": "", "effect": "", "subtype": "", "unknown": false, "reason": "",
		"reads": []string{}, "writes": []string{}, "hosts": []string{}, "steps": []any{},
	}
}

// usesMeaning reports whether a program reads command or subtype: a rule
// that names neither never pays for the analysis.
func usesMeaning(prog *vm.Program) bool { return usesVariable(prog, "command", "subtype") }

// usesVariable reports whether a program reads one of the variables.
func usesVariable(prog *vm.Program, names ...string) bool {
	if prog == nil {
		return false
	}
	return ast.Find(prog.Node(), func(n ast.Node) bool {
		id, ok := n.(*ast.IdentifierNode)
		return ok && slices.Contains(names, id.Value)
	}) != nil
}

// meaning is the classification of the event's tool call, computed once
// per evaluation and only when a rule needs it.
type meaning struct {
	command map[string]any
	subtype string
}

// meaning classifies the event's tool call (package classify).
func (ev *evaluation) meaning() *meaning {
	if ev.mean != nil {
		return ev.mean
	}
	ev.mean = &meaning{command: emptyCommand()}
	tool := asString(ev.payload["tool_name"])
	if tool == "" {
		return ev.mean
	}
	in, _ := ev.env()["tool_input"].(map[string]any)
	m := classify.Input(tool, in, asString(ev.payload["cwd"]))
	ev.mean.subtype = m.Subtype
	if a := m.Command; a != nil {
		ev.mean.command = commandOf(m.EntityName, a)
		if s, ok := in["command"].(string); ok {
			ev.mean.command["text"] = s
		}
	}
	env := ev.env()
	env["command"], env["subtype"] = ev.mean.command, ev.mean.subtype
	return ev.mean
}

func commandOf(text string, a *shell.Analysis) map[string]any {
	steps := make([]any, len(a.Steps))
	for i, s := range a.Steps {
		steps[i] = map[string]any{
			"program": s.Program, "args": nonNil(s.Args), "via": nonNil(s.Via), "reads": nonNil(s.Reads),
			"writes": nonNil(s.Writes), "hosts": nonNil(s.Hosts), "effect": string(s.Effect), "subtype": s.Subtype,
		}
	}
	return map[string]any{
		"text": text, "effect": string(a.Effect), "subtype": a.Subtype, "unknown": a.Unknown, "reason": a.Reason,
		"reads": nonNil(a.Reads), "writes": nonNil(a.Writes), "hosts": nonNil(a.Hosts), "steps": steps,
	}
}

// nonNil gives conditions an empty list rather than nil, so that all()
// and len() need no nil check.
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
